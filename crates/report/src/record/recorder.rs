//! The recorder's public face: [`Recorder`] (built with its options and contexts, fed as an
//! [`EventSink`], finished into the summary) and what it is told about the run.
//!
//! Why the state sits behind a `Mutex`: [`EventSink::emit`] takes `&self` and cannot fail;
//! uncontended, the lock is cheap, and it makes the recorder `Send + Sync`. The state is
//! folded either on the emitting thread or, after [`Recorder::on_own_thread`], on a thread of
//! its own (see `own_thread`); the files are the same either way.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::Mutex;

use routersim_engine::event::{EventSink, RoutingEvent};
use routersim_engine::sync::{lock_unpoisoned, unpoisoned};
use tokio::time::Instant;

use super::csv::{
    ATTEMPTS_COLUMNS, CsvOut, EVENTS_HEADER, REPLICA_COLUMN, REQUESTS_COLUMNS, header,
};
use super::deployments::{DEPLOYMENTS_COLUMNS, DeploymentSeconds};
use super::files::{ATTEMPTS_CSV, DEPLOYMENTS_CSV, EVENTS_CSV, LATENCY_HLOG, REQUESTS_CSV};
use super::histogram::new_histogram;
use super::intervals::LatencyIntervals;
use super::own_thread::{OwnThread, ThreadLost};
use super::replicas::ReplicaFold;
use super::routing::{InFlight, JsonlOut, ROUTING_JSONL};
use super::state::{Aggregates, State};
use super::windows::{SummaryContext, Windows};
use crate::error::ReportError;
use crate::plot::{PlotContext, PlotRecorder};
use crate::summary::{RouterProfile, Summary};
use crate::timeseries::Timeseries;

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
    inner: Mutex<Inner>,
}

/// Where the state is folded.
#[derive(Debug)]
struct Inner {
    /// The state, while it is folded here (and always before the first event).
    here: Option<State>,
    /// The recorder's own thread, once started.
    there: Option<OwnThread>,
    /// Start a thread of its own at the first event.
    wants_thread: bool,
    /// The own thread stopped before the end (it panicked): the run has no report.
    lost: bool,
}

impl Inner {
    /// Takes the state back from the own thread, if it went there.
    fn bring_home(&mut self) {
        if let Some(there) = self.there.take() {
            match there.finish() {
                Ok(state) => self.here = Some(*state),
                Err(ThreadLost) => self.lost = true,
            }
        }
    }

    fn state_mut(&mut self) -> Option<&mut State> {
        self.bring_home();
        self.here.as_mut()
    }

    /// Moves the state to a thread of its own (not for a fleet, whose replica is set between
    /// events; nor when the system refuses a thread).
    fn start_thread(&mut self) {
        self.wants_thread = false;
        let Some(state) = self.here.take_if(|state| state.fleet.is_none()) else {
            return;
        };
        match OwnThread::start(Box::new(state)) {
            Ok(there) => self.there = Some(there),
            Err(state) => self.here = Some(*state),
        }
    }
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
        Ok(Self::holding(State {
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
        }))
    }

    fn holding(state: State) -> Self {
        Self {
            inner: Mutex::new(Inner {
                here: Some(state),
                there: None,
                wants_thread: false,
                lost: false,
            }),
        }
    }

    /// Folds the events on a thread of its own, started at the first event, so the router's
    /// thread only hands them over: for a run that has a core to spare (`routersim run`,
    /// `bench`), not for many runs at once. The files are the same. No effect on a fleet
    /// ([`with_replicas`](Self::with_replicas) above 1).
    pub fn on_own_thread(mut self) -> Self {
        unpoisoned(self.inner.get_mut()).wants_thread = true;
        self
    }

    /// Names every deployment (in `model_list` order, with its model group) and the fault
    /// windows, for the plots. Without it the lanes are the deployments seen cooling.
    pub fn with_plot_context(mut self, context: PlotContext) -> Self {
        if let Some(state) = self.state_mut() {
            state.plots.set_context(context);
        }
        self
    }

    /// Names every deployment (so `summary.json`'s per-deployment maps list each, with zeros
    /// when nothing happened to it) and the time windows to aggregate as the run goes
    /// (`windows`, `expect_windows`; see [`crate::windows`]).
    pub fn with_summary_context(mut self, context: SummaryContext) -> Result<Self, ReportError> {
        if let Some(state) = self.state_mut() {
            state.windows = Windows::new(context)?;
        }
        Ok(self)
    }

    /// Names the transport in `summary.json` (`transport`; see [`Summary::transport`]).
    pub fn with_transport(mut self, transport: impl Into<String>) -> Self {
        if let Some(state) = self.state_mut() {
            state.transport = Some(transport.into());
        }
        self
    }

    /// Names the router's profile in `summary.json` (`router_profile`; see
    /// [`Summary::router_profile`]).
    pub fn with_router_profile(mut self, profile: RouterProfile) -> Self {
        if let Some(state) = self.state_mut() {
            state.router_profile = Some(profile);
        }
        self
    }

    /// A fleet run of `replicas` router replicas: above 1, `requests.csv` and `attempts.csv`
    /// end with a `replica` column and `summary.json` gains `by_replica`; each router's events
    /// must then be preceded by [`set_replica`](Self::set_replica). At 1 nothing changes.
    pub fn with_replicas(mut self, replicas: u32) -> Result<Self, ReportError> {
        if replicas <= 1 {
            return Ok(self);
        }
        let Some(state) = self.state_mut() else {
            return Ok(self);
        };
        state.fleet = Some(ReplicaFold::new(replicas));
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
        let mut inner = lock_unpoisoned(&self.inner);
        if let Some(fleet) = inner.here.as_mut().and_then(|state| state.fleet.as_mut()) {
            fleet.current = replica;
        }
    }

    /// Skips the SVG plots in [`finish`](Self::finish) (the other files are unchanged).
    pub fn without_plots(mut self) -> Self {
        if let Some(state) = self.state_mut() {
            state.plots.enabled = false;
        }
        self
    }

    fn state_mut(&mut self) -> Option<&mut State> {
        unpoisoned(self.inner.get_mut()).state_mut()
    }

    /// Flushes the traces, writes `timeseries.csv`, `latency.hgrm`, `ttft.hgrm`,
    /// `inter_token.hgrm`, `summary.json` and the six SVG plots (unless
    /// [`without_plots`](Self::without_plots)), and returns the summary. The first error of
    /// the whole run, if any, is returned instead.
    pub fn finish(self, meta: RunMeta) -> Result<Summary, ReportError> {
        let mut inner = unpoisoned(self.inner.into_inner());
        inner.bring_home();
        match inner.here.take() {
            Some(state) if !inner.lost => state.finish(meta),
            _ => Err(ReportError::RecorderLost),
        }
    }
}

impl EventSink for Recorder {
    fn emit(&self, event: &RoutingEvent) {
        // A poisoned lock can only follow a panic elsewhere; keep recording what we can.
        let mut inner = lock_unpoisoned(&self.inner);
        if inner.wants_thread {
            inner.start_thread();
        }
        if let Some(there) = inner.there.as_mut() {
            there.send(event);
        } else if let Some(state) = inner.here.as_mut() {
            state.fold(event);
        }
    }
}

impl State {
    /// Folds one event: the run's files and aggregates, and a fleet's per-replica share.
    pub(super) fn fold(&mut self, event: &RoutingEvent) {
        self.record(event);
        if let Some(fleet) = self.fleet.as_mut() {
            fleet.fold(event);
            self.replica_lanes(event);
        }
    }
}
