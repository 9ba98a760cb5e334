//! `--emit-portkey-config FILE`: the Portkey AI gateway config (`x-portkey-config`) that
//! routes the scenario's traffic through the fake providers the way `profile: portkey`
//! simulates it.
//!
//! The gateway has no server-side routing: every request carries its config. Derived from
//! the scenario's router: the deployments of the one model group the traffic asks for, in
//! `order` then `model_list` order, as the targets of `strategy: {mode: fallback}` — or
//! `loadbalance` under `portkey_strategy: loadbalance`, each target with its `weight` (each
//! `provider: openai` with `custom_host` at its fake endpoint, `{root}/v1`, and
//! `override_params.model` its model name); `retry.attempts` is `num_retries` on
//! `portkey_retry_on_status_codes`, else the gateway's default statuses
//! ([`RETRY_STATUS_CODES`]), with `use_retry_after_header` when
//! `portkey_use_retry_after_header` is on, and a deployment's own `num_retries` is its
//! target's own `retry`; `portkey_fallback_on_status_codes` is the fallback strategy's
//! `on_status_codes`;
//! `forward_headers` passes drive's `x-routersim-*` headers on to the providers, so provider
//! calls join their requests. The router's LiteLLM `fallbacks` lists, cooldowns and routing
//! strategy have no counterpart here (the profile does not read them either).

use std::collections::BTreeSet;

use routersim_engine::config::PortkeyStrategy;
use routersim_engine::portkey::{RETRY_STATUS_CODES, target_weight};
use routersim_sim::scenario::Scenario;
use routersim_wire::headers;
use serde_json::{Value, json};

use super::litellm_config::DUMMY_API_KEY;

/// The request headers the gateway passes on to the providers.
pub const FORWARDED: [&str; 3] = [
    headers::REQUEST_ID,
    headers::INPUT_TOKENS,
    headers::OUTPUT_TOKENS,
];

