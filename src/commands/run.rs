//! `routersim run SCENARIO [--json | --quiet]`.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use routersim_report::print_summary;
use routersim_sim::config_keys::{config_lines, strict_errors};
use routersim_sim::run::{self as runner, RunOptions};
use routersim_sim::scenario::{PROFILE_SET_PATH, load_scenario, load_scenario_with_set};

use crate::error::{CliError, strict};
use crate::out::{Out, expectation_json, print_json};
use crate::{EXIT_EXPECT_FAILED, RunArgs, Trace};

/// How long a run goes before the progress line appears (wall time: a quick run prints none).
const PROGRESS_AFTER: Duration = Duration::from_secs(1);

/// Runs one scenario, prints the summary, the `expect` results and the report's path (or one
/// JSON document with `--json`, or nothing with `--quiet`).
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
    if !args.quiet {
        for line in config_lines(&scenario.router) {
            eprintln!("{line}");
        }
    }
    let progress = (!args.quiet).then(|| Progress::start(&scenario.name));
    let report = runner::run(&scenario, &options);
    if let Some(progress) = progress {
        progress.stop();
    }
    let report = report?;
    if !args.quiet {
        for note in &report.notes {
            eprintln!("note: {note}");
        }
    }
    let code = if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_EXPECT_FAILED)
    };
    if args.quiet {
        return Ok(code);
    }
    if args.json {
        print_json(&serde_json::json!({
            "command": "run",
            "scenario": args.scenario.display().to_string(),
            "seed": report.summary.seed,
            "report": report.out_dir.display().to_string(),
            "passed": report.passed(),
            "expectations": report.expectations.iter().map(expectation_json).collect::<Vec<_>>(),
            "summary": report.summary,
        }))?;
        return Ok(code);
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
    if !report.passed() {
        eprintln!("{} expectation(s) failed:", report.failures().count());
        for result in report.failures() {
            eprintln!("  {result}");
        }
    }
    Ok(code)
}

/// A spinner on stderr while a run takes more than [`PROGRESS_AFTER`] of wall time, only when
/// stderr is a terminal (a log or a pipe gets no control characters). It runs on its own
/// thread: the simulation never reads the wall clock.
struct Progress {
    done: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Progress {
    fn start(name: &str) -> Self {
        let done = Arc::new((Mutex::new(false), Condvar::new()));
        let thread = std::io::stderr().is_terminal().then(|| {
            let done = Arc::clone(&done);
            let message = format!("running {name}");
            std::thread::spawn(move || show(&done, message))
        });
        Self { done, thread }
    }

    fn stop(mut self) {
        let (lock, signal) = &*self.done;
        if let Ok(mut done) = lock.lock() {
            *done = true;
        }
        signal.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Waits [`PROGRESS_AFTER`]; if the run is still going, spins until it ends.
fn show(done: &(Mutex<bool>, Condvar), message: String) {
    let (lock, signal) = done;
    let Ok(guard) = lock.lock() else { return };
    let Ok((guard, _)) = signal.wait_timeout_while(guard, PROGRESS_AFTER, |done| !*done) else {
        return;
    };
    if *guard {
        return;
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
        .with_elapsed(PROGRESS_AFTER);
    if let Ok(style) = ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}") {
        bar.set_style(style);
    }
    bar.set_message(message);
    bar.enable_steady_tick(Duration::from_millis(120));
    drop(signal.wait_while(guard, |done| !*done));
    bar.finish_and_clear();
}
