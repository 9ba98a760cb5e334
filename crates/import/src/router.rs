//! The router of the imported scenario: the user's proxy config (`--config`; the log only shows
//! the deployments that were called), copied without its secrets; or, without one, a router
//! inferred from the deployments the log names.
//!
//! - **Which deployment a row is.** A row's `model_id` is the config's `model_info.id` when the
//!   config sets one; otherwise LiteLLM made its own id, so the row is matched by its
//!   `api_base`, then by its model within the group, then by being its group's only
//!   deployment. A row that matches nothing keeps its own name and is added to the router copy
//!   (said).
//! - **What is copied.** `model_list` entries keep `model_name`, `model_info` (without keys
//!   that look like credentials) and from `litellm_params` only what routes (`model`, `order`,
//!   `weight`, `rpm`, `tpm`, timeouts, retries, cooldowns, tags, prices): never `api_key`,
//!   `api_base`, cloud credentials. `router_settings` and `litellm_settings` lose the keys that
//!   name credentials, callbacks, caches and Redis. `general_settings` and
//!   `environment_variables` are left out whole. The keys left out are named (never their
//!   values). A config with `include:` is not copied but referenced by its path.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use routersim_config::input::read_text_file;
use routersim_config::load::{load_router_config_file, parse_yaml};
use serde_json::{Map, Value};

use crate::call::Call;
use crate::error::ImportError;

/// `litellm_params` keys copied (what routes; never credentials or endpoints).
const ROUTING_PARAMS: [&str; 14] = [
    "model",
    "order",
    "weight",
    "rpm",
    "tpm",
    "timeout",
    "stream_timeout",
    "num_retries",
    "max_retries",
    "cooldown_time",
    "tags",
    "input_cost_per_token",
    "output_cost_per_token",
    "max_parallel_requests",
];

/// Words that mark a key as a credential, a callback, a cache or an endpoint.
const SECRET_WORDS: [&str; 11] = [
    "key",
    "secret",
    "password",
    "token",
    "credential",
    "auth",
    "callback",
    "redis",
    "cache",
    "url",
    "host",
];

/// Keys with a secret-looking word that are plainly not secrets.
const NOT_SECRET: [&str; 6] = [
    "max_tokens",
    "max_input_tokens",
    "max_output_tokens",
    "input_cost_per_token",
    "output_cost_per_token",
    "supports_assistant_prefill",
];

/// What a row names its deployment by: its `model_id`, `api_base` and model group.
type RowKey = (Option<Arc<str>>, Option<Arc<str>>, Arc<str>);
/// A deployment added to the copy: its model group and model.
type Added = (Arc<str>, Option<Arc<str>>);

/// A deployment of the config.
#[derive(Clone, Debug)]
struct ConfigDeployment {
    id: Arc<str>,
    group: String,
    model: String,
    api_base: Option<String>,
}

/// The router.
#[derive(Debug)]
pub struct Router {
    /// The `--config` file, when given.
    pub config: Option<PathBuf>,
    deployments: Vec<ConfigDeployment>,
    tree: Option<Value>,
    includes: bool,
    cache: HashMap<RowKey, Option<Arc<str>>>,
    /// Deployments the log names that the config does not have: id → (group, model).
    pub added: BTreeMap<Arc<str>, Added>,
}

/// Whether a key names something that must not be copied.
fn secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    !NOT_SECRET.contains(&key.as_str()) && SECRET_WORDS.iter().any(|w| key.contains(w))
}

/// Whether a value looks like a credential itself.
fn secret_value(value: &Value) -> bool {
    match value {
        Value::String(s) => {
            let s = s.trim();
            s.starts_with("sk-")
                || s.starts_with("Bearer ")
                || (s.contains("://") && s.contains('@'))
        }
        _ => false,
    }
}

