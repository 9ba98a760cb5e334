//! `routersim diff REPORT_A REPORT_B`: summary metrics side by side, and the first request
//! whose attempts differ. Differences are not an error (exit 0); unreadable input is (exit 2).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use routersim_report::windows::FaultWindowSummary;
use routersim_suite::diff::{Attempts, MetricChange, ReportDiff, SOURCE_SIM, diff_reports};

use crate::error::CliError;
use crate::out::{Out, print_json};

/// `routersim diff`.
#[derive(clap::Args, Debug)]
pub struct DiffArgs {
    /// The first report directory.
    pub report_a: PathBuf,
    /// The second report directory.
    pub report_b: PathBuf,
    /// Print the result as one JSON document on stdout (warnings and notes go to stderr).
    #[arg(long, conflicts_with = "quiet")]
    pub json: bool,
    /// Print nothing but errors (the exit code is the verdict).
    #[arg(long, short)]
    pub quiet: bool,
}

/// A number as compact text: integers without decimals, others with up to six.
fn number(x: f64) -> String {
    if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        let s = format!("{x:.6}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        if s == "-0" { "0".into() } else { s.into() }
    }
}

fn signed(x: f64) -> String {
    let s = number(x);
    if x > 0.0 { format!("+{s}") } else { s }
}

fn relative(m: &MetricChange) -> String {
    if m.a == m.b {
        "=".into()
    } else {
        match m.relative() {
            Some(r) => format!("{:+.1}%", r * 100.0),
            None => "n/a".into(),
        }
    }
}

fn sequence(attempts: &[String]) -> String {
    if attempts.is_empty() {
        "(no attempts)".into()
    } else {
        attempts.join(" -> ")
    }
}

