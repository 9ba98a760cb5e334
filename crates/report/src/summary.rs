//! `summary.json`: the run in numbers, and the names scenario `expect` lines check.
//!
//! The struct's field order is the JSON key order and every map is a `BTreeMap`, so the file is
//! byte-stable; floats are rounded to 6 decimals when the summary is built. Deriving
//! `Deserialize` too lets later tools (sweeps, diffs) read a summary back; fields added later
//! (`streams`, `stream_breaks`) default when absent, so older files still read.
//!
//! Streams: `streams.outcomes` and `stream_breaks` list every outcome and break kind the engine
//! knows, with 0 for the ones never seen, so the shape of the file does not depend on the run.

use std::collections::BTreeMap;

use routersim_engine::contract::{FilterReason, ValidationReason};
use routersim_engine::failure::FailureKind;
use serde::{Deserialize, Serialize};

use routersim_engine::stream::StreamOutcome;

pub use crate::routing_metrics::{NO_ROUTE, RouteLatencyStats, RoutingMetrics};
use crate::streams::{BREAKS, is_break_name};
pub use crate::summary_print::print_summary;
pub use crate::windows::{FaultWindowSummary, ScopedWindowSummary, TimeWindow, WindowStats};

/// The run's summary, as written to `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Scenario name.
    pub scenario: String,
    /// The scenario seed.
    pub seed: u64,
    /// routersim's version.
    pub routersim_version: String,
    /// Which router rules the run modelled: the profile and the LiteLLM release it reproduces.
    /// Absent where no routersim router ran (`routersim drive` observes a real one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub router_profile: Option<RouterProfile>,
    /// How the router reached the fake providers, when not in memory (`"http"`: through the
    /// wire); absent for the default `memory`, so those summaries are as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    /// Requests finished (`RequestEnd` events).
    pub requests: u64,
    /// Requests that succeeded.
    pub ok: u64,
    /// Requests that failed.
    pub failed: u64,
    /// Failed requests by the failure kind the caller received.
    pub failed_by_kind: BTreeMap<String, u64>,
    /// Share of requests with at least one fallback hop.
    pub fallback_rate: f64,
    /// Share of requests with at least one retry.
    pub retry_rate: f64,
    /// `Retry` events.
    pub retries: u64,
    /// `Fallback` events (hops).
    pub fallbacks: u64,
    /// Hops as LiteLLM's `x-litellm-attempted-fallbacks` header counts them (order fallbacks
    /// and failover hops too; nested hops not), summed over requests; present only when some
    /// request's count differs from its `fallbacks`, so a report compares with LiteLLM's
    /// headers without changing summaries where the two agree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempted_fallbacks: Option<u64>,
    /// Provider attempts of finished requests.
    pub attempts: u64,
    /// Attempts per finished request.
    pub attempts_per_request: AttemptStats,
    /// End-to-end latency of finished requests.
    pub latency_ms: LatencyStats,
    /// Cooldowns.
    pub cooldowns: CooldownStats,
    /// `AllCooled` events (picks that failed because every candidate was cooling).
    pub all_cooled: u64,
    /// Half-open recovery periods (DeltaLLM's recovery), recoveries and failed probes.
    #[serde(default)]
    pub half_open: HalfOpenStats,
    /// Streamed requests.
    #[serde(default)]
    pub streams: StreamSummary,
    /// `StreamBreak` events by how the stream broke (every break kind, 0 when unseen).
    #[serde(default)]
    pub stream_breaks: BTreeMap<String, u64>,
    /// `profile: contract`: acceptance against the transport (absent under other profiles, so
    /// their summaries are as before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract: Option<ContractSummary>,
    /// Virtual time of the last event, ms since the run start.
    pub duration_ms: f64,
    /// Virtual time the run ended (cooldowns are clipped to it), ms since the run start.
    pub run_end_ms: f64,
    /// Each fault window of the scenario (scenario order): the requests that arrived during
    /// it and after it (to the run end); see [`crate::windows`]. Empty without faults.
    #[serde(default)]
    pub windows: Vec<FaultWindowSummary>,
    /// The windows `expect` lines are scoped to (`window: 5m..15m`), with the same numbers;
    /// absent when no line is scoped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect_windows: Vec<ScopedWindowSummary>,
    /// Every event, counted by name.
    pub events: BTreeMap<String, u64>,
    /// What the alternatives did (`retry_budget`, `retry_throttling`, `outlier_detection`,
    /// `hedge_after`); absent when none of them acted (so every summary written before them
    /// reads the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alternatives: Option<AlternativesSummary>,
    /// The reliability metrics of issue 14 (deadline exhaustion, attempts per completed
    /// request, latency by final route, …), at the top level of the file. Written under the
    /// profiles that came with them (`multigrid`, and any but `litellm`, `litellm-1.110` and
    /// `deltallm`), where no profile is named (a live run, an event stream), and under any profile once one says something the older keys cannot (a
    /// deadline exhausted); otherwise `None` and left out, so older summaries (and the goldens)
    /// stay as they were: then `deadline_exhausted` reads 0 (those profiles have no deadline)
    /// and the others have no value.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub routing: Option<RoutingMetrics>,
    /// Where the events came from: absent for a simulation, `"live"` for `routersim drive`
    /// (events translated from what a real router and the fake providers were seen to do).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// A live run's target and how it was observed (`routersim drive` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveInfo>,
}

