//! Loading LiteLLM proxy configs: one synthetic fixture per shape family seen in real configs
//! (see `fixtures/litellm/`), plus the errors that must name their YAML path.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "tests fail loudly, read as one story, and drive tokio's paused clock directly"
)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use routersim_config::load::{
    ConfigError, load_router_config_file, load_router_config_str, load_router_config_value,
};
use routersim_engine::config::{
    DEFAULT_MAX_FALLBACKS, FallbackTarget, KindPolicy, RouterConfig, RoutingStrategyName,
};
use routersim_engine::failure::FailureKind;
use serde_json::{Value, json};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/litellm")
        .join(name)
}

fn load(name: &str) -> RouterConfig {
    match load_router_config_file(&fixture(name)) {
        Ok(config) => config,
        Err(e) => panic!("{name} should load: {e}"),
    }
}

fn load_err(name: &str) -> ConfigError {
    match load_router_config_file(&fixture(name)) {
        Ok(_) => panic!("{name} should not load"),
        Err(e) => e,
    }
}

fn str_err(yaml: &str) -> ConfigError {
    match load_router_config_str(yaml) {
        Ok(_) => panic!("should not load:\n{yaml}"),
        Err(e) => e,
    }
}

fn groups(targets: &[&str]) -> Vec<FallbackTarget> {
    targets.iter().map(|t| FallbackTarget::group(*t)).collect()
}

fn entries(pairs: &[(&str, &[&str])]) -> Vec<(String, Vec<FallbackTarget>)> {
    pairs
        .iter()
        .map(|(k, ts)| (k.to_string(), groups(ts)))
        .collect()
}

fn ids(config: &RouterConfig) -> Vec<&str> {
    config.deployments.iter().map(|d| d.id.as_ref()).collect()
}

const TWO_MODELS: &str = "model_list:\n  - model_name: a\n    litellm_params: {model: openai/a}\n  - model_name: b\n    litellm_params: {model: openai/b}\n";

// ---------------------------------------------------------------------------------------------
// fallback shapes

#[test]
fn shape_1_flow_list_with_quoted_keys() {
    let c = load("fallbacks_flow_quoted.yaml");
    assert_eq!(
        ids(&c),
        [
            "gpt-4o-0",
            "claude-sonnet-1",
            "gpt-4o-mini-2",
            "gpt-4o-long-3"
        ]
    );
    assert_eq!(c.deployments[1].model, "anthropic/claude-sonnet-4");
    assert_eq!(
        c.deployments[0].params.get("api_key"),
        Some(&json!("os.environ/OPENAI_API_KEY"))
    );
    let s = &c.settings;
    assert_eq!(s.routing_strategy, RoutingStrategyName::SimpleShuffle);
    assert_eq!(s.num_retries, 3);
    assert_eq!(
        s.fallbacks.entries,
        entries(&[
            ("gpt-4o", &["claude-sonnet", "gpt-4o-mini"]),
            ("claude-sonnet", &["gpt-4o"]),
        ])
    );
    assert_eq!(
        s.context_window_fallbacks.entries,
        entries(&[("gpt-4o", &["gpt-4o-long"])])
    );
    assert!(s.content_policy_fallbacks.is_empty());
    assert_eq!(c.warnings, Vec::<String>::new());
    assert_eq!(c.ignored_keys, ["model_list[*].litellm_params.api_key"]);
}

#[test]
fn shape_2_block_list_of_name_to_flow_list() {
    let c = load("fallbacks_block_items.yaml");
    assert_eq!(
        ids(&c),
        [
            "Azure/GPT-4.1-0",
            "ollama-mac/qwen3:30b-a3b-1",
            "gemini-2.5-pro-2",
            "deepseek-chat-3"
        ]
    );
    // The unquoted Azure api_version stays a string.
    assert_eq!(
        c.deployments[0].params.get("api_version"),
        Some(&json!("2024-12-01-preview"))
    );
    let s = &c.settings;
    // A trailing space after the strategy name is tolerated.
    assert_eq!(s.routing_strategy, RoutingStrategyName::LatencyBased);
    // Zero is a real value, not "unset".
    assert_eq!(s.retry_after, Duration::ZERO);
    assert_eq!(s.cooldown_time, Duration::ZERO);
    assert_eq!(s.allowed_fails, Some(2));
    assert_eq!(s.num_retries, 2);
    assert_eq!(
        s.fallbacks.entries,
        entries(&[
            ("Azure/GPT-4.1", &["gemini-2.5-pro", "deepseek-chat"]),
            ("gemini-2.5-pro", &["Azure/GPT-4.1"]),
            ("ollama-mac/qwen3:30b-a3b", &["deepseek-chat"]),
        ])
    );
    assert_eq!(c.warnings, Vec::<String>::new());
    assert_eq!(
        c.ignored_keys,
        [
            "model_list[*].litellm_params.api_base",
            "model_list[*].litellm_params.api_version"
        ]
    );
}

