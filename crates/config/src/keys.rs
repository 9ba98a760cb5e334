//! Which router config keys exist: the one table of known keys, and the closest one to a typo.
//!
//! LiteLLM's proxy hands its `Router` only the `router_settings` keys the `Router` accepts and
//! ignores the rest with a log line nobody reads, so a misspelt `allowed_fail: 3` silently
//! leaves `allowed_fails` unset. routersim loads such files too (they are real configs), but it
//! sorts every key it does not use into one of two classes and says so:
//!
//! - **unknown** ([`UnknownKey`]): LiteLLM itself would not know it — a `router_settings` key
//!   that is not a parameter of `litellm.Router.__init__` nor one of routersim's own
//!   extensions, or a top-level key within two edits of a section routersim reads
//!   (`router_setting:`), or a field of a `retry_policy`, `model_group_retry_policy` entry or
//!   `allowed_fails_policy` that LiteLLM's pydantic model does not have (it ignores such
//!   fields: `max_retries: 3`). A warning each, with the closest known key.
//! - **not modelled** ([`RouterConfig::ignored_keys`](routersim_engine::config::RouterConfig::ignored_keys)):
//!   LiteLLM knows it (or may: `litellm_settings` keys are set on the `litellm` module as they
//!   are, and `litellm_params` are forwarded to the provider, so no list of valid ones exists
//!   to check them against) but routersim does not simulate it. One note for all of them.

pub use routersim_engine::config::UnknownKey;

use crate::load::settings::{ROUTER_SETTINGS, litellm_key_count, litellm_keys, router_keys};

/// The parameters of `litellm.Router.__init__` in LiteLLM 1.110.2: the keys its proxy accepts
/// under `router_settings` (`proxy_server.py` passes a key on when it is in
/// `router_init_args()`, and logs "Key '…' is not a valid argument for Router.__init__().
/// Ignoring this key." for any other). Copied from `ROUTER_INIT_ARGS` in
/// `litellm/router_api.py` of the `litellm==1.110.2` wheel on PyPI (the same names, in the same
/// order, as the signature of `_router_init` in `litellm/router.py`).
pub const LITELLM_ROUTER_INIT_ARGS: [&str; 61] = [
    "model_list",
    "assistants_config",
    "search_tools",
    "guardrail_list",
    "redis_url",
    "redis_host",
    "redis_port",
    "redis_password",
    "redis_db",
    "cache_responses",
    "cache_kwargs",
    "caching_groups",
    "client_ttl",
    "polling_interval",
    "default_priority",
    "num_retries",
    "max_fallbacks",
    "timeout",
    "stream_timeout",
    "default_litellm_params",
    "default_max_parallel_requests",
    "set_verbose",
    "debug_level",
    "default_fallbacks",
    "fallbacks",
    "context_window_fallbacks",
    "content_policy_fallbacks",
    "model_group_alias",
    "enable_pre_call_checks",
    "enable_tag_filtering",
    "tag_filtering_match_any",
    "tag_routing_prefix",
    "plugins",
    "retry_after",
    "retry_policy",
    "model_group_retry_policy",
    "allowed_fails",
    "allowed_fails_policy",
    "cooldown_time",
    "disable_cooldowns",
    "fallback_on_unsupported_params",
    "routing_strategy",
    "optional_pre_call_checks",
    "routing_strategy_args",
    "routing_groups",
    "provider_budget_config",
    "alerting_config",
    "router_general_settings",
    "deployment_affinity_ttl_seconds",
    "model_group_affinity_config",
    "ignore_invalid_deployments",
    "enable_health_check_routing",
    "health_check_staleness_threshold",
    "health_check_ignore_transient_errors",
    "background_health_check_model_groups",
    "enable_weighted_failover",
    "enable_mid_stream_fallback_continuation",
    "fallback_access_check",
    "fallback_budget_check",
    "auto_router_capability_limit",
    "session_affinity_repin_on_failover",
];

