//! The terminal table a sweep or a merge prints: one line per combination, each main metric's
//! mean with its 95 % half-width and its verdict mark, then the verdict lines.
//!
//! Separate from `stats` because it reads the verdict, which is a judgement on top of the
//! statistics: kept above both, so neither imports the other's caller.

use std::fmt::Write as _;

use super::manifest::Manifest;
use super::stats::ComboStats;
use super::verdict::{Mark, marks, verdict_lines};

/// A one-line-per-combination text table of the main metrics, for the terminal. The deadline
/// exhaustion and validation rejection columns appear when some combination has one (they
/// are 0 wherever no deadline or contract applies).
pub fn format_table(manifest: &Manifest, stats: &[ComboStats]) -> String {
    let mut shown = vec![
        ("failed_rate", "failed", 4),
        ("fallback_rate", "fallback", 4),
        ("retry_rate", "retry", 4),
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
    let combos = manifest.combinations();
    // `*` best, `~` not significantly different from the best (see `verdict`).
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
    header.extend(shown.iter().map(|(_, label, _)| format!("{label} (±95%)")));
    rows.push(header);
    for (index, c) in stats.iter().enumerate() {
        let mut row = vec![manifest.describe(&combos[c.combo]), c.runs.to_string()];
        for (column, &(name, _, decimals)) in shown.iter().enumerate() {
            let Some(m) = manifest.metrics.iter().position(|x| x == name) else {
                row.push(String::new());
                continue;
            };
            let i = c.metrics[m];
            let mark = match marks[column].get(index) {
                Some(Mark::Best) if stats.len() > 1 => "*",
                Some(Mark::Indistinguishable) => "~",
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