#[test]
fn shape_3_block_list_of_flow_maps_with_self_reference_and_unknown_names() {
    let c = load("fallbacks_block_flow_maps.yaml");
    assert_eq!(ids(&c), ["coding-0", "coding-1", "chat-2"]);
    assert_eq!(
        c.settings.fallbacks.entries,
        entries(&[
            ("coding", &["coding"]),
            ("chat", &["coding", "openai/gpt-4o"]),
            ("anthropic/claude-3-haiku", &["chat"]),
        ])
    );
    assert_eq!(
        c.warnings,
        [
            "router_settings.fallbacks[0].coding[0]: \"coding\" falls back to itself",
            "router_settings.fallbacks[1].chat[1]: \"openai/gpt-4o\" is not a model_name in model_list (nor an alias)",
            "router_settings.fallbacks[2].anthropic/claude-3-haiku: \"anthropic/claude-3-haiku\" is not a model_name in model_list (nor an alias)",
        ]
    );
}

#[test]
fn shape_4_machine_dumped_block_of_block_in_litellm_settings() {
    let c = load("fallbacks_block_of_block.yaml");
    assert_eq!(ids(&c), ["fast-0", "smart-1"]);
    assert_eq!(c.deployments[0].model, "openrouter/openai/gpt-4o-mini");
    assert_eq!(
        c.deployments[0].info.get("description"),
        Some(&json!("It's the fast one: cheap and quick"))
    );
    assert_eq!(
        c.deployments[1].info.get("description"),
        Some(&json!("The smart one \u{2019} slower but better"))
    );
    let s = &c.settings;
    assert_eq!(s.num_retries, 4);
    assert_eq!(
        s.fallbacks.entries,
        entries(&[
            ("fast", &["smart", "openrouter/anthropic/claude-3.5-sonnet"]),
            ("smart", &["fast"]),
        ])
    );
    assert_eq!(
        c.warnings,
        [
            "litellm_settings.num_retries: a router setting placed in litellm_settings; honored as the router's num_retries",
            "litellm_settings.fallbacks: a router setting placed in litellm_settings; honored as the router's fallbacks",
            "litellm_settings.fallbacks[0].fast[1]: \"openrouter/anthropic/claude-3.5-sonnet\" is not a model_name in model_list (nor an alias)",
        ]
    );
    assert_eq!(
        c.ignored_keys,
        [
            "litellm_settings.drop_params",
            "model_list[*].litellm_params.api_key",
            "model_list[*].model_info.description",
        ]
    );
}

#[test]
fn shape_5_empty_fallback_lists() {
    let c = load("fallbacks_empty.yaml");
    let s = &c.settings;
    assert!(s.fallbacks.is_empty());
    assert!(s.context_window_fallbacks.is_empty());
    assert!(s.content_policy_fallbacks.is_empty());
    assert_eq!(
        c.warnings,
        [
            "litellm_settings.content_policy_fallbacks: a router setting placed in litellm_settings; honored as the router's content_policy_fallbacks"
        ]
    );
    assert_eq!(c.deployments[0].params.get("api_key"), Some(&json!("none")));
}

#[test]
fn shape_6_model_name_fallback_models_list_is_rejected_with_the_right_shape() {
    let e = load_err("fallbacks_wrong_shape.yaml");
    assert_eq!(e.path, "router_settings.fallbacks[0]");
    assert_eq!(
        e.message,
        "expected a single-key mapping {<model group>: [<fallback groups>]}, found keys model_name, fallback_models; \
         LiteLLM does not read {model_name, fallback_models} entries: write `- reasoning: [chat, gpt-4o-mini]`"
    );
}

// ---------------------------------------------------------------------------------------------
// a real-shaped proxy config

