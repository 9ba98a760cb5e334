//! The runner: a scenario in, a report out.
//!
//! Everything runs on a current-thread tokio runtime with paused time, so the clock jumps from
//! one timer to the next and a ten-minute incident replays in milliseconds. Each arrival is a
//! local task calling the real [`Router`]; the fake providers live in the same process (no
//! sockets, no `spawn_blocking`), called directly or, with `transport: http`, through the
//! engine's HTTP adapter and the wire server over in-memory pipes ([`crate::transport`]). Randomness comes from per-purpose ChaCha streams derived from
//! the seed (`router`, `provider/<id>/…`, `traffic/<i>`), so the same scenario, seed and
//! version give byte-identical reports.
//!
//! Besides the recorder's files, every run writes the plots (`deployments.svg`,
//! `timeline.svg`, `latency.svg`, `attempts.svg`: the recorder draws them, told every
//! deployment and fault window here) and, once the `expect` lines are checked,
//! `report.html`. [`run_with_rendering`] with [`Rendering::DataOnly`] skips both (the
//! benchmark's timing should not include drawing).

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use routersim_engine::config::Profile;
use routersim_engine::event::{EventSink, RoutingEvent};
use routersim_engine::provider::Provider;
use routersim_engine::request::{ClientTry, CompletionResult};
use routersim_mock_providers::provider::FakeProviders;
use routersim_mock_providers::spec::{FaultEffect, FaultTarget, LatencySpec, StreamFault};
use routersim_mock_providers::wire::{CallLog, WireServer};
use routersim_mock_providers::{FaultSpec, duration::format_duration};
use routersim_report::record::{Recorder, RecorderOptions, RunMeta, SummaryContext};
use routersim_report::summary::{RouterProfile, Summary};
use routersim_report::windows::TimeWindow;
use routersim_report::{
    DeploymentLane, ExpectRow, FaultWindow, PageTitle, PlotContext, write_report_html,
};
use routersim_runtime::time::{now, sleep_until, yield_now};
use routersim_runtime::{RuntimeError, spawn_local};
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::expect::{self, ExpectationResult};
use crate::facts::{FactsSink, RunFacts};
use crate::fleet::{Fleet, FleetInputs};
use crate::report_dir::{ReportDir, ReportDirError};
use crate::scenario::{Scenario, ScenarioError, load_scenario};
use crate::transport::{self, Transport};

pub use crate::version::VERSION;

/// How to run a scenario.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Overrides the scenario's seed.
    pub seed: Option<u64>,
    /// Where to write (default `reports/<name>/seed-<N>/`).
    pub out_dir: Option<PathBuf>,
    /// Skip `requests.csv` and `attempts.csv` (for huge runs).
    pub no_trace: bool,
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// The summary (also in `summary.json`).
    pub summary: Summary,
    /// Where the report files are.
    pub out_dir: PathBuf,
    /// The seed used.
    pub seed: u64,
    /// Every `expect` line, checked.
    pub expectations: Vec<ExpectationResult>,
    /// Router config keys the engine does not model (listed once, never an error).
    pub ignored_keys: Vec<String>,
    /// Router config lines that load but look wrong.
    pub warnings: Vec<String>,
    /// What writing the report folder had to tidy up first (an interrupted run's leftovers,
    /// a dead writer's lock), for the user.
    pub notes: Vec<String>,
    /// What the run's events say about which settings could have mattered.
    pub facts: RunFacts,
}

impl RunReport {
    /// True when every `expect` line holds.
    pub fn passed(&self) -> bool {
        self.expectations.iter().all(|e| e.passed)
    }

    /// The lines that failed.
    pub fn failures(&self) -> impl Iterator<Item = &ExpectationResult> {
        self.expectations.iter().filter(|e| !e.passed)
    }
}

