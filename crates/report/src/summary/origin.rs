//! Where a run's events came from: the rules routersim's router followed ([`RouterProfile`]),
//! or the real router a live run drove ([`LiveInfo`]).
//!
//! Why apart from the numbers: these say how to read the summary (which keys a profile
//! writes, what a header names), not what happened.

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