#[test]
fn realistic_proxy_config_loads_without_edits() {
    let c = load("proxy_realistic.yaml");
    assert_eq!(
        ids(&c),
        [
            "3f1b2c4d-0a9e-4e5f-8b7c-1d2e3f4a5b6c",
            "2",
            "os.environ/LOCAL_MODEL_NAME-2"
        ]
    );
    let d0 = &c.deployments[0];
    assert_eq!(&*d0.model_name, "gpt-4o");
    assert_eq!(d0.model, "azure/gpt-4o");
    assert_eq!(d0.rpm, Some(900));
    assert_eq!(d0.tpm, Some(80_000));
    assert_eq!(d0.timeout, Some(Duration::from_secs(30)));
    assert_eq!(
        d0.params.get("api_key"),
        Some(&json!("os.environ/AZURE_API_KEY"))
    );
    assert_eq!(d0.stream_timeout, Some(Duration::from_millis(1)));
    assert_eq!(
        d0.params.get("extra_headers"),
        Some(&json!({"X-Team": "os.environ/TEAM_HEADER", "X-Env": "prod"}))
    );
    assert_eq!(d0.params.get("drop_params"), Some(&json!(["temperature"])));
    assert_eq!(d0.info.get("mode"), Some(&json!("chat")));
    assert_eq!(d0.info.get("supports_vision"), Some(&json!(true)));

    let d1 = &c.deployments[1];
    assert_eq!(d1.num_retries, Some(0));
    assert_eq!(d1.cooldown_time, Some(Duration::ZERO));
    assert_eq!(d1.tags, ["paid", "fast"]);

    let d2 = &c.deployments[2];
    assert_eq!(&*d2.model_name, "os.environ/LOCAL_MODEL_NAME");
    assert_eq!(d2.model, "openai/${LOCAL_MODEL:-llama3}");
    assert_eq!((d2.rpm, d2.tpm), (Some(10), Some(1000)));
    assert_eq!(d2.params.get("api_base"), Some(&Value::Null));
    assert_eq!(d2.params.get("api_key"), Some(&Value::Null));

    let s = &c.settings;
    assert_eq!(s.routing_strategy, RoutingStrategyName::UsageBased);
    assert_eq!(s.timeout, Some(Duration::from_millis(45_500)));
    assert_eq!(s.num_retries, 2);
    assert_eq!(s.cooldown_time, Duration::from_secs(5));
    assert_eq!(s.allowed_fails, None);
    // The loader never reads the environment: LoadOptions bring ROUTER_MAX_FALLBACKS in.
    assert_eq!(s.max_fallbacks, DEFAULT_MAX_FALLBACKS);
    assert_eq!(
        s.model_group_alias,
        BTreeMap::from([("gpt4".to_string(), "gpt-4o".to_string())])
    );
    assert!(s.fallbacks.is_empty());
    assert_eq!(c.warnings, Vec::<String>::new());
    assert_eq!(
        c.ignored_keys,
        [
            "environment_variables",
            "general_settings",
            "guardrails",
            "litellm_settings.cache",
            "litellm_settings.cache_params",
            "litellm_settings.callbacks",
            "litellm_settings.drop_params",
            "litellm_settings.master_key",
            "litellm_settings.set_verbose",
            "litellm_settings.success_callback",
            "model_list[*].litellm_params.api_base",
            "model_list[*].litellm_params.api_key",
            "model_list[*].litellm_params.api_version",
            "model_list[*].litellm_params.drop_params",
            "model_list[*].litellm_params.extra_headers",
            "model_list[*].litellm_params.max_tokens",
            "model_list[*].model_info.mode",
            "model_list[*].model_info.supports_vision",
            "model_list[*].owebui_params",
            "router_settings.redis_host",
            "router_settings.redis_password",
            "router_settings.redis_port",
            "x-custom-holder",
        ]
    );
}

#[test]
fn secrets_are_never_resolved() {
    // Even with the variable set, the literal reference is what comes back.
    let yaml = "model_list:\n  - model_name: m\n    litellm_params:\n      model: openai/m\n      api_key: os.environ/PATH\n      extra: {nested: \"os.environ/HOME\"}\n";
    let c = load_router_config_str(yaml).expect("loads");
    let d = &c.deployments[0];
    assert_eq!(d.params.get("api_key"), Some(&json!("os.environ/PATH")));
    assert_eq!(
        d.params.get("extra"),
        Some(&json!({"nested": "os.environ/HOME"}))
    );
    let dump = format!("{c:?}");
    if let Ok(path) = std::env::var("PATH") {
        assert!(!dump.contains(&path), "PATH's value leaked into the config");
    }
}

#[test]
fn env_reference_in_a_numeric_field_is_an_error() {
    let e = str_err(&format!(
        "{TWO_MODELS}router_settings:\n  num_retries: os.environ/N\n"
    ));
    assert_eq!(e.path, "router_settings.num_retries");
    assert_eq!(
        e.message,
        "environment references are not resolved (found \"os.environ/N\"): write the value itself"
    );
    let e = str_err(
        "model_list:\n  - model_name: a\n    litellm_params: {model: openai/a, rpm: \"os.environ/RPM\"}\n",
    );
    assert_eq!(e.path, "model_list[0].litellm_params.rpm");
}

#[test]
fn anchors_and_merge_keys_expand() {
    let c = load("anchors_merge.yaml");
    assert_eq!(
        ids(&c),
        [
            "gpt-4o-0",
            "gpt-4o-1",
            "gpt-4o-mini-2",
            "gpt-4o-mini-copy-3"
        ]
    );
    let [eu, us, mini, copy] = &c.deployments[..] else {
        panic!("four deployments");
    };
    assert_eq!(eu.model, "azure/gpt-4o-eu");
    assert_eq!((eu.rpm, eu.tpm), (Some(50), Some(20_000)));
    assert_eq!(eu.params.get("api_version"), Some(&json!("2024-10-21")));
    assert_eq!(us.model, "azure/gpt-4o-us");
    assert_eq!((us.rpm, us.tpm), (Some(100), Some(20_000)));
    assert_eq!(us.timeout, Some(Duration::from_secs(120)));
    assert_eq!(
        mini.params.get("api_key"),
        Some(&json!("os.environ/AZURE_KEY"))
    );
    assert_eq!(copy.model, "azure/gpt-4o-mini");
    assert_eq!(copy.params, mini.params);
    assert!(c.ignored_keys.contains(&"x-params".to_string()));
}

