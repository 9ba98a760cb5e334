//! `routersim check DIR [--seeds 1..5] [--out DIR] [--bless] [--tolerance 2%] [--json | --quiet]`.

use routersim_sim::transport::Transport;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use routersim_suite::check::{
    CaseResult, CheckOptions, CheckReport, GoldenStatus, Verdict, check, find_scenarios,
};
use routersim_suite::seeds::Seeds;

use crate::args::{SeedsParser, parse_tolerance};
use crate::error::CliError;
use crate::exit::{EXIT_ERROR, EXIT_EXPECT_FAILED};
use crate::out::{Out, expectation_json, print_json};

/// `routersim check`.
#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// A directory of scenarios (searched recursively) or one scenario file.
    pub dir: PathBuf,
    /// Seeds to run each scenario with: `1..5` (inclusive), `1,2,7`, `3`, or a mix
    /// (`1..3,9`); default: each scenario's own seed.
    #[arg(long, value_parser = SeedsParser)]
    pub seeds: Option<Seeds>,
    /// Where every run's report and junit.xml go.
    #[arg(long, default_value = "reports/check")]
    pub out: PathBuf,
    /// Write each run's summary beside its scenario as a golden (`*.golden.json`).
    #[arg(long)]
    pub bless: bool,
    /// Make every router config key routersim does not use an error (exit 2): keys LiteLLM
    /// would not know (typos), keys routersim does not model, and keys (traffic's `models`
    /// and `workload` too) the chosen profile does not read.
    #[arg(long)]
    pub strict: bool,
    /// Run every scenario over this transport (`memory` or `http`), overriding its
    /// `transport`; goldens ignore the `transport` key.
    #[arg(long, value_name = "memory|http")]
    pub transport: Option<Transport>,
    /// How far every golden metric may move, relative to the golden (`2%`); a scenario's
    /// `golden: {tolerance: {METRIC: N%}}` wins for the metrics it names.
    #[arg(long, value_name = "N%", default_value = "0%", value_parser = parse_tolerance)]
    pub tolerance: f64,
    /// Runs at once (default: every core). The table, the reports and junit.xml are the same
    /// bytes whatever N: results are taken in path and seed order.
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub jobs: Option<usize>,
    /// Print the result as one JSON document on stdout (warnings and notes go to stderr).
    #[arg(long, conflicts_with = "quiet")]
    pub json: bool,
    /// Print nothing but errors (the exit code is the verdict).
    #[arg(long, short)]
    pub quiet: bool,
}

/// Runs every scenario of a directory for each seed: a table row per run as it ends, then the
/// reasons of every failure, junit.xml and the reports under `--out`. Exit 0 when every run
/// passed, 1 when an `expect` line or a golden failed, 2 on bad input (a bad `--seeds`, a
/// scenario that does not load, an unreadable golden).
pub fn run(args: CheckArgs) -> Result<ExitCode, CliError> {
    let seeds = args.seeds.map(Seeds::into_vec);
    let scenarios = find_scenarios(&args.dir)?;
    let options = CheckOptions {
        seeds,
        out_dir: args.out,
        bless: args.bless,
        strict: args.strict,
        transport: args.transport,
        tolerance: args.tolerance,
        jobs: args
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
    };
    let table = !(args.json || args.quiet);
    let width = scenarios
        .iter()
        .map(|p| p.display().to_string().chars().count())
        .max()
        .unwrap_or(0)
        .max("scenario".len());
    let mut stdout = Out::stdout();
    if table {
        writeln!(
            stdout,
            "{:<width$}  {:>6}  {:<6}  {:<9}  detail",
            "scenario", "seed", "result", "golden"
        )?;
    }
    let mut previous: Option<std::path::PathBuf> = None;
    // The rows print as runs end; the check goes on after a write error, which is returned
    // once it is over.
    let mut write_error = None;
    let report = check(&args.dir, &scenarios, &options, |case| {
        if table && write_error.is_none() {
            write_error = print_case(&mut stdout, case, width, &mut previous).err();
        }
    })?;
    if let Some(e) = write_error {
        return Err(e.into());
    }
    if !args.quiet {
        for note in &report.notes {
            eprintln!("note: {note}");
        }
    }
    let code = if report.count(Verdict::Error) > 0 {
        ExitCode::from(EXIT_ERROR)
    } else if report.count(Verdict::Fail) > 0 {
        ExitCode::from(EXIT_EXPECT_FAILED)
    } else {
        ExitCode::SUCCESS
    };
    if args.json {
        print_check_json(&report)?;
    }
    if args.quiet {
        print_errors_only(&report);
    }
    if !table {
        return Ok(code);
    }
    print_failures_and_totals(&mut stdout, &report, options.bless)?;
    Ok(code)
}

