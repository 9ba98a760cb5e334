//! The window table at the top of `report.html`: the whole run and each fault window (during
//! it, and after it to the run end) side by side — requests, failed, p50/p99, fallback hops,
//! and what each deployment served.
//!
//! Why on the page's top: the during/after numbers answer "what did the fault do, and did it
//! recover", and they were only in the terminal and the flattened `summary.json` at the
//! bottom. Requests, failed, percentiles and fallbacks are `summary.json`'s (`windows`: by
//! request arrival). "Served" is each deployment's ok attempts and all its attempts, summed
//! from `deployments.csv` over the seconds whose start lies in the window (by the second the
//! attempt ended, as `traffic_share.svg` draws them), so the table and the plot agree; a
//! window that does not start or end on a whole second is read to the second.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{esc, fmt_value};
use crate::summary::Summary;
use crate::windows::WindowStats;

/// A deployment's attempts in a row: ok (served) and all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Served {
    ok: u64,
    attempts: u64,
}

/// One row of the table: its name, its span in ms (`to` `None`: the run end) and its numbers.
struct Row<'a> {
    window: String,
    phase: &'static str,
    from_ms: f64,
    to_ms: Option<f64>,
    stats: Numbers<'a>,
}

/// The request numbers of a row: a window's phase, or the whole run's.
enum Numbers<'a> {
    Window(&'a WindowStats),
    Run(&'a Summary),
}

impl Numbers<'_> {
    /// requests, failed, p50 ms, p99 ms, fallback hops.
    fn values(&self) -> (u64, u64, f64, f64, u64) {
        match self {
            Numbers::Window(w) => (
                w.requests,
                w.failed,
                w.p50_latency_ms,
                w.p99_latency_ms,
                w.fallbacks,
            ),
            Numbers::Run(s) => (
                s.requests,
                s.failed,
                s.latency_ms.p50,
                s.latency_ms.p99,
                s.fallbacks,
            ),
        }
    }
}

/// The rows: the whole run, then each fault window during it and (when it ends) after it.
fn rows(summary: &Summary) -> Vec<Row<'_>> {
    let mut rows = vec![Row {
        window: "whole run".into(),
        phase: "",
        from_ms: 0.0,
        to_ms: None,
        stats: Numbers::Run(summary),
    }];
    for w in &summary.windows {
        rows.push(Row {
            window: w.label.clone(),
            phase: "during",
            from_ms: w.from_ms,
            to_ms: w.to_ms,
            stats: Numbers::Window(&w.during),
        });
        if let Some(to) = w.to_ms {
            rows.push(Row {
                window: w.label.clone(),
                phase: "after",
                from_ms: to,
                to_ms: None,
                stats: Numbers::Window(&w.after),
            });
        }
    }
    rows
}