/// What a live run (`routersim drive`) drove and how its events were obtained.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LiveInfo {
    /// The router's URL (`--target`).
    pub target: String,
    /// The router's name, when it says (`litellm` from its `/health/readiness`, else the
    /// `server` header).
    pub target_name: Option<String>,
    /// The router's version, when it says.
    pub target_version: Option<String>,
    /// Where the fake providers ran: `in-process` or the `--providers` URL.
    pub providers: String,
    /// Why sending stopped: `duration`, `max-requests`, `max-rps`, `ctrl-c`, `sigterm`.
    pub stopped_by: String,
    /// Requests sent.
    pub sent: u64,
    /// Requests still in flight when the drain timeout ended (not in the counts above).
    pub unfinished: u64,
    /// Provider calls the fake providers served.
    pub provider_calls: u64,
    /// Provider calls joined to a request by its `x-routersim-request-id`.
    pub joined_by_request_id: u64,
    /// Provider calls joined to a request by time order (the router did not forward the id).
    pub joined_by_time: u64,
    /// Cooldowns inferred from gaps in a deployment's calls (see the README).
    pub inferred_cooldowns: u64,
}

/// Half-open periods: from a `half_open` event to `recovered` or the next `cooldown_set`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HalfOpenStats {
    /// Half-open periods.
    pub total: u64,
    /// Time deployments spent half-open, summed, ms.
    pub half_open_ms_total: f64,
    /// `recovered` events (a trial or a probe succeeded).
    pub recovered: u64,
    /// `probe_failed` events.
    pub probe_failed: u64,
    /// Per deployment id.
    pub by_deployment: BTreeMap<String, DeploymentHalfOpenStats>,
}

/// One deployment's half-open periods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeploymentHalfOpenStats {
    /// Periods.
    pub count: u64,
    /// Time spent half-open, ms.
    pub total_half_open_ms: f64,
}

/// Attempts per request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AttemptStats {
    /// Mean.
    pub mean: f64,
    /// Most attempts any request made.
    pub max: u64,
}

/// Latency in milliseconds. Percentiles come from the HdrHistogram (3 significant digits,
/// reported as the bucket's highest equivalent value, capped at the exact maximum); `max` and
/// `mean` are exact.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencyStats {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p99_9: f64,
    /// Maximum.
    pub max: f64,
    /// Mean.
    pub mean: f64,
}

