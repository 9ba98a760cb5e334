//! The reliability metrics of `summary.json` (issue 14: the contracts seed's list and
//! Multigrid's deadline) and their line in the CLI summary. Separate from `summary` because
//! they are one optional block with rules of their own (see [`Summary::routing`]).

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use crate::summary::AttemptStats;
#[cfg(doc)]
use crate::summary::{LatencyStats, Summary};

/// The name `latency_by_final_route` gives requests that never reached a deployment.
pub const NO_ROUTE: &str = "(none)";

/// The reliability metrics the contracts seed lists (*"fallback rate, attempts per completed
/// request, deadline exhaustion rate, …, cost per accepted response, and latency by final
/// route"*) that the older keys do not already give. See [`Summary::routing`] for when they
/// are written. (Every field is required: a summary without them reads back as `None`.)
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

/// One final route's latencies, ms (percentiles as in [`LatencyStats`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RouteLatencyStats {
    /// Requests that ended there.
    pub count: u64,
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
}

/// The reliability line, when `summary.json` carries it.
pub(crate) fn print_routing(r: &RoutingMetrics, out: &mut impl Write) -> io::Result<()> {
    write!(
        out,
        "  deadline exhausted {} ({:.2}%), {:.2} attempts/completed request",
        r.deadline_exhausted,
        r.deadline_exhaustion_rate * 100.0,
        r.attempts_per_completed_request
    )?;
    if let Some(usd) = r.cost_per_accepted_response {
        write!(out, "; ${usd:.6}/accepted response")?;
    }
    if r.client_retries > 0 {
        write!(
            out,
            "; {} user requests, {} client retries, {:.2} provider calls/user request (max {})",
            r.user_requests,
            r.client_retries,
            r.provider_calls_per_user_request.mean,
            r.provider_calls_per_user_request.max
        )?;
    }
    if r.ambiguous_outcomes > 0 {
        write!(
            out,
            "; ambiguous {} (replayed {}, executed twice {})",
            r.ambiguous_outcomes, r.ambiguous_replays, r.duplicate_executions
        )?;
    }
    let routes: Vec<String> = r
        .latency_by_final_route
        .iter()
        .map(|(id, l)| format!("{id} {}× p99 {:.3} ms", l.count, l.p99))
        .collect();
    if !routes.is_empty() {
        write!(out, "; by final route: {}", routes.join(", "))?;
    }
    writeln!(out)
}
