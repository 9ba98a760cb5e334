//! `--emit-litellm-config FILE` (`routersim serve`, `routersim drive`): a LiteLLM proxy config
//! that routes through the fake providers unchanged. Where it may be written:
//! [`config_file`](super::config_file).
//!
//! The scenario's own router tree (inline `router:` or its `router_file`, with the scenario's
//! `set` applied) with, for each `model_list` entry, `litellm_params.api_base` pointing at its
//! fake endpoint (LiteLLM 1.110 appends `/chat/completions` to an OpenAI base,
//! `v1/messages` to an Anthropic one, and `/openai/deployments/<name>/chat/completions` to an
//! Azure one), a dummy `api_key`, an `api_version` for Azure, and `model_info.id` set to the
//! deployment id (so `provider_calls.csv` and the proxy name the same deployments). A model
//! whose provider prefix routersim does not serve (`bedrock/…`) is sent as `openai/<name>`.
//! Durations written `"10s"` / `"500ms"` (routersim reads them) become seconds (LiteLLM reads
//! only numbers). `router_settings` keeps the keys LiteLLM's `Router` accepts; the others (routersim's own
//! keys, typos, and `health_check_interval`, which the proxy refuses there) are left out and
//! named in a comment at the top of the file.

use routersim_config::duration::suffixed_seconds;
use std::path::Path;

use routersim_config::keys::LITELLM_ROUTER_INIT_ARGS;
use routersim_config::load::parse_yaml;
use serde_json::{Map, Value};

use routersim_sim::scenario::{RouterSource, Scenario, apply_set};

use super::config_file::HEADER_START;

/// The dummy key every deployment gets.
pub const DUMMY_API_KEY: &str = "sk-routersim-dummy";
/// The `api_version` an Azure deployment gets when it sets none.
pub const AZURE_API_VERSION: &str = "2024-10-21";

/// The fake endpoint's base URL of each deployment, in `model_list` order, as LiteLLM's
/// `api_base` wants it (OpenAI: `…/v1`; Anthropic, Azure: without it).
pub fn api_base(root: &str, model: &str) -> String {
    match provider_prefix(model) {
        Some("anthropic" | "azure") => root.to_string(),
        _ => format!("{root}/v1"),
    }
}

fn provider_prefix(model: &str) -> Option<&str> {
    model.split_once('/').map(|(prefix, _)| prefix)
}

/// The router config's YAML tree, as the scenario loaded it (before validation).
fn router_tree(scenario: &Scenario) -> Result<Value, String> {
    let read =
        |path: &Path| std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()));
    let mut tree = match &scenario.router_source {
        RouterSource::Inline => {
            let root = parse_yaml(&read(&scenario.file)?).map_err(|e| e.to_string())?;
            root.get("router").cloned().unwrap_or(Value::Null)
        }
        RouterSource::File(path) => parse_yaml(&read(path)?).map_err(|e| e.to_string())?,
    };
    for (path, value) in &scenario.set {
        apply_set(&mut tree, path, value.clone())?;
    }
    Ok(tree)
}