/// Cooldowns over the run, counted two ways: `sets` counts every `CooldownSet` event (a
/// re-set that extends a live cooldown counts again; `total` is the same number, kept under
/// its old name), `periods` counts the distinct cooling intervals (what the deployments plot
/// draws and labels `N periods`). `periods <= sets`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CooldownStats {
    /// `CooldownSet` events (a re-cool that extends a cooldown counts again); equals `sets`.
    pub total: u64,
    /// `CooldownSet` events, every one (the `cooldown_sets` metric).
    #[serde(default)]
    pub sets: u64,
    /// Cooling periods: intervals from a `CooldownSet` on a deployment not cooling to the
    /// cooldown's end (the `cooldown_periods` metric).
    #[serde(default)]
    pub periods: u64,
    /// Time deployments spent cooling, summed over deployments, ms.
    pub cooled_ms_total: f64,
    /// Per deployment id.
    pub by_deployment: BTreeMap<String, DeploymentCooldownStats>,
}

/// One deployment's cooldowns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeploymentCooldownStats {
    /// `CooldownSet` events for it (the `cooldowns.<id>` metric); equals `sets`.
    pub count: u64,
    /// `CooldownSet` events for it (`cooldown_sets.<id>`).
    #[serde(default)]
    pub sets: u64,
    /// Its cooling periods (`cooldown_periods.<id>`).
    #[serde(default)]
    pub periods: u64,
    /// Time it spent cooling (overlapping cooldowns counted once, clipped to the run end), ms.
    pub total_cooled_ms: f64,
}

/// Streamed requests (those whose `RequestEnd` carries stream stats).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamSummary {
    /// Streamed requests finished.
    pub requests: u64,
    /// Streamed requests by how the caller's stream ended; every outcome name is present (0
    /// when unseen). A streamed request that failed before any stream opened has no outcome,
    /// so the counts may sum to less than `requests`.
    pub outcomes: BTreeMap<String, u64>,
    /// `continued ÷ (continued + broken_after_content)`: the share of streams that broke after
    /// content and were rescued by continuation; 0 when no stream broke after content.
    pub continuation_rate: f64,
    /// Output tokens the callers received.
    pub tokens_delivered: u64,
    /// Output tokens the callers are billed for.
    pub tokens_billed: u64,
    /// Time to first token of the streamed requests that received one.
    pub ttft_ms: TtftStats,
    /// Gaps between consecutive tokens the callers received.
    pub inter_token_ms: InterTokenStats,
}

/// What `profile: contract` adds: the seed's *"A rising HTTP success rate alongside a rising
/// validation rejection rate is a warning that transport availability is masking contract
/// failures"* needs both rates side by side.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ContractSummary {
    /// Share of requests whose final attempt got an HTTP 200 (accepted or not): what a
    /// transport dashboard reports as success.
    pub http_success_rate: f64,
    /// Share of requests answered with a response that passed validation (`ok_rate`).
    pub accepted_rate: f64,
    /// `validation_rejected` events ÷ attempts that got an HTTP 200.
    pub validation_rejection_rate: f64,
    /// `validation_rejected` events by reason (every reason, 0 when unseen).
    pub validation_rejections: BTreeMap<String, u64>,
    /// `route_filtered` events by reason (every reason, 0 when unseen).
    pub routes_filtered: BTreeMap<String, u64>,
}

/// A contract-summary count: `field`'s total, or one reason's count.
fn contract_count(s: &Summary, field: fn(&ContractSummary) -> &BTreeMap<String, u64>) -> f64 {
    s.contract
        .as_ref()
        .map_or(0, |c| field(c).values().sum::<u64>()) as f64
}

fn contract_reason(
    s: &Summary,
    field: fn(&ContractSummary) -> &BTreeMap<String, u64>,
    reason: &str,
) -> f64 {
    s.contract
        .as_ref()
        .and_then(|c| field(c).get(reason).copied())
        .unwrap_or(0) as f64
}

/// Time to first token in milliseconds; percentiles as in [`LatencyStats`], `max` exact.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TtftStats {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Maximum.
    pub max: f64,
}

