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

mod metrics;
pub use metrics::{METRICS, describe_metrics, is_known_metric};

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
    /// Each router replica's share of the run (`router.replicas` above 1), in replica order;
    /// absent for one replica, so every single-router summary reads as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_replica: Option<Vec<ReplicaSummary>>,
}

/// One router replica's numbers (see [`Summary::by_replica`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicaSummary {
    /// The replica's index (0-based, the `replica` column of the traces).
    pub replica: u32,
    /// User requests the load balancer sent it.
    pub requests: u64,
    /// Of those, succeeded.
    pub ok: u64,
    /// Of those, failed.
    pub failed: u64,
    /// Provider calls its requests made (as the summary's `attempts`).
    pub attempts: u64,
    /// `CooldownSet` events it emitted (a re-cool counts again).
    pub cooldown_sets: u64,
    /// Cooldown periods it started: a `CooldownSet` on a deployment this replica did not
    /// already hold cooled (a re-cool that extends its live cooldown is not a new period).
    pub cooldown_periods: u64,
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
