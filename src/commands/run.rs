//! `routersim run SCENARIO`.

use std::io::Write;
use std::process::ExitCode;

use routersim_report::print_summary;
use routersim_sim::run::{RunOptions, run_file};

use crate::{EXIT_ERROR, EXIT_EXPECT_FAILED, RunArgs, Trace};

/// Runs one scenario, prints the summary, the `expect` results and the report's path.
pub fn run(args: RunArgs) -> ExitCode {
    let options = RunOptions {
        seed: args.seed,
        out_dir: args.out,
        no_trace: args.trace == Trace::None,
    };
    let report = match run_file(&args.scenario, &options) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_ERROR);
        }
    };
    for note in &report.notes {
        eprintln!("note: {note}");
    }
    for warning in &report.warnings {
        eprintln!("warning: router config: {warning}");
    }
    if !report.ignored_keys.is_empty() {
        eprintln!(
            "note: router config keys not modelled (ignored): {}",
            report.ignored_keys.join(", ")
        );
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
