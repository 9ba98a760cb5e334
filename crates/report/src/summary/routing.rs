//! The reliability metrics of `summary.json` (issue 14: the contracts seed's list and
//! Multigrid's deadline). Separate from the rest of the summary because they are one optional
//! block with rules of their own (see [`Summary::routing`](super::Summary::routing)).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::sections::AttemptStats;

/// The name `latency_by_final_route` gives requests that never reached a deployment.
pub const NO_ROUTE: &str = "(none)";

/// The reliability metrics the contracts seed lists (*"fallback rate, attempts per completed
/// request, deadline exhaustion rate, …, cost per accepted response, and latency by final
/// route"*) that the older keys do not already give. See
/// [`Summary::routing`](super::Summary::routing) for when they are written. (Every field is
/// required: a summary without them reads back as `None`.)
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RoutingMetrics {
    /// Failed requests whose walk a `give_up` with reason `deadline_exhausted` cut short
    /// (`profile: multigrid`'s end-to-end deadline).
    pub deadline_exhausted: u64,
    /// `deadline_exhausted ÷ requests`.
    pub deadline_exhaustion_rate: f64,
    /// Mean provider attempts of the requests that succeeded (0 when none did).
    pub attempts_per_completed_request: f64,
    /// Attempts whose connection was lost after the request was sent (`ambiguous_outcome`
    /// events): the provider may have executed them.
    pub ambiguous_outcomes: u64,
    /// Ambiguous attempts followed by another attempt of the same operation (a replay).
    pub ambiguous_replays: u64,
    /// Executions of an operation after its first (a success, or an ambiguous attempt the
    /// provider executed, after one that executed), where replays were not deduplicated
    /// (`replay: always`): work the provider did twice.
    pub duplicate_executions: u64,
    /// Accepted responses' cost (USD) over the requests that succeeded: the `response_cost`
    /// of each successful attempt (input and output tokens at the deployment's prices; an
    /// unpriced deployment's responses count 0), ÷ `ok`. `null` when no deployment has a
    /// price. Failed attempts are not priced (an ambiguous one the provider executed was
    /// billed too: see `duplicate_executions`).
    pub cost_per_accepted_response: Option<f64>,
    /// Requests the router served that were a client's retry of a failed one
    /// (`client_retries`: the retry owner above the router).
    pub client_retries: u64,
    /// User requests: `requests` less `client_retries` (each client send is a request).
    pub user_requests: u64,
    /// Provider calls per user request, over all the client's sends: the retry
    /// multiplication of two retry owners.
    pub provider_calls_per_user_request: AttemptStats,
    /// End-to-end latency (ms) of every finished request by the deployment of its final
    /// attempt (`(none)`: it reached none).
    pub latency_by_final_route: BTreeMap<String, RouteLatencyStats>,
}

impl RoutingMetrics {
    /// Whether one of them says what no older key does, whatever the profile.
    pub fn says_something_new(&self) -> bool {
        self.deadline_exhausted > 0 || self.ambiguous_outcomes > 0 || self.client_retries > 0
    }
}

/// One final route's latencies, ms (percentiles as in [`LatencyStats`](super::LatencyStats)).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RouteLatencyStats {
    /// Requests that ended there.
    pub count: u64,
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
}
