//! The event sink that writes the run's reports as it goes.
//!
//! Why streaming: a run may have millions of requests, so nothing is kept per request. Trace rows
//! go straight to buffered CSV writers (`requests.csv`, `attempts.csv`, `events.csv`); what the
//! summary needs is folded into counters, three HdrHistograms (latency, TTFT, inter-token gap),
//! per-deployment cooldown state and one small row per virtual second with activity (see
//! `timeseries`: memory follows the activity, never the virtual duration).
//! `deployments.csv` (per second and deployment, see `deployments`) and `latency.hlog` (one
//! HdrHistogram interval per second, see `intervals`) are streamed too, each second written
//! once a later one starts.
//! [`Recorder::finish`] flushes the traces and writes `timeseries.csv`, `latency.hgrm`,
//! `ttft.hgrm`, `inter_token.hgrm` and `summary.json`, then the plots (`deployments.svg`,
//! `timeline.svg`, `latency.svg`, `attempts.svg`, `latency_over_time.svg`,
//! `traffic_share.svg`; see [`crate::plot`]) unless
//! [`Recorder::without_plots`] turned them off. For the plots the recorder also keeps each
//! deployment's cooling and half-open intervals (capped, see
//! [`crate::plot::MAX_INTERVALS_PER_DEPLOYMENT`]), a fixed array of attempt counts and one
//! counter per fallback pair; [`Recorder::with_plot_context`] names every deployment (so a
//! lane shows even for one that never cooled) and the fault windows.
//!
//! Streams: `requests.csv` ends with `stream,stream_outcome,ttft_ms,tokens_delivered,
//! tokens_billed`; a non-streamed request prints `false` and leaves the other four empty, a
//! streamed one prints `true`, its outcome (empty if no stream ever opened), its TTFT (empty
//! without a first token) and both token counts. `StreamBreak` and `StreamContinued` get
//! `events.csv` rows; `StreamChunk` does not (there may be thousands per request): it only
//! feeds `inter_token.hgrm`. A chunk of `n` tokens contributes `n` gaps: `gap_before` (absent
//! for a stream's first chunk) and `n − 1` times `inner_gap`; a chunk of 0 tokens contributes
//! none. `ttft.hgrm` has one sample per streamed request that received a token. Both
//! histogram files are always written, empty in a run without streams, so the set of files
//! does not depend on the scenario.
//!
//! [`EventSink::emit`] takes `&self` and cannot fail, so the state sits behind a `Mutex`
//! (uncontended, so cheap; it also makes the recorder `Send + Sync`, usable as `&Recorder`, `Arc<Recorder>`,
//! or `&*rc` for an `Rc<Recorder>`: the orphan rule forbids an `EventSink` impl for `Rc` here), and the first IO error is kept and returned by `finish`. After an error
//! the failing file stops being written; aggregation goes on.
//!
//! Layout: this file holds the public API (`Recorder`, its options, the file names) and the
//! state it folds into; `csv` writes the trace rows, `events` folds one event, `summary`
//! writes the end-of-run files.

mod csv;
mod deployments;
mod events;
mod hlog;
mod intervals;
mod quantiles;
mod replicas;
mod routing;
mod summary;
mod windows;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use hdrhistogram::Histogram;
use routersim_engine::contract::{FilterReason, ValidationReason};
use routersim_engine::event::{EventSink, RoutingEvent};
use routersim_engine::sync::{lock_unpoisoned, unpoisoned};
use tokio::time::Instant;

use crate::error::ReportError;
use crate::plot::{PlotContext, PlotRecorder};
use crate::streams::{BREAKS, OUTCOMES};
use crate::summary::{RouterProfile, Summary};
use crate::timeseries::{DeploymentCooldowns, Timeseries};

use self::csv::{
    ATTEMPTS_COLUMNS, CsvOut, EVENTS_HEADER, REPLICA_COLUMN, REQUESTS_COLUMNS, header,
};
use self::deployments::{DEPLOYMENTS_COLUMNS, DeploymentSeconds};
use self::intervals::LatencyIntervals;
pub use self::routing::ROUTING_JSONL;
use self::routing::{InFlight, JsonlOut};
use self::summary::new_histogram;
pub use self::windows::SummaryContext;
use self::windows::Windows;