/// Why a run could not happen.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The scenario is invalid.
    #[error("{0}")]
    Scenario(#[from] ScenarioError),
    /// The fake providers could not be built from it.
    #[error("{file}: {source}")]
    Providers {
        /// The scenario file.
        file: PathBuf,
        /// What was wrong.
        source: routersim_mock_providers::provider::SpecError,
    },
    /// Writing the report failed.
    #[error("{0}")]
    Report(#[from] routersim_report::ReportError),
    /// The report folder cannot be written (another process writes it, it is not a report).
    #[error("{0}")]
    Output(#[from] ReportDirError),
    /// The run failed after its report was begun: nothing of it is kept.
    #[error("{source}; {note}")]
    NotWritten {
        /// Why it failed.
        source: Box<RunError>,
        /// What became of the target folder.
        note: String,
    },
    /// A task still held the recorder when the run ended (a bug: the report cannot be
    /// finished).
    #[error("the recorder is still shared when the run ends (a routersim bug)")]
    RecorderShared,
    /// Request tasks panicked: a report without their requests would lie.
    #[error("{0} request task(s) panicked (see above); no report is written")]
    TaskPanicked(usize),
    /// `transport: http` could not address a deployment (an `api_key` that cannot be an HTTP
    /// header).
    #[error("{file}: transport: http: {message}")]
    Transport {
        /// The scenario file.
        file: PathBuf,
        /// What was wrong.
        message: String,
    },
    /// The runtime could not start, or stalled.
    #[error("{0}")]
    Runtime(#[from] RuntimeError),
    /// More requests would be in flight at once than routersim holds
    /// ([`crate::traffic::MAX_IN_FLIGHT`]); the run stopped there.
    #[error("{file}: {message}")]
    InFlight {
        /// The scenario file.
        file: PathBuf,
        /// Which traffic entry, when, and the arithmetic.
        message: String,
    },
}

/// The default report directory: `reports/<name>/seed-<N>/`.
pub fn default_out_dir(scenario: &Scenario, seed: u64) -> PathBuf {
    Path::new("reports")
        .join(&scenario.name)
        .join(format!("seed-{seed}"))
}

/// Loads and runs a scenario file.
pub fn run_file(path: &Path, options: &RunOptions) -> Result<RunReport, RunError> {
    let scenario = load_scenario(path)?;
    run(&scenario, options)
}

/// Which of the report's pictures a run draws.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Rendering {
    /// The SVG plots and `report.html` (what `routersim run` writes).
    #[default]
    Full,
    /// Only the data files (traces, histograms, `timeseries.csv`, `summary.json`): for callers
    /// that time the harness or only read the summary.
    DataOnly,
}

/// Runs a scenario and writes its report, plots and `report.html` included.
pub fn run(scenario: &Scenario, options: &RunOptions) -> Result<RunReport, RunError> {
    run_with_rendering(scenario, options, Rendering::Full)
}

/// Runs a scenario and writes its report, drawing what `rendering` asks for.
///
/// The report is all or nothing ([`ReportDir`]): it is written into a staging folder beside
/// the target and renamed into place when complete, replacing the previous report as a whole;
/// if the run fails, the previous report is left untouched. A second process writing the same
/// folder meanwhile is refused.
pub fn run_with_rendering(
    scenario: &Scenario,
    options: &RunOptions,
    rendering: Rendering,
) -> Result<RunReport, RunError> {
    run_with_sink(scenario, options, rendering, None)
}

/// Builds an extra event sink once the run's virtual clock has started (it is given the
/// run's start instant).
pub type SinkFactory<'a> = &'a dyn Fn(Instant) -> Arc<dyn EventSink + Send + Sync>;

/// [`run_with_rendering`] with an extra sink that sees every routing event beside the
/// recorder, in the same order (`routersim explore` checks its invariants there).
pub fn run_with_sink(
    scenario: &Scenario,
    options: &RunOptions,
    rendering: Rendering,
    extra_sink: Option<SinkFactory<'_>>,
) -> Result<RunReport, RunError> {
    expect::validate(&scenario.expect, &scenario.file)?;
    let seed = options.seed.unwrap_or(scenario.seed);
    let out_dir = options
        .out_dir
        .clone()
        .unwrap_or_else(|| default_out_dir(scenario, seed));
    let staged = ReportDir::begin(&out_dir)?;
    let run = run_into_with_sink(
        scenario,
        seed,
        staged.path(),
        options.no_trace,
        rendering,
        extra_sink,
    );
    let mut report = match run {
        Ok(report) => report,
        Err(source) => {
            return Err(RunError::NotWritten {
                note: staged.untouched(),
                source: Box::new(source),
            });
        }
    };
    report.notes = staged.commit()?;
    report.out_dir = out_dir;
    Ok(report)
}

/// Runs a scenario with `seed` and writes its report straight into `dir`, which the caller
/// owns: a fresh folder inside a [`ReportDir`]'s staging folder (each run of a sweep or a
/// check). No lock, no rename, no completion marker (see
/// [`mark_complete`](crate::report_dir::mark_complete)).
pub fn run_into(
    scenario: &Scenario,
    seed: u64,
    dir: &Path,
    no_trace: bool,
    rendering: Rendering,
) -> Result<RunReport, RunError> {
    run_into_with_sink(scenario, seed, dir, no_trace, rendering, None)
}

/// [`run_into`] with an extra sink beside the recorder (see [`run_with_sink`]).
pub fn run_into_with_sink(
    scenario: &Scenario,
    seed: u64,
    dir: &Path,
    no_trace: bool,
    rendering: Rendering,
    extra_sink: Option<SinkFactory<'_>>,
) -> Result<RunReport, RunError> {
    expect::validate(&scenario.expect, &scenario.file)?;
    let (summary, facts) = scenario.runtime.block_on_from(
        scenario.virtual_origin,
        simulate(scenario, seed, dir, no_trace, rendering, extra_sink),
    )??;
    let expectations = expect::evaluate(&scenario.expect, &summary);
    if rendering == Rendering::Full {
        let rows: Vec<ExpectRow> = expectations
            .iter()
            .map(|e| ExpectRow {
                // A windowed line says its window: `p99_latency_ms in 5m..15m`.
                metric: match e.expectation.window {
                    Some(w) => format!("{} in {}", e.expectation.metric, expect::format_window(w)),
                    None => e.expectation.metric.clone(),
                },
                min: e.expectation.min,
                max: e.expectation.max,
                measured: e.measured,
                passed: e.passed,
            })
            .collect();
        write_report_html(
            dir,
            &summary,
            &rows,
            PageTitle {
                title: &scenario.name,
                description: &scenario.description,
            },
        )?;
    }
    Ok(RunReport {
        summary,
        out_dir: dir.to_path_buf(),
        seed,
        expectations,
        ignored_keys: scenario.router.ignored_keys.clone(),
        warnings: scenario.router.warnings.clone(),
        notes: Vec::new(),
        facts,
    })
}

/// What `summary.json` says about the rules the router followed: the profile (`litellm` when
/// none is set: the defaults are its rules) and the LiteLLM release it reproduces, if any.
pub fn router_profile(profile: Option<Profile>) -> RouterProfile {
    let profile = profile.unwrap_or(Profile::LiteLlm);
    let litellm_version = profile.litellm_version();
    let rules = match (profile, litellm_version) {
        (_, Some(version)) => format!("litellm-{version}"),
        (Profile::DeltaLlm, None) => "deltallm-documented".to_string(),
        (Profile::Multigrid, None) => "multigrid-documented".to_string(),
        (Profile::Contract, None) => "contract-documented".to_string(),
        (_, None) => "litellm-documented".to_string(),
    };
    RouterProfile {
        name: profile.as_str().to_string(),
        litellm_version: litellm_version.map(str::to_string),
        rules,
    }
}

async fn simulate(
    scenario: &Scenario,
    seed: u64,
    out_dir: &Path,
    no_trace: bool,
    rendering: Rendering,
    extra_sink: Option<SinkFactory<'_>>,
) -> Result<(Summary, RunFacts), RunError> {
    let start = now();
    let recorder = Recorder::new(out_dir, start, RecorderOptions { trace: !no_trace })?
        .with_router_profile(router_profile(scenario.router.settings.profile))
        .with_summary_context(summary_context(scenario))?;
    let recorder = match rendering {
        Rendering::Full => recorder.with_plot_context(plot_context(scenario)),
        Rendering::DataOnly => recorder.without_plots(),
    };
    let recorder =
        recorder.with_replicas(u32::try_from(scenario.fleet.replicas).unwrap_or(u32::MAX))?;
    let providers = FakeProviders::new(
        &scenario.router,
        &scenario.providers,
        &scenario.faults,
        seed,
        scenario.epoch_unix_ms,
        start,
    )
    .map_err(|source| RunError::Providers {
        file: scenario.file.clone(),
        source,
    })?;
    let run = Simulation {
        scenario,
        seed,
        start,
        extra_sink,
        settle: 0,
    };
    match scenario.transport {
        Transport::Memory => run.drive(Arc::new(recorder), providers).await,
        Transport::Http => {
            // The same fakes, behind the wire server, reached through the engine's HTTP
            // adapter over in-memory pipes (see `crate::transport`).
            let server = WireServer::new(
                Rc::new(providers),
                scenario.router.deployments.clone(),
                CallLog::disabled(),
                start,
                scenario.epoch_unix_ms,
            );
            let provider = transport::http_provider(Rc::new(server), &scenario.router.deployments)
                .map_err(|e| RunError::Transport {
                    file: scenario.file.clone(),
                    message: e.to_string(),
                })?;
            let recorder = recorder.with_transport(Transport::Http.as_str());
            let run = Simulation {
                settle: transport::SETTLE_YIELDS,
                ..run
            };
            run.drive(Arc::new(recorder), provider).await
        }
    }
}

/// One run's fixed inputs; [`Simulation::drive`] runs it over any provider.
struct Simulation<'a> {
    scenario: &'a Scenario,
    seed: u64,
    start: Instant,
    extra_sink: Option<SinkFactory<'a>>,
    /// Times the arrival loop yields before starting each request (see
    /// [`transport::SETTLE_YIELDS`]); 0 in memory.
    settle: usize,
}

impl Simulation<'_> {
    /// Runs the traffic through a router over `provider` to the end and finishes the report.
    async fn drive<P: Provider + 'static>(
        self,
        recorder: Arc<Recorder>,
        provider: P,
    ) -> Result<(Summary, RunFacts), RunError> {
        let Self {
            scenario,
            seed,
            start,
            extra_sink,
            settle,
        } = self;
        let sink = Arc::new(FactsSink::new(recorder.clone()));
        let mut fleet = Fleet::build(
            FleetInputs {
                config: &scenario.router,
                fleet: &scenario.fleet,
                seed,
                epoch_unix_ms: scenario.epoch_unix_ms,
                start,
                recorder: &recorder,
                sink: match extra_sink {
                    Some(extra) => Arc::new(Tee(sink.clone(), extra(start))),
                    None => sink.clone(),
                },
            },
            provider,
        );
        let mut background = Vec::with_capacity(2 * fleet.routers.len());
        for router in &fleet.routers {
            background.push(spawn_local({
                let router = router.clone();
                async move { router.run_cooldown_sweeper().await }
            }));
            background.push(spawn_local({
                let router = router.clone();
                async move { router.run_health_checks().await }
            }));
        }
        let in_flight = Rc::new(InFlight::default());
        let mut arrivals = scenario.arrivals_with_seed(seed);
        for arrival in arrivals.by_ref() {
            sleep_until(start + arrival.at).await;
            if in_flight.running() as u64 >= crate::traffic::MAX_IN_FLIGHT {
                return Err(RunError::InFlight {
                    file: scenario.file.clone(),
                    message: crate::traffic::in_flight_exceeded(&arrival),
                });
            }
            for _ in 0..settle {
                yield_now().await;
            }
            let ((router, connection), task) = (fleet.pick(), InFlight::enter(&in_flight));
            let mut request = arrival.request;
            let client_retries = scenario.client_retries;
            if client_retries > 0 {
                request.client = Some(ClientTry {
                    retries: client_retries,
                    ..ClientTry::default()
                });
            }
            let serve = async move {
                // By reference: the task holds the only copy of the request while it is in
                // flight.
                // Only a failure's provider calls outlive the result (the task stays small).
                let failed_calls =
                    |r: CompletionResult| r.outcome.is_err().then_some(r.attempts.len());
                let mut failed = failed_calls(router.completion_of(&request).await);
                // `client_retries`: the client sends a failed request again at once, same id.
                while let Some(calls) = failed
                    && let Some(client) = request.client.as_mut()
                    && client.try_number < client.retries
                {
                    client.try_number += 1;
                    client.provider_calls_before += calls as u32;
                    failed = failed_calls(router.completion_of(&request).await);
                }
                drop(connection);
                task.finished();
            };
            if routersim_runtime::is_virtual() {
                // The virtual executor's task is one allocation of the future's own size.
                drop(spawn_local(serve));
            } else {
                // Boxed on tokio: its task cell is aligned to 128 bytes, so it then holds only
                // a pointer and the request's state is one allocation of its own size.
                drop(spawn_local(Box::pin(serve)));
            }
        }
        if let Some(e) = arrivals.take_error() {
            // A traffic file changed since it was validated: no report of part of the traffic.
            return Err(e.into());
        }
        in_flight.all_done().await;
        if in_flight.abandoned() > 0 {
            // The task's panic message was printed when it happened; a report without its
            // request would lie.
            return Err(RunError::TaskPanicked(in_flight.abandoned()));
        }
        let end = now();
        for task in background {
            task.cancel().await;
        }
        drop(fleet);
        let facts = sink.facts();
        drop(sink);
        let recorder = sole_recorder(recorder)?;
        let summary = recorder.finish(RunMeta {
            scenario: scenario.name.clone(),
            seed,
            version: VERSION.to_string(),
            end,
        })?;
        Ok((summary, facts))
    }
}