/// Inter-token gaps in milliseconds; percentiles as in [`LatencyStats`], `max` exact.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct InterTokenStats {
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Maximum.
    pub max: f64,
}

/// What the alternatives to LiteLLM's retries and cooldowns did in a run
/// (`routersim_engine::alternatives`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AlternativesSummary {
    /// Retries the policy allowed that `retry_budget` (tower's budget) refused.
    pub retries_denied_by_budget: u64,
    /// Retries the policy allowed that `retry_throttling` (gRPC's token bucket) refused.
    pub retries_denied_by_throttling: u64,
    /// Outlier ejections (`ejected` events).
    pub ejections: u64,
    /// Ejections seen to end (`unejected` events; one still running at the end is not).
    pub unejections: u64,
    /// Outlier ejections by deployment.
    pub ejections_by_deployment: BTreeMap<String, u64>,
    /// Requests whose first attempt was hedged (`hedged` events): each is one extra provider
    /// call.
    pub hedged_requests: u64,
    /// Hedged requests the hedge answered first.
    pub hedge_wins: u64,
    /// Input tokens the hedges sent again.
    pub hedge_extra_input_tokens: u64,
    /// What those tokens cost at the hedge deployments' `input_cost_per_token`.
    pub hedge_extra_cost_usd: f64,
}

/// The alternatives' count `f` (0 when none acted).
fn alt(s: &Summary, f: fn(&AlternativesSummary) -> f64) -> f64 {
    s.alternatives.as_ref().map_or(0.0, f)
}

/// A metric of the summary: its name beside how a summary answers it, so the names `expect`
/// lines, sweeps and diffs use and the values they read are one list (a new metric is one
/// line in [`PLAIN_METRICS`]).
struct Metric {
    name: &'static str,
    value: fn(&Summary) -> f64,
}

const fn metric(name: &'static str, value: fn(&Summary) -> f64) -> Metric {
    Metric { name, value }
}

/// A metric with a parameter after a dot (`failed.<kind>`): which parameters it knows, and
/// the value for one.
struct ParamMetric {
    /// `head.<param>`, as listed in [`METRICS`].
    name: &'static str,
    known: fn(&str) -> bool,
    value: fn(&Summary, &str) -> f64,
}

impl ParamMetric {
    fn head(&self) -> &'static str {
        self.name
            .split_once('.')
            .map_or(self.name, |(head, _)| head)
    }
}

/// How many streamed requests ended with `outcome`.
fn stream_outcome(s: &Summary, outcome: StreamOutcome) -> f64 {
    s.streams
        .outcomes
        .get(outcome.as_str())
        .copied()
        .unwrap_or(0) as f64
}

