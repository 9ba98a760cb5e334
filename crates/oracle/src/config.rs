//! The scenario's `litellm.Router(**router)` kwargs as a routersim config.
//!
//! The kwargs go through the engine's own loader, as a proxy `config.yaml` with `model_list`
//! and `router_settings` would, so a kwarg the loader does not know fails the scenario
//! instead of silently doing nothing. Each deployment's `litellm_params.model` is the
//! oracle's `scripted/<id>` (the oracle rewrites it the same way).

use routersim_config::load::{LoadOptions, load_router_config_value_with};
use routersim_engine::config::RouterConfig;
use serde_json::{Map, Value, json};

use crate::error::OracleError;

/// Builds the config with `router_settings.profile` set to `profile`.
pub fn router_config(
    scenario: &str,
    router: &Map<String, Value>,
    profile: &str,
) -> Result<RouterConfig, OracleError> {
    let err = |m: String| OracleError::new(scenario, m);
    let mut settings = Map::new();
    let mut model_list = Vec::new();
    for (key, value) in router {
        if key == "model_list" {
            let list = value
                .as_array()
                .ok_or_else(|| err("router.model_list must be a list".into()))?;
            for entry in list {
                model_list.push(scripted_entry(entry).map_err(&err)?);
            }
        } else {
            settings.insert(key.clone(), value.clone());
        }
    }
    settings.insert("profile".into(), Value::String(profile.into()));
    let root = json!({"model_list": model_list, "router_settings": settings});
    let config = load_router_config_value_with(&root, &LoadOptions::default())
        .map_err(|e| err(format!("router kwargs do not load: {e}")))?;
    if let Some(unknown) = config.unknown_keys.first() {
        return Err(err(format!(
            "router kwarg `{}` is not a key LiteLLM's proxy config knows",
            unknown.path
        )));
    }
    Ok(config)
}

/// A `model_list` entry with `litellm_params.model` set to `scripted/<id>`.
fn scripted_entry(entry: &Value) -> Result<Value, String> {
    let mut entry = entry
        .as_object()
        .cloned()
        .ok_or("a model_list entry must be an object")?;
    let id = entry
        .get("model_info")
        .and_then(|m| m.get("id"))
        .or_else(|| entry.get("litellm_params").and_then(|p| p.get("id")))
        .and_then(Value::as_str)
        .ok_or("a model_list entry needs model_info.id")?
        .to_string();
    let params = entry
        .entry("litellm_params")
        .or_insert_with(|| Value::Object(Map::new()));
    let params = params
        .as_object_mut()
        .ok_or("litellm_params must be an object")?;
    params.insert("model".into(), Value::String(format!("scripted/{id}")));
    if !entry.contains_key("model_info") {
        entry.insert("model_info".into(), json!({ "id": id }));
    }
    Ok(Value::Object(entry))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kwargs(extra: Value) -> Map<String, Value> {
        let mut router = json!({
            "model_list": [{"model_name": "A", "litellm_params": {"order": 1}, "model_info": {"id": "a1"}}],
            "num_retries": 3,
        });
        if let (Some(map), Value::Object(more)) = (router.as_object_mut(), extra) {
            map.extend(more);
        }
        router.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn router_kwargs_load_as_a_proxy_config_with_the_profile() {
        let config = router_config("s", &kwargs(json!({})), "litellm-1.110").unwrap();
        assert_eq!(config.settings.num_retries, 3);
        assert_eq!(&*config.deployments[0].id, "a1");
        assert_eq!(config.deployments[0].model, "scripted/a1");
        assert_eq!(config.deployments[0].order, Some(1));
        assert_eq!(
            config.settings.profile,
            Some(routersim_engine::config::Profile::LiteLlm110)
        );
    }

    #[test]
    fn a_kwarg_the_proxy_would_not_know_fails_the_scenario() {
        let err =
            router_config("s", &kwargs(json!({"num_retires": 2})), "litellm-1.110").unwrap_err();
        assert!(err.message.contains("num_retires"), "{err}");
        let err = router_config(
            "s",
            &kwargs(json!({"num_retries": "many"})),
            "litellm-1.110",
        )
        .unwrap_err();
        assert!(err.message.contains("num_retries"), "{err}");
    }
}