#[test]
fn odd_indentation_and_empty_general_settings() {
    let c = load("indentation.yaml");
    assert_eq!(ids(&c), ["one-space-0", "eight-space-1"]);
    assert_eq!(c.deployments[1].model, "openai/eight");
    assert_eq!(c.deployments[1].weight, Some(3.0));
    let s = &c.settings;
    assert_eq!(s.routing_strategy, RoutingStrategyName::LeastBusy);
    assert_eq!(s.num_retries, 1);
    assert_eq!(
        s.model_group_alias,
        BTreeMap::from([
            ("alias-eight".to_string(), "eight-space".to_string()),
            ("alias-one".to_string(), "one-space".to_string()),
        ])
    );
    assert_eq!(c.ignored_keys, ["general_settings"]);
}

#[test]
fn include_merges_model_lists_relative_to_the_file() {
    let c = load("include_parent.yaml");
    assert_eq!(ids(&c), ["parent-model-0", "included-model-1"]);
    assert_eq!(c.deployments[1].model, "anthropic/included");
    assert_eq!(c.settings.num_retries, 1);
    assert_eq!(
        c.settings.fallbacks.entries,
        entries(&[("parent-model", &["included-model"])])
    );
    assert_eq!(
        c.warnings,
        [
            "litellm_settings.num_retries: a router setting placed in litellm_settings; honored as the router's num_retries"
        ]
    );
}

#[test]
fn missing_include_names_the_include_path() {
    let e = load_err("include_missing.yaml");
    assert_eq!(e.path, "include[1]");
    assert!(
        e.message.starts_with("cannot read included file ")
            && e.message.contains("does_not_exist.yaml"),
        "{}",
        e.message
    );
}

#[test]
fn include_without_a_file_is_an_error() {
    let e = str_err(&format!("include: [models.yaml]\n{TWO_MODELS}"));
    assert_eq!(e.path, "include");
}

// ---------------------------------------------------------------------------------------------
// the seed example, policies, placement

#[test]
fn seed_example() {
    let c = load("seed.yaml");
    let s = &c.settings;
    assert_eq!(s.num_retries, 2);
    assert_eq!(s.fallbacks.get("A"), Some(&groups(&["B"])[..]));
    assert_eq!(
        s.context_window_fallbacks.get("A"),
        Some(&groups(&["A-long"])[..])
    );
    assert_eq!(s.fallbacks.entries.len(), 1);
    assert_eq!(s.context_window_fallbacks.entries.len(), 1);
    assert!(s.content_policy_fallbacks.is_empty());
    assert_eq!(s.allowed_fails, None);
    assert_eq!(s.retry_policy, None);
    assert_eq!(s.cooldown_time, Duration::from_secs(5));
    assert_eq!(s.retry_after, Duration::ZERO);
    assert_eq!(c.warnings, Vec::<String>::new());
    assert_eq!(c.ignored_keys, Vec::<String>::new());
}

#[test]
fn policies_with_litellm_and_snake_names() {
    let c = load("policies.yaml");
    let s = &c.settings;

    let retry = KindPolicy {
        per_kind: BTreeMap::from([
            (FailureKind::RateLimit, 3),
            (FailureKind::Timeout, 1),
            (FailureKind::ContentPolicyViolation, 0),
            (FailureKind::BadRequest, 1),
        ]),
        default: Some(2),
    };
    assert_eq!(s.retry_policy.as_ref(), Some(&retry));
    let retry = s.retry_policy.as_ref().expect("retry_policy");
    assert_eq!(retry.get(FailureKind::ContextWindowExceeded), Some(1));
    assert_eq!(retry.get(FailureKind::ContentPolicyViolation), Some(0));
    assert_eq!(retry.get(FailureKind::ServiceUnavailable), Some(2));

    assert_eq!(
        s.allowed_fails_policy,
        Some(KindPolicy {
            per_kind: BTreeMap::from([
                (FailureKind::Timeout, 5),
                (FailureKind::Authentication, 0),
                (FailureKind::BadGateway, 7),
                (FailureKind::InternalServer, 1),
            ]),
            default: None,
        })
    );
    assert_eq!(
        s.model_group_retry_policy,
        BTreeMap::from([(
            "gpt-4o".to_string(),
            KindPolicy {
                per_kind: BTreeMap::from([(FailureKind::RateLimit, 5), (FailureKind::NotFound, 0)]),
                default: None,
            }
        )])
    );

    let d = &c.deployments[0];
    assert_eq!(&*d.id, "primary");
    assert_eq!(d.allowed_fails, Some(1));
    assert_eq!(
        d.allowed_fails_policy,
        Some(KindPolicy {
            per_kind: BTreeMap::from([(FailureKind::RateLimit, 4)]),
            default: Some(2),
        })
    );
    assert_eq!(c.deployments[1].allowed_fails, None);

    // A target dict's other keys become overrides; default_fallbacks is the "*" entry.
    let override_target = FallbackTarget {
        model: "claude".to_string(),
        overrides: BTreeMap::from([
            ("temperature".to_string(), json!(0)),
            ("max_tokens".to_string(), json!(512)),
        ]),
        num_retries: None,
        max_tokens: Some(512),
    };
    assert_eq!(
        s.fallbacks.entries,
        vec![
            ("gpt-4o".to_string(), vec![override_target]),
            ("*".to_string(), groups(&["claude"])),
        ]
    );
    assert_eq!(s.max_fallbacks, 3);
    assert!(s.enable_weighted_failover);
    assert!(!s.disable_cooldowns);
    assert!(s.enable_health_check_routing);
    assert_eq!(c.warnings, Vec::<String>::new());
}