/// The metrics without a parameter, in the order [`METRICS`] lists them.
const PLAIN_METRICS: &[Metric] = &[
    metric("requests", |s| s.requests as f64),
    metric("ok", |s| s.ok as f64),
    metric("failed", |s| s.failed as f64),
    metric("ok_rate", |s| share(s.ok, s.requests)),
    metric("failed_rate", |s| share(s.failed, s.requests)),
    metric("fallback_rate", |s| s.fallback_rate),
    metric("retry_rate", |s| s.retry_rate),
    metric("retries", |s| s.retries as f64),
    metric("fallbacks", |s| s.fallbacks as f64),
    metric("attempted_fallbacks", |s| {
        s.attempted_fallbacks.unwrap_or(s.fallbacks) as f64
    }),
    metric("attempts", |s| s.attempts as f64),
    metric("attempts_per_request_mean", |s| s.attempts_per_request.mean),
    metric("attempts_max", |s| s.attempts_per_request.max as f64),
    metric("p50_latency_ms", |s| s.latency_ms.p50),
    metric("p90_latency_ms", |s| s.latency_ms.p90),
    metric("p99_latency_ms", |s| s.latency_ms.p99),
    metric("p999_latency_ms", |s| s.latency_ms.p99_9),
    metric("max_latency_ms", |s| s.latency_ms.max),
    metric("mean_latency_ms", |s| s.latency_ms.mean),
    metric("cooldowns", |s| s.cooldowns.total as f64),
    metric("cooldown_sets", |s| s.cooldowns.sets as f64),
    metric("cooldown_periods", |s| s.cooldowns.periods as f64),
    metric("cooled_ms_total", |s| s.cooldowns.cooled_ms_total),
    metric("all_cooled", |s| s.all_cooled as f64),
    metric("half_open", |s| s.half_open.total as f64),
    metric("half_open_ms_total", |s| s.half_open.half_open_ms_total),
    metric("recovered", |s| s.half_open.recovered as f64),
    metric("probe_failed", |s| s.half_open.probe_failed as f64),
    metric("duration_ms", |s| s.duration_ms),
    metric("streamed", |s| s.streams.requests as f64),
    // `stream_<outcome>` counts streamed requests by outcome (so `stream_continued` counts
    // requests, not `StreamContinued` events); one line per outcome the engine knows.
    metric("stream_completed", |s| {
        stream_outcome(s, StreamOutcome::Completed)
    }),
    metric("stream_broken_before_content", |s| {
        stream_outcome(s, StreamOutcome::BrokenBeforeContent)
    }),
    metric("stream_broken_after_content", |s| {
        stream_outcome(s, StreamOutcome::BrokenAfterContent)
    }),
    metric("stream_continued", |s| {
        stream_outcome(s, StreamOutcome::Continued)
    }),
    metric("stream_stalled", |s| {
        stream_outcome(s, StreamOutcome::Stalled)
    }),
    metric("stream_empty", |s| stream_outcome(s, StreamOutcome::Empty)),
    metric("continuation_rate", |s| s.streams.continuation_rate),
    metric("p50_ttft_ms", |s| s.streams.ttft_ms.p50),
    metric("p99_ttft_ms", |s| s.streams.ttft_ms.p99),
    metric("tokens_delivered", |s| s.streams.tokens_delivered as f64),
    metric("tokens_billed", |s| s.streams.tokens_billed as f64),
    metric("stream_breaks", |s| {
        s.stream_breaks.values().sum::<u64>() as f64
    }),
    metric("http_success_rate", |s| {
        s.contract.as_ref().map_or(0.0, |c| c.http_success_rate)
    }),
    metric("accepted_rate", |s| {
        s.contract.as_ref().map_or(0.0, |c| c.accepted_rate)
    }),
    metric("validation_rejection_rate", |s| {
        s.contract
            .as_ref()
            .map_or(0.0, |c| c.validation_rejection_rate)
    }),
    metric("validation_rejections", |s| {
        contract_count(s, |c| &c.validation_rejections)
    }),
    metric("routes_filtered", |s| {
        contract_count(s, |c| &c.routes_filtered)
    }),
    metric("retries_denied_by_budget", |s| {
        alt(s, |a| a.retries_denied_by_budget as f64)
    }),
    metric("retries_denied_by_throttling", |s| {
        alt(s, |a| a.retries_denied_by_throttling as f64)
    }),
    metric("ejections", |s| alt(s, |a| a.ejections as f64)),
    metric("hedged_requests", |s| alt(s, |a| a.hedged_requests as f64)),
    metric("hedge_wins", |s| alt(s, |a| a.hedge_wins as f64)),
    metric("hedge_extra_input_tokens", |s| {
        alt(s, |a| a.hedge_extra_input_tokens as f64)
    }),
    metric("hedge_extra_cost_usd", |s| {
        alt(s, |a| a.hedge_extra_cost_usd)
    }),
    // 0 where the metrics are left out: those profiles have no end-to-end deadline.
    metric("deadline_exhausted", |s| {
        s.routing
            .as_ref()
            .map_or(0.0, |r| r.deadline_exhausted as f64)
    }),
    metric("deadline_exhaustion_rate", |s| {
        s.routing
            .as_ref()
            .map_or(0.0, |r| r.deadline_exhaustion_rate)
    }),
    // 0 where left out: no attempt was ambiguous.
    metric("ambiguous_outcomes", |s| {
        s.routing
            .as_ref()
            .map_or(0.0, |r| r.ambiguous_outcomes as f64)
    }),
    metric("ambiguous_replays", |s| {
        s.routing
            .as_ref()
            .map_or(0.0, |r| r.ambiguous_replays as f64)
    }),
    // Without client retries every request is a user request.
    metric("client_retries", |s| {
        s.routing.as_ref().map_or(0.0, |r| r.client_retries as f64)
    }),
    metric("user_requests", |s| {
        s.routing
            .as_ref()
            .map_or(s.requests as f64, |r| r.user_requests as f64)
    }),
    metric("provider_calls_per_user_request_mean", |s| {
        s.routing.as_ref().map_or(s.attempts_per_request.mean, |r| {
            r.provider_calls_per_user_request.mean
        })
    }),
    metric("provider_calls_per_user_request_max", |s| {
        s.routing
            .as_ref()
            .map_or(s.attempts_per_request.max as f64, |r| {
                r.provider_calls_per_user_request.max as f64
            })
    }),
    metric("duplicate_executions", |s| {
        s.routing
            .as_ref()
            .map_or(0.0, |r| r.duplicate_executions as f64)
    }),
];