impl Router {
    /// A router inferred from the log.
    pub fn inferred() -> Self {
        Self {
            config: None,
            deployments: Vec::new(),
            tree: None,
            includes: false,
            cache: HashMap::new(),
            added: BTreeMap::new(),
        }
    }

    /// The user's proxy config, checked by the loader routersim runs it with.
    pub fn load(path: &Path) -> Result<Self, ImportError> {
        let config = load_router_config_file(path).map_err(|e| {
            let e = e.to_string();
            if e.starts_with(&path.display().to_string()) {
                ImportError::Config(e)
            } else {
                ImportError::Config(format!("{}: {e}", path.display()))
            }
        })?;
        let text = read_text_file(path)
            .map_err(|e| ImportError::Config(format!("{}: {e}", path.display())))?;
        let tree = parse_yaml(&text)
            .map_err(|e| ImportError::Config(format!("{}: {e}", path.display())))?;
        let includes = tree.get("include").is_some_and(|v| !v.is_null());
        let entries = tree.get("model_list").and_then(Value::as_array);
        let deployments = config
            .deployments
            .iter()
            .enumerate()
            .map(|(i, d)| ConfigDeployment {
                id: d.id.clone(),
                group: d.model_name.to_string(),
                model: d.model.clone(),
                api_base: entries
                    .and_then(|e| e.get(i))
                    .and_then(|e| e.pointer("/litellm_params/api_base"))
                    .and_then(Value::as_str)
                    .map(|s| s.trim_end_matches('/').to_string()),
            })
            .collect();
        Ok(Self {
            config: Some(path.to_path_buf()),
            deployments,
            tree: Some(tree),
            includes,
            cache: HashMap::new(),
            added: BTreeMap::new(),
        })
    }

    /// The deployment id of a provider call.
    pub fn resolve(&mut self, call: &Call) -> Arc<str> {
        let key = (
            call.deployment.clone(),
            call.api_base.clone(),
            call.model_group.clone(),
        );
        if let Some(Some(id)) = self.cache.get(&key) {
            return id.clone();
        }
        let found = self.match_config(call);
        self.cache.insert(key, found.clone());
        found.unwrap_or_else(|| {
            let id = call
                .deployment
                .clone()
                .or_else(|| call.model.clone())
                .unwrap_or_else(|| call.model_group.clone());
            self.added
                .entry(id.clone())
                .or_insert_with(|| (call.model_group.clone(), call.model.clone()));
            id
        })
    }

    fn match_config(&self, call: &Call) -> Option<Arc<str>> {
        let group = &*call.model_group;
        if let Some(name) = &call.deployment
            && let Some(d) = self.deployments.iter().find(|d| *d.id == **name)
        {
            return Some(d.id.clone());
        }
        let unique = |pick: &dyn Fn(&ConfigDeployment) -> bool| {
            let mut found = self.deployments.iter().filter(|d| pick(d));
            match (found.next(), found.next()) {
                (Some(d), None) => Some(d.id.clone()),
                _ => None,
            }
        };
        let base = call.api_base.as_deref().map(|b| b.trim_end_matches('/'));
        base.and_then(|b| unique(&|d| d.group == group && d.api_base.as_deref() == Some(b)))
            .or_else(|| base.and_then(|b| unique(&|d| d.api_base.as_deref() == Some(b))))
            .or_else(|| {
                let model = call.model.as_deref()?;
                unique(&|d| d.group == group && d.model == model)
            })
            .or_else(|| unique(&|d| d.group == group))
    }

    /// Whether the router has a deployment in `group` (the config's, or one added).
    pub fn has_group(&self, group: &str) -> bool {
        self.deployments.iter().any(|d| d.group == group)
            || self.added.values().any(|(g, _)| **g == *group)
    }

    /// Adds a deployment for a group the traffic asks for that nothing serves.
    pub fn add_group(&mut self, group: &Arc<str>) {
        if !self.has_group(group) {
            self.added.insert(group.clone(), (group.clone(), None));
        }
    }