/// One row per finished request.
pub const REQUESTS_CSV: &str = "requests.csv";
/// One row per provider attempt.
pub const ATTEMPTS_CSV: &str = "attempts.csv";
/// Every routing decision (all events but attempts, request ends and stream chunks).
pub const EVENTS_CSV: &str = "events.csv";
/// One row per virtual second.
pub const TIMESERIES_CSV: &str = "timeseries.csv";
/// One row per virtual second and deployment with activity (see `deployments`).
pub const DEPLOYMENTS_CSV: &str = "deployments.csv";
/// HdrHistogram interval log of the end-to-end latency, one interval per 10 seconds (see
/// `intervals`).
pub const LATENCY_HLOG: &str = "latency.hlog";
/// End-to-end latency distribution.
pub const LATENCY_HGRM: &str = "latency.hgrm";
/// Time-to-first-token distribution of streamed requests.
pub const TTFT_HGRM: &str = "ttft.hgrm";
/// Distribution of the gaps between consecutive streamed tokens.
pub const INTER_TOKEN_HGRM: &str = "inter_token.hgrm";
/// The run in numbers.
pub const SUMMARY_JSON: &str = "summary.json";

/// How much the recorder writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecorderOptions {
    /// Write `requests.csv`, `attempts.csv` and `routing.jsonl` (`--trace none` turns this off
    /// for huge runs).
    pub trace: bool,
}

impl Default for RecorderOptions {
    fn default() -> Self {
        Self { trace: true }
    }
}

/// What the summary needs to know about the run besides its events.
#[derive(Clone, Debug)]
pub struct RunMeta {
    /// Scenario name.
    pub scenario: String,
    /// Scenario seed.
    pub seed: u64,
    /// routersim's version.
    pub version: String,
    /// When the run ended (cooldowns still open are clipped here).
    pub end: Instant,
}

/// Streams a run's routing events into its report files. See the module docs.
#[derive(Debug)]
pub struct Recorder {
    state: Mutex<State>,
}

impl Recorder {
    /// Creates `dir` (and parents) and the trace files with their header rows. Times in every
    /// file are virtual milliseconds since `start`.
    pub fn new(
        dir: impl AsRef<Path>,
        start: Instant,
        options: RecorderOptions,
    ) -> Result<Self, ReportError> {
        let dir = dir.as_ref().to_path_buf();
        fs::create_dir_all(&dir).map_err(|e| ReportError::io(&dir, e))?;
        let (requests, attempts, routing) = if options.trace {
            (
                Some(CsvOut::create(
                    dir.join(REQUESTS_CSV),
                    &header(REQUESTS_COLUMNS),
                )?),
                Some(CsvOut::create(
                    dir.join(ATTEMPTS_CSV),
                    &header(ATTEMPTS_COLUMNS),
                )?),
                Some(JsonlOut::create(dir.join(ROUTING_JSONL))?),
            )
        } else {
            (None, None, None)
        };
        let events = Some(CsvOut::create(dir.join(EVENTS_CSV), EVENTS_HEADER)?);
        let per_deployment = DeploymentSeconds::new(CsvOut::create(
            dir.join(DEPLOYMENTS_CSV),
            &DEPLOYMENTS_COLUMNS,
        )?)?;
        let latency_intervals = LatencyIntervals::create(dir.join(LATENCY_HLOG))?;
        let latency = new_histogram()?;
        let ttft = new_histogram()?;
        let inter_token = new_histogram()?;
        Ok(Self {
            state: Mutex::new(State {
                dir,
                start,
                last_at: (start, 0),
                requests,
                attempts,
                events,
                routing,
                in_flight: InFlight::default(),
                failures_field: String::new(),
                error: None,
                detail: String::new(),
                agg: Aggregates::default(),
                series: Timeseries::default(),
                per_deployment,
                latency_intervals,
                cooldowns: BTreeMap::new(),
                half_open: BTreeMap::new(),
                latency,
                ttft,
                inter_token,
                routes: BTreeMap::new(),
                plots: PlotRecorder::default(),
                transport: None,
                router_profile: None,
                windows: Windows::default(),
                fleet: None,
            }),
        })
    }

    /// Names every deployment (in `model_list` order, with its model group) and the fault
    /// windows, for the plots. Without it the lanes are the deployments seen cooling.
    pub fn with_plot_context(mut self, context: PlotContext) -> Self {
        self.state_mut().plots.set_context(context);
        self
    }

