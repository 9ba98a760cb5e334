//! The baseline of a sweep: each swept key's own value in the scenario's router config, so the
//! grid always holds the config as written to compare the alternatives with.
//!
//! Why by default: the question of a sweep is "what would another value have done", and the
//! unset key is the one a planner forgets to list (an unset `allowed_fails` ran with a p99 of
//! 64 s where `0` gave 3.8 s). The config's value is found in the router tree the scenario
//! loads (inline `router:` or its `router_file`, with the file's own `set:` applied); a key the
//! config does not set reads `null`, which `--set KEY=null` also means (the key unset: LiteLLM's
//! default applies). When the value is one of those swept it is labelled there; otherwise it
//! is added after them. A combination that takes a key's baseline leaves that key as the
//! config has it (no `set` entry), so the baseline runs are the scenario's own.

use serde_json::Value;

use super::args::SweepKey;
use super::error::SweepError;
use routersim_sim::scenario::{RouterSource, Scenario, apply_set, parse_set_value};

/// The label a baseline value carries in tables, plots and pages.
pub const BASELINE_LABEL: &str = "(config)";

/// The router tree the scenario loads, with the file's own `set:` applied (`Null` when it
/// cannot be read: its values then read as unset).
pub fn router_tree(base: &Scenario, scenario_text: &str) -> Value {
    let tree = match &base.router_source {
        RouterSource::Inline => routersim_sim::yaml::from_str::<Value>(scenario_text)
            .ok()
            .and_then(|v| v.get("router").cloned()),
        RouterSource::File(path) => routersim_config::input::read_text_file(path)
            .ok()
            .and_then(|text| routersim_sim::yaml::from_str::<Value>(&text).ok()),
    };
    let mut tree = tree.unwrap_or(Value::Null);
    for (path, value) in &base.set {
        // The scenario loaded, so its own entries apply.
        let _ = apply_set(&mut tree, path, value.clone());
    }
    tree
}

/// The value at a `set` path (`router_settings.allowed_fails`, `model_list[0].litellm_params.rpm`)
/// of a router tree; `Null` where the tree has none.
pub fn value_at(tree: &Value, path: &str) -> Value {
    let mut node = tree;
    for part in path.split('.') {
        let (key, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
        let Some(next) = node.get(key) else {
            return Value::Null;
        };
        node = next;
        while let Some((index, after)) = rest.strip_prefix('[').and_then(|r| r.split_once(']')) {
            let item = index.trim().parse::<usize>().ok().and_then(|i| node.get(i));
            let Some(item) = item else {
                return Value::Null;
            };
            node = item;
            rest = after;
        }
    }
    node.clone()
}

/// Whether two config values are the same setting (numbers by value: `5` is `5.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) if a.is_number() && b.is_number() => x == y,
        _ => a == b,
    }
}

/// A config value as `--set` text that reads back to it (`null`, `3`, `least-busy`,
/// `[{"A": ["B"]}]`).
fn as_set_text(value: &Value) -> String {
    if let Value::String(text) = value
        && parse_set_value(text).is_ok_and(|v| v == *value)
        && !text.contains(',')
    {
        return text.clone();
    }
    value.to_string()
}

/// Marks each key's baseline among its values (`values[k]` are the parsed values of
/// `keys[k]`), adding it after them when it is not one of them and `add` is set.
pub fn mark_baselines(
    keys: &mut [SweepKey],
    values: &mut [Vec<Value>],
    tree: &Value,
    add: bool,
) -> Result<(), SweepError> {
    for (key, parsed) in keys.iter_mut().zip(values.iter_mut()) {
        let own = value_at(tree, &key.path);
        if let Some(at) = parsed.iter().position(|v| same(v, &own)) {
            key.baseline = Some(at);
        } else if add {
            let text = as_set_text(&own);
            if key.values.contains(&text) {
                return Err(SweepError::Usage(format!(
                    "--set {}: the config's own value {text} reads as one of the listed values \
                     but is not the same; list it in another form or pass --no-baseline",
                    key.path
                )));
            }
            key.values.push(text);
            parsed.push(own);
            key.baseline = Some(parsed.len() - 1);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_value_at_a_set_path_or_null() {
        let tree = serde_json::json!({
            "router_settings": {"num_retries": 2},
            "model_list": [{"litellm_params": {"rpm": 300}}]
        });
        assert_eq!(value_at(&tree, "router_settings.num_retries"), 2);
        assert_eq!(value_at(&tree, "model_list[0].litellm_params.rpm"), 300);
        assert_eq!(
            value_at(&tree, "router_settings.allowed_fails"),
            Value::Null
        );
        assert_eq!(
            value_at(&tree, "model_list[3].litellm_params.rpm"),
            Value::Null
        );
    }

    #[test]
    fn the_baseline_is_labelled_where_listed_and_added_where_not() {
        let tree = serde_json::json!({"router_settings": {"num_retries": 2.0}});
        let key = |path: &str, values: &[&str]| SweepKey {
            path: path.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
            baseline: None,
        };
        let mut keys = vec![
            key("router_settings.num_retries", &["0", "2"]),
            key("router_settings.allowed_fails", &["0", "3"]),
            key("router_settings.routing_strategy", &["least-busy"]),
        ];
        let mut values: Vec<Vec<Value>> = keys
            .iter()
            .map(|k| {
                k.values
                    .iter()
                    .map(|v| parse_set_value(v).unwrap())
                    .collect()
            })
            .collect();
        mark_baselines(&mut keys, &mut values, &tree, true).unwrap();
        assert_eq!(keys[0].values, ["0", "2"], "2.0 is the listed 2");
        assert_eq!(keys[0].baseline, Some(1));
        assert_eq!(keys[1].values, ["0", "3", "null"]);
        assert_eq!(keys[1].baseline, Some(2));
        assert_eq!(values[1][2], Value::Null);
        assert_eq!(keys[2].values, ["least-busy", "null"]);
        let tree = serde_json::json!({"router_settings": {"routing_strategy": "simple-shuffle"}});
        let mut keys = vec![key("router_settings.routing_strategy", &["least-busy"])];
        let mut values = vec![vec![parse_set_value("least-busy").unwrap()]];
        mark_baselines(&mut keys, &mut values, &tree, false).unwrap();
        assert_eq!(keys[0].values, ["least-busy"], "--no-baseline adds nothing");
        assert_eq!(keys[0].baseline, None);
        mark_baselines(&mut keys, &mut values, &tree, true).unwrap();
        assert_eq!(keys[0].values, ["least-busy", "simple-shuffle"]);
    }
}
