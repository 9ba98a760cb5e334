//! `routersim run SCENARIO [--json | --quiet]`.

use routersim_sim::transport::Transport;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use routersim_engine::event::{EventKind, EventSink, RoutingEvent};
use routersim_report::print_summary;
use routersim_sim::config_keys::{config_lines, strict_errors};
use routersim_sim::run::{self as runner, Rendering, RunOptions};
use routersim_sim::scenario::{PROFILE_SET_PATH, load_scenario, load_scenario_with_set};
use tokio::time::Instant;

use crate::args::{RuntimeArg, Trace};
use crate::error::{CliError, from_profile_flag, strict};
use crate::exit::EXIT_EXPECT_FAILED;
use crate::out::{Out, expectation_json, print_json};

/// `routersim run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The scenario file (YAML).
    pub scenario: PathBuf,
    /// Override the scenario's seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Report directory (default: reports/NAME/seed-N/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Which per-request traces to write.
    #[arg(long, value_enum, default_value_t = Trace::All)]
    pub trace: Trace,
    /// Make every router config key routersim does not use an error (exit 2): keys LiteLLM
    /// would not know (typos), keys routersim does not model, and keys (traffic's `models`
    /// and `workload` too) the chosen profile does not read.
    #[arg(long)]
    pub strict: bool,
    /// How the router reaches the fake providers, overriding the scenario's `transport`:
    /// `memory`, or `http` (the engine's HTTP adapter and the wire server, in memory).
    #[arg(long, value_name = "memory|http")]
    pub transport: Option<Transport>,
    /// The router's profile, overriding the config's `router_settings.profile` (`litellm`,
    /// `deltallm`, `litellm-1.110`); explicit settings still win over its bundle.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Which runtime runs the simulation: `virtual` (exact deadlines) or `tokio` (paused
    /// tokio, millisecond timers). Each is deterministic; they differ below a millisecond.
    #[arg(long, value_enum, default_value_t = RuntimeArg::Virtual)]
    pub runtime: RuntimeArg,
    /// Print the result as one JSON document on stdout (warnings and notes go to stderr).
    #[arg(long, conflicts_with = "quiet")]
    pub json: bool,
    /// Print nothing but errors (the exit code is the verdict).
    #[arg(long, short)]
    pub quiet: bool,
}

/// How long a run goes before the progress line appears (wall time: a quick run prints none).
const PROGRESS_AFTER: Duration = Duration::from_secs(1);