/// `--json`: the verdict and every case as one document.
fn print_check_json(report: &CheckReport) -> std::io::Result<()> {
    print_json(&serde_json::json!({
        "command": "check",
        "runs": report.cases.len(),
        "passed": report.count(Verdict::Pass),
        "failed": report.count(Verdict::Fail),
        "errors": report.count(Verdict::Error),
        "goldens_written": report.blessed(),
        "junit": report.junit_path.display().to_string(),
        "reports": report.out_dir.display().to_string(),
        "cases": report.cases.iter().map(case_json).collect::<Vec<_>>(),
    }))
}

/// `--quiet`: nothing but errors, the cases that could not be used or run.
fn print_errors_only(report: &CheckReport) {
    for case in report
        .cases
        .iter()
        .filter(|c| c.verdict() == Verdict::Error)
    {
        for line in case.failure_lines() {
            eprintln!("error: {} {}: {line}", case.scenario.display(), case.name());
        }
    }
}

/// After the table: each case that did not pass with its reasons, then the totals and where
/// the junit file and the reports are.
fn print_failures_and_totals(
    stdout: &mut Out,
    report: &CheckReport,
    bless: bool,
) -> std::io::Result<()> {
    let not_passed: Vec<&CaseResult> = report
        .cases
        .iter()
        .filter(|c| c.verdict() != Verdict::Pass)
        .collect();
    if !not_passed.is_empty() {
        writeln!(stdout)?;
        for case in &not_passed {
            let verdict = match case.verdict() {
                Verdict::Error => "ERROR",
                _ => "FAIL",
            };
            writeln!(
                stdout,
                "{} {}: {verdict}",
                case.scenario.display(),
                case.name()
            )?;
            for line in case.failure_lines() {
                writeln!(stdout, "  {line}")?;
            }
        }
    }
    writeln!(stdout)?;
    write!(
        stdout,
        "{} run(s): {} passed, {} failed, {} error(s)",
        report.cases.len(),
        report.count(Verdict::Pass),
        report.count(Verdict::Fail),
        report.count(Verdict::Error)
    )?;
    if bless {
        write!(stdout, "; {} golden(s) written", report.blessed())?;
    }
    writeln!(stdout)?;
    writeln!(stdout, "junit: {}", report.junit_path.display())?;
    writeln!(stdout, "reports: {}", report.out_dir.display())?;
    Ok(())
}

fn verdict_name(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Pass => "pass",
        Verdict::Fail => "fail",
        Verdict::Error => "error",
    }
}

fn golden_name(golden: &GoldenStatus) -> &'static str {
    match golden {
        GoldenStatus::NotChecked => "not_checked",
        GoldenStatus::Missing => "missing",
        GoldenStatus::Matched => "matched",
        GoldenStatus::Changed(_) => "changed",
        GoldenStatus::Blessed => "blessed",
    }
}

/// One case as JSON: what ran, its verdict, every `expect` line, the golden and its diffs.
fn case_json(case: &CaseResult) -> serde_json::Value {
    serde_json::json!({
        "scenario": case.scenario.display().to_string(),
        "seed": case.seed,
        "verdict": verdict_name(case.verdict()),
        "report": case.out_dir.as_ref().map(|p| p.display().to_string()),
        "expectations": case.expectations.iter().map(expectation_json).collect::<Vec<_>>(),
        "golden": {
            "status": golden_name(&case.golden),
            "path": case.golden_path.as_ref().map(|p| p.display().to_string()),
            "diffs": case.golden_diffs(),
        },
        "error": case.error,
        "warnings": case.config_lines,
        // Why it did not pass, as the table's failure section prints it (the pytest plugin
        // shows these lines).
        "failures": case.failure_lines(),
    })
}

/// A case's table row as it ends, and under a scenario's first row what its router config
/// does not use.
fn print_case(
    out: &mut Out,
    case: &CaseResult,
    width: usize,
    previous: &mut Option<std::path::PathBuf>,
) -> std::io::Result<()> {
    writeln!(out, "{}", row(case, width).trim_end())?;
    if previous.as_ref() != Some(&case.scenario) {
        for line in &case.config_lines {
            writeln!(out, "  {line}")?;
        }
        *previous = Some(case.scenario.clone());
    }
    out.flush()
}

/// One table row: scenario, seed, pass/FAIL/ERROR, the golden's status, why it failed.
fn row(case: &CaseResult, width: usize) -> String {
    let seed = case.seed.map_or("-".to_string(), |s| s.to_string());
    let verdict = match case.verdict() {
        Verdict::Pass => "pass",
        Verdict::Fail => "FAIL",
        Verdict::Error => "ERROR",
    };
    let golden = match &case.golden {
        GoldenStatus::NotChecked => "-",
        GoldenStatus::Missing => "no golden",
        GoldenStatus::Matched => "match",
        GoldenStatus::Changed(_) => "changed",
        GoldenStatus::Blessed => "blessed",
    };
    format!(
        "{:<width$}  {seed:>6}  {verdict:<6}  {golden:<9}  {}",
        case.scenario.display(),
        case.headline()
    )
}
