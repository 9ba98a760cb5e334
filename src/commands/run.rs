//! `routersim run SCENARIO`.

use std::io::Write;
use std::process::ExitCode;

use routersim_report::print_summary;
use routersim_sim::config_keys::{config_lines, strict_errors};
use routersim_sim::run::{self as runner, RunOptions};
use routersim_sim::scenario::load_scenario;

use crate::{EXIT_ERROR, EXIT_EXPECT_FAILED, RunArgs, Trace};

/// Runs one scenario, prints the summary, the `expect` results and the report's path.
pub fn run(args: RunArgs) -> ExitCode {
    let options = RunOptions {
        seed: args.seed,
        out_dir: args.out,
        no_trace: args.trace == Trace::None,
    };
    let scenario = match load_scenario(&args.scenario) {
        Ok(scenario) => scenario,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_ERROR);
        }
    };
    if args.strict {
        let errors = strict_errors(&scenario);
        for e in &errors {
            eprintln!("error: {e}");
        }
        if !errors.is_empty() {
            return ExitCode::from(EXIT_ERROR);
        }
    }
    for line in config_lines(&scenario.router) {
        eprintln!("{line}");
    }
    let report = match runner::run(&scenario, &options) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_ERROR);
        }
    };
    for note in &report.notes {
        eprintln!("note: {note}");
    }
    let mut stdout = std::io::stdout().lock();
    let _ = print_summary(&report.summary, &mut stdout);
    if !report.expectations.is_empty() {
        let _ = writeln!(stdout, "expect:");
        for result in &report.expectations {
            let _ = writeln!(stdout, "  {result}");
        }
    }
    let _ = writeln!(stdout, "report: {}", report.out_dir.display());
    if report.passed() {
        ExitCode::SUCCESS
    } else {
        eprintln!("{} expectation(s) failed:", report.failures().count());
        for result in report.failures() {
            eprintln!("  {result}");
        }
        ExitCode::from(EXIT_EXPECT_FAILED)
    }
}
