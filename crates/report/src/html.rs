//! `report.html`: the run on one self-contained page — the verdict of the `expect` lines, the
//! headline numbers with the window table beside them (the whole run and each fault window:
//! requests, failed, p50/p99, fallbacks, what each deployment served; see [`windows`]), the six
//! plots (inline SVG) and every `summary.json` value.
//!
//! Self-contained means it opens from a CI artifact or a mail attachment with no network: no
//! `src=`/`href=` to anything, no external CSS or JS (the page has no script at all), and the
//! plots' SVG namespace attribute is dropped when inlined (HTML gives inline `<svg>` its
//! namespace). The page takes plain data, so this crate does not depend on the simulator:
//! the caller turns its `expect` results into [`ExpectRow`]s. The bytes are deterministic: no
//! time stamps, no generated ids.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

mod windows;

use crate::ReportError;
use crate::plot::{
    ATTEMPTS_SVG, DEPLOYMENTS_SVG, LATENCY_OVER_TIME_SVG, LATENCY_SVG, PLOT_FILES, TIMELINE_SVG,
    TRAFFIC_SHARE_SVG,
};
use crate::summary::{LiveInfo, Summary};

/// The page.
pub const REPORT_HTML: &str = "report.html";

/// One `expect` line, checked: what the page shows of it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExpectRow {
    /// The metric's name.
    pub metric: String,
    /// Lower bound, inclusive.
    pub min: Option<f64>,
    /// Upper bound, inclusive.
    pub max: Option<f64>,
    /// The measured value (`None` when the metric has no value in the run).
    pub measured: Option<f64>,
    /// Whether the bound holds.
    pub passed: bool,
}

/// The page's heading and the scenario's description.
#[derive(Clone, Copy, Debug, Default)]
pub struct PageTitle<'a> {
    /// The heading (e.g. the scenario name).
    pub title: &'a str,
    /// A line under it (the scenario description; may be empty).
    pub description: &'a str,
}

/// Writes `report.html` into `dir`, inlining the plots found there (a missing one is shown as
/// not rendered) and reading `deployments.csv` there for the window table's served columns.
/// Returns the page's path.
pub fn write_report_html(
    dir: &Path,
    summary: &Summary,
    expectations: &[ExpectRow],
    title: PageTitle<'_>,
) -> Result<PathBuf, ReportError> {
    let plots: Vec<(&str, Option<String>)> = PLOT_FILES
        .iter()
        .map(|file| (*file, std::fs::read_to_string(dir.join(file)).ok()))
        .collect();
    let deployments_csv = std::fs::read(dir.join(crate::record::DEPLOYMENTS_CSV)).ok();
    let page = render_report_html(
        summary,
        expectations,
        title,
        &plots,
        deployments_csv.as_deref(),
    );
    let path = dir.join(REPORT_HTML);
    std::fs::write(&path, page).map_err(|e| ReportError::io(&path, e))?;
    Ok(path)
}

