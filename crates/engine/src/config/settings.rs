//! The router-wide settings (`router_settings`) and the validated config that holds them with
//! the deployments. Every setting value type lives in this module or beside it in
//! `crate::config`, below everything that reads them: the settings name nothing above them.

use std::collections::BTreeMap;
use std::time::Duration;

use super::alternatives::{
    HedgeAfter, OutlierSettings, RetryBudgetSettings, RetryThrottlingSettings,
};
use super::deployment::{Deployment, KindPolicy};
use super::fallbacks::FallbackMap;
use super::modes::{Replay, StreamRecovery};
use super::names::{Classification, PortkeyStrategy, Profile, Recovery, RoutingStrategyName};
use super::unknown::{UnknownKey, UnreadKey};

/// Default `num_retries` (LiteLLM's).
pub const DEFAULT_NUM_RETRIES: u32 = 2;
/// Default `cooldown_time` (LiteLLM's).
pub const DEFAULT_COOLDOWN_TIME: Duration = Duration::from_secs(5);
/// Default `max_fallbacks` (LiteLLM's), unless `ROUTER_MAX_FALLBACKS` says otherwise.
pub const DEFAULT_MAX_FALLBACKS: u32 = 5;
/// The longest duration any input may state: 10 years (87,600 h). Router timeouts, cooldowns
/// and intervals here; latencies, stalls, fault windows and traffic times in a scenario. The
/// virtual clock serves longer ones exactly (tokio re-files a timer past its 2.2-year wheel
/// each time the wheel turns), but an instant plus a duration must never overflow
/// (`timeout: 1e19` would), and a run's sums of durations (arrival, attempts, waits) stay far
/// inside the 584,000 years of the reports' microsecond counters with this bound.
pub const MAX_DURATION: Duration = Duration::from_secs(87_600 * 3600);
/// The environment variable LiteLLM reads for the fallback depth limit.
pub const MAX_FALLBACKS_ENV: &str = "ROUTER_MAX_FALLBACKS";

/// Default `connect_allowance` (`profile: contract`).
pub const DEFAULT_CONNECT_ALLOWANCE: Duration = Duration::from_millis(300);
/// Default `validation_allowance` (`profile: contract`).
pub const DEFAULT_VALIDATION_ALLOWANCE: Duration = Duration::from_millis(50);

/// A validated router configuration.
#[derive(Clone, Debug, Default)]
pub struct RouterConfig {
    /// Every deployment, in `model_list` order.
    pub deployments: Vec<Deployment>,
    /// The router-wide settings.
    pub settings: RouterSettings,
    /// YAML paths of keys LiteLLM knows but the engine does not model (listed once, never an
    /// error).
    pub ignored_keys: Vec<String>,
    /// Keys LiteLLM itself would not know (a misspelt `router_settings` key or section), each
    /// with the closest known key; they load, and do nothing.
    pub unknown_keys: Vec<UnknownKey>,
    /// Things that load but look wrong (a fallback to an unknown group, a self-reference).
    pub warnings: Vec<String>,
    /// Keys set that the chosen profile does not read (each also one of the `warnings`).
    pub unread_keys: Vec<UnreadKey>,
}