#[test]
fn litellm_settings_placement_and_precedence() {
    let yaml = format!(
        "{TWO_MODELS}router_settings:\n  num_retries: 4\n  fallbacks: []\nlitellm_settings:\n  num_retries: 1\n  allowed_fails: 3\n  cooldown_time: 30s\n  retry_after: 500ms\n  fallbacks: [{{a: [b]}}]\n  default_fallbacks: [b]\n"
    );
    let c = load_router_config_str(&yaml).expect("loads");
    let s = &c.settings;
    assert_eq!(s.num_retries, 4);
    assert_eq!(s.allowed_fails, Some(3));
    assert_eq!(s.cooldown_time, Duration::from_secs(30));
    assert_eq!(s.retry_after, Duration::from_millis(500));
    // LiteLLM reads `fallbacks or litellm.fallbacks`: an empty router list gives way.
    assert_eq!(
        s.fallbacks.entries,
        entries(&[("a", &["b"]), ("*", &["b"])])
    );
    assert_eq!(
        c.warnings,
        [
            "litellm_settings.num_retries: also set in router_settings; router_settings.num_retries wins",
            "litellm_settings.retry_after: a router setting placed in litellm_settings; honored as the router's retry_after",
            "litellm_settings.cooldown_time: a router setting placed in litellm_settings; honored as the router's cooldown_time",
            "litellm_settings.allowed_fails: a router setting placed in litellm_settings; honored as the router's allowed_fails",
            "litellm_settings.fallbacks: used as the router's fallbacks because router_settings.fallbacks is empty",
            "litellm_settings.default_fallbacks: a router setting placed in litellm_settings; honored as the router's default_fallbacks",
        ]
    );
    assert_eq!(c.ignored_keys, Vec::<String>::new());
}

#[test]
fn values_in_yaml_1_1_and_python_spellings() {
    let yaml = "model_list:\n  - model_name: m\n    litellm_params:\n      model: openai/m\n      tpm: 80_000\n      rpm: 60.0\n      order: 1\n      timeout: \"2m\"\n    model_info:\n      id: 7\n      cooldown_time: 1.5\nrouter_settings:\n  disable_cooldowns: True\n  enable_weighted_failover: False\n  max_fallbacks: 0\n  num_retries: 0\n  timeout: 0\n";
    let c = load_router_config_str(yaml).expect("loads");
    let d = &c.deployments[0];
    assert_eq!(&*d.id, "7");
    assert_eq!((d.tpm, d.rpm, d.order), (Some(80_000), Some(60), Some(1)));
    assert_eq!(d.timeout, Some(Duration::from_secs(120)));
    assert_eq!(d.cooldown_time, Some(Duration::from_millis(1500)));
    let s = &c.settings;
    assert!(s.disable_cooldowns);
    assert!(!s.enable_weighted_failover);
    assert_eq!(s.max_fallbacks, 0);
    assert_eq!(s.num_retries, 0);
    // 0 is "not set", as in LiteLLM (tests/config_inputs.rs).
    assert_eq!(s.timeout, None);
}

#[test]
fn duplicate_keys_last_wins_and_no_trailing_newline() {
    let yaml = "model_list:\n  - model_name: m\n    litellm_params: {model: openai/first, model: openai/second,}\nrouter_settings:\n  num_retries: 1\n  num_retries: 3 # 注释";
    let c = load_router_config_str(yaml).expect("loads");
    assert_eq!(c.deployments[0].model, "openai/second");
    assert_eq!(c.settings.num_retries, 3);
}

#[test]
fn value_entry_point_reads_an_inline_mapping() {
    let root = json!({
        "model_list": [
            {"model_name": "a", "litellm_params": {"model": "openai/a", "weight": 2}},
            {"model_name": "b", "litellm_params": {"model": "openai/b"}, "model_info": {"id": "b-main"}},
        ],
        "router_settings": {"routing_strategy": "weighted", "fallbacks": [{"a": ["b"]}]},
    });
    let c = load_router_config_value(&root).expect("loads");
    assert_eq!(ids(&c), ["a-0", "b-main"]);
    assert_eq!(c.deployments[0].weight, Some(2.0));
    assert_eq!(c.settings.routing_strategy, RoutingStrategyName::Weighted);
    assert_eq!(c.settings.fallbacks.entries, entries(&[("a", &["b"])]));
}

// ---------------------------------------------------------------------------------------------
// errors naming exact paths

