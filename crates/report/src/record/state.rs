//! What the recorder folds a run into: the open trace writers, the counters, histograms and
//! per-second rows, and the plots' share.
//!
//! Why apart from [`super::recorder`]: every per-event module (`fold`, `ends`, `event_row`)
//! and the end of the run (`finish`, `summary`) work on this state; the public API only owns
//! it behind its lock.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use hdrhistogram::Histogram;
use routersim_engine::event::{FilterReason, ValidationReason};
use tokio::time::Instant;

use super::csv::CsvOut;
use super::deployments::DeploymentSeconds;
use super::intervals::LatencyIntervals;
use super::replicas::ReplicaFold;
use super::routing::{InFlight, JsonlOut};
use super::windows::Windows;
use crate::error::ReportError;
use crate::plot::PlotRecorder;
use crate::streams::{BREAKS, OUTCOMES};
use crate::summary::{AlternativesSummary, RouterProfile};
use crate::timeseries::{DeploymentCooldowns, Timeseries};
use crate::units::micros_since;

/// One final route's latencies.
#[derive(Debug)]
pub(super) struct RouteLatency {
    pub(super) count: u64,
    pub(super) max_us: u64,
    pub(super) hist: Histogram<u64>,
}

/// Counters for the summary.
#[derive(Debug, Default)]
pub(super) struct Aggregates {
    pub(super) requests: u64,
    pub(super) ok: u64,
    pub(super) failed_by_kind: BTreeMap<&'static str, u64>,
    pub(super) with_fallback: u64,
    pub(super) with_retry: u64,
    pub(super) attempts: u64,
    pub(super) attempts_max: u64,
    pub(super) retries: u64,
    pub(super) fallbacks: u64,
    /// Summed `attempted_fallbacks`, and whether any request's differed from its hops.
    pub(super) attempted_fallbacks: u64,
    pub(super) attempted_differs: bool,
    pub(super) all_cooled: u64,
    pub(super) cooldowns: u64,
    pub(super) recovered: u64,
    pub(super) probe_failed: u64,
    pub(super) latency_sum_us: u128,
    pub(super) latency_max_us: u64,
    pub(super) last_event_us: u64,
    /// Events counted by name, in first-seen order (a short list: a linear scan by pointer is
    /// far cheaper than a map lookup by string on every event).
    pub(super) events: Vec<(&'static str, u64)>,
    /// Streamed requests.
    pub(super) streamed: u64,
    /// Streamed requests by outcome, indexed by `streams::outcome_index`.
    pub(super) stream_outcomes: [u64; OUTCOMES.len()],
    pub(super) tokens_delivered: u64,
    pub(super) tokens_billed: u64,
    pub(super) ttft_max_us: u64,
    pub(super) inter_token_max_us: u64,
    /// `StreamBreak` events by how, indexed by `streams::break_index`.
    pub(super) stream_breaks: [u64; BREAKS.len()],
    /// `profile: contract`: requests whose final status was 200.
    pub(super) http_ok: u64,
    /// Attempts that got an HTTP 200 (accepted or rejected).
    pub(super) http_ok_attempts: u64,
    /// `RouteFiltered` events by reason (index in `FilterReason::ALL`).
    pub(super) routes_filtered: [u64; FilterReason::ALL.len()],
    /// `ValidationRejected` events by reason (index in `ValidationReason::ALL`).
    pub(super) validation_rejections: [u64; ValidationReason::ALL.len()],
    /// What the alternatives did (`None` until one acts).
    pub(super) alternatives: Option<AlternativesSummary>,
    /// Failed requests whose walk a `deadline_exhausted` give-up cut short.
    pub(super) deadline_exhausted: u64,
    /// Attempts of the requests that succeeded.
    pub(super) ok_attempts: u64,
    /// `AmbiguousOutcome` events.
    pub(super) ambiguous_outcomes: u64,
    /// Ambiguous attempts followed by another attempt of the same operation.
    pub(super) ambiguous_replays: u64,
    /// Executions of an operation after its first, where replays were not deduplicated.
    pub(super) duplicate_executions: u64,
    /// Requests that were a client's retry (`client_try` with a try number above 0).
    pub(super) client_retries: u64,
    /// The most provider calls one user request took, over all its sends.
    pub(super) user_calls_max: u64,
    /// `ResponseCost` events: their USD summed, and how many.
    pub(super) accepted_cost_usd: f64,
    pub(super) priced_responses: u64,
}

#[derive(Debug)]
pub(super) struct State {
    pub(super) dir: PathBuf,
    pub(super) start: Instant,
    /// The last event's instant and its µs since `start` (see `record`).
    pub(super) last_at: (Instant, u64),
    pub(super) requests: Option<CsvOut>,
    pub(super) attempts: Option<CsvOut>,
    pub(super) events: Option<CsvOut>,
    /// `routing.jsonl` (with the traces: not under `--trace none`).
    pub(super) routing: Option<JsonlOut>,
    /// Each request in flight's failures so far (see `routing`).
    pub(super) in_flight: InFlight,
    /// Scratch for the `routing_failures` column.
    pub(super) failures_field: String,
    /// The first error; `finish` returns it.
    pub(super) error: Option<ReportError>,
    /// Scratch for the `detail` column.
    pub(super) detail: String,
    pub(super) agg: Aggregates,
    pub(super) series: Timeseries,
    /// `deployments.csv`, streamed per second.
    pub(super) per_deployment: DeploymentSeconds,
    /// The current second's latencies: `timeseries.csv`'s percentiles and `latency.hlog`.
    pub(super) latency_intervals: LatencyIntervals,
    pub(super) cooldowns: BTreeMap<Arc<str>, DeploymentCooldowns>,
    /// Half-open periods per deployment: from `HalfOpen` to `Recovered` or the next
    /// `CooldownSet` (the trial failed).
    pub(super) half_open: BTreeMap<Arc<str>, DeploymentCooldowns>,
    /// End-to-end latency, µs.
    pub(super) latency: Histogram<u64>,
    /// Time to first token of streamed requests, µs.
    pub(super) ttft: Histogram<u64>,
    /// Gaps between consecutive streamed tokens, µs.
    pub(super) inter_token: Histogram<u64>,
    /// End-to-end latency per final deployment (`""`: none), µs; one entry per deployment.
    pub(super) routes: BTreeMap<Arc<str>, RouteLatency>,
    /// What the plots need beyond the above.
    pub(super) plots: PlotRecorder,
    /// `summary.json`'s `transport`, when not the default.
    pub(super) transport: Option<String>,
    /// `summary.json`'s `router_profile`, when a routersim router ran.
    pub(super) router_profile: Option<RouterProfile>,
    /// Every deployment, and the time windows folded as requests finish.
    pub(super) windows: Windows,
    /// A fleet run's per-replica counts (`None` for one router).
    pub(super) fleet: Option<ReplicaFold>,
}

impl State {
    /// µs from the run start to `at`.
    pub(super) fn us(&self, at: Instant) -> u64 {
        micros_since(self.start, at)
    }
}