/// `router_settings` (with fallback keys also read from `litellm_settings`).
#[derive(Clone, Debug)]
pub struct RouterSettings {
    /// `routing_strategy`.
    pub routing_strategy: RoutingStrategyName,
    /// `num_retries` (default 2).
    pub num_retries: u32,
    /// `retry_after`: the floor of the exponential backoff (default 0).
    pub retry_after: Duration,
    /// `cooldown_time` (default 5 s).
    pub cooldown_time: Duration,
    /// `allowed_fails`: `Some` only when the config sets it (LiteLLM: "takes part only when it
    /// was set explicitly").
    pub allowed_fails: Option<u32>,
    /// `allowed_fails_policy`.
    pub allowed_fails_policy: Option<KindPolicy>,
    /// `retry_policy`.
    pub retry_policy: Option<KindPolicy>,
    /// `model_group_retry_policy`: per model group.
    pub model_group_retry_policy: BTreeMap<String, KindPolicy>,
    /// `fallbacks`, with `default_fallbacks` appended as the `"*"` entry.
    pub fallbacks: FallbackMap,
    /// `context_window_fallbacks`.
    pub context_window_fallbacks: FallbackMap,
    /// `content_policy_fallbacks`.
    pub content_policy_fallbacks: FallbackMap,
    /// `max_fallbacks` (default 5, or `ROUTER_MAX_FALLBACKS`).
    pub max_fallbacks: u32,
    /// `enable_weighted_failover`.
    pub enable_weighted_failover: bool,
    /// `disable_cooldowns`.
    pub disable_cooldowns: bool,
    /// `enable_health_check_routing`.
    pub enable_health_check_routing: bool,
    /// `timeout`: a deadline on each attempt, unless the deployment sets its own.
    pub timeout: Option<Duration>,
    /// `model_group_alias`: alias → model group.
    pub model_group_alias: BTreeMap<String, String>,
    /// `model_group_alias` entries LiteLLM loads but cannot route (a list, a number, a mapping
    /// without a `model` string): alias → what it maps to. A request for one fails with
    /// `bad_request` (see `router::walk`), as in LiteLLM 1.110.2.
    pub unroutable_aliases: BTreeMap<String, String>,
    /// `stream_timeout`: time allowed to a stream's first token.
    pub stream_timeout: Option<Duration>,
    /// `stream_stall_timeout`: longest gap between chunks before a stream counts as stalled.
    pub stream_stall_timeout: Option<Duration>,
    /// `enable_mid_stream_fallback_continuation`.
    pub enable_mid_stream_fallback_continuation: bool,
    /// `stream_recovery: litellm | multigrid`.
    pub stream_recovery: StreamRecovery,
    /// `enable_pre_call_checks`: skip deployments over their RPM/TPM (or a prompt's window).
    pub enable_pre_call_checks: bool,
    /// `recovery: ttl | half_open`.
    pub recovery: Recovery,
    /// `classification: litellm | deltallm`.
    pub classification: Classification,
    /// `health_check_interval`: background probes of every deployment (DeltaLLM).
    pub health_check_interval: Option<Duration>,
    /// `profile`, as written (the settings it presets are already applied; its policies are
    /// its entry in [`PROFILES`](crate::profile::PROFILES)).
    pub profile: Option<Profile>,
    /// `attempts_per_candidate` (`profile: multigrid`): tries each candidate route gets, the
    /// first included (default 3).
    pub attempts_per_candidate: u32,
    /// `allow_fallbacks` (`profile: multigrid`): `false` stops every request after its first
    /// usable route (default true).
    pub allow_fallbacks: bool,
    /// `request_deadline` (`profile: multigrid`): the end-to-end deadline of a non-streamed
    /// request (default 60 s).
    pub request_deadline: Duration,
    /// `stream_deadline` (`profile: multigrid`): the end-to-end deadline of a streamed request
    /// (default 300 s).
    pub stream_deadline: Duration,
    /// `max_attempts` (`profile: contract`): provider attempts per request, every route and
    /// retry included (default 2: one primary attempt plus one fallback).
    pub max_attempts: u32,
    /// `same_route_retries` (`profile: contract`): retries on the same route, for connection
    /// failures and capacity failures with a Retry-After (default 1).
    pub same_route_retries: u32,
    /// `connect_allowance` (`profile: contract`): time an attempt needs before its call
    /// (default 300 ms).
    pub connect_allowance: Duration,
    /// `generation_allowance` (`profile: contract`): time an answer needs; unset, the
    /// deployment's measured mean latency (1 s before one is measured).
    pub generation_allowance: Option<Duration>,
    /// `validation_allowance` (`profile: contract`): time validation needs (default 50 ms).
    pub validation_allowance: Duration,
    /// `retry_budget` (tower's `TpsBudget`; off when `None`).
    pub retry_budget: Option<RetryBudgetSettings>,
    /// `retry_throttling` (gRPC's retry throttling; off when `None`).
    pub retry_throttling: Option<RetryThrottlingSettings>,
    /// `outlier_detection` (Envoy's consecutive-5xx ejection; off when `None`).
    pub outlier_detection: Option<OutlierSettings>,
    /// `hedge_after` (request hedging; off when `None`).
    pub hedge_after: Option<HedgeAfter>,
    /// `replay: always | dedupe | never`: what follows an ambiguous attempt (every profile;
    /// default `always`, see [`crate::replay`]).
    pub replay: Replay,
    /// `portkey_use_retry_after_header` (`profile: portkey`; default false).
    pub portkey_use_retry_after_header: bool,
    /// `portkey_fallback_on_status_codes` (`profile: portkey`; `None`: any failure moves on).
    pub portkey_fallback_on_status_codes: Option<Vec<u16>>,
    /// `portkey_strategy: fallback | loadbalance` (`profile: portkey`; default `fallback`).
    pub portkey_strategy: PortkeyStrategy,
    /// `portkey_retry_on_status_codes` (`profile: portkey`; `None`: the gateway's default).
    pub portkey_retry_on_status_codes: Option<Vec<u16>>,
}

