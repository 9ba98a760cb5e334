//! `index.html` of a check's output folder: the table the terminal prints (scenario, seed,
//! verdict, golden, why), each run's timeline plot inline, a link to each run's `report.html`,
//! and every reason a case did not pass.
//!
//! Separate from `junit`: the same cases for people rather than CI. Deterministic (no wall
//! time in it), so two checks of the same input write the same page.

use std::path::Path;

use routersim_report::REPORT_HTML;
use routersim_report::plot::TIMELINE_SVG;

use super::case::{CaseResult, CheckReport, GoldenStatus, Verdict};
use crate::html::{Cell, escape, inline_svg, link, page, table};

/// The verdict as the table writes it.
fn verdict_word(verdict: Verdict) -> (&'static str, &'static str) {
    match verdict {
        Verdict::Pass => ("pass", "pass"),
        Verdict::Fail => ("fail", "FAIL"),
        Verdict::Error => ("error", "ERROR"),
    }
}

fn golden_word(golden: &GoldenStatus) -> String {
    match golden {
        GoldenStatus::NotChecked => "-".into(),
        GoldenStatus::Missing => "no golden".into(),
        GoldenStatus::Matched => "match".into(),
        GoldenStatus::Changed(diffs) => format!("changed ({})", diffs.len()),
        GoldenStatus::Blessed => "blessed".into(),
    }
}

/// Why a case did not pass, or how many `expect` lines held.
fn detail(case: &CaseResult) -> String {
    let headline = case.headline();
    if !headline.is_empty() || case.expectations.is_empty() {
        return headline;
    }
    format!("all {} expect line(s) hold", case.expectations.len())
}

/// One case's row: its cells, and its report folder relative to the page.
fn row(case: &CaseResult, out_dir: &Path, staged: &Path) -> (String, Vec<Cell>) {
    let (class, word) = verdict_word(case.verdict());
    let relative = case
        .out_dir
        .as_ref()
        .and_then(|dir| dir.strip_prefix(out_dir).ok());
    let report = relative.map_or_else(
        || "<span class=\"muted\">none</span>".to_string(),
        |dir| link(&dir.join(REPORT_HTML), "report.html"),
    );
    let plot = relative
        .and_then(|dir| inline_svg(&staged.join(dir).join(TIMELINE_SVG)))
        .map_or_else(String::new, |svg| {
            format!("<div class=\"thumb\">{svg}</div>")
        });
    let seed = case.seed.map_or("-".to_string(), |s| s.to_string());
    let cells = vec![
        Cell::text(&case.scenario.display().to_string()),
        Cell::text(&seed).with_class("num"),
        Cell::text(word).with_class("verdict"),
        Cell::text(&golden_word(&case.golden)),
        Cell::text(&detail(case)),
        Cell::html(report),
        Cell::html(plot),
    ];
    (class.to_string(), cells)
}

/// The page of a check whose cases ran into `staged` (the folder being written, later renamed
/// to `report.out_dir`).
pub fn check_index_html(report: &CheckReport, staged: &Path) -> String {
    let header: Vec<String> = [
        "scenario", "seed", "result", "golden", "detail", "report", "timeline",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<(String, Vec<Cell>)> = report
        .cases
        .iter()
        .map(|case| row(case, &report.out_dir, staged))
        .collect();
    let mut body = format!(
        "<p>{} run(s): {} passed, {} failed, {} error(s). JUnit: {}.</p>\n",
        report.cases.len(),
        report.count(Verdict::Pass),
        report.count(Verdict::Fail),
        report.count(Verdict::Error),
        link(Path::new(super::run::JUNIT_XML), super::run::JUNIT_XML)
    );
    body.push_str("<h2>Runs</h2>\n");
    body.push_str(&table(&header, &rows));
    let failing: Vec<&CaseResult> = report
        .cases
        .iter()
        .filter(|c| c.verdict() != Verdict::Pass)
        .collect();
    if !failing.is_empty() {
        body.push_str("<h2>Why</h2>\n");
        for case in failing {
            let (_, word) = verdict_word(case.verdict());
            body.push_str(&format!(
                "<details open><summary>{} {}: {word}</summary>\n<pre>{}</pre></details>\n",
                escape(&case.scenario.display().to_string()),
                escape(&case.name()),
                escape(&case.failure_lines().join("\n"))
            ));
        }
    }
    page(
        &format!("routersim check: {}", report.out_dir.display()),
        &body,
    )
}
