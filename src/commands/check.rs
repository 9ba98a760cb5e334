//! `routersim check DIR [--seeds 1..5] [--out DIR] [--bless]`.

use std::io::Write;
use std::process::ExitCode;

use routersim_sim::check::{
    CaseResult, CheckOptions, GoldenStatus, Verdict, check, find_scenarios,
};
use routersim_sim::seeds::Seeds;

use crate::{CheckArgs, EXIT_ERROR, EXIT_EXPECT_FAILED};

/// Runs every scenario of a directory for each seed: a table row per run as it ends, then the
/// reasons of every failure, junit.xml and the reports under `--out`. Exit 0 when every run
/// passed, 1 when an `expect` line or a golden failed, 2 on bad input (a bad `--seeds`, a
/// scenario that does not load, an unreadable golden).
pub fn run(args: CheckArgs) -> ExitCode {
    let seeds = args.seeds.map(Seeds::into_vec);
    let scenarios = match find_scenarios(&args.dir) {
        Ok(found) => found,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_ERROR);
        }
    };
    let options = CheckOptions {
        seeds,
        out_dir: args.out,
        bless: args.bless,
        strict: args.strict,
    };
    let width = scenarios
        .iter()
        .map(|p| p.display().to_string().chars().count())
        .max()
        .unwrap_or(0)
        .max("scenario".len());
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(
        stdout,
        "{:<width$}  {:>6}  {:<6}  {:<9}  detail",
        "scenario", "seed", "result", "golden"
    );
    let mut previous: Option<std::path::PathBuf> = None;
    let report = check(&args.dir, &scenarios, &options, |case| {
        let _ = writeln!(stdout, "{}", row(case, width).trim_end());
        // What the router config does not use, once per scenario, under its first row.
        if previous.as_ref() != Some(&case.scenario) {
            for line in &case.config_lines {
                let _ = writeln!(stdout, "  {line}");
            }
            previous = Some(case.scenario.clone());
        }
        let _ = stdout.flush();
    });
    let report = match report {
        Ok(report) => report,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_ERROR);
        }
    };
    for note in &report.notes {
        eprintln!("note: {note}");
    }
    let not_passed: Vec<&CaseResult> = report
        .cases
        .iter()
        .filter(|c| c.verdict() != Verdict::Pass)
        .collect();
    if !not_passed.is_empty() {
        let _ = writeln!(stdout);
        for case in &not_passed {
            let verdict = match case.verdict() {
                Verdict::Error => "ERROR",
                _ => "FAIL",
            };
            let _ = writeln!(
                stdout,
                "{} {}: {verdict}",
                case.scenario.display(),
                case.name()
            );
            for line in case.failure_lines() {
                let _ = writeln!(stdout, "  {line}");
            }
        }
    }
    let (passed, failed, errors) = (
        report.count(Verdict::Pass),
        report.count(Verdict::Fail),
        report.count(Verdict::Error),
    );
    let _ = writeln!(stdout);
    let _ = write!(
        stdout,
        "{} run(s): {passed} passed, {failed} failed, {errors} error(s)",
        report.cases.len()
    );
    if options.bless {
        let _ = write!(stdout, "; {} golden(s) written", report.blessed());
    }
    let _ = writeln!(stdout);
    let _ = writeln!(stdout, "junit: {}", report.junit_path.display());
    let _ = writeln!(stdout, "reports: {}", report.out_dir.display());
    if errors > 0 {
        ExitCode::from(EXIT_ERROR)
    } else if failed > 0 {
        ExitCode::from(EXIT_EXPECT_FAILED)
    } else {
        ExitCode::SUCCESS
    }
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
