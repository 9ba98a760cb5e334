//! The runner: a scenario in, a report out.
//!
//! Everything runs on a current-thread tokio runtime with paused time, so the clock jumps from
//! one timer to the next and a ten-minute incident replays in milliseconds. Each arrival is a
//! local task calling the real [`Router`]; the fake providers live in the same process (no
//! sockets, no `spawn_blocking`). Randomness comes from per-purpose ChaCha streams derived from
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

use routersim_engine::Router;
use routersim_engine::clock::TokioClock;
use routersim_mock_providers::provider::FakeProviders;
use routersim_mock_providers::rng::seeded_rng;
use routersim_mock_providers::spec::{FaultEffect, FaultTarget, LatencySpec, StreamFault};
use routersim_mock_providers::{FaultSpec, duration::format_duration};
use routersim_report::plot::PLOT_FILES;
use routersim_report::record::{Recorder, RecorderOptions, RunMeta};
use routersim_report::summary::Summary;
use routersim_report::{
    DeploymentLane, ExpectRow, FaultWindow, PageTitle, PlotContext, REPORT_HTML, write_report_html,
};
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::expect::{self, ExpectationResult};
use crate::scenario::{Scenario, ScenarioError, load_scenario};

/// routersim's version, written into every summary.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

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
    /// The runtime could not start.
    #[error("could not start the simulation runtime: {0}")]
    Runtime(#[from] std::io::Error),
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
    /// that time the harness or only read the summary. Plots and a page left in the
    /// directory by an earlier run are removed.
    DataOnly,
}

/// Runs a scenario and writes its report, plots and `report.html` included.
pub fn run(scenario: &Scenario, options: &RunOptions) -> Result<RunReport, RunError> {
    run_with_rendering(scenario, options, Rendering::Full)
}

/// Runs a scenario and writes its report, drawing what `rendering` asks for.
pub fn run_with_rendering(
    scenario: &Scenario,
    options: &RunOptions,
    rendering: Rendering,
) -> Result<RunReport, RunError> {
    expect::validate(&scenario.expect, &scenario.file)?;
    let seed = options.seed.unwrap_or(scenario.seed);
    let out_dir = options
        .out_dir
        .clone()
        .unwrap_or_else(|| default_out_dir(scenario, seed));
    if options.no_trace {
        // A report directory reused from a traced run must not keep stale traces.
        for stale in ["requests.csv", "attempts.csv"] {
            let _ = std::fs::remove_file(out_dir.join(stale));
        }
    }
    if rendering == Rendering::DataOnly {
        for stale in PLOT_FILES.iter().chain([&REPORT_HTML]) {
            let _ = std::fs::remove_file(out_dir.join(stale));
        }
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()?;
    let local = tokio::task::LocalSet::new();
    let summary = local.block_on(
        &runtime,
        simulate(scenario, seed, &out_dir, options, rendering),
    )?;
    let expectations = expect::evaluate(&scenario.expect, &summary);
    if rendering == Rendering::Full {
        let rows: Vec<ExpectRow> = expectations
            .iter()
            .map(|e| ExpectRow {
                metric: e.expectation.metric.clone(),
                min: e.expectation.min,
                max: e.expectation.max,
                measured: e.measured,
                passed: e.passed,
            })
            .collect();
        write_report_html(
            &out_dir,
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
        out_dir,
        seed,
        expectations,
        ignored_keys: scenario.router.ignored_keys.clone(),
        warnings: scenario.router.warnings.clone(),
    })
}

async fn simulate(
    scenario: &Scenario,
    seed: u64,
    out_dir: &Path,
    options: &RunOptions,
    rendering: Rendering,
) -> Result<Summary, RunError> {
    let start = Instant::now();
    let recorder = Recorder::new(
        out_dir,
        start,
        RecorderOptions {
            trace: !options.no_trace,
        },
    )?;
    let recorder = Arc::new(match rendering {
        Rendering::Full => recorder.with_plot_context(plot_context(scenario)),
        Rendering::DataOnly => recorder.without_plots(),
    });
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
    let router = Rc::new(
        Router::builder(scenario.router.clone(), providers)
            .clock(TokioClock::with_epoch(scenario.epoch_unix_ms))
            .rng(seeded_rng(seed, "router"))
            .sink(recorder.clone())
            .build(),
    );
    let sweeper = tokio::task::spawn_local({
        let router = router.clone();
        async move { router.run_cooldown_sweeper().await }
    });
    let probes = tokio::task::spawn_local({
        let router = router.clone();
        async move { router.run_health_checks().await }
    });
    let in_flight = Rc::new(Cell::new(0usize));
    let all_done = Rc::new(Notify::new());
    for arrival in crate::traffic::Arrivals::new(&scenario.traffic, seed) {
        tokio::time::sleep_until(start + arrival.at).await;
        if in_flight.get() as u64 >= crate::traffic::MAX_IN_FLIGHT {
            return Err(RunError::InFlight {
                file: scenario.file.clone(),
                message: crate::traffic::in_flight_exceeded(&arrival),
            });
        }
        in_flight.set(in_flight.get() + 1);
        let (router, in_flight, all_done) = (router.clone(), in_flight.clone(), all_done.clone());
        let request = arrival.request;
        tokio::task::spawn_local(async move {
            // By reference: the task holds the only copy of the request while it is in flight.
            router.completion_of(&request).await;
            in_flight.set(in_flight.get() - 1);
            if in_flight.get() == 0 {
                all_done.notify_one();
            }
        });
    }
    while in_flight.get() > 0 {
        all_done.notified().await;
    }
    let end = Instant::now();
    sweeper.abort();
    let _ = sweeper.await;
    probes.abort();
    let _ = probes.await;
    drop(router);
    let recorder = Arc::try_unwrap(recorder).map_err(|_| {
        routersim_report::ReportError::Histogram("the recorder is still shared".into())
    })?;
    Ok(recorder.finish(RunMeta {
        scenario: scenario.name.clone(),
        seed,
        version: VERSION.to_string(),
        end,
    })?)
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
        }
        .to_string(),
    };
    if fault.probability < 1.0 {
        let pct = format!("{:.2}", fault.probability * 100.0);
        let pct = pct.trim_end_matches('0').trim_end_matches('.');
        format!("{what} {pct}%")
    } else {
        what
    }
}