/// The config, compact JSON (as the `x-portkey-config` header carries it). `roots[i]` is
/// deployment `i`'s root URL (`http://H:P/d/<id>`).
pub fn portkey_config(scenario: &Scenario, roots: &[String]) -> Result<String, String> {
    let groups: BTreeSet<&str> = scenario
        .traffic
        .iter()
        .map(|t| &*t.template().model)
        .collect();
    let group = match (groups.len(), groups.first()) {
        (1, Some(group)) => *group,
        _ => {
            return Err(format!(
                "--emit-portkey-config: the gateway takes one config for every request, so the \
                 traffic must ask for one model group (it asks for {})",
                if groups.is_empty() {
                    "none: a traffic_file is not read here".to_string()
                } else {
                    groups.into_iter().collect::<Vec<_>>().join(", ")
                }
            ));
        }
    };
    let mut members: Vec<(usize, u32)> = scenario
        .router
        .deployments
        .iter()
        .enumerate()
        .filter(|(_, d)| &*d.model_name == group)
        .map(|(i, d)| (i, d.order.unwrap_or(u32::MAX)))
        .collect();
    if members.is_empty() {
        return Err(format!(
            "--emit-portkey-config: no deployment serves model group {group:?}"
        ));
    }
    members.sort_by_key(|&(i, order)| (order, i));
    let settings = &scenario.router.settings;
    let loadbalance = settings.portkey_strategy == PortkeyStrategy::Loadbalance;
    let on_status_codes = settings
        .portkey_retry_on_status_codes
        .as_deref()
        .unwrap_or(&RETRY_STATUS_CODES);
    let retry = |attempts: u32| {
        let mut retry = json!({"attempts": attempts, "on_status_codes": on_status_codes});
        if settings.portkey_use_retry_after_header {
            retry["use_retry_after_header"] = json!(true);
        }
        retry
    };
    let mut targets = Vec::new();
    for (i, _) in &members {
        let deployment = &scenario.router.deployments[*i];
        let root = roots
            .get(*i)
            .ok_or_else(|| format!("deployment {} has no fake endpoint", deployment.id))?;
        let model = deployment
            .model
            .split_once('/')
            .map_or(deployment.model.as_str(), |(_, m)| m);
        let mut target = json!({
            "provider": "openai",
            "api_key": DUMMY_API_KEY,
            "custom_host": format!("{root}/v1"),
            "override_params": {"model": model},
        });
        if loadbalance {
            target["weight"] = json!(target_weight(deployment));
        }
        // The target's own `retry` replaces the config's (`tryTargetsRecursively`).
        if let Some(attempts) = deployment.num_retries {
            target["retry"] = retry(attempts);
        }
        targets.push(target);
    }
    let no_weight = |&(i, _): &(usize, u32)| target_weight(&scenario.router.deployments[i]) <= 0.0;
    if loadbalance && members.iter().all(no_weight) {
        return Err(format!(
            "--emit-portkey-config: every deployment of model group {group:?} has weight 0, so \
             a loadbalance strategy has no target to pick"
        ));
    }
    let mut strategy = json!({"mode": settings.portkey_strategy.as_str()});
    if let Some(codes) = settings
        .portkey_fallback_on_status_codes
        .as_ref()
        .filter(|_| !loadbalance)
    {
        strategy["on_status_codes"] = json!(codes);
    }
    let config: Value = json!({
        "strategy": strategy,
        "retry": retry(settings.num_retries),
        "forward_headers": FORWARDED,
        "targets": targets,
    });
    Ok(config.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use routersim_sim::scenario::parse_scenario;

    /// Two deployments of `g`: `a` (weight 3, its own `num_retries: 1`) and `b` (no weight).
    fn emit(strategy: &str, b_weight: &str) -> Result<Value, String> {
        let yaml = format!(
            "name: lb\nduration: 1s\nrouter:\n  model_list:\n    - {{model_name: g, \
             litellm_params: {{model: openai/x, weight: 3, num_retries: 1}}, model_info: {{id: \
             a}}}}\n    - {{model_name: g, litellm_params: {{model: openai/y{b_weight}}}, \
             model_info: {{id: b}}}}\n  router_settings:\n    profile: portkey\n    \
             portkey_strategy: {strategy}\n    portkey_retry_on_status_codes: [503]\n    \
             portkey_fallback_on_status_codes: [429]\ntraffic:\n  - {{at: 100ms, model: g}}\n"
        );
        let scenario = parse_scenario(&yaml, std::path::Path::new("lb.yaml")).unwrap();
        let roots = ["http://h:1/d/a".to_string(), "http://h:1/d/b".to_string()];
        portkey_config(&scenario, &roots).map(|text| serde_json::from_str(&text).unwrap())
    }

    /// Loadbalance: each target with its weight (none: 1), the retry list on the config's
    /// `retry` and on a target's own (its `num_retries`), no `on_status_codes` on the strategy
    /// (it never falls back); fallback: no weights, the strategy's list.
    #[test]
    fn targets_carry_their_weight_and_own_retry() {
        let config = emit("loadbalance", "").unwrap();
        assert_eq!(config["strategy"], json!({"mode": "loadbalance"}));
        assert_eq!(
            config["retry"],
            json!({"attempts": 2, "on_status_codes": [503]})
        );
        let targets = config["targets"].as_array().unwrap();
        assert_eq!(targets[0]["weight"], json!(3.0));
        assert_eq!(
            targets[0]["retry"],
            json!({"attempts": 1, "on_status_codes": [503]})
        );
        assert_eq!(targets[1]["weight"], json!(1.0));
        assert_eq!(targets[1].get("retry"), None);

        let config = emit("fallback", "").unwrap();
        assert_eq!(
            config["strategy"],
            json!({"mode": "fallback", "on_status_codes": [429]})
        );
        assert_eq!(config["targets"][0].get("weight"), None);
    }

    /// A loadbalance group whose every weight is 0 has no target to pick: refused.
    #[test]
    fn a_loadbalance_without_weight_is_refused() {
        let one_weight_zero = emit("loadbalance", ", weight: 0");
        assert!(one_weight_zero.is_ok(), "{one_weight_zero:?}");
        let e = emit_all_zero().unwrap_err();
        assert!(
            e.contains("every deployment of model group \"g\" has weight 0"),
            "{e}"
        );
    }

    fn emit_all_zero() -> Result<Value, String> {
        let yaml = "name: lb\nduration: 1s\nrouter:\n  model_list:\n    - {model_name: g, \
                    litellm_params: {model: openai/x, weight: 0}, model_info: {id: a}}\n  \
                    router_settings:\n    profile: portkey\n    portkey_strategy: \
                    loadbalance\ntraffic:\n  - {at: 100ms, model: g}\n";
        let scenario = parse_scenario(yaml, std::path::Path::new("lb.yaml")).unwrap();
        portkey_config(&scenario, &["http://h:1/d/a".to_string()])
            .map(|text| serde_json::from_str(&text).unwrap())
    }
}
