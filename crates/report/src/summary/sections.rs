//! The sections of `summary.json`: latency, attempts, cooldowns, half-open periods, streams,
//! the contract profile's rates, the alternatives and the replicas, one struct each.
//!
//! Why below [`super::document`]: each is plain data the summary is made of, named by nothing
//! it contains, so the metrics, the terminal lines and the recorder read them without a circle.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One router replica's numbers (see [`Summary::by_replica`](super::Summary::by_replica)).
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