/// The recorder once every other holder (router, sinks, tasks) has let go of it.
fn sole_recorder(recorder: Arc<Recorder>) -> Result<Recorder, RunError> {
    Arc::try_unwrap(recorder).map_err(|_| RunError::RecorderShared)
}

/// The request tasks still running. A task that panics is dropped by the runtime (which keeps
/// the panic in the task's join handle), so each task holds a [`TaskGuard`] that counts it out
/// however it ends: a run never waits forever for a task that is gone.
#[derive(Debug, Default)]
struct InFlight {
    running: Cell<usize>,
    abandoned: Cell<usize>,
    done: Notify,
}

impl InFlight {
    /// Counts a task in.
    fn enter(this: &Rc<Self>) -> TaskGuard {
        this.running.set(this.running.get() + 1);
        TaskGuard {
            in_flight: Some(this.clone()),
        }
    }

    /// Counts a task out (`abandoned`: it ended without finishing).
    fn leave(&self, abandoned: bool) {
        if abandoned {
            self.abandoned.set(self.abandoned.get() + 1);
        }
        self.running.set(self.running.get() - 1);
        if self.running.get() == 0 {
            self.done.notify_one();
        }
    }

    /// Waits until every task entered so far is out.
    async fn all_done(&self) {
        while self.running.get() > 0 {
            self.done.notified().await;
        }
    }