/// The page as a string; `plots` are (file name, SVG text if rendered), in page order;
/// `deployments_csv` the bytes of `deployments.csv` (the window table's served columns; none
/// without it).
pub fn render_report_html(
    summary: &Summary,
    expectations: &[ExpectRow],
    title: PageTitle<'_>,
    plots: &[(&str, Option<String>)],
    deployments_csv: Option<&[u8]>,
) -> String {
    let mut page = String::with_capacity(64 * 1024);
    let heading = if title.title.is_empty() {
        summary.scenario.as_str()
    } else {
        title.title
    };
    // Writing into a String cannot fail; the results are ignored.
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>routersim: {} (seed {})</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n",
        esc(heading),
        summary.seed
    );
    let _ = writeln!(page, "<h1>{}</h1>", esc(heading));
    if !title.description.is_empty() {
        let _ = writeln!(page, "<p class=\"desc\">{}</p>", esc(title.description));
    }
    // `transport` only when not the default, so memory runs' pages are as before.
    let transport = summary
        .transport
        .as_deref()
        .map(|t| format!(" · transport <b>{}</b>", esc(t)))
        .unwrap_or_default();
    let profile = summary
        .router_profile
        .as_ref()
        .map(|p| {
            let described = p.describe();
            let (name, rest) = described.split_once(' ').unwrap_or((&described, ""));
            format!(" · profile <b>{}</b> {}", esc(name), esc(rest))
        })
        .unwrap_or_default();
    // A live run's times are the wall clock's: the page says where and when it ran instead.
    let clock = match &summary.live {
        Some(live) => live_meta(live),
        None => format!(
            "virtual run end {} s",
            fmt_value(round3(summary.run_end_ms / 1000.0))
        ),
    };
    let _ = writeln!(
        page,
        "<p class=\"meta\">scenario <b>{}</b> · seed <b>{}</b> · routersim {}{profile}{transport} · {clock}</p>",
        esc(&summary.scenario),
        summary.seed,
        esc(&summary.routersim_version),
    );
    if let Some(live) = &summary.live {
        for warning in &live.warnings {
            let _ = writeln!(
                page,
                "<p class=\"verdict fail\">warning: {}</p>",
                esc(warning)
            );
        }
    }

    expectations_section(&mut page, expectations);
    headline_section(&mut page, summary, deployments_csv);
    for (file, svg) in plots {
        figure(&mut page, file, svg.as_deref());
    }
    summary_section(&mut page, summary);
    page.push_str("</body>\n</html>\n");
    page
}