/// The metrics without a parameter that have no value in some runs (the reliability metrics
/// where `summary.json` leaves them out), listed after [`PLAIN_METRICS`].
const OPTIONAL_METRICS: &[OptionalMetric] = &[
    OptionalMetric {
        name: "attempts_per_completed_request",
        value: |s| s.routing.as_ref().map(|r| r.attempts_per_completed_request),
    },
    OptionalMetric {
        name: "cost_per_accepted_response",
        value: |s| {
            s.routing
                .as_ref()
                .and_then(|r| r.cost_per_accepted_response)
        },
    },
];

/// A metric without a parameter that may have no value.
struct OptionalMetric {
    name: &'static str,
    value: fn(&Summary) -> Option<f64>,
}

/// A stat of the requests that ended on deployment `id` (0 when none did).
fn route_stat(s: &Summary, id: &str, stat: fn(&RouteLatencyStats) -> f64) -> f64 {
    s.routing
        .as_ref()
        .and_then(|r| r.latency_by_final_route.get(id))
        .map_or(0.0, stat)
}

/// The metrics with a parameter, in the order [`METRICS`] lists them after the plain ones.
const PARAM_METRICS: &[ParamMetric] = &[
    ParamMetric {
        name: "failed.<kind>",
        known: |kind| FailureKind::from_name(kind).is_some(),
        value: |s, kind| {
            FailureKind::from_name(kind)
                .and_then(|k| s.failed_by_kind.get(k.as_str()))
                .copied()
                .unwrap_or(0) as f64
        },
    },
    ParamMetric {
        name: "cooldowns.<deployment_id>",
        known: |id| !id.is_empty(),
        value: |s, id| {
            s.cooldowns
                .by_deployment
                .get(id)
                .map_or(0.0, |d| d.count as f64)
        },
    },
    ParamMetric {
        name: "cooldown_sets.<deployment_id>",
        known: |id| !id.is_empty(),
        value: |s, id| {
            s.cooldowns
                .by_deployment
                .get(id)
                .map_or(0.0, |d| d.sets as f64)
        },
    },
    ParamMetric {
        name: "cooldown_periods.<deployment_id>",
        known: |id| !id.is_empty(),
        value: |s, id| {
            s.cooldowns
                .by_deployment
                .get(id)
                .map_or(0.0, |d| d.periods as f64)
        },
    },
    ParamMetric {
        name: "cooled_ms.<deployment_id>",
        known: |id| !id.is_empty(),
        value: |s, id| {
            s.cooldowns
                .by_deployment
                .get(id)
                .map_or(0.0, |d| d.total_cooled_ms)
        },
    },
    ParamMetric {
        name: "ejections.<deployment_id>",
        known: |id| !id.is_empty(),
        value: |s, id| {
            s.alternatives
                .as_ref()
                .and_then(|a| a.ejections_by_deployment.get(id))
                .copied()
                .unwrap_or(0) as f64
        },
    },
    ParamMetric {
        name: "p50_latency_ms.<final_deployment_id>",
        known: |id| !id.is_empty(),
        value: |s, id| route_stat(s, id, |r| r.p50),
    },
    ParamMetric {
        name: "p99_latency_ms.<final_deployment_id>",
        known: |id| !id.is_empty(),
        value: |s, id| route_stat(s, id, |r| r.p99),
    },
    ParamMetric {
        name: "stream_breaks.<how>",
        known: is_break_name,
        value: |s, how| s.stream_breaks.get(how).copied().unwrap_or(0) as f64,
    },
    ParamMetric {
        name: "validation_rejections.<reason>",
        known: |r| ValidationReason::ALL.iter().any(|v| v.as_str() == r),
        value: |s, r| contract_reason(s, |c| &c.validation_rejections, r),
    },
    ParamMetric {
        name: "routes_filtered.<reason>",
        known: |r| FilterReason::ALL.iter().any(|f| f.as_str() == r),
        value: |s, r| contract_reason(s, |c| &c.routes_filtered, r),
    },
];