/// The config's text. `roots[i]` is deployment `i`'s root URL (`http://H:P/d/<id>`);
/// `command` (`serve`, `drive`) is named in the header as the writer.
pub fn litellm_config(
    scenario: &Scenario,
    roots: &[String],
    command: &str,
) -> Result<String, String> {
    let mut tree = router_tree(scenario)?;
    let Some(list) = tree.get_mut("model_list").and_then(Value::as_array_mut) else {
        return Err("the router config has no model_list".into());
    };
    if list.len() != scenario.router.deployments.len() || list.len() != roots.len() {
        return Err(format!(
            "the router config's model_list has {} entries but {} deployments loaded (a router \
             file's `include:` is not expanded by --emit-litellm-config)",
            list.len(),
            scenario.router.deployments.len()
        ));
    }
    let mut rewritten = Vec::new();
    for ((entry, deployment), root) in list.iter_mut().zip(&scenario.router.deployments).zip(roots)
    {
        let Some(entry) = entry.as_object_mut() else {
            continue;
        };
        let params = object_at(entry, "litellm_params");
        let mut model = deployment.model.clone();
        if !matches!(
            provider_prefix(&model),
            Some("openai" | "anthropic" | "azure")
        ) {
            let name = model.split_once('/').map_or(model.as_str(), |(_, m)| m);
            let served = format!("openai/{name}");
            rewritten.push(format!("{} -> {served}", deployment.model));
            model = served;
            params.insert("model".into(), Value::String(model.clone()));
        }
        params.insert("api_base".into(), Value::String(api_base(root, &model)));
        params.insert("api_key".into(), Value::String(DUMMY_API_KEY.into()));
        if provider_prefix(&model) == Some("azure") && !params.contains_key("api_version") {
            params.insert(
                "api_version".into(),
                Value::String(AZURE_API_VERSION.into()),
            );
        }
        object_at(entry, "model_info")
            .insert("id".into(), Value::String(deployment.id.to_string()));
    }
    let converted = seconds_everywhere(&mut tree);
    let mut dropped = Vec::new();
    if let Some(settings) = tree
        .get_mut("router_settings")
        .and_then(Value::as_object_mut)
    {
        settings.retain(|key, _| {
            let keep = LITELLM_ROUTER_INIT_ARGS.contains(&key.as_str());
            if !keep {
                dropped.push(key.clone());
            }
            keep
        });
    }
    let mut out = String::new();
    out.push_str(&format!(
        "{HEADER_START}{command}` for scenario {:?}:\n\
         # every deployment's api_base points at routersim's fake provider; the key is a dummy.\n\
         # Run: litellm --config THIS_FILE\n",
        scenario.name
    ));
    if !dropped.is_empty() {
        out.push_str(&format!(
            "# Left out of router_settings (LiteLLM's Router does not take them; routersim's own \
             keys, or health_check_interval, which the proxy wants in general_settings): {}\n",
            dropped.join(", ")
        ));
    }
    if converted > 0 {
        out.push_str(
            "# Durations written as \"30s\"/\"500ms\" (routersim reads both) are given in seconds, \
             as LiteLLM reads them.\n",
        );
    }
    if !rewritten.is_empty() {
        out.push_str(&format!(
            "# Sent as OpenAI-compatible (routersim serves OpenAI, Anthropic and Azure shapes): {}\n",
            rewritten.join("; ")
        ));
    }
    emit(&tree, 0, &mut out);
    Ok(out)
}

/// Keys whose value is a duration: routersim reads `"30s"`, `"500ms"`, `"2m"`, `"1h"` as well
/// as seconds; LiteLLM reads seconds only.
const DURATION_KEYS: [&str; 7] = [
    "timeout",
    "stream_timeout",
    "cooldown_time",
    "retry_after",
    "request_timeout",
    "health_check_interval",
    "stream_stall_timeout",
];

/// Rewrites every suffixed duration under a [`DURATION_KEYS`] key as seconds; returns how many.
fn seconds_everywhere(value: &mut Value) -> usize {
    let mut count = 0;
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if DURATION_KEYS.contains(&key.as_str())
                    && let Some(secs) = v.as_str().and_then(suffixed_seconds)
                    && let Some(n) = serde_json::Number::from_f64(secs)
                {
                    *v = Value::Number(n);
                    count += 1;
                } else {
                    count += seconds_everywhere(v);
                }
            }
        }
        Value::Array(items) => {
            for v in items {
                count += seconds_everywhere(v);
            }
        }
        _ => {}
    }
    count
}

/// The object under `key`, created (or replacing a non-object) when needed.
fn object_at<'a>(map: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let slot = map
        .entry(key.to_string())
        .or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    match slot {
        Value::Object(m) => m,
        _ => unreachable_object(),
    }
}

#[allow(clippy::panic, reason = "the slot was just made an object")]
fn unreachable_object() -> ! {
    panic!("object_at: not an object")
}

/// A scalar (or an empty collection) as one YAML token: JSON's forms are valid YAML.
fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::Object(m) if m.is_empty() => Some("{}".into()),
        Value::Array(a) if a.is_empty() => Some("[]".into()),
        Value::Object(_) | Value::Array(_) => None,
        other => Some(other.to_string()),
    }
}

fn key_text(key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
        && key
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if plain {
        key.to_string()
    } else {
        Value::String(key.to_string()).to_string()
    }
}