/// Default `max_attempts` (the contract seed: "one primary attempt plus one fallback").
pub const DEFAULT_MAX_ATTEMPTS: u32 = 2;
/// Default `same_route_retries` (the contract seed: "an optional same-route retry only for
/// an early connection failure").
pub const DEFAULT_SAME_ROUTE_RETRIES: u32 = 1;

/// Default `attempts_per_candidate` (Multigrid: "Three attempts per candidate by default, the
/// first included").
pub const DEFAULT_ATTEMPTS_PER_CANDIDATE: u32 = 3;
/// Default `request_deadline` (Multigrid: "60 seconds non-streaming").
pub const DEFAULT_REQUEST_DEADLINE: Duration = Duration::from_secs(60);
/// Default `stream_deadline` (Multigrid: "300 seconds streaming").
pub const DEFAULT_STREAM_DEADLINE: Duration = Duration::from_secs(300);

impl Default for RouterSettings {
    fn default() -> Self {
        Self {
            routing_strategy: RoutingStrategyName::default(),
            num_retries: DEFAULT_NUM_RETRIES,
            retry_after: Duration::ZERO,
            cooldown_time: DEFAULT_COOLDOWN_TIME,
            allowed_fails: None,
            allowed_fails_policy: None,
            retry_policy: None,
            model_group_retry_policy: BTreeMap::new(),
            fallbacks: FallbackMap::default(),
            context_window_fallbacks: FallbackMap::default(),
            content_policy_fallbacks: FallbackMap::default(),
            max_fallbacks: DEFAULT_MAX_FALLBACKS,
            enable_weighted_failover: false,
            disable_cooldowns: false,
            enable_health_check_routing: false,
            timeout: None,
            model_group_alias: BTreeMap::new(),
            unroutable_aliases: BTreeMap::new(),
            stream_timeout: None,
            stream_stall_timeout: None,
            enable_mid_stream_fallback_continuation: false,
            stream_recovery: StreamRecovery::default(),
            enable_pre_call_checks: false,
            recovery: Recovery::default(),
            classification: Classification::default(),
            health_check_interval: None,
            profile: None,
            attempts_per_candidate: DEFAULT_ATTEMPTS_PER_CANDIDATE,
            allow_fallbacks: true,
            request_deadline: DEFAULT_REQUEST_DEADLINE,
            stream_deadline: DEFAULT_STREAM_DEADLINE,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            same_route_retries: DEFAULT_SAME_ROUTE_RETRIES,
            connect_allowance: DEFAULT_CONNECT_ALLOWANCE,
            generation_allowance: None,
            validation_allowance: DEFAULT_VALIDATION_ALLOWANCE,
            retry_budget: None,
            retry_throttling: None,
            outlier_detection: None,
            hedge_after: None,
            replay: Replay::default(),
            portkey_use_retry_after_header: false,
            portkey_fallback_on_status_codes: None,
            portkey_strategy: PortkeyStrategy::Fallback,
            portkey_retry_on_status_codes: None,
        }
    }
}

/// `max_fallbacks`: the config's value, else `ROUTER_MAX_FALLBACKS` (when it parses), else 5.
pub fn resolve_max_fallbacks(configured: Option<u32>, env_value: Option<&str>) -> u32 {
    configured
        .or_else(|| env_value.and_then(|v| v.trim().parse().ok()))
        .unwrap_or(DEFAULT_MAX_FALLBACKS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_fallbacks_prefers_config_then_env_then_default() {
        assert_eq!(resolve_max_fallbacks(Some(2), Some("9")), 2);
        assert_eq!(resolve_max_fallbacks(None, Some("9")), 9);
        assert_eq!(resolve_max_fallbacks(None, Some("x")), 5);
        assert_eq!(resolve_max_fallbacks(None, None), 5);
    }
}