const METRIC_COUNT: usize = PLAIN_METRICS.len() + OPTIONAL_METRICS.len() + PARAM_METRICS.len();

const fn metric_names() -> [&'static str; METRIC_COUNT] {
    let mut names = [""; METRIC_COUNT];
    let mut i = 0;
    while i < PLAIN_METRICS.len() {
        names[i] = PLAIN_METRICS[i].name;
        i += 1;
    }
    let mut k = 0;
    while k < OPTIONAL_METRICS.len() {
        names[i] = OPTIONAL_METRICS[k].name;
        i += 1;
        k += 1;
    }
    let mut j = 0;
    while j < PARAM_METRICS.len() {
        names[i + j] = PARAM_METRICS[j].name;
        j += 1;
    }
    names
}

const METRIC_NAMES: [&str; METRIC_COUNT] = metric_names();

/// Metric names [`Summary::metric`] accepts; `<…>` marks a parameter. Built from the tables
/// above, so a name here always has a value — but those of `OPTIONAL_METRICS` where the
/// summary leaves the reliability metrics out (see [`Summary::routing`]).
pub const METRICS: &[&str] = &METRIC_NAMES;

/// The metric with a parameter whose head is `head`, and whether it knows `param`.
fn param_metric(head: &str, param: &str) -> Option<&'static ParamMetric> {
    PARAM_METRICS
        .iter()
        .find(|m| m.head() == head && (m.known)(param))
}

/// The accepted metric names and failure kinds, for error messages.
pub fn describe_metrics() -> String {
    let kinds: Vec<&str> = FailureKind::ALL.iter().map(|k| k.as_str()).collect();
    let hows: Vec<&str> = BREAKS.iter().map(|b| b.as_str()).collect();
    format!(
        "known metrics: {}; <kind> is one of: {}; <how> is one of: {}",
        METRICS.join(", "),
        kinds.join(", "),
        hows.join(", ")
    )
}

/// Whether `name` is a metric [`Summary::metric`] can answer (checkable before a run).
/// A deployment id is not checked here: the scenario knows its deployments.
pub fn is_known_metric(name: &str) -> bool {
    match name.split_once('.') {
        Some((head, param)) => param_metric(head, param).is_some(),
        None => {
            PLAIN_METRICS.iter().any(|m| m.name == name)
                || OPTIONAL_METRICS.iter().any(|m| m.name == name)
        }
    }
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        crate::units::round6(part as f64 / whole as f64)
    }
}

