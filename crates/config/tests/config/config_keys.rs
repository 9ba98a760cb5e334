//! Router config keys in two classes: keys LiteLLM itself would not know (a typo, with the
//! closest known key) and keys LiteLLM knows but routersim does not model (a note). Both load.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "tests fail loudly, read as one story, and drive tokio's paused clock directly"
)]

use routersim_config::keys::{
    LITELLM_ROUTER_INIT_ARGS, MODELLED_LITELLM_KEYS, MODELLED_ROUTER_KEYS, UnknownKey, closest_key,
    edit_distance,
};
use routersim_config::load_router_config_str;
use routersim_engine::config::RouterConfig;

const MODELS: &str = "model_list:\n  - model_name: A\n    litellm_params: {model: openai/a}\n";

fn load(extra: &str) -> RouterConfig {
    let yaml = format!("{MODELS}{extra}");
    match load_router_config_str(&yaml) {
        Ok(config) => config,
        Err(e) => panic!("should load: {e}\n{yaml}"),
    }
}

fn unknown(path: &str, suggestion: Option<&str>) -> UnknownKey {
    UnknownKey {
        path: path.to_string(),
        suggestion: suggestion.map(str::to_string),
    }
}

#[test]
fn a_misspelt_router_setting_is_unknown_with_the_closest_litellm_key() {
    let c = load("router_settings:\n  allowed_fail: 3\n  cooldown_tme: 10\n");
    assert_eq!(
        c.unknown_keys,
        [
            unknown(
                "router_settings.allowed_fail",
                Some("router_settings.allowed_fails")
            ),
            unknown(
                "router_settings.cooldown_tme",
                Some("router_settings.cooldown_time")
            ),
        ]
    );
    assert_eq!(c.ignored_keys, Vec::<String>::new());
    // The setting it meant is not applied: the typo is a no-op, said loudly.
    assert_eq!(c.settings.allowed_fails, None);
    assert_eq!(
        c.unknown_keys[0].to_string(),
        "router_settings.allowed_fail: LiteLLM's Router has no such setting (its proxy ignores \
         it, and so does routersim); did you mean router_settings.allowed_fails?"
    );
}

#[test]
fn keys_litellm_knows_but_routersim_does_not_model_stay_a_note() {
    let c = load(
        "router_settings:\n  redis_host: localhost\n  cache_responses: true\n  \
         routing_strategy_args: {ttl: 60}\n",
    );
    assert_eq!(c.unknown_keys, Vec::<UnknownKey>::new());
    assert_eq!(
        c.ignored_keys,
        [
            "router_settings.cache_responses",
            "router_settings.redis_host",
            "router_settings.routing_strategy_args",
        ]
    );
}

#[test]
fn routersims_own_extension_keys_are_modelled_not_typos() {
    let c = load(
        "router_settings:\n  profile: deltallm\n  recovery: half_open\n  \
         classification: deltallm\n  stream_stall_timeout: 5s\n  stream_recovery: multigrid\n  \
         health_check_interval: 30s\n  enable_weighted_failover: true\n",
    );
    assert_eq!(c.unknown_keys, Vec::<UnknownKey>::new());
    assert_eq!(c.ignored_keys, Vec::<String>::new());
}

#[test]
fn an_unknown_router_key_far_from_every_known_one_has_no_suggestion() {
    let c = load("router_settings:\n  redis_enabled: true\n  zzz: 1\n");
    assert_eq!(
        c.unknown_keys,
        [
            unknown("router_settings.redis_enabled", None),
            unknown("router_settings.zzz", None),
        ]
    );
    assert_eq!(
        c.unknown_keys[1].to_string(),
        "router_settings.zzz: LiteLLM's Router has no such setting (its proxy ignores it, and \
         so does routersim)"
    );
}

#[test]
fn suggestions_found_in_real_configs() {
    // Keys seen in public proxy configs that LiteLLM's Router does not have.
    let c = load("router_settings:\n  enable_cooldowns: false\n  max_retries: 3\n");
    assert_eq!(
        c.unknown_keys,
        [
            unknown(
                "router_settings.enable_cooldowns",
                Some("router_settings.disable_cooldowns")
            ),
            unknown(
                "router_settings.max_retries",
                Some("router_settings.num_retries")
            ),
        ]
    );
}

#[test]
fn a_misspelt_top_level_section_is_unknown_and_other_sections_are_a_note() {
    let c = load(
        "router_setting:\n  num_retries: 0\ngeneral_settings: {master_key: x}\n\
         litelm_settings: {num_retries: 0}\n",
    );
    assert_eq!(
        c.unknown_keys,
        [
            unknown("litelm_settings", Some("litellm_settings")),
            unknown("router_setting", Some("router_settings")),
        ]
    );
    assert_eq!(c.ignored_keys, ["general_settings"]);
    // The misspelt section's settings are not applied.
    assert_eq!(c.settings.num_retries, 2);
    assert_eq!(
        c.unknown_keys[1].to_string(),
        "router_setting: not a section LiteLLM's proxy reads (ignored, by routersim too); did \
         you mean router_settings?"
    );
}