const STYLE: &str = "body{font-family:sans-serif;margin:24px auto;max-width:1000px;padding:0 16px;color:#222;background:#fff}
h1{margin-bottom:4px}h2{margin-top:32px;border-bottom:1px solid #ddd;padding-bottom:4px}
.desc{margin-top:0;color:#444}.meta{color:#666;font-size:14px}
.verdict{padding:10px 14px;border-radius:4px;font-weight:bold}
.verdict.pass{background:#e3f4e1;color:#1d6b2a}.verdict.fail{background:#fbe3e3;color:#a11d1d}
.verdict.none{background:#f0f0f0;color:#555}
table{border-collapse:collapse;font-size:14px}td,th{padding:4px 10px;border-bottom:1px solid #eee;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.fail td{background:#fdf0f0}.ok{color:#1d6b2a;font-weight:bold}.bad{color:#a11d1d;font-weight:bold}
.headline{display:grid;grid-template-columns:repeat(auto-fill,minmax(180px,1fr));gap:8px}
.headline div{background:#f6f7f9;border-radius:4px;padding:8px 10px}
.headline span{display:block;color:#666;font-size:12px}.headline b{font-size:18px}
figure{margin:24px 0}figcaption{color:#444;margin-bottom:6px;font-size:14px}
figure svg{max-width:100%;height:auto;border:1px solid #eee}
.missing{color:#a11d1d}
h3{margin:18px 0 6px;font-size:16px}.scroll{overflow-x:auto}
table.windows th{background:#f6f7f9;font-weight:normal;color:#444}table.windows th.group{text-align:center}
table.windows td,table.windows th{white-space:nowrap}
.of{color:#888;font-size:12px}.phase{color:#666;font-size:12px}
";

fn expectations_section(page: &mut String, expectations: &[ExpectRow]) {
    page.push_str("<section id=\"expect\">\n<h2>Expectations</h2>\n");
    let failed = expectations.iter().filter(|e| !e.passed).count();
    let _ = match (expectations.len(), failed) {
        (0, _) => writeln!(
            page,
            "<p class=\"verdict none\">The scenario has no expect lines.</p>"
        ),
        (n, 0) => writeln!(
            page,
            "<p class=\"verdict pass\">All {n} expectations hold.</p>"
        ),
        (n, f) => writeln!(
            page,
            "<p class=\"verdict fail\">{f} of {n} expectations failed.</p>"
        ),
    };
    if !expectations.is_empty() {
        page.push_str(
            "<table>\n<tr><th>result</th><th>metric</th><th>bound</th><th>measured</th></tr>\n",
        );
        for e in expectations {
            let mut bound = Vec::new();
            if let Some(min) = e.min {
                bound.push(format!("≥ {}", fmt_value(min)));
            }
            if let Some(max) = e.max {
                bound.push(format!("≤ {}", fmt_value(max)));
            }
            let measured = e.measured.map_or("no value".to_string(), fmt_value);
            let (class, verdict, mark) = if e.passed {
                ("pass", "ok", "passed")
            } else {
                ("fail", "bad", "FAILED")
            };
            let _ = writeln!(
                page,
                "<tr class=\"{class}\"><td class=\"{verdict}\">{mark}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td></tr>",
                esc(&e.metric),
                esc(&bound.join(", ")),
                esc(&measured)
            );
        }
        page.push_str("</table>\n");
    }
    page.push_str("</section>\n");
}

/// `live run against URL (name version) · started … · wall clock … s`, escaped.
fn live_meta(live: &LiveInfo) -> String {
    let name = match (&live.target_name, &live.target_version) {
        (Some(name), Some(version)) => format!(" ({} {})", esc(name), esc(version)),
        (Some(name), None) => format!(" ({})", esc(name)),
        _ => String::new(),
    };
    format!(
        "<b>live run</b> against <b>{}</b>{name} · started {} · wall clock {} s",
        esc(&live.target),
        esc(&live.started_at),
        fmt_value(round3(live.wall_clock_ms / 1000.0)),
    )
}

fn headline_section(page: &mut String, s: &Summary, deployments_csv: Option<&[u8]>) {
    let mut cells: Vec<(&str, String)> = vec![
        ("requests", s.requests.to_string()),
        ("ok", s.ok.to_string()),
        ("failed", s.failed.to_string()),
        ("retry rate", fmt_value(s.retry_rate)),
        ("fallback rate", fmt_value(s.fallback_rate)),
        (
            "attempts per request",
            fmt_value(s.attempts_per_request.mean),
        ),
        ("latency p50 (ms)", fmt_value(s.latency_ms.p50)),
        ("latency p99 (ms)", fmt_value(s.latency_ms.p99)),
        ("latency p99.9 (ms)", fmt_value(s.latency_ms.p99_9)),
        ("latency max (ms)", fmt_value(s.latency_ms.max)),
        ("cooldown periods", s.cooldowns.periods.to_string()),
        ("cooldown sets", s.cooldowns.sets.to_string()),
        ("all cooled", s.all_cooled.to_string()),
    ];
    if s.half_open.total > 0 {
        cells.push(("half-open periods", s.half_open.total.to_string()));
    }
    if s.streams.requests > 0 {
        cells.push(("streamed requests", s.streams.requests.to_string()));
        cells.push(("TTFT p99 (ms)", fmt_value(s.streams.ttft_ms.p99)));
    }
    page.push_str("<section id=\"headline\">\n<h2>Summary</h2>\n<div class=\"headline\">\n");
    for (name, value) in cells {
        let _ = writeln!(
            page,
            "<div><span>{}</span><b>{}</b></div>",
            esc(name),
            esc(&value)
        );
    }
    page.push_str("</div>\n");
    windows::window_table(page, s, deployments_csv);
    page.push_str("</section>\n");
}

/// The plot's heading and what it shows.
fn caption(file: &str) -> (&'static str, &'static str) {
    match file {
        DEPLOYMENTS_SVG => (
            "Deployment health",
            "One lane per deployment, grouped by model group: healthy, cooling and half-open periods, with fault windows shaded behind the deployments they hit.",
        ),
        TIMELINE_SVG => (
            "Requests per virtual second",
            "Arrivals, ok, failed, retries and fallbacks per second (timeseries.csv), with the fault windows shaded and labelled.",
        ),
        TRAFFIC_SHARE_SVG => (
            "Traffic share per deployment",
            "Each deployment's share of the attempts over time, stacked to 100 % (deployments.csv): a fallback shows as one band giving way to another. Fault windows shaded.",
        ),
        LATENCY_OVER_TIME_SVG => (
            "Latency over time",
            "p50 and p99 end-to-end latency of the requests that ended in each second (timeseries.csv's p50_ms and p99_ms), with the fault windows shaded.",
        ),
        LATENCY_SVG => (
            "Latency distribution",
            "End-to-end latency as a CDF (and time to first token for streams), p50/p90/p99/p99.9 marked.",
        ),
        ATTEMPTS_SVG => (
            "Attempts and fallback hops",
            "Provider attempts per request, and fallback hops by source → target group.",
        ),
        _ => ("Plot", ""),
    }
}

fn figure(page: &mut String, file: &str, svg: Option<&str>) {
    let id = file.trim_end_matches(".svg");
    let (heading, text) = caption(file);
    let _ = writeln!(
        page,
        "<figure id=\"plot-{}\">\n<figcaption><b>{}</b> — {} <span class=\"meta\">({})</span></figcaption>",
        esc(id),
        esc(heading),
        esc(text),
        esc(file)
    );
    match svg {
        Some(svg) => {
            page.push_str(&inline_svg(svg, heading));
            if !page.ends_with('\n') {
                page.push('\n');
            }
        }
        None => page.push_str("<p class=\"missing\">not rendered</p>\n"),
    }
    page.push_str("</figure>\n");
}

/// An SVG file's text made fit to inline: no XML declaration, no namespace URL (HTML supplies
/// it), an accessible name.
fn inline_svg(svg: &str, label: &str) -> String {
    let mut svg = svg.trim_start();
    if svg.starts_with("<?xml")
        && let Some(end) = svg.find("?>")
    {
        svg = svg[end + 2..].trim_start();
    }
    let svg = svg.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1);
    svg.replacen(
        "<svg ",
        &format!("<svg role=\"img\" aria-label=\"{}\" ", esc(label)),
        1,
    )
}

fn summary_section(page: &mut String, summary: &Summary) {
    page.push_str(
        "<section id=\"summary\">\n<h2>Every summary value</h2>\n<details>\n<summary>summary.json, flattened</summary>\n<table>\n",
    );
    let mut rows = Vec::new();
    if let Ok(value) = serde_json::to_value(summary) {
        flatten("", &value, &mut rows);
    }
    for (key, value) in rows {
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td class=\"num\">{}</td></tr>",
            esc(&key),
            esc(&value)
        );
    }
    page.push_str("</table>\n</details>\n</section>\n");
}

/// Every leaf of a JSON value as (dotted path, text), in document order.
fn flatten(prefix: &str, value: &Value, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), v, out);
            }
        }
        Value::String(s) => out.push((prefix.to_string(), s.clone())),
        other => out.push((prefix.to_string(), other.to_string())),
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// A number without float noise: `3`, `0.25`, `812.5` (as the terminal prints `expect` lines).
fn fmt_value(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.6}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Escapes text for HTML content and attribute values.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inlined_svg_loses_its_namespace_url() {
        let svg = "<svg width=\"10\" height=\"10\" viewBox=\"0 0 10 10\" xmlns=\"http://www.w3.org/2000/svg\">\n<rect/></svg>\n";
        let inline = inline_svg(svg, "a <plot>");
        assert!(!inline.contains("http://"));
        assert!(inline.starts_with("<svg role=\"img\" aria-label=\"a &lt;plot&gt;\" width="));
    }

    #[test]
    fn values_print_without_noise() {
        assert_eq!(fmt_value(3.0), "3");
        assert_eq!(fmt_value(0.25), "0.25");
        assert_eq!(fmt_value(0.1 + 0.2), "0.3");
    }
}