/// Compares two reports.
pub fn run(args: DiffArgs) -> Result<ExitCode, CliError> {
    let diff = diff_reports(&args.report_a, &args.report_b)?;
    if args.quiet {
        return Ok(ExitCode::SUCCESS);
    }
    if args.json {
        print_diff_json(&args, &diff)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = Out::stdout();
    // Sources are named only when a report is not simulated (sim/sim output is unchanged).
    let across = diff.sources.0 != SOURCE_SIM || diff.sources.1 != SOURCE_SIM;
    print_reports(&mut out, &args, &diff, across)?;
    print_metrics(&mut out, &diff)?;
    print_windows(&mut out, &diff)?;
    print_attempts(&mut out, &diff.attempts, across)?;
    Ok(ExitCode::SUCCESS)
}

/// Which two reports, and a note when they cannot be compared request by request.
fn print_reports(
    out: &mut Out,
    args: &DiffArgs,
    diff: &ReportDiff,
    across: bool,
) -> std::io::Result<()> {
    for (label, dir, s, source) in [
        ("A", &args.report_a, &diff.a, &diff.sources.0),
        ("B", &args.report_b, &diff.b, &diff.sources.1),
    ] {
        let source = if across {
            format!(", source {source}")
        } else {
            String::new()
        };
        writeln!(
            out,
            "{label}: {} ({}, seed {}{source})",
            dir.display(),
            s.scenario,
            s.seed
        )?;
    }
    if diff.sources.0 != diff.sources.1 {
        writeln!(
            out,
            "note: reports from different sources: requests are joined by id, else by arrival \
             within 1 ms"
        )?;
    }
    for d in &diff.disagreements {
        writeln!(
            out,
            "note: {}'s summary.json says {} {}, its requests.csv {}: a rate computed two ways \
             (a report written before one definition held for live and simulated runs)",
            d.report, d.metric, d.summary, d.requests_csv
        )?;
    }
    if diff.a.scenario != diff.b.scenario || diff.a.seed != diff.b.seed {
        writeln!(
            out,
            "note: different scenarios or seeds: the same request id is not the same request"
        )?;
    }
    writeln!(out)?;
    Ok(())
}

/// The metrics table: A, B, the change and the relative change of each.
fn print_metrics(out: &mut Out, diff: &ReportDiff) -> std::io::Result<()> {
    let rows: Vec<[String; 5]> = diff
        .metrics
        .iter()
        .map(|m| {
            [
                m.name.clone(),
                number(m.a),
                number(m.b),
                signed(m.change()),
                relative(m),
            ]
        })
        .collect();
    let header = ["metric", "A", "B", "change", "relative"].map(String::from);
    let width = |col: usize| {
        rows.iter()
            .chain(std::iter::once(&header))
            .map(|r| r[col].chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..5).map(width).collect();
    for row in std::iter::once(&header).chain(&rows) {
        writeln!(
            out,
            "{:<w0$}  {:>w1$}  {:>w2$}  {:>w3$}  {:>w4$}",
            row[0],
            row[1],
            row[2],
            row[3],
            row[4],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3],
            w4 = widths[4]
        )?;
    }
    let changed = diff.metrics.iter().filter(|m| m.a != m.b).count();
    writeln!(out, "{changed} of {} metrics changed", diff.metrics.len())?;
    writeln!(out)?;
    Ok(())
}

/// The first request whose attempts differ, or why attempts were not compared.
fn print_attempts(out: &mut Out, attempts: &Attempts, across: bool) -> std::io::Result<()> {
    match attempts {
        Attempts::Missing { reports } => {
            let dirs: Vec<String> = reports.iter().map(|d| d.display().to_string()).collect();
            let files = if across {
                "attempts.csv or requests.csv"
            } else {
                "attempts.csv"
            };
            writeln!(
                out,
                "attempts: not compared: no {files} in {} (written with `--trace none`); \
                 only the summaries were compared",
                dirs.join(" and ")
            )?;
        }
        Attempts::Joined {
            requests_a,
            requests_b,
            by_id,
            by_arrival,
            first,
        } => {
            let joined = format!(
                "{} requests joined ({by_id} by id, {by_arrival} by arrival) of {requests_a} in \
                 A and {requests_b} in B",
                by_id + by_arrival
            );
            match first {
                None => writeln!(out, "attempts: no joined request differs ({joined})")?,
                Some(first) => {
                    writeln!(
                        out,
                        "attempts: first joined request that differs: A {} at {} ms, B {} at \
                         {} ms ({joined})",
                        first.request_id_a,
                        number(first.arrival_us_a as f64 / 1000.0),
                        first.request_id_b,
                        number(first.arrival_us_b as f64 / 1000.0)
                    )?;
                    writeln!(out, "  A: {}", sequence(&first.a))?;
                    writeln!(out, "  B: {}", sequence(&first.b))?;
                }
            }
        }
        Attempts::Compared {
            requests_a,
            requests_b,
            first: None,
        } => {
            writeln!(
                out,
                "attempts: no request differs ({requests_a} requests with attempts in A, \
                 {requests_b} in B)"
            )?;
        }
        Attempts::Compared {
            requests_a,
            requests_b,
            first: Some(first),
        } => {
            writeln!(
                out,
                "attempts: first request that differs: {} ({requests_a} requests with attempts \
                 in A, {requests_b} in B)",
                first.request_id
            )?;
            writeln!(out, "  A: {}", sequence(&first.a))?;
            writeln!(out, "  B: {}", sequence(&first.b))?;
        }
    }
    Ok(())
}

/// The comparison as one JSON document: both reports, every metric, the attempts.
/// Whether either report is an imported log (`routersim import`): then its fault windows are
/// the ones found in the log, and a replay of the imported scenario has the same ones.
fn has_imported(diff: &ReportDiff) -> bool {
    [&diff.sources.0, &diff.sources.1]
        .iter()
        .any(|s| s.as_str() == routersim_import::report::SOURCE_IMPORTED)
}

/// The fault windows both reports have (same label, same span), side by side.
fn common_windows(diff: &ReportDiff) -> Vec<(&FaultWindowSummary, &FaultWindowSummary)> {
    diff.a
        .windows
        .iter()
        .filter_map(|a| {
            let b = diff
                .b
                .windows
                .iter()
                .find(|b| b.label == a.label && b.from_ms == a.from_ms && b.to_ms == a.to_ms)?;
            Some((a, b))
        })
        .collect()
}

/// With an imported report: each fault window, during and after, A against B.
fn print_windows(out: &mut Out, diff: &ReportDiff) -> std::io::Result<()> {
    if !has_imported(diff) {
        return Ok(());
    }
    let windows = common_windows(diff);
    writeln!(out, "windows (requests by arrival; A / B):")?;
    if windows.is_empty() {
        writeln!(out, "  no fault window in both reports")?;
    }
    for (a, b) in windows {
        let span = |w: &FaultWindowSummary| match w.to_ms {
            Some(to) => format!(
                "[{} s, {} s)",
                number(w.from_ms / 1000.0),
                number(to / 1000.0)
            ),
            None => format!("[{} s, end]", number(w.from_ms / 1000.0)),
        };
        for (phase, x, y) in [
            ("during", &a.during, &b.during),
            ("after", &a.after, &b.after),
        ] {
            writeln!(
                out,
                "  {} {} {phase}: requests {} / {}, failed {} / {}, retries {} / {}, fallbacks {} / {}, p50 {} / {} ms, p99 {} / {} ms",
                a.label,
                span(a),
                x.requests,
                y.requests,
                x.failed,
                y.failed,
                x.retries,
                y.retries,
                x.fallbacks,
                y.fallbacks,
                number(x.p50_latency_ms),
                number(y.p50_latency_ms),
                number(x.p99_latency_ms),
                number(y.p99_latency_ms)
            )?;
        }
    }
    writeln!(out)
}

fn print_diff_json(args: &DiffArgs, diff: &ReportDiff) -> std::io::Result<()> {
    let side = |dir: &std::path::Path, s: &routersim_report::Summary, source: &str| {
        serde_json::json!({
            "report": dir.display().to_string(),
            "scenario": s.scenario,
            "seed": s.seed,
            "source": source,
        })
    };
    let metrics: Vec<serde_json::Value> = diff
        .metrics
        .iter()
        .map(|m| {
            serde_json::json!({
                "metric": m.name,
                "a": m.a,
                "b": m.b,
                "change": m.change(),
                "relative_change": m.relative(),
            })
        })
        .collect();
    let mut document = serde_json::json!({
        "command": "diff",
        "a": side(&args.report_a, &diff.a, &diff.sources.0),
        "b": side(&args.report_b, &diff.b, &diff.sources.1),
        "changed": diff.metrics.iter().filter(|m| m.a != m.b).count(),
        "metrics": metrics,
        "attempts": diff.attempts,
    });
    // Only with an imported report (every other diff's document is as before).
    if has_imported(diff) {
        let windows: Vec<serde_json::Value> = common_windows(diff)
            .into_iter()
            .map(|(a, b)| serde_json::json!({"label": a.label, "from_ms": a.from_ms, "to_ms": a.to_ms, "a": a.during, "b": b.during, "a_after": a.after, "b_after": b.after}))
            .collect();
        document["windows"] = serde_json::Value::Array(windows);
    }
    // Only when a report disagrees with itself, so every other document reads as before.
    if !diff.disagreements.is_empty() {
        document["rates_computed_two_ways"] = serde_json::json!(diff.disagreements);
    }
    print_json(&document)
}
