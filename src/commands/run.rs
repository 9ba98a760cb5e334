//! `routersim run SCENARIO`.

use std::io::Write;
use std::process::ExitCode;

use routersim_report::print_summary;
use routersim_sim::config_keys::{config_lines, strict_errors};
use routersim_sim::run::{self as runner, RunOptions};
use routersim_sim::scenario::{PROFILE_SET_PATH, load_scenario, load_scenario_with_set};

use crate::error::{CliError, strict};
use crate::out::Out;
use crate::{EXIT_EXPECT_FAILED, RunArgs, Trace};

/// Runs one scenario, prints the summary, the `expect` results and the report's path.
pub fn run(args: RunArgs) -> Result<ExitCode, CliError> {
    let options = RunOptions {
        seed: args.seed,
        out_dir: args.out,
        no_trace: args.trace == Trace::None,
    };
    // `--profile` is a `set` entry: it goes through the loader as the file's key would.
    let mut scenario = match &args.profile {
        Some(name) => load_scenario_with_set(
            &args.scenario,
            &[(PROFILE_SET_PATH.to_string(), name.as_str().into())],
        )?,
        None => load_scenario(&args.scenario)?,
    };
    if let Some(transport) = args.transport {
        scenario.transport = transport;
    }
    scenario.runtime = args.runtime.into();
    if args.strict {
        strict(strict_errors(&scenario))?;
    }
    for line in config_lines(&scenario.router) {
        eprintln!("{line}");
    }
    let report = runner::run(&scenario, &options)?;
    for note in &report.notes {
        eprintln!("note: {note}");
    }
    let mut stdout = Out::stdout();
    print_summary(&report.summary, &mut stdout)?;
    if !report.expectations.is_empty() {
        writeln!(stdout, "expect:")?;
        for result in &report.expectations {
            writeln!(stdout, "  {result}")?;
        }
    }
    writeln!(stdout, "report: {}", report.out_dir.display())?;
    if report.passed() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("{} expectation(s) failed:", report.failures().count());
        for result in report.failures() {
            eprintln!("  {result}");
        }
        Ok(ExitCode::from(EXIT_EXPECT_FAILED))
    }
}