    /// Names every deployment (so `summary.json`'s per-deployment maps list each, with zeros
    /// when nothing happened to it) and the time windows to aggregate as the run goes
    /// (`windows`, `expect_windows`; see [`crate::windows`]).
    pub fn with_summary_context(mut self, context: SummaryContext) -> Result<Self, ReportError> {
        self.state_mut().windows = Windows::new(context)?;
        Ok(self)
    }

    /// Names the transport in `summary.json` (`transport`; see [`Summary::transport`]).
    pub fn with_transport(mut self, transport: impl Into<String>) -> Self {
        self.state_mut().transport = Some(transport.into());
        self
    }

    /// Names the router's profile in `summary.json` (`router_profile`; see
    /// [`Summary::router_profile`]).
    pub fn with_router_profile(mut self, profile: RouterProfile) -> Self {
        self.state_mut().router_profile = Some(profile);
        self
    }

    /// A fleet run of `replicas` router replicas: above 1, `requests.csv` and `attempts.csv`
    /// end with a `replica` column and `summary.json` gains `by_replica`; each router's events
    /// must then be preceded by [`set_replica`](Self::set_replica). At 1 nothing changes.
    pub fn with_replicas(mut self, replicas: u32) -> Result<Self, ReportError> {
        if replicas <= 1 {
            return Ok(self);
        }
        let state = self.state_mut();
        state.fleet = Some(replicas::ReplicaFold::new(replicas));
        // Nothing but the header is written yet: write the files again with the column.
        // (Each old writer is dropped, flushing its header, before the file is truncated.)
        for (out, columns) in [
            (&mut state.requests, header(REQUESTS_COLUMNS)),
            (&mut state.attempts, header(ATTEMPTS_COLUMNS)),
        ] {
            if let Some(path) = out.take().map(|csv| csv.path.clone()) {
                let mut columns = columns;
                columns.push(REPLICA_COLUMN);
                *out = Some(CsvOut::create(path, &columns)?);
            }
        }
        Ok(self)
    }

    /// The replica the next events come from (a fleet run's per-router sink calls this before
    /// passing each event on; see [`with_replicas`](Self::with_replicas)).
    pub fn set_replica(&self, replica: u32) {
        if let Some(fleet) = lock_unpoisoned(&self.state).fleet.as_mut() {
            fleet.current = replica;
        }
    }

    /// Skips the SVG plots in [`finish`](Self::finish) (the other files are unchanged).
    pub fn without_plots(mut self) -> Self {
        self.state_mut().plots.enabled = false;
        self
    }

    fn state_mut(&mut self) -> &mut State {
        unpoisoned(self.state.get_mut())
    }

    /// Flushes the traces, writes `timeseries.csv`, `latency.hgrm`, `ttft.hgrm`,
    /// `inter_token.hgrm`, `summary.json` and the four SVG plots (unless
    /// [`without_plots`](Self::without_plots)), and returns the summary. The first error of
    /// the whole run, if any, is returned instead.
    pub fn finish(self, meta: RunMeta) -> Result<Summary, ReportError> {
        unpoisoned(self.state.into_inner()).finish(meta)
    }
}

impl EventSink for Recorder {
    fn emit(&self, event: &RoutingEvent) {
        // A poisoned lock can only follow a panic elsewhere; keep recording what we can.
        let mut state = lock_unpoisoned(&self.state);
        state.record(event);
        if let Some(fleet) = state.fleet.as_mut() {
            fleet.fold(event);
            state.replica_lanes(event);
        }
    }
}

/// One final route's latencies.
#[derive(Debug)]
struct RouteLatency {
    count: u64,
    max_us: u64,
    hist: Histogram<u64>,
}

