//! A scenario as a YAML tree: read from its file, written back as text, and with a seed's fault
//! mix appended.
//!
//! Explore varies scenarios as trees, not as loaded `Scenario`s, so that a variant (and a
//! shrunk one) is a file `routersim run` reads like any other; this is the tree's arithmetic.

use std::path::Path;

use serde_json::{Map, Value};

use super::error::{ExploreError, file_error};
use super::faults::FaultMix;
use super::faults::chain::add_to_router;
use routersim_sim::scenario::ScenarioError;

/// A scenario file as a YAML tree (anchors and merge keys resolved).
pub fn read_tree(path: &Path) -> Result<Value, ExploreError> {
    let text = std::fs::read_to_string(path).map_err(|e| file_error(path, e))?;
    routersim_sim::yaml::from_str::<Value>(&text).map_err(|e| {
        ExploreError::Scenario(Box::new(ScenarioError {
            file: path.to_path_buf(),
            line: e.line,
            column: e.column,
            path: e.path,
            message: e.message,
        }))
    })
}

/// A tree as YAML text.
pub fn to_yaml(tree: &Value) -> String {
    serde_saphyr::to_string(tree).unwrap_or_else(|e| format!("# cannot write YAML: {e}\n"))
}

/// Appends a mix to a scenario tree: its windows to `faults`, its provider keys under
/// `providers`, its continuation chain to the inline `router` (see [`inline_router`] for a
/// scenario that names a `router_file`).
pub fn apply_mix(tree: &mut Value, mix: &FaultMix) {
    let Some(root) = tree.as_object_mut() else {
        return;
    };
    if let Some(chain) = &mix.chain
        && let Some(router) = root.get_mut("router")
    {
        add_to_router(router, chain);
    }
    if !mix.windows.is_empty() {
        let faults = root
            .entry("faults")
            .or_insert_with(|| Value::Array(Vec::new()));
        if !faults.is_array() {
            *faults = Value::Array(Vec::new());
        }
        if let Some(list) = faults.as_array_mut() {
            list.extend(mix.windows.iter().cloned());
        }
    }
    if let Some(traffic) = root.get_mut("traffic").and_then(Value::as_array_mut) {
        for (i, value) in &mix.streamed {
            if let Some(entry) = traffic.get_mut(*i).and_then(Value::as_object_mut)
                && !entry.contains_key("stream")
            {
                entry.insert("stream".into(), value.clone());
            }
        }
    }
    if !mix.quotas.is_empty() {
        let providers = root
            .entry("providers")
            .or_insert_with(|| Value::Object(Map::new()));
        if !providers.is_object() {
            *providers = Value::Object(Map::new());
        }
        if let Some(providers) = providers.as_object_mut() {
            for (deployment, key, value) in &mix.quotas {
                let spec = providers
                    .entry(deployment.clone())
                    .or_insert_with(|| Value::Object(Map::new()));
                if !spec.is_object() {
                    *spec = Value::Object(Map::new());
                }
                if let Some(spec) = spec.as_object_mut() {
                    spec.insert(key.clone(), value.clone());
                }
            }
        }
    }
}

/// Puts `router` (the tree of the scenario's `router_file`) inline in place of its
/// `router_file` key, so that a mix can change the router config and the variant stays one
/// self-contained file.
pub fn inline_router(tree: &mut Value, router: &Value) {
    if let Some(root) = tree.as_object_mut()
        && root.remove("router_file").is_some()
    {
        root.insert("router".into(), router.clone());
    }
}