#[test]
fn fallbacks_of_the_wrong_type() {
    let e = str_err(&format!(
        "{TWO_MODELS}router_settings:\n  fallbacks:\n    - a: b\n"
    ));
    assert_eq!(e.path, "router_settings.fallbacks[0].a");
    assert_eq!(
        e.message,
        "expected a list of model groups, found the string \"b\""
    );
    assert_eq!(
        e.to_string(),
        "router_settings.fallbacks[0].a: expected a list of model groups, found the string \"b\""
    );

    let e = str_err(&format!(
        "{TWO_MODELS}router_settings:\n  fallbacks: {{a: [b]}}\n"
    ));
    assert_eq!(e.path, "router_settings.fallbacks");
    assert!(
        e.message
            .starts_with("expected a list of single-key mappings")
    );

    let e = str_err(&format!(
        "{TWO_MODELS}litellm_settings:\n  fallbacks: [b]\n"
    ));
    assert_eq!(e.path, "litellm_settings.fallbacks[0]");
    assert!(e.message.contains("default_fallbacks"), "{}", e.message);

    let e = str_err(&format!(
        "{TWO_MODELS}router_settings:\n  fallbacks: [{{a: [{{temperature: 0}}]}}]\n"
    ));
    assert_eq!(e.path, "router_settings.fallbacks[0].a[0]");
}

#[test]
fn unknown_routing_strategy() {
    let e = str_err(&format!(
        "{TWO_MODELS}router_settings:\n  routing_strategy: foo\n"
    ));
    assert_eq!(e.path, "router_settings.routing_strategy");
    assert_eq!(
        e.message,
        "unknown routing strategy \"foo\" (expected one of simple-shuffle, weighted, tag-based-routing, \
         priority-based-routing, least-busy, latency-based-routing, cost-based-routing, \
         usage-based-routing, usage-based-routing-v2, rate-limit-aware)"
    );
}

/// LiteLLM's pydantic `RetryPolicy` ignores a field it does not have: the config loads, the
/// field is an unknown key (a warning; an error under `--strict`), the known fields apply.
#[test]
fn invented_retry_policy_key() {
    let c = load_router_config_str(&format!(
        "{TWO_MODELS}router_settings:\n  retry_policy:\n    RateLimitErrorRetries: 2\n    max_retries: 3\n"
    ))
    .expect("loads");
    let paths: Vec<&str> = c.unknown_keys.iter().map(|k| k.path.as_str()).collect();
    assert_eq!(paths, ["router_settings.retry_policy.max_retries"]);
    let policy = c.settings.retry_policy.as_ref().expect("set");
    assert_eq!(policy.per_kind.len(), 1, "{policy:?}");
    assert_eq!(policy.default, None);

    // A Retries key is not an allowed-fails key: unknown, with the allowed-fails field meant.
    let c = load_router_config_str(&format!(
        "{TWO_MODELS}router_settings:\n  allowed_fails_policy: {{TimeoutErrorRetries: 1}}\n"
    ))
    .expect("loads");
    assert_eq!(
        c.unknown_keys[0].to_string(),
        "router_settings.allowed_fails_policy.TimeoutErrorRetries: LiteLLM's AllowedFailsPolicy \
         has no such field (it ignores it, and so does routersim); did you mean \
         router_settings.allowed_fails_policy.TimeoutErrorAllowedFails?"
    );
    assert!(
        c.settings
            .allowed_fails_policy
            .as_ref()
            .is_some_and(|p| p.per_kind.is_empty() && p.default.is_none())
    );

    // Counts are non-negative integers.
    let e = str_err(&format!(
        "{TWO_MODELS}router_settings:\n  retry_policy: {{TimeoutErrorRetries: -1}}\n"
    ));
    assert_eq!(e.path, "router_settings.retry_policy.TimeoutErrorRetries");
    assert_eq!(
        e.message,
        "expected a non-negative integer, found the number -1"
    );
}

#[test]
fn missing_model_and_model_name_and_empty_model_list() {
    let e =
        str_err("model_list:\n  - model_name: a\n    litellm_params:\n      api_base: http://x\n");
    assert_eq!(e.path, "model_list[0].litellm_params.model");
    let e = str_err("model_list:\n  - model_name: a\n    litellm_params: {}\n");
    assert_eq!(e.path, "model_list[0].litellm_params.model");
    let e = str_err("model_list:\n  - model_name: a\n    api_base: http://x\n");
    assert_eq!(e.path, "model_list[0].litellm_params");
    let e = str_err(&format!(
        "{TWO_MODELS}  - litellm_params: {{model: openai/c}}\n"
    ));
    assert_eq!(e.path, "model_list[2].model_name");

    for yaml in [
        "model_list: []\n",
        "general_settings: {}\n",
        "",
        "# nothing\n",
    ] {
        let e = str_err(yaml);
        assert_eq!(e.path, "model_list");
        assert_eq!(
            e.message,
            "model_list is empty: routersim needs the deployments in the file"
        );
    }
}

#[test]
fn duplicate_deployment_ids() {
    let e = str_err(
        "model_list:\n  - model_name: a\n    litellm_params: {model: openai/a}\n    model_info: {id: x}\n  - model_name: b\n    litellm_params: {model: openai/b}\n    model_info: {id: x}\n",
    );
    assert_eq!(e.path, "model_list[1].model_info.id");
    assert_eq!(
        e.message,
        "duplicate deployment id \"x\" (also the id of model_list[0])"
    );
}

#[test]
fn yaml_syntax_errors_carry_line_and_column() {
    let e = str_err("model_list:\n  - model_name: a\n   litellm_params: {model: x}\n");
    assert_eq!(e.path, "(yaml)");
    assert!(e.message.contains("line 3"), "{}", e.message);
    assert!(e.message.contains("column"), "{}", e.message);
}

