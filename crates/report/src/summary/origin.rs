//! Where a run's events came from: the rules routersim's router followed ([`RouterProfile`]),
//! or the real router a live run drove ([`LiveInfo`]).
//!
//! Why apart from the numbers: these say how to read the summary (which keys a profile
//! writes, what a header names), not what happened.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

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
    /// When the run's t = 0 was on the wall clock (RFC 3339, UTC, milliseconds): a live run's
    /// times are real seconds from then.
    #[serde(default)]
    pub started_at: String,
    /// How long the run took on the wall clock, t = 0 to its end (the drain included), ms.
    #[serde(default)]
    pub wall_clock_ms: f64,
    /// Whether drive saw the provider calls (its in-process providers; not with `--providers`):
    /// without them, attempts, retries and fallbacks are not counted.
    #[serde(default)]
    pub provider_calls_seen: bool,
    /// Provider calls joined to no finished request (left out of the attempts, as their
    /// requests are): `joined_by_request_id + joined_by_time + unjoined_calls =
    /// provider_calls`.
    #[serde(default)]
    pub unjoined_calls: u64,
    /// Of those, calls of requests still unanswered when the run ended.
    #[serde(default)]
    pub unjoined_calls_of_unfinished: u64,
    /// Requests that never reached the target (the connection failed before any answer).
    #[serde(default)]
    pub unreached: u64,
    /// Failed requests the scenario did not inject, by kind: a kind its providers and faults
    /// cannot produce, or (provider calls seen) every call of the request succeeded.
    #[serde(default)]
    pub not_injected: BTreeMap<String, u64>,
    /// Answers naming (`x-litellm-model-id`) a deployment the scenario does not have, by id.
    #[serde(default)]
    pub foreign_deployments: BTreeMap<String, u64>,
    /// What makes this report doubtful, one sentence each (also printed, and shown at the top
    /// of `report.html`).
    #[serde(default)]
    pub warnings: Vec<String>,
    /// The connections drive could hold open at once (its file-descriptor budget:
    /// `min(--max-connections, RLIMIT_NOFILE / 4)`).
    #[serde(default)]
    pub max_connections: u64,
    /// Connections drive opened (keep-alive: reused by later requests).
    #[serde(default)]
    pub connections_opened: u64,
    /// Requests that waited for a connection (every one of the budget was busy): their
    /// latency counts from when they were sent, not from their scheduled arrival.
    #[serde(default)]
    pub connection_waits: u64,
    /// The longest such wait, in milliseconds.
    #[serde(default)]
    pub max_connection_wait_ms: f64,
    /// Requests sent a second time on a fresh connection: their reused one closed before
    /// their answer's headers arrived.
    #[serde(default)]
    pub resent: u64,
    /// Requests never sent: the operating system refused drive a socket (the load
    /// generator's limit, not the router's failure; left out of every count).
    #[serde(default)]
    pub not_sent: u64,
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
    /// Whether its summaries carry [`RoutingMetrics`](super::RoutingMetrics) always: every
    /// profile but the three whose summaries (and goldens) predate them.
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
