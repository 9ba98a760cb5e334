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