/// Runs one scenario, prints the summary, the `expect` results and the report's path (or one
/// JSON document with `--json`, or nothing with `--quiet`).
pub fn run(args: RunArgs) -> Result<ExitCode, CliError> {
    let options = RunOptions {
        seed: args.seed,
        out_dir: args.out,
        no_trace: args.trace == Trace::None,
        recorder_thread: runner::spare_core(),
    };
    // `--profile` is a `set` entry: it goes through the loader as the file's key would.
    let mut scenario = match &args.profile {
        Some(name) => load_scenario_with_set(
            &args.scenario,
            &[(PROFILE_SET_PATH.to_string(), name.as_str().into())],
        )
        .map_err(from_profile_flag)?,
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
    let progress = (!args.quiet).then(|| Progress::start(&scenario.name, scenario.duration));
    let report = match progress.as_ref().and_then(Progress::counters) {
        // On a terminal: a sink beside the recorder reads the virtual time off the events.
        Some(counters) => {
            let sink = |start: Instant, _replica: usize| -> Arc<dyn EventSink + Send + Sync> {
                Arc::new(ProgressSink {
                    start,
                    counters: Arc::clone(&counters),
                })
            };
            runner::run_with_sink(&scenario, &options, Rendering::Full, Some(&sink))
        }
        None => runner::run(&scenario, &options),
    };
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

/// What the progress line says, updated by [`ProgressSink`] as the run's events go by.
#[derive(Debug, Default)]
struct Counters {
    /// The latest event's virtual time since the run start, µs.
    virtual_us: AtomicU64,
    /// Requests ended.
    requests: AtomicU64,
}

/// Sees every routing event beside the recorder (only while a progress line may show): two
/// relaxed atomic writes per event, nothing that changes the run.
struct ProgressSink {
    start: Instant,
    counters: Arc<Counters>,
}

impl EventSink for ProgressSink {
    fn emit(&self, event: &RoutingEvent) {
        let us = u64::try_from(event.at.saturating_duration_since(self.start).as_micros())
            .unwrap_or(u64::MAX);
        self.counters.virtual_us.fetch_max(us, Ordering::Relaxed);
        if matches!(event.kind, EventKind::RequestEnd { .. }) {
            self.counters.requests.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// `running NAME · virtual 12m30s / 1h (21%) · 182,000 requests` (the spinner's template adds
/// the wall time). The percentage is of the scenario's `duration` (at most 100: a run drains
/// its last requests past it).
fn progress_message(name: &str, duration: Duration, counters: &Counters) -> String {
    let virtual_us = counters.virtual_us.load(Ordering::Relaxed);
    let requests = counters.requests.load(Ordering::Relaxed);
    let total_us = u64::try_from(duration.as_micros()).unwrap_or(u64::MAX);
    let pct = if total_us == 0 {
        100
    } else {
        (u128::from(virtual_us) * 100 / u128::from(total_us)).min(100)
    };
    format!(
        "running {name} · virtual {} / {} ({pct}%) · {} requests",
        clock(virtual_us / 1_000_000),
        clock(duration.as_secs()),
        thousands(requests)
    )
}

/// Whole seconds as `1h`, `12m30s`, `2h5s`, `0s`.
fn clock(secs: u64) -> String {
    let parts = [(secs / 3600, "h"), (secs / 60 % 60, "m"), (secs % 60, "s")];
    let text: String = parts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, unit)| format!("{n}{unit}"))
        .collect();
    if text.is_empty() { "0s".into() } else { text }
}

/// `182000` as `182,000`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A spinner on stderr while a run takes more than [`PROGRESS_AFTER`] of wall time, only when
/// stderr is a terminal (a log or a pipe gets no control characters). It runs on its own
/// thread: the simulation never reads the wall clock.
struct Progress {
    done: Arc<(Mutex<bool>, Condvar)>,
    counters: Option<Arc<Counters>>,
    thread: Option<JoinHandle<()>>,
}

impl Progress {
    fn start(name: &str, duration: Duration) -> Self {
        let done = Arc::new((Mutex::new(false), Condvar::new()));
        let counters = std::io::stderr()
            .is_terminal()
            .then(|| Arc::new(Counters::default()));
        let thread = counters.as_ref().map(|counters| {
            let done = Arc::clone(&done);
            let counters = Arc::clone(counters);
            let name = name.to_string();
            std::thread::spawn(move || show(&done, &name, duration, &counters))
        });
        Self {
            done,
            counters,
            thread,
        }
    }

    /// The counters the line reads (`None`: no line, stderr is not a terminal).
    fn counters(&self) -> Option<Arc<Counters>> {
        self.counters.clone()
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

/// Waits [`PROGRESS_AFTER`]; if the run is still going, spins until it ends, the message
/// refreshed a few times a second.
fn show(done: &(Mutex<bool>, Condvar), name: &str, duration: Duration, counters: &Counters) {
    let (lock, signal) = done;
    let Ok(guard) = lock.lock() else { return };
    let Ok((mut guard, _)) = signal.wait_timeout_while(guard, PROGRESS_AFTER, |done| !*done) else {
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
    bar.set_message(progress_message(name, duration, counters));
    bar.enable_steady_tick(Duration::from_millis(120));
    while !*guard {
        let Ok((next, _)) =
            signal.wait_timeout_while(guard, Duration::from_millis(250), |done| !*done)
        else {
            break;
        };
        guard = next;
        bar.set_message(progress_message(name, duration, counters));
    }
    bar.finish_and_clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_says_virtual_progress_as_a_percentage_of_the_duration() {
        let counters = Counters::default();
        counters.virtual_us.store(750_000_000, Ordering::Relaxed);
        counters.requests.store(182_000, Ordering::Relaxed);
        assert_eq!(
            progress_message("storm", Duration::from_secs(3600), &counters),
            "running storm · virtual 12m30s / 1h (20%) · 182,000 requests"
        );
        // Draining past the duration stays at 100 %.
        counters.virtual_us.store(3_700_000_000, Ordering::Relaxed);
        assert!(progress_message("storm", Duration::from_secs(3600), &counters).contains("(100%)"));
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(clock(0), "0s");
        assert_eq!(clock(7205), "2h5s");
    }
}