#[test]
fn litellm_settings_and_deployment_keys_stay_notes() {
    // LiteLLM sets any litellm_settings key on its module and forwards litellm_params to the
    // provider: no list of "known" keys can be sourced, so these are never called typos.
    let c = load("litellm_settings:\n  callbacks: [x]\n  drop_params: true\n");
    assert_eq!(c.unknown_keys, Vec::<UnknownKey>::new());
    assert_eq!(
        c.ignored_keys,
        ["litellm_settings.callbacks", "litellm_settings.drop_params"]
    );
}

#[test]
fn edit_distance_counts_a_transposition_as_one() {
    assert_eq!(edit_distance("allowed_fail", "allowed_fails"), 1);
    assert_eq!(edit_distance("cooldonw_time", "cooldown_time"), 1);
    assert_eq!(edit_distance("", "abc"), 3);
    assert_eq!(edit_distance("kitten", "sitting"), 3);
    assert_eq!(
        closest_key("num_retry", ["num_retries", "retry_after"]),
        Some("num_retries")
    );
    assert_eq!(closest_key("xyz", ["num_retries", "retry_after"]), None);
}

#[test]
fn a_misspelt_model_list_is_the_error_not_an_empty_model_list() {
    let e = match load_router_config_str(
        "model_lists:\n  - model_name: A\n    litellm_params: {model: openai/a}\n",
    ) {
        Ok(_) => panic!("a config without model_list must not load"),
        Err(e) => e,
    };
    assert_eq!(e.path, "model_lists");
    assert_eq!(
        e.message,
        "not a section LiteLLM's proxy reads (ignored, by routersim too); did you mean \
         model_list? routersim needs the deployments in the file"
    );
}

/// The list of modelled keys and the code that reads them are one table: every listed key is
/// read (a value no reader accepts, `[[]]`, is an error at that key), in `litellm_settings` too
/// when listed there; and a LiteLLM key not listed is never read (the same value loads, as a
/// note).
#[test]
fn every_modelled_key_is_read_and_no_other_key_is() {
    for (section, keys) in [
        ("router_settings", &MODELLED_ROUTER_KEYS[..]),
        ("litellm_settings", &MODELLED_LITELLM_KEYS[..]),
    ] {
        for key in keys {
            let yaml = format!("{MODELS}{section}:\n  {key}: [[]]\n");
            let Err(e) = load_router_config_str(&yaml) else {
                panic!("{section}.{key}: [[]] loaded: the key is listed but not read");
            };
            assert!(
                e.path.starts_with(&format!("{section}.{key}")),
                "{section}.{key}: the error is elsewhere: {e}"
            );
        }
    }
    for key in LITELLM_ROUTER_INIT_ARGS
        .into_iter()
        .filter(|k| !MODELLED_ROUTER_KEYS.contains(k))
    {
        let config = load(&format!("router_settings:\n  {key}: [[]]\n"));
        assert!(
            config
                .ignored_keys
                .contains(&format!("router_settings.{key}")),
            "{key} is read but not listed as modelled"
        );
    }
}

/// LiteLLM's `RetryPolicy` and `AllowedFailsPolicy` are pydantic models that ignore fields
/// they do not have, so a real config with `retry_policy: {max_retries: 3}` loads there:
/// routersim loads it too, the known fields applied, the unknown one said with the closest
/// field.
#[test]
fn an_unknown_policy_field_loads_and_is_said_with_the_closest_field() {
    let c = load(
        "  - model_name: B\n    litellm_params: {model: openai/b}\n    model_info:\n      allowed_fails_policy: {RateLimitErrorAllowedFail: 2, TimeoutErrorAllowedFails: 1}\nrouter_settings:\n  retry_policy:\n    max_retries: 3\n    RateLimitErrorRetries: 4\n    TimeoutErorRetries: 2\n  model_group_retry_policy:\n    A: {BadRequestErrorRetry: 1, DefaultRetries: 2}\n  allowed_fails_policy: {ContentPolicyViolationErrorAllowedFail: 3}\n",
    );
    assert_eq!(
        c.unknown_keys,
        [
            unknown(
                "model_list[1].model_info.allowed_fails_policy.RateLimitErrorAllowedFail",
                Some("model_list[1].model_info.allowed_fails_policy.RateLimitErrorAllowedFails")
            ),
            unknown(
                "router_settings.allowed_fails_policy.ContentPolicyViolationErrorAllowedFail",
                Some(
                    "router_settings.allowed_fails_policy.ContentPolicyViolationErrorAllowedFails"
                )
            ),
            unknown(
                "router_settings.model_group_retry_policy.A.BadRequestErrorRetry",
                Some("router_settings.model_group_retry_policy.A.BadRequestErrorRetries")
            ),
            unknown(
                "router_settings.retry_policy.TimeoutErorRetries",
                Some("router_settings.retry_policy.TimeoutErrorRetries")
            ),
            unknown(
                "router_settings.retry_policy.max_retries",
                Some("router_settings.retry_policy.DefaultRetries")
            ),
        ]
    );
    // The known fields beside them are applied.
    let retry = c.settings.retry_policy.as_ref().expect("retry_policy");
    assert_eq!(retry.per_kind.len(), 1, "{retry:?}");
    assert_eq!(retry.per_kind.values().next(), Some(&4));
    assert_eq!(retry.default, None);
    assert_eq!(c.settings.model_group_retry_policy["A"].default, Some(2));
    assert!(c.settings.model_group_retry_policy["A"].per_kind.is_empty());
    let fails = c.deployments[1].allowed_fails_policy.as_ref().expect("set");
    assert_eq!(fails.per_kind.values().copied().collect::<Vec<_>>(), [1]);
    assert_eq!(
        c.unknown_keys[4].to_string(),
        "router_settings.retry_policy.max_retries: LiteLLM's RetryPolicy has no such field (it \
         ignores it, and so does routersim); did you mean \
         router_settings.retry_policy.DefaultRetries?"
    );
}