    /// Every deployment id with its group, config first (in `model_list` order).
    pub fn deployments(&self) -> Vec<(Arc<str>, Arc<str>)> {
        self.deployments
            .iter()
            .map(|d| (d.id.clone(), Arc::from(d.group.as_str())))
            .chain(
                self.added
                    .iter()
                    .map(|(id, (g, _))| (id.clone(), g.clone())),
            )
            .collect()
    }

    /// Writes the router into `dir` (`router.yaml`), or references the config; the scenario's
    /// `router_file` value and notes on what was left out or added.
    pub fn write(
        &self,
        dir: &Path,
        scenario_dir: &Path,
    ) -> Result<(String, Vec<String>), ImportError> {
        let mut notes = Vec::new();
        let Some(tree) = &self.tree else {
            let mut root = Map::new();
            root.insert("model_list".into(), Value::Array(self.added_entries()));
            write_yaml(
                &dir.join("router.yaml"),
                &Value::Object(root),
                INFERRED_HEADER,
            )?;
            notes.push(format!(
                "router: inferred from the log ({} deployments, each called at least once; \
                 settings are routersim's defaults): give --config with your proxy config for \
                 its deployments, retries, fallbacks and cooldowns",
                self.added.len()
            ));
            return Ok(("router.yaml".into(), notes));
        };
        let config = self.config.as_deref().unwrap_or(Path::new("config.yaml"));
        if self.includes {
            notes.push(format!(
                "router: {} has include:, so it is referenced by its path, not copied",
                config.display()
            ));
            return Ok((relative_path(config, scenario_dir), notes));
        }
        let mut dropped = BTreeSet::new();
        let mut copy = sanitize_root(tree, &mut dropped);
        if !self.added.is_empty() {
            if let Some(Value::Array(list)) = copy.get_mut("model_list") {
                list.extend(self.added_entries());
            }
            notes.push(format!(
                "router: the log calls deployments {} does not have ({}): added to the copy",
                config.display(),
                self.added
                    .keys()
                    .map(|k| k.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !dropped.is_empty() {
            notes.push(format!(
                "router: copied from {} without {}",
                config.display(),
                dropped.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
        write_yaml(&dir.join("router.yaml"), &Value::Object(copy), COPY_HEADER)?;
        Ok(("router.yaml".into(), notes))
    }

    fn added_entries(&self) -> Vec<Value> {
        self.added
            .iter()
            .map(|(id, (group, model))| {
                let model = model
                    .as_deref()
                    .map_or_else(|| format!("openai/{id}"), str::to_string);
                serde_json::json!({
                    "model_name": &**group,
                    "litellm_params": {"model": model},
                    "model_info": {"id": &**id},
                })
            })
            .collect()
    }
}

const COPY_HEADER: &str = "# The proxy config given to `routersim import --config`, without credentials, endpoints,\n\
# callbacks and caches (see the import's notes).\n";
const INFERRED_HEADER: &str = "# Inferred by `routersim import` from the deployments the log names: only those that were\n\
# called, with routersim's default settings. Your proxy config has the real ones.\n";

fn write_yaml(path: &Path, value: &Value, header: &str) -> Result<(), ImportError> {
    let text = serde_saphyr::to_string(value).map_err(|e| ImportError::output(path, e))?;
    std::fs::write(path, format!("{header}{text}")).map_err(|e| ImportError::output(path, e))
}

/// A path to `target` from `dir` (absolute when they share nothing).
pub fn relative_path(target: &Path, dir: &Path) -> String {
    let (Ok(target), Ok(dir)) = (std::path::absolute(target), std::path::absolute(dir)) else {
        return target.display().to_string();
    };
    let common = target
        .components()
        .zip(dir.components())
        .take_while(|(a, b)| a == b)
        .count();
    if common == 0 {
        return target.display().to_string();
    }
    let ups = dir.components().count() - common;
    let mut out = PathBuf::new();
    for _ in 0..ups {
        out.push("..");
    }
    out.extend(target.components().skip(common));
    out.display().to_string()
}

fn sanitize_root(tree: &Value, dropped: &mut BTreeSet<String>) -> Map<String, Value> {
    let mut out = Map::new();
    let Some(root) = tree.as_object() else {
        return out;
    };
    for (key, value) in root {
        match key.as_str() {
            "model_list" => {
                let list = value
                    .as_array()
                    .map(|l| l.iter().map(|e| sanitize_entry(e, dropped)).collect());
                out.insert(key.clone(), Value::Array(list.unwrap_or_default()));
            }
            "router_settings" | "litellm_settings" => {
                out.insert(key.clone(), sanitize_map(value, key, dropped));
            }
            other => {
                dropped.insert(other.to_string());
            }
        }
    }
    out
}

fn sanitize_entry(entry: &Value, dropped: &mut BTreeSet<String>) -> Value {
    let mut out = Map::new();
    let Some(entry) = entry.as_object() else {
        return Value::Object(out);
    };
    for (key, value) in entry {
        match key.as_str() {
            "model_name" => {
                out.insert(key.clone(), value.clone());
            }
            "litellm_params" => {
                let mut params = Map::new();
                for (k, v) in value.as_object().into_iter().flatten() {
                    if ROUTING_PARAMS.contains(&k.as_str()) && !secret_value(v) {
                        params.insert(k.clone(), v.clone());
                    } else {
                        dropped.insert(format!("model_list[*].litellm_params.{k}"));
                    }
                }
                out.insert(key.clone(), Value::Object(params));
            }
            "model_info" => {
                out.insert(
                    key.clone(),
                    sanitize_map(value, "model_list[*].model_info", dropped),
                );
            }
            other => {
                dropped.insert(format!("model_list[*].{other}"));
            }
        }
    }
    Value::Object(out)
}

/// A mapping without secret-looking keys or values, at any depth.
fn sanitize_map(value: &Value, path: &str, dropped: &mut BTreeSet<String>) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter_map(|(k, v)| {
                    if secret_key(k) || secret_value(v) {
                        dropped.insert(format!("{path}.{k}"));
                        None
                    } else {
                        Some((k.clone(), sanitize_map(v, &format!("{path}.{k}"), dropped)))
                    }
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .filter(|v| !secret_value(v))
                .map(|v| sanitize_map(v, path, dropped))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_endpoints_and_callbacks_are_not_copied() {
        let tree = parse_yaml(
            "model_list:\n  - model_name: g\n    litellm_params: {model: openai/x, api_key: sk-live-1, api_base: 'http://10.0.0.1/v1', rpm: 60}\n    model_info: {id: d1, access_token: abc, supports_assistant_prefill: true}\n\
             router_settings: {num_retries: 3, redis_password: hunter2, redis_host: r.internal}\n\
             litellm_settings: {callbacks: [x.handler], fallbacks: [{g: [h]}]}\n\
             general_settings: {master_key: sk-master}\n",
        )
        .unwrap();
        let mut dropped = BTreeSet::new();
        let copy = Value::Object(sanitize_root(&tree, &mut dropped));
        let text = serde_json::to_string(&copy).unwrap();
        for secret in [
            "sk-live-1",
            "10.0.0.1",
            "abc",
            "hunter2",
            "r.internal",
            "x.handler",
            "sk-master",
        ] {
            assert!(!text.contains(secret), "{secret} copied: {text}");
        }
        for kept in [
            "openai/x",
            "\"rpm\":60",
            "supports_assistant_prefill",
            "\"num_retries\":3",
            "fallbacks",
        ] {
            assert!(text.contains(kept), "{kept} lost: {text}");
        }
        assert!(
            dropped.contains("model_list[*].litellm_params.api_key"),
            "{dropped:?}"
        );
        assert!(dropped.contains("general_settings"), "{dropped:?}");
    }
}