/// Counters for the summary.
#[derive(Debug, Default)]
struct Aggregates {
    requests: u64,
    ok: u64,
    failed_by_kind: BTreeMap<&'static str, u64>,
    with_fallback: u64,
    with_retry: u64,
    attempts: u64,
    attempts_max: u64,
    retries: u64,
    fallbacks: u64,
    /// Summed `attempted_fallbacks`, and whether any request's differed from its hops.
    attempted_fallbacks: u64,
    attempted_differs: bool,
    all_cooled: u64,
    cooldowns: u64,
    recovered: u64,
    probe_failed: u64,
    latency_sum_us: u128,
    latency_max_us: u64,
    last_event_us: u64,
    /// Events counted by name, in first-seen order (a short list: a linear scan by pointer is
    /// far cheaper than a map lookup by string on every event).
    events: Vec<(&'static str, u64)>,
    /// Streamed requests.
    streamed: u64,
    /// Streamed requests by outcome, indexed by `streams::outcome_index`.
    stream_outcomes: [u64; OUTCOMES.len()],
    tokens_delivered: u64,
    tokens_billed: u64,
    ttft_max_us: u64,
    inter_token_max_us: u64,
    /// `StreamBreak` events by how, indexed by `streams::break_index`.
    stream_breaks: [u64; BREAKS.len()],
    /// `profile: contract`: requests whose final status was 200.
    http_ok: u64,
    /// Attempts that got an HTTP 200 (accepted or rejected).
    http_ok_attempts: u64,
    /// `RouteFiltered` events by reason (index in `FilterReason::ALL`).
    routes_filtered: [u64; FilterReason::ALL.len()],
    /// `ValidationRejected` events by reason (index in `ValidationReason::ALL`).
    validation_rejections: [u64; ValidationReason::ALL.len()],
    /// What the alternatives did (`None` until one acts).
    alternatives: Option<crate::summary::AlternativesSummary>,
    /// Failed requests whose walk a `deadline_exhausted` give-up cut short.
    deadline_exhausted: u64,
    /// Attempts of the requests that succeeded.
    ok_attempts: u64,
    /// `AmbiguousOutcome` events.
    ambiguous_outcomes: u64,
    /// Ambiguous attempts followed by another attempt of the same operation.
    ambiguous_replays: u64,
    /// Executions of an operation after its first, where replays were not deduplicated.
    duplicate_executions: u64,
    /// Requests that were a client's retry (`client_try` with a try number above 0).
    client_retries: u64,
    /// The most provider calls one user request took, over all its sends.
    user_calls_max: u64,
    /// `ResponseCost` events: their USD summed, and how many.
    accepted_cost_usd: f64,
    priced_responses: u64,
}

#[derive(Debug)]
struct State {
    dir: PathBuf,
    start: Instant,
    /// The last event's instant and its µs since `start` (see `record`).
    last_at: (Instant, u64),
    requests: Option<CsvOut>,
    attempts: Option<CsvOut>,
    events: Option<CsvOut>,
    /// `routing.jsonl` (with the traces: not under `--trace none`).
    routing: Option<JsonlOut>,
    /// Each request in flight's failures so far (see `routing`).
    in_flight: InFlight,
    /// Scratch for the `routing_failures` column.
    failures_field: String,
    /// The first error; `finish` returns it.
    error: Option<ReportError>,
    /// Scratch for the `detail` column.
    detail: String,
    agg: Aggregates,
    series: Timeseries,
    /// `deployments.csv`, streamed per second.
    per_deployment: DeploymentSeconds,
    /// The current second's latencies: `timeseries.csv`'s percentiles and `latency.hlog`.
    latency_intervals: LatencyIntervals,
    cooldowns: BTreeMap<Arc<str>, DeploymentCooldowns>,
    /// Half-open periods per deployment: from `HalfOpen` to `Recovered` or the next
    /// `CooldownSet` (the trial failed).
    half_open: BTreeMap<Arc<str>, DeploymentCooldowns>,
    /// End-to-end latency, µs.
    latency: Histogram<u64>,
    /// Time to first token of streamed requests, µs.
    ttft: Histogram<u64>,
    /// Gaps between consecutive streamed tokens, µs.
    inter_token: Histogram<u64>,
    /// End-to-end latency per final deployment (`""`: none), µs; one entry per deployment.
    routes: BTreeMap<Arc<str>, RouteLatency>,
    /// What the plots need beyond the above.
    plots: PlotRecorder,
    /// `summary.json`'s `transport`, when not the default.
    transport: Option<String>,
    /// `summary.json`'s `router_profile`, when a routersim router ran.
    router_profile: Option<RouterProfile>,
    /// Every deployment, and the time windows folded as requests finish.
    windows: Windows,
    /// A fleet run's per-replica counts (`None` for one router).
    fleet: Option<replicas::ReplicaFold>,
}
