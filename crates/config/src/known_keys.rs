//! Which router config keys exist: LiteLLM's `Router` parameters, routersim's own extensions,
//! and the sections routersim reads. Lists only: which of them routersim models is the
//! loader's table (`load/settings.rs`).

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
/// and recovery policy, `replay`, the alternatives other gateways use (`retry_budget`,
/// `retry_throttling`, `outlier_detection`, `hedge_after`; see [`routersim_engine::alternatives`]),
/// and the Portkey gateway's config options `profile: portkey` reads (`portkey_*`).
pub const ROUTERSIM_ROUTER_KEYS: [&str; 24] = [
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
    "portkey_use_retry_after_header",
    "portkey_strategy",
    "portkey_retry_on_status_codes",
    "portkey_fallback_on_status_codes",
];

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