    /// Tasks that ended without finishing (they panicked).
    /// Request tasks running now.
    fn running(&self) -> usize {
        self.running.get()
    }

    fn abandoned(&self) -> usize {
        self.abandoned.get()
    }
}

/// Counts one request task out when dropped. One pointer: every in-flight request holds
/// one (`None` once [`TaskGuard::finished`] has counted it out).
struct TaskGuard {
    in_flight: Option<Rc<InFlight>>,
}

impl TaskGuard {
    /// The task ran to its end.
    fn finished(mut self) {
        if let Some(f) = self.in_flight.take() {
            f.leave(false);
        }
    }
}

impl Drop for TaskGuard {
    fn drop(&mut self) {
        if let Some(f) = self.in_flight.take() {
            f.leave(true);
        }
    }
}

/// Sends each event to the recorder, then to an extra sink.
struct Tee(Arc<FactsSink<Recorder>>, Arc<dyn EventSink + Send + Sync>);

impl EventSink for Tee {
    fn emit(&self, event: &RoutingEvent) {
        self.0.emit(event);
        self.1.emit(event);
    }
}

/// Every deployment and the windows `summary.json` aggregates: each fault window (labelled as
/// the plots label it) and each `expect` line's `window`.
pub fn summary_context(scenario: &Scenario) -> SummaryContext {
    let plots = plot_context(scenario);
    SummaryContext {
        deployments: plots.deployments.into_iter().map(|d| d.id).collect(),
        fault_windows: plots
            .faults
            .into_iter()
            .map(|f| {
                (
                    f.label,
                    TimeWindow {
                        from: f.from,
                        to: f.to,
                    },
                )
            })
            .collect(),
        scoped_windows: expect::scoped_windows(&scenario.expect),
    }
}

