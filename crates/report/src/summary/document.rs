//! The [`Summary`] itself: one field per key of `summary.json`, in the file's key order.
//!
//! Why a file of its own: the struct is the file's schema, read by people checking what a key
//! means; the sections it is made of ([`super::sections`]) and what is computed from it
//! (metrics, the terminal lines) live beside it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::origin::{LiveInfo, RouterProfile};
use super::routing::RoutingMetrics;
use super::sections::{
    AlternativesSummary, AttemptStats, ContractSummary, CooldownStats, HalfOpenStats, LatencyStats,
    ReplicaSummary, StreamSummary,
};
use crate::windows::{FaultWindowSummary, ScopedWindowSummary};

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