/// The Portkey gateway's options (`portkey_use_retry_after_header`,
/// `portkey_fallback_on_status_codes`): read under `profile: portkey`; under any other
/// profile each loads and is said to do nothing; a status outside 100-599 is an error at its
/// index.
#[test]
fn portkey_keys_are_read_by_profile_portkey_only() {
    let keys =
        "  portkey_use_retry_after_header: true\n  portkey_fallback_on_status_codes: [429, 503]\n";
    let config = load(&format!("router_settings:\n  profile: portkey\n{keys}"));
    assert!(config.settings.portkey_use_retry_after_header);
    assert_eq!(
        config.settings.portkey_fallback_on_status_codes,
        Some(vec![429, 503])
    );
    assert!(config.unread_keys.is_empty(), "{:?}", config.unread_keys);

    let config = load(&format!("router_settings:\n{keys}"));
    let unread: Vec<(&str, &str)> = config
        .unread_keys
        .iter()
        .map(|k| (k.path.as_str(), k.message.as_str()))
        .collect();
    let said = "read by profile: portkey only; it does nothing here";
    assert_eq!(
        unread,
        [
            ("router_settings.portkey_use_retry_after_header", said),
            ("router_settings.portkey_fallback_on_status_codes", said),
        ]
    );

    let yaml = format!(
        "{MODELS}router_settings:\n  profile: portkey\n  portkey_fallback_on_status_codes: [429, 4290]\n"
    );
    let e = load_router_config_str(&yaml).unwrap_err();
    assert_eq!(
        e.path,
        "router_settings.portkey_fallback_on_status_codes[1]"
    );
    assert!(
        e.message.contains("HTTP status (100-599), found 4290"),
        "{e}"
    );
}

/// `portkey_strategy` and `portkey_retry_on_status_codes` (the gateway's `strategy.mode` and
/// `retry.on_status_codes`): read under `profile: portkey`, said to do nothing under another
/// profile; a strategy the gateway does not model here is an error at its path; under
/// `loadbalance`, `portkey_fallback_on_status_codes` is said to do nothing (it never falls
/// back).
#[test]
fn portkey_strategy_and_retry_list_are_read_by_profile_portkey_only() {
    use routersim_engine::config::PortkeyStrategy;
    let keys = "  portkey_strategy: loadbalance\n  portkey_retry_on_status_codes: [503]\n";
    let config = load(&format!("router_settings:\n  profile: portkey\n{keys}"));
    assert_eq!(
        config.settings.portkey_strategy,
        PortkeyStrategy::Loadbalance
    );
    assert_eq!(
        config.settings.portkey_retry_on_status_codes,
        Some(vec![503])
    );
    assert!(config.unread_keys.is_empty(), "{:?}", config.unread_keys);
    let config = load("router_settings:\n  profile: portkey\n");
    assert_eq!(config.settings.portkey_strategy, PortkeyStrategy::Fallback);
    assert_eq!(config.settings.portkey_retry_on_status_codes, None);

    let config = load(&format!("router_settings:\n{keys}"));
    let paths: Vec<&str> = config.unread_keys.iter().map(|k| k.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "router_settings.portkey_strategy",
            "router_settings.portkey_retry_on_status_codes"
        ]
    );

    let config = load(
        "router_settings:\n  profile: portkey\n  portkey_strategy: loadbalance\n  \
         portkey_fallback_on_status_codes: [429]\n",
    );
    let unread: Vec<(&str, &str)> = config
        .unread_keys
        .iter()
        .map(|k| (k.path.as_str(), k.message.as_str()))
        .collect();
    assert_eq!(unread.len(), 1, "{unread:?}");
    assert_eq!(
        unread[0].0,
        "router_settings.portkey_fallback_on_status_codes"
    );
    assert!(
        unread[0].1.contains("loadbalance never moves"),
        "{unread:?}"
    );

    let yaml =
        format!("{MODELS}router_settings:\n  profile: portkey\n  portkey_strategy: single\n");
    let e = load_router_config_str(&yaml).unwrap_err();
    assert_eq!(e.path, "router_settings.portkey_strategy");
    assert!(e.message.contains("fallback or loadbalance"), "{e}");
}