/// Every deployment (lanes, in `model_list` order) and every fault window, for the plots.
pub fn plot_context(scenario: &Scenario) -> PlotContext {
    let deployments: Vec<DeploymentLane> = scenario
        .router
        .deployments
        .iter()
        .map(|d| DeploymentLane {
            id: d.id.to_string(),
            model_group: d.model_name.to_string(),
        })
        .collect();
    let faults = scenario
        .faults
        .iter()
        .map(|fault| {
            let (target, ids) = match &fault.target {
                FaultTarget::Deployment(id) => (id.clone(), vec![id.clone()]),
                FaultTarget::ModelGroup(group) => (
                    format!("{group} (all)"),
                    deployments
                        .iter()
                        .filter(|d| d.model_group == *group)
                        .map(|d| d.id.clone())
                        .collect(),
                ),
            };
            FaultWindow {
                label: format!("{target}: {}", fault_label(fault)),
                detail: fault_detail(fault),
                deployments: ids,
                from: fault.from,
                to: fault.to,
            }
        })
        .collect();
    PlotContext {
        deployments,
        faults,
    }
}

/// What a fault does, briefly: `rate_limit 90%`, `slow p50 5s`, `stream_break`.
fn fault_label(fault: &FaultSpec) -> String {
    let what = match &fault.effect {
        FaultEffect::Error(e) => match e.status {
            Some(status) => format!("{} {status}", e.kind),
            None => e.kind.to_string(),
        },
        FaultEffect::Slowdown(latency) => match latency {
            LatencySpec::Fixed(d) => format!("slow {}", format_duration(*d)),
            LatencySpec::LogNormal { p50, .. } => format!("slow p50 {}", format_duration(*p50)),
            LatencySpec::Uniform { min, max } => {
                format!("slow {}-{}", format_duration(*min), format_duration(*max))
            }
        },
        FaultEffect::Stream(stream) => match stream {
            StreamFault::Break { .. } => "stream_break",
            StreamFault::ErrorFrame { .. } => "stream_error_frame",
            StreamFault::Truncated { .. } => "stream_truncated",
            StreamFault::Stall { .. } => "stream_stall",
            StreamFault::Empty(_) => "stream_empty",
            StreamFault::NoFinish(_) => "stream_no_finish",
        }
        .to_string(),
        FaultEffect::InvalidResponse(defect) => format!("invalid {}", defect.as_str()),
    };
    if fault.probability < 1.0 {
        let pct = format!("{:.2}", fault.probability * 100.0);
        let pct = pct.trim_end_matches('0').trim_end_matches('.');
        format!("{what} {pct}%")
    } else {
        what
    }
}