/// Which rules routersim's router followed in a run (`summary.json`'s `router_profile`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouterProfile {
    /// `router_settings.profile` (canonical name), `litellm` when none is set.
    pub name: String,
    /// The LiteLLM release whose code the profile reproduces (`1.110.2` for `litellm-1.110`);
    /// `null` for a profile that follows documented rules rather than one release.
    pub litellm_version: Option<String>,
    /// The rules in one word: `litellm-documented` (LiteLLM's documentation),
    /// `litellm-<version>` (that release's code, checked against recorded traces),
    /// `deltallm-documented`.
    pub rules: String,
}

impl RouterProfile {
    /// Whether its summaries carry [`RoutingMetrics`] always: every profile but the three
    /// whose summaries (and goldens) predate them.
    pub fn reports_routing_metrics(&self) -> bool {
        self.litellm_version.is_none()
            && !matches!(
                self.rules.as_str(),
                "litellm-documented" | "deltallm-documented"
            )
    }

    /// How a header names it: `litellm-1.110 (LiteLLM 1.110.2)`.
    pub fn describe(&self) -> String {
        let rules = match (&self.litellm_version, self.rules.as_str()) {
            (Some(version), _) => format!("LiteLLM {version}"),
            (None, "deltallm-documented") => "DeltaLLM's documented rules".to_string(),
            (None, "litellm-documented") => "LiteLLM's documented rules".to_string(),
            (None, other) => other.to_string(),
        };
        format!("{} ({rules})", self.name)
    }
}

impl Summary {
    /// The value of a metric over the requests that arrived in `window` (an `expect` line's
    /// `window:`); `None` when the metric cannot be windowed (see
    /// [`crate::windows::WINDOW_METRICS`]) or the run did not aggregate that window.
    pub fn window_metric(&self, window: TimeWindow, name: &str) -> Option<f64> {
        let (from_ms, to_ms) = crate::windows::window_ms(window);
        self.expect_windows
            .iter()
            .find(|w| w.from_ms == from_ms && w.to_ms == to_ms)
            .and_then(|w| w.stats.metric(name))
    }

    /// The value of a metric for scenario `expect` lines, `None` for an unknown name.
    ///
    /// `failed.<kind>` is 0 for a known kind that never occurred; `cooldowns.<id>` and
    /// `cooled_ms.<id>` are 0 for a deployment that never cooled; `stream_breaks.<how>` is 0 for
    /// a known break kind never seen. `stream_<outcome>` counts streamed requests by outcome
    /// (so `stream_continued` counts requests, not `StreamContinued` events); `stream_breaks`
    /// counts `StreamBreak` events.
    pub fn metric(&self, name: &str) -> Option<f64> {
        match name.split_once('.') {
            Some((head, param)) => param_metric(head, param).map(|m| (m.value)(self, param)),
            None => match PLAIN_METRICS.iter().find(|m| m.name == name) {
                Some(m) => Some((m.value)(self)),
                None => OPTIONAL_METRICS
                    .iter()
                    .find(|m| m.name == name)
                    .and_then(|m| (m.value)(self)),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::streams::OUTCOMES;

    #[test]
    fn every_stream_outcome_has_its_metric() {
        for outcome in OUTCOMES {
            let name = format!("stream_{}", outcome.as_str());
            assert!(METRICS.contains(&name.as_str()), "{name}");
        }
    }

    #[test]
    fn metric_names_are_unique_and_each_has_one_reading() {
        for (i, name) in METRICS.iter().enumerate() {
            assert!(!METRICS[..i].contains(name), "{name} listed twice");
        }
        for m in PARAM_METRICS {
            assert_eq!(
                PARAM_METRICS
                    .iter()
                    .filter(|n| n.head() == m.head())
                    .count(),
                1,
                "{}",
                m.name
            );
        }
        assert!(!PLAIN_METRICS.iter().any(|p| p.name.contains('.')));
        assert!(!OPTIONAL_METRICS.iter().any(|p| p.name.contains('.')));
    }
}