/// routersim's own `router_settings` keys, which LiteLLM does not have: DeltaLLM's behaviours
/// (`profile`, `recovery`, `classification`, `health_check_interval`; LiteLLM's proxy wants
/// its health checks in `general_settings`), Multigrid's candidate walk (`profile:
/// multigrid`), `profile: contract`'s attempt policy and deadline budget, the stream watchdog
/// and recovery policy, `replay`, and the alternatives other gateways use (`retry_budget`,
/// `retry_throttling`, `outlier_detection`, `hedge_after`; see [`routersim_engine::alternatives`]).
pub const ROUTERSIM_ROUTER_KEYS: [&str; 20] = [
    "profile",
    "attempts_per_candidate",
    "allow_fallbacks",
    "request_deadline",
    "stream_deadline",
    "max_attempts",
    "same_route_retries",
    "connect_allowance",
    "generation_allowance",
    "validation_allowance",
    "recovery",
    "classification",
    "health_check_interval",
    "stream_stall_timeout",
    "stream_recovery",
    "retry_budget",
    "retry_throttling",
    "outlier_detection",
    "hedge_after",
    "replay",
];

/// `router_settings` keys the engine models (LiteLLM's and routersim's own), in the order they
/// are read: the keys of the loader's one table of keys and readers, so a key is listed here
/// exactly when it is read.
pub const MODELLED_ROUTER_KEYS: [&str; ROUTER_SETTINGS.len()] = router_keys();

/// Router keys that are also read from `litellm_settings` (where real configs often put them),
/// from the same table.
pub const MODELLED_LITELLM_KEYS: [&str; litellm_key_count()] = litellm_keys();

/// The top-level sections routersim reads. Any other top-level key is ignored; one within
/// [`MAX_SECTION_TYPO`] edits of these is reported as a misspelt section.
pub const MODELLED_SECTIONS: [&str; 4] = [
    "model_list",
    "router_settings",
    "litellm_settings",
    "include",
];

/// Edits within which an unknown top-level key counts as a misspelt section.
pub const MAX_SECTION_TYPO: usize = 2;

/// Whether LiteLLM's `Router` (or routersim, as an extension) knows a `router_settings` key.
pub fn is_known_router_key(key: &str) -> bool {
    LITELLM_ROUTER_INIT_ARGS.contains(&key) || ROUTERSIM_ROUTER_KEYS.contains(&key)
}

/// Every `router_settings` key LiteLLM or routersim knows.
pub fn known_router_keys() -> impl Iterator<Item = &'static str> {
    LITELLM_ROUTER_INIT_ARGS
        .iter()
        .chain(&ROUTERSIM_ROUTER_KEYS)
        .copied()
}

/// The optimal-string-alignment distance: insertions, deletions, substitutions and swaps of
/// two neighbours each cost one (`cooldonw` is one edit from `cooldown`).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut rows = vec![0usize; (a.len() + 1) * width];
    let at = |i: usize, j: usize| i * width + j;
    for i in 0..=a.len() {
        rows[at(i, 0)] = i;
    }
    for j in 0..=b.len() {
        rows[at(0, j)] = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[at(i - 1, j)] + 1)
                .min(rows[at(i, j - 1)] + 1)
                .min(rows[at(i - 1, j - 1)] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[at(i - 2, j - 2)] + 1);
            }
            rows[at(i, j)] = best;
        }
    }
    rows[at(a.len(), b.len())]
}

/// The candidate closest to `key`, if it is near enough to be what was meant: at most a third
/// of the key's length in edits (and at least 2 allowed). Ties go to the alphabetically first,
/// so the answer never depends on the order of the table.
pub fn closest_key<'c>(
    key: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    let limit = (key.chars().count() / 3).max(2);
    closest_within(key, candidates, limit)
}

/// The candidate closest to `key` within `limit` edits (ties: alphabetically first).
pub fn closest_within<'c>(
    key: &str,
    candidates: impl IntoIterator<Item = &'c str>,
    limit: usize,
) -> Option<&'c str> {
    candidates
        .into_iter()
        .filter(|c| *c != key)
        .map(|c| (edit_distance(key, c), c))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_modelled_router_key_is_litellms_or_routersims_own() {
        for key in MODELLED_ROUTER_KEYS {
            assert!(is_known_router_key(key), "{key}");
        }
        for key in ROUTERSIM_ROUTER_KEYS {
            assert!(
                !LITELLM_ROUTER_INIT_ARGS.contains(&key),
                "{key} is LiteLLM's, not an extension"
            );
            assert!(MODELLED_ROUTER_KEYS.contains(&key), "{key} is not modelled");
        }
    }
}