/// Per deployment (sorted by id: every deployment of the summary and of the CSV), per row,
/// its attempts in the row's seconds. Unreadable rows of the CSV are skipped.
fn served(
    summary: &Summary,
    rows: &[Row<'_>],
    deployments_csv: &[u8],
) -> BTreeMap<String, Vec<Served>> {
    let mut out: BTreeMap<String, Vec<Served>> = summary
        .cooldowns
        .by_deployment
        .keys()
        .map(|id| (id.clone(), vec![Served::default(); rows.len()]))
        .collect();
    let mut reader = csv::Reader::from_reader(deployments_csv);
    let Ok(header) = reader.headers().cloned() else {
        return out;
    };
    let at = |name: &str| header.iter().position(|h| h == name);
    let (Some(second_i), Some(id_i), Some(attempts_i), Some(ok_i)) =
        (at("second"), at("deployment_id"), at("attempts"), at("ok"))
    else {
        return out;
    };
    for record in reader.records().flatten() {
        let number = |i: usize| record.get(i).and_then(|c| c.parse::<u64>().ok());
        let (Some(second), Some(id), Some(attempts), Some(ok)) = (
            number(second_i),
            record.get(id_i),
            number(attempts_i),
            number(ok_i),
        ) else {
            continue;
        };
        if attempts == 0 {
            continue;
        }
        let start_ms = second as f64 * 1000.0;
        let cells = out
            .entry(id.to_string())
            .or_insert_with(|| vec![Served::default(); rows.len()]);
        for (cell, row) in cells.iter_mut().zip(rows) {
            if start_ms >= row.from_ms && row.to_ms.is_none_or(|to| start_ms < to) {
                cell.ok += ok;
                cell.attempts += attempts;
            }
        }
    }
    out
}

/// `60–90 s`, `90 s – end`, `0 s – end`.
fn span(from_ms: f64, to_ms: Option<f64>) -> String {
    let s = |ms: f64| fmt_value((ms / 1000.0 * 1000.0).round() / 1000.0);
    match to_ms {
        Some(to) => format!("{}–{} s", s(from_ms), s(to)),
        None => format!("{} s – end", s(from_ms)),
    }
}

/// Appends the table (a heading and a scrolling wrapper) to `page`. `deployments_csv`: the
/// bytes of `deployments.csv`, for the served columns (none without it).
pub(super) fn window_table(page: &mut String, summary: &Summary, deployments_csv: Option<&[u8]>) {
    let rows = rows(summary);
    let served = deployments_csv.map_or_else(BTreeMap::new, |csv| served(summary, &rows, csv));
    let heading = if summary.windows.is_empty() {
        "Who served the requests"
    } else {
        "The whole run and each fault window"
    };
    let _ = writeln!(
        page,
        "<h3>{heading}</h3>\n<div class=\"scroll\">\n<table class=\"windows\">"
    );
    page.push_str(
        "<tr><th rowspan=\"2\">window</th><th rowspan=\"2\">arrived in</th>\
         <th rowspan=\"2\">requests</th><th rowspan=\"2\">failed</th><th rowspan=\"2\">p50 (ms)</th>\
         <th rowspan=\"2\">p99 (ms)</th><th rowspan=\"2\">fallbacks</th>",
    );
    if served.is_empty() {
        page.push_str("</tr>\n<tr></tr>\n");
    } else {
        let _ = write!(
            page,
            "<th colspan=\"{}\" class=\"group\">served (ok attempts) / attempts</th></tr>\n<tr>",
            served.len()
        );
        for id in served.keys() {
            let _ = write!(page, "<th class=\"num\">{}</th>", esc(id));
        }
        page.push_str("</tr>\n");
    }
    for (r, row) in rows.iter().enumerate() {
        let (requests, failed, p50, p99, fallbacks) = row.stats.values();
        let class = if failed > 0 { " class=\"fail\"" } else { "" };
        let name = if row.phase.is_empty() {
            format!("<b>{}</b>", esc(&row.window))
        } else {
            format!(
                "{} <span class=\"phase\">{}</span>",
                esc(&row.window),
                row.phase
            )
        };
        let pct = |v: f64| {
            if requests == 0 {
                "–".to_string()
            } else {
                fmt_value(v)
            }
        };
        let rate = if failed == 0 {
            String::new()
        } else {
            format!(
                " <span class=\"of\">({} %)</span>",
                fmt_value((failed as f64 / requests as f64 * 1000.0).round() / 10.0)
            )
        };
        let _ = write!(
            page,
            "<tr{class}><td>{name}</td><td>{}</td><td class=\"num\">{requests}</td>\
             <td class=\"num\">{failed}{rate}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{fallbacks}</td>",
            esc(&span(row.from_ms, row.to_ms)),
            pct(p50),
            pct(p99)
        );
        for cells in served.values() {
            let cell = cells.get(r).copied().unwrap_or_default();
            let _ = write!(
                page,
                "<td class=\"num\">{}<span class=\"of\"> / {}</span></td>",
                cell.ok, cell.attempts
            );
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</table>\n</div>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_read_in_seconds() {
        assert_eq!(span(60_000.0, Some(90_000.0)), "60–90 s");
        assert_eq!(span(1500.0, None), "1.5 s – end");
    }
}
