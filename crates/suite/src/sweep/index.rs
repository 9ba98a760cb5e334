//! `index.html` of a sweep's output folder: what was swept, the verdict per metric, the table
//! the terminal prints, `sweep.svg` inline, and a link to each run: its `report.html` when the
//! sweep kept them (`sweep --reports`), else its `summary.json`.
//!
//! Separate from the CSV files: a page for people, written from the same cells as the
//! terminal table ([`table_cells`]) and the same verdict words ([`verdict_text`]), so they
//! never disagree. A merge writes one too; its runs are in the shards' folders, which it says.

use std::path::Path;

use routersim_report::REPORT_HTML;

use super::folder::{RUNS_CSV, SWEEP_CSV, SWEEP_JSON, SWEEP_SVG, run_dir};
use super::manifest::{Manifest, RunRow};
use super::stats::ComboStats;
use super::table::table_cells;
use super::verdict::{verdict_text, verdicts};
use crate::html::{Cell, escape, inline_svg, link, page, table};

/// The summary each run keeps.
const SUMMARY_JSON: &str = "summary.json";

/// The links to a combination's runs present in `out`: `seed-S` to its report (or summary).
fn run_links(out: &Path, combo: usize, rows: &[RunRow]) -> String {
    let links: Vec<String> = rows
        .iter()
        .filter(|r| r.combo == combo)
        .filter_map(|r| {
            let relative = run_dir(Path::new(""), r.combo, r.seed);
            let name = format!("seed-{}", r.seed);
            [REPORT_HTML, SUMMARY_JSON]
                .iter()
                .map(|file| relative.join(file))
                .find(|file| out.join(file).is_file())
                .map(|file| link(&file, &name))
        })
        .collect();
    if links.is_empty() {
        "<span class=\"muted\">in the shards' folders</span>".to_string()
    } else {
        links.join(" ")
    }
}

/// What was swept, as a list.
fn swept(manifest: &Manifest) -> String {
    let mut items: Vec<String> = manifest
        .keys
        .iter()
        .map(|k| {
            let values: Vec<String> = (0..k.values.len()).map(|v| k.label(v)).collect();
            format!(
                "<li><code>{}</code>: {}</li>",
                escape(&k.path),
                escape(&values.join(", "))
            )
        })
        .collect();
    let seeds: Vec<String> = manifest.seeds.iter().map(u64::to_string).collect();
    items.push(format!(
        "<li>seeds: {} (the same for every combination)</li>",
        escape(&seeds.join(", "))
    ));
    if let Some(shard) = manifest.shard {
        items.push(format!(
            "<li>shard {shard}: only this slice of the grid</li>"
        ));
    }
    format!(
        "<p>Scenario <code>{}</code> ({}), routersim {}. <code>(config)</code> marks the \
         scenario's own value of a key (<code>null</code>: not set).</p>\n<ul>\n{}\n</ul>\n",
        escape(&manifest.scenario),
        escape(&manifest.scenario_file),
        escape(&manifest.routersim_version),
        items.join("\n")
    )
}

/// The page of the sweep written in `out` (its `sweep.svg` already there).
pub fn sweep_index_html(
    out: &Path,
    manifest: &Manifest,
    stats: &[ComboStats],
    rows: &[RunRow],
) -> String {
    let mut body = swept(manifest);
    body.push_str("<h2>Verdict</h2>\n<ul>\n");
    for v in verdicts(manifest, stats) {
        let text = verdict_text(&v, stats.len().saturating_sub(1));
        body.push_str(&format!("<li>{}</li>\n", escape(&text)));
    }
    for note in &manifest.no_effect {
        body.push_str(&format!("<li>note: {}</li>\n", escape(note)));
    }
    body.push_str("</ul>\n<h2>Combinations</h2>\n");
    let cells = table_cells(manifest, stats);
    let mut header = cells.first().cloned().unwrap_or_default();
    header.push("runs (report, else summary)".to_string());
    let table_rows: Vec<(String, Vec<Cell>)> = cells
        .iter()
        .skip(1)
        .zip(stats)
        .map(|(row, c)| {
            let mut out_cells: Vec<Cell> = row
                .iter()
                .enumerate()
                .map(|(i, text)| {
                    let cell = Cell::text(text.trim_end());
                    if i == 0 { cell } else { cell.with_class("num") }
                })
                .collect();
            out_cells.push(Cell::html(run_links(out, c.combo, rows)));
            (String::new(), out_cells)
        })
        .collect();
    body.push_str(&table(&header, &table_rows));
    body.push_str(
        "<p class=\"muted\">* best (named only when significantly better than another \
         combination), ~ its 95% interval overlaps the best's.</p>\n",
    );
    body.push_str("<h2>Plot</h2>\n");
    match inline_svg(&out.join(SWEEP_SVG)) {
        Some(svg) => body.push_str(&format!("<div class=\"plot\">{svg}</div>\n")),
        None => body.push_str("<p class=\"muted\">sweep.svg could not be read.</p>\n"),
    }
    let files: Vec<String> = [SWEEP_CSV, RUNS_CSV, SWEEP_JSON, SWEEP_SVG]
        .iter()
        .map(|f| link(Path::new(f), f))
        .collect();
    body.push_str(&format!("<h2>Files</h2>\n<p>{}</p>\n", files.join(" ")));
    page(&format!("routersim sweep: {}", manifest.scenario), &body)
}