/// Block-style YAML of a tree (strings double-quoted, as JSON writes them).
fn emit(value: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                match scalar(v) {
                    Some(s) => out.push_str(&format!("{pad}{}: {s}\n", key_text(k))),
                    None => {
                        out.push_str(&format!("{pad}{}:\n", key_text(k)));
                        emit(v, indent + 2, out);
                    }
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                match scalar(item) {
                    Some(s) => out.push_str(&format!("{pad}- {s}\n")),
                    None => {
                        let mut inner = String::new();
                        emit(item, indent + 2, &mut inner);
                        // The item's first line takes the dash.
                        out.push_str(&pad);
                        out.push_str("- ");
                        out.push_str(&inner[indent + 2..]);
                    }
                }
            }
        }
        other => out.push_str(&format!("{pad}{other}\n")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use routersim_sim::scenario::load_scenario;

    #[test]
    fn config_points_every_deployment_at_its_endpoint_and_drops_what_litellm_refuses() {
        let dir = std::env::temp_dir().join(format!("routersim-llcfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("router.yaml"),
            "model_list:\n\
             \x20 - {model_name: gpt, litellm_params: {model: openai/gpt-4o, rpm: 10}}\n\
             \x20 - {model_name: claude, litellm_params: {model: anthropic/claude}, model_info: {id: c1}}\n\
             \x20 - {model_name: gpt, litellm_params: {model: azure/gpt-eu}, model_info: {id: az}}\n\
             \x20 - {model_name: llama, litellm_params: {model: bedrock/llama-3}, model_info: {id: br}}\n\
             router_settings: {num_retries: 1, stream_recovery: multigrid, health_check_interval: 30,\n\
             \x20 stream_timeout: 10s, cooldown_time: 1500ms}\n",
        )
        .unwrap();
        let file = dir.join("s.yaml");
        std::fs::write(
            &file,
            "duration: 1m\nrouter_file: router.yaml\nset:\n  model_list[0].litellm_params.rpm: 20\n",
        )
        .unwrap();
        let scenario = load_scenario(&file).unwrap();
        let roots: Vec<String> = ["gpt-0", "c1", "az", "br"]
            .iter()
            .map(|id| format!("http://127.0.0.1:9/d/{id}"))
            .collect();
        let text = litellm_config(&scenario, &roots, "drive").unwrap();
        assert!(
            text.starts_with("# LiteLLM proxy config written by `routersim drive` for scenario"),
            "{text}"
        );
        let tree = parse_yaml(&text).unwrap();
        let list = tree["model_list"].as_array().unwrap();
        let params = |i: usize| &list[i]["litellm_params"];
        assert_eq!(params(0)["api_base"], "http://127.0.0.1:9/d/gpt-0/v1");
        assert_eq!(params(0)["rpm"], 20, "the scenario's set applies");
        assert_eq!(list[0]["model_info"]["id"], "gpt-0");
        assert_eq!(params(1)["api_base"], "http://127.0.0.1:9/d/c1");
        assert_eq!(params(2)["api_base"], "http://127.0.0.1:9/d/az");
        assert_eq!(params(2)["api_version"], AZURE_API_VERSION);
        assert_eq!(params(3)["model"], "openai/llama-3");
        assert_eq!(params(3)["api_base"], "http://127.0.0.1:9/d/br/v1");
        assert!(
            list.iter()
                .all(|e| e["litellm_params"]["api_key"] == DUMMY_API_KEY)
        );
        assert_eq!(
            tree["router_settings"],
            serde_json::json!({"num_retries": 1, "stream_timeout": 10.0, "cooldown_time": 1.5}),
            "durations in seconds, as LiteLLM reads them"
        );
        assert!(
            text.contains("stream_recovery, health_check_interval"),
            "{text}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn emitted_yaml_reads_back_as_the_same_tree() {
        let tree = serde_json::json!({
            "model_list": [
                {"model_name": "gpt", "litellm_params": {"model": "openai/gpt-4o", "rpm": 3}},
                {"model_name": "c: d", "litellm_params": {}, "tags": ["a", "b"]},
            ],
            "router_settings": {"fallbacks": [{"gpt": ["c: d"]}], "num_retries": 2},
        });
        let mut out = String::new();
        emit(&tree, 0, &mut out);
        assert_eq!(parse_yaml(&out).unwrap(), tree, "{out}");
    }
}