#[test]
fn wrong_types_name_their_paths() {
    let cases = [
        (
            "router_settings:\n  num_retries: two\n",
            "router_settings.num_retries",
        ),
        (
            "router_settings:\n  cooldown_time: soon\n",
            "router_settings.cooldown_time",
        ),
        (
            "router_settings:\n  disable_cooldowns: maybe\n",
            "router_settings.disable_cooldowns",
        ),
        ("router_settings: [x]\n", "router_settings"),
        (
            "router_settings:\n  retry_policy: [1]\n",
            "router_settings.retry_policy",
        ),
        (
            "litellm_settings:\n  allowed_fails: 1.5\n",
            "litellm_settings.allowed_fails",
        ),
    ];
    for (tail, path) in cases {
        let e = str_err(&format!("{TWO_MODELS}{tail}"));
        assert_eq!(e.path, path, "{tail}");
    }
    let e = str_err(
        "model_list:\n  - model_name: a\n    litellm_params: {model: openai/a, tags: fast}\n",
    );
    assert_eq!(e.path, "model_list[0].litellm_params.tags");
}

#[test]
fn hostile_inputs_are_errors_not_panics() {
    let deep = format!("model_list: {}", "[".repeat(10_000));
    let cases: [(&str, &str); 9] = [
        ("- a\n- b\n", "(root)"),
        ("just a string", "(root)"),
        ("model_list: 5\n", "model_list"),
        ("model_list:\n  - 5\n", "model_list[0]"),
        (
            "model_list:\n  - model_name: [x]\n    litellm_params: {model: m}\n",
            "model_list[0].model_name",
        ),
        (
            "model_list:\n  - model_name: a\n    litellm_params: [model, m]\n",
            "model_list[0].litellm_params",
        ),
        ("? [1, 2]\n: x\n", "(yaml)"),
        ("a: &a [*a]\n", "(yaml)"),
        (deep.as_str(), "(yaml)"),
    ];
    for (yaml, path) in cases {
        let e = str_err(yaml);
        assert_eq!(e.path, path, "{e}");
    }
}

#[test]
fn request_timeout_in_litellm_settings_is_the_routers_timeout_unless_router_settings_sets_one() {
    let base = "model_list:\n  - model_name: A\n    litellm_params: {model: openai/a}\n";
    let only_litellm = format!("{base}litellm_settings:\n  request_timeout: 600\n");
    let cfg = routersim_config::load_router_config_str(&only_litellm).expect("loads");
    assert_eq!(
        cfg.settings.timeout,
        Some(std::time::Duration::from_secs(600))
    );
    assert!(
        !cfg.ignored_keys
            .iter()
            .any(|k| k.contains("request_timeout"))
    );
    let both = format!("{only_litellm}router_settings:\n  timeout: 30\n");
    let cfg = routersim_config::load_router_config_str(&both).expect("loads");
    assert_eq!(
        cfg.settings.timeout,
        Some(std::time::Duration::from_secs(30))
    );
}

#[test]
fn stream_settings_load_and_a_bad_stream_recovery_names_its_path() {
    let yaml = "model_list:\n  - model_name: A\n    litellm_params: {model: openai/a, stream_timeout: 2}\n    model_info: {supports_assistant_prefill: true}\n\
                router_settings:\n  stream_stall_timeout: 5s\n  enable_mid_stream_fallback_continuation: true\n  stream_recovery: multigrid\n";
    let cfg = routersim_config::load_router_config_str(yaml).expect("loads");
    let d = &cfg.deployments[0];
    assert!(d.supports_assistant_prefill);
    assert_eq!(d.stream_timeout, Some(std::time::Duration::from_secs(2)));
    assert_eq!(
        cfg.settings.stream_stall_timeout,
        Some(std::time::Duration::from_secs(5))
    );
    assert!(cfg.settings.enable_mid_stream_fallback_continuation);
    assert_eq!(
        cfg.settings.stream_recovery,
        routersim_engine::stream::StreamRecovery::Multigrid
    );
    let bad = yaml.replace("multigrid", "tower");
    let err = routersim_config::load_router_config_str(&bad).expect_err("rejected");
    assert_eq!(err.path, "router_settings.stream_recovery");
    assert!(
        err.message.contains("litellm or multigrid"),
        "{}",
        err.message
    );
}