/// What the plots add after a fault's label: the `Retry-After` an error sends and the time
/// range, e.g. `Retry-After 5s, 2m–12m` (the label already says the probability).
fn fault_detail(fault: &FaultSpec) -> String {
    let to = fault.to.map_or_else(|| "end".to_string(), format_duration);
    let range = format!("{}–{to}", format_duration(fault.from));
    match &fault.effect {
        FaultEffect::Error(e) => match e.retry_after {
            Some(after) => format!("Retry-After {}, {range}", format_duration(after)),
            None => range,
        },
        _ => range,
    }
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "the tests build recorders and runtimes on tokio's paused clock directly"
)]
mod tests {
    use super::*;

    #[test]
    fn plot_fault_labels_say_retry_after_probability_and_range() -> Result<(), ScenarioError> {
        let yaml = r"name: labels
duration: 15m
router:
  model_list:
    - {model_name: gpt-4o, litellm_params: {model: azure/east}, model_info: {id: azure-east}}
providers:
  azure-east: {latency: {p50: 700ms, p99: 3s}}
faults:
  - {deployment: azure-east, from: 2m, to: 12m, error: rate_limit, status: 429, probability: 0.8, retry_after: 5s}
  - {deployment: azure-east, from: 13m, error: timeout}
traffic:
  - {model: gpt-4o, rate: 1/s}
";
        let scenario = crate::scenario::parse_scenario(yaml, Path::new("<test>"))?;
        let faults = plot_context(&scenario).faults;
        // The label (also `summary.json`'s window name) is unchanged; the detail is the plots'.
        assert_eq!(faults[0].label, "azure-east: rate_limit 429 80%");
        assert_eq!(faults[0].detail, "Retry-After 5s, 2m–12m");
        assert_eq!(faults[1].label, "azure-east: timeout");
        assert_eq!(faults[1].detail, "13m–end");
        let summary = summary_context(&scenario);
        assert_eq!(summary.fault_windows[0].0, "azure-east: rate_limit 429 80%");
        Ok(())
    }

