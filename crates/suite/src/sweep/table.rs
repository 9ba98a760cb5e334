//! The terminal table a sweep or a merge prints: one line per combination (the config's own
//! values labelled `(config)`), each main metric's mean with its 95 % half-width and its
//! verdict mark (none on a descriptive metric), then the verdict lines.
//!
//! Separate from `stats` because it reads the verdict, which is a judgement on top of the
//! statistics: kept above both, so neither imports the other's caller.

use std::fmt::Write as _;

use super::manifest::Manifest;
use super::stats::ComboStats;
use super::verdict::{Mark, is_ranked, marks, verdict_lines};

/// The main metrics' columns: metric, header label, decimals. The deadline exhaustion and
/// validation rejection columns appear when some combination has one (they are 0 wherever no
/// deadline or contract applies).
fn shown_columns(
    manifest: &Manifest,
    stats: &[ComboStats],
) -> Vec<(&'static str, &'static str, usize)> {
    let mut shown = vec![
        ("failed_rate", "failed_rate", 4),
        ("fallback_rate", "fallback_rate", 4),
        ("retry_rate", "retry_rate", 4),
        ("attempts_per_request_mean", "attempts/req", 3),
        ("p99_latency_ms", "p99 ms", 1),
        ("cooled_ms_total", "cooled ms", 0),
    ];
    for (name, label) in [
        ("deadline_exhaustion_rate", "deadline exh."),
        ("validation_rejection_rate", "rejected"),
    ] {
        let seen = manifest
            .metrics
            .iter()
            .position(|x| x == name)
            .is_some_and(|m| {
                stats
                    .iter()
                    .any(|c| c.metrics.get(m).is_some_and(|i| i.mean != 0.0))
            });
        if seen {
            shown.push((name, label, 4));
        }
    }
    shown
}

/// The table as text cells: the header, then one row per combination (in `stats` order):
/// its settings (the config's own values labelled), its runs, and per main metric the mean
/// `±` the 95 % half-width and the verdict mark (`*` best, `~` not significantly different
/// from it; none on a descriptive metric or where no best is named).
pub fn table_cells(manifest: &Manifest, stats: &[ComboStats]) -> Vec<Vec<String>> {
    let shown = shown_columns(manifest, stats);
    let combos = manifest.combinations();
    let marks: Vec<Vec<Mark>> = shown
        .iter()
        .map(|&(name, _, _)| {
            manifest
                .metrics
                .iter()
                .position(|x| x == name)
                .map_or_else(Vec::new, |m| marks(name, stats, m))
        })
        .collect();
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut header = vec!["settings".to_string(), "runs".to_string()];
    header.extend(shown.iter().map(|(name, label, _)| {
        if is_ranked(name) {
            format!("{label} (±95%)")
        } else {
            format!("{label} (±95%, not ranked)")
        }
    }));
    rows.push(header);
    for (index, c) in stats.iter().enumerate() {
        let mut row = vec![manifest.label(&combos[c.combo]), c.runs.to_string()];
        for (column, &(name, _, decimals)) in shown.iter().enumerate() {
            let Some(m) = manifest.metrics.iter().position(|x| x == name) else {
                row.push(String::new());
                continue;
            };
            let i = c.metrics[m];
            // `~` only beside a named best: with none, nothing is shown different.
            let has_best = marks[column].contains(&Mark::Best);
            let mark = match marks[column].get(index) {
                Some(Mark::Best) if stats.len() > 1 => "*",
                Some(Mark::Indistinguishable) if has_best => "~",
                _ => " ",
            };
            row.push(format!(
                "{:.*} ±{:.*}{mark}",
                decimals,
                i.mean,
                decimals,
                (i.high - i.mean).abs()
            ));
        }
        rows.push(row);
    }
    rows
}

/// A one-line-per-combination text table of the main metrics ([`table_cells`]), for the
/// terminal, then the verdict lines.
pub fn format_table(manifest: &Manifest, stats: &[ComboStats]) -> String {
    let rows = table_cells(manifest, stats);
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|col| {
            rows.iter()
                .map(|r| r[col].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut text = String::new();
    for row in &rows {
        let mut line = String::new();
        for (col, cell) in row.iter().enumerate() {
            if col == 0 {
                let _ = write!(line, "{cell:<w$}", w = widths[col]);
            } else {
                let _ = write!(line, "  {cell:>w$}", w = widths[col]);
            }
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    for line in verdict_lines(manifest, stats) {
        text.push_str(&line);
        text.push('\n');
    }
    text
}