#[test]
fn deltallm_keys_and_profiles_load() {
    use routersim_config::load_router_config_str;
    use routersim_engine::config::{Classification, Profile, Recovery};
    let yaml = "model_list:\n  - model_name: A\n    litellm_params: {model: openai/a, input_cost_per_token: 0.000003}\n    model_info: {priority: 1, rpm_limit: 600, tpm_limit: 300000, output_cost_per_token: 0.000015, max_input_tokens: 128000}\n\
                router_settings:\n  profile: deltallm\n  enable_pre_call_checks: true\n  health_check_interval: 30s\n";
    let cfg = load_router_config_str(yaml).expect("loads");
    let d = &cfg.deployments[0];
    assert_eq!(d.priority, Some(1));
    assert_eq!((d.rpm, d.tpm), (Some(600), Some(300_000)));
    assert_eq!(d.input_cost_per_token, Some(0.000003));
    assert_eq!(d.output_cost_per_token, Some(0.000015));
    assert_eq!(d.max_input_tokens, Some(128_000));
    let s = &cfg.settings;
    assert_eq!(s.profile, Some(Profile::DeltaLlm));
    assert_eq!(
        (s.recovery, s.classification),
        (Recovery::HalfOpen, Classification::DeltaLlm)
    );
    assert!(s.enable_pre_call_checks);
    assert_eq!(
        s.health_check_interval,
        Some(std::time::Duration::from_secs(30))
    );
    // Explicit settings win over the profile's bundle.
    let explicit = yaml.replace(
        "profile: deltallm\n",
        "profile: deltallm\n  recovery: ttl\n",
    );
    let cfg = load_router_config_str(&explicit).expect("loads");
    assert_eq!(cfg.settings.recovery, Recovery::Ttl);
    assert_eq!(cfg.settings.classification, Classification::DeltaLlm);
    let bad = yaml.replace("profile: deltallm", "profile: envoy");
    let err = load_router_config_str(&bad).expect_err("rejected");
    assert_eq!(err.path, "router_settings.profile");
}

#[test]
fn an_absurd_retry_count_is_an_error_not_an_hours_long_spin() {
    let yaml = "model_list:\n  - model_name: A\n    litellm_params: {model: openai/a}\nrouter_settings:\n  num_retries: 4000000000\n";
    let err = routersim_config::load_router_config_str(yaml).expect_err("rejected");
    assert_eq!(err.path, "router_settings.num_retries");
    assert!(err.message.contains("at most 1000"), "{}", err.message);
    let policy = "model_list:\n  - model_name: A\n    litellm_params: {model: openai/a}\nrouter_settings:\n  retry_policy: {RateLimitErrorRetries: 5000}\n";
    let err = routersim_config::load_router_config_str(policy).expect_err("rejected");
    assert_eq!(
        err.path,
        "router_settings.retry_policy.RateLimitErrorRetries"
    );
}

/// A fallback target's `num_retries` and `max_tokens` are counts, validated at load: one too
/// large for the router is an error naming its path (it used to be truncated at the hop).
#[test]
fn fallback_override_counts_are_validated_at_load() {
    for (key, value, message) in [
        (
            "num_retries",
            "5000000000",
            "expected a non-negative integer no larger than 4294967295, found 5000000000",
        ),
        (
            "num_retries",
            "1001",
            "a retry count of at most 1000 is expected, found 1001",
        ),
        (
            "max_tokens",
            "5000000000",
            "expected a non-negative integer no larger than 4294967295, found 5000000000",
        ),
        (
            "max_tokens",
            "lots",
            "expected a non-negative integer, found the string \"lots\"",
        ),
    ] {
        let yaml = format!(
            "{TWO_MODELS}router_settings:\n  fallbacks: [{{a: [b, {{model: b, {key}: {value}}}]}}]\n"
        );
        let e = str_err(&yaml);
        assert_eq!(e.path, format!("router_settings.fallbacks[0].a[1].{key}"));
        assert_eq!(e.message, message);
    }
}

/// `ROUTER_MAX_FALLBACKS` comes in through `LoadOptions` (the CLI reads the environment), and
/// every use of it is a warning naming the variable and its value: a run never changes
/// silently with the environment.
#[test]
fn router_max_fallbacks_comes_from_the_load_options_and_is_recorded() {
    use routersim_config::load::{LoadOptions, load_router_config_str_with};
    let load = |extra: &str, env: Option<&str>| {
        let options = LoadOptions {
            max_fallbacks_env: env.map(str::to_string),
        };
        load_router_config_str_with(&format!("{TWO_MODELS}{extra}"), &options).expect("loads")
    };
    let c = load("", Some("9"));
    assert_eq!(c.settings.max_fallbacks, 9);
    assert_eq!(
        c.warnings,
        [
            "ROUTER_MAX_FALLBACKS=\"9\" from the environment: max_fallbacks is 9 \
             (router_settings.max_fallbacks is not set; LiteLLM reads the same variable)"
        ]
    );
    let c = load("", Some("many"));
    assert_eq!(c.settings.max_fallbacks, DEFAULT_MAX_FALLBACKS);
    assert_eq!(
        c.warnings,
        [
            "ROUTER_MAX_FALLBACKS=\"many\" from the environment is not a whole number and is \
             ignored: max_fallbacks is 5"
        ]
    );
    let c = load("router_settings:\n  max_fallbacks: 2\n", Some("9"));
    assert_eq!(c.settings.max_fallbacks, 2);
    assert_eq!(
        c.warnings,
        [
            "router_settings.max_fallbacks: 2 is used; ROUTER_MAX_FALLBACKS=\"9\" from the \
             environment is not"
        ]
    );
    let c = load("", None);
    assert_eq!(c.settings.max_fallbacks, DEFAULT_MAX_FALLBACKS);
    assert!(c.warnings.is_empty());
}