    #[test]
    fn a_recorder_still_shared_says_so_not_histogram() -> Result<(), Box<dyn std::error::Error>> {
        let dir = std::env::temp_dir().join(format!("routersim-shared-{}", std::process::id()));
        let recorder = Arc::new(Recorder::new(
            &dir,
            Instant::now(),
            RecorderOptions::default(),
        )?);
        let _other = recorder.clone();
        let message = sole_recorder(recorder).err().map(|e| e.to_string());
        std::fs::remove_dir_all(&dir)?;
        let message = message.ok_or("a shared recorder was taken")?;
        assert!(message.contains("still shared"), "{message}");
        assert!(!message.contains("histogram"), "{message}");
        Ok(())
    }

    /// A request task that panics must not leave the run waiting for it forever.
    #[test]
    fn a_panicking_request_task_is_counted_out() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("runtime");
        let local = tokio::task::LocalSet::new();
        let in_flight = Rc::new(InFlight::default());
        let abandoned = local.block_on(&runtime, {
            let in_flight = in_flight.clone();
            async move {
                for i in 0..3u64 {
                    let task = InFlight::enter(&in_flight);
                    tokio::task::spawn_local(async move {
                        tokio::time::sleep(std::time::Duration::from_millis(10 * i)).await;
                        if i == 1 {
                            panic!("a request task panics");
                        }
                        task.finished();
                    });
                }
                let waited = tokio::time::timeout(
                    std::time::Duration::from_secs(3600),
                    in_flight.all_done(),
                )
                .await;
                assert!(waited.is_ok(), "the run waited for a task that is gone");
                in_flight.abandoned()
            }
        });
        assert_eq!(abandoned, 1);
    }
}
