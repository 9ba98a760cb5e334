//! Fallback lists (`fallbacks`, `context_window_fallbacks`, `content_policy_fallbacks`,
//! `default_fallbacks`): LiteLLM's list of single-key mappings, each target a group or a
//! mapping `{model: <group>, <param overrides>…}`; and the warnings about groups no
//! deployment serves.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::error::{ConfigError, Result};
use super::loader::Loader;
use super::scalars::{describe, name, opt, retries, uint32};
use routersim_engine::config::{FallbackMap, FallbackTarget};
use routersim_engine::pattern::ModelPattern;

/// A fallback list as read, with the path of every entry and target (for warnings).
#[derive(Default)]
pub(super) struct RawFallbacks {
    pub(super) entries: Vec<RawEntry>,
}

/// One entry of a fallback list: a group (or `*`) and its targets, each with its path.
pub(super) struct RawEntry {
    pub(super) key: String,
    pub(super) key_path: String,
    pub(super) targets: Vec<(FallbackTarget, String)>,
}

impl RawFallbacks {
    pub(super) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub(super) fn into_map(self) -> FallbackMap {
        FallbackMap {
            entries: self
                .entries
                .into_iter()
                .map(|e| (e.key, e.targets.into_iter().map(|(t, _)| t).collect()))
                .collect(),
        }
    }
}

/// The model groups and aliases a fallback may name.
pub(super) struct Names<'a> {
    pub(super) groups: BTreeSet<&'a str>,
    pub(super) wildcards: Vec<&'a str>,
    pub(super) aliases: BTreeSet<String>,
}

impl Names<'_> {
    pub(super) fn knows(&self, name: &str) -> bool {
        self.groups.contains(name)
            || self.aliases.contains(name)
            || self
                .wildcards
                .iter()
                .any(|p| ModelPattern::new(p).matches(name))
    }
}

impl Loader {
    /// Warns about an entry shadowed by an earlier one, and groups no deployment serves.
    pub(super) fn check_fallbacks(&mut self, raw: &RawFallbacks, names: &Names<'_>) {
        let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
        for entry in &raw.entries {
            if let Some(first) = seen.get(entry.key.as_str()) {
                self.warn(format!(
                    "{}: \"{}\" already has an earlier entry ({first}), which wins; this one is never used",
                    entry.key_path, entry.key
                ));
            } else {
                seen.insert(&entry.key, &entry.key_path);
            }
            if entry.key != "*" && !names.knows(&entry.key) {
                self.warn(format!(
                    "{}: \"{}\" is not a model_name in model_list (nor an alias)",
                    entry.key_path, entry.key
                ));
            }
            for (target, at) in &entry.targets {
                if target.model == entry.key {
                    self.warn(format!("{at}: \"{}\" falls back to itself", target.model));
                } else if !names.knows(&target.model) {
                    self.warn(format!(
                        "{at}: \"{}\" is not a model_name in model_list (nor an alias)",
                        target.model
                    ));
                }
            }
        }
    }
}

const FALLBACK_SHAPE: &str = "a list of single-key mappings of model group to fallback groups, e.g. [{\"gpt-4o\": [\"claude-sonnet\", \"gpt-4o-mini\"]}]";

pub(super) fn fallback_list(v: &Value, path: &str) -> Result<RawFallbacks> {
    let items = match v {
        Value::Array(items) => items,
        Value::Object(_) => {
            return Err(ConfigError::new(
                path,
                format!(
                    "expected {FALLBACK_SHAPE}, found a mapping (write each entry as a list item: `- gpt-4o: [claude-sonnet]`)"
                ),
            ));
        }
        other => {
            return Err(ConfigError::new(
                path,
                format!("expected {FALLBACK_SHAPE}, found {}", describe(other)),
            ));
        }
    };
    let mut raw = RawFallbacks::default();
    for (i, item) in items.iter().enumerate() {
        let item_path = format!("{path}[{i}]");
        let entry = match item {
            Value::Object(entry) => entry,
            Value::String(s) => {
                return Err(ConfigError::new(
                    item_path,
                    format!(
                        "expected a single-key mapping {{<model group>: [<fallback groups>]}}, found the string \"{s}\" \
                         (for a catch-all list of fallback groups use default_fallbacks)"
                    ),
                ));
            }
            other => {
                return Err(ConfigError::new(
                    item_path,
                    format!(
                        "expected a single-key mapping {{<model group>: [<fallback groups>]}}, found {}",
                        describe(other)
                    ),
                ));
            }
        };
        if entry.contains_key("model_name")
            || entry.contains_key("fallback_models")
            || entry.len() != 1
        {
            return Err(wrong_fallback_shape(entry, &item_path));
        }
        for (key, targets) in entry {
            let key_path = format!("{item_path}.{key}");
            let targets = fallback_targets(targets, &key_path)?;
            raw.entries.push(RawEntry {
                key: key.clone(),
                key_path,
                targets,
            });
        }
    }
    Ok(raw)
}

fn wrong_fallback_shape(entry: &Map<String, Value>, path: &str) -> ConfigError {
    let keys: Vec<&str> = entry.keys().map(String::as_str).collect();
    if keys.is_empty() {
        return ConfigError::new(
            path,
            "expected a single-key mapping {<model group>: [<fallback groups>]}, found an empty mapping",
        );
    }
    let mut message = format!(
        "expected a single-key mapping {{<model group>: [<fallback groups>]}}, found keys {}",
        keys.join(", ")
    );
    if entry.contains_key("model_name") || entry.contains_key("fallback_models") {
        let group = entry
            .get("model_name")
            .and_then(Value::as_str)
            .unwrap_or("<model_name>");
        let targets: Vec<String> = match entry
            .get("fallback_models")
            .or_else(|| entry.get("fallbacks"))
        {
            Some(Value::Array(items)) => items
                .iter()
                .map(|t| t.as_str().map_or_else(|| t.to_string(), str::to_string))
                .collect(),
            _ => vec!["<fallback group>".to_string()],
        };
        message.push_str(&format!(
            "; LiteLLM does not read {{model_name, fallback_models}} entries: write `- {group}: [{}]`",
            targets.join(", ")
        ));
    } else {
        message.push_str("; write one list item per model group");
    }
    ConfigError::new(path, message)
}

fn fallback_targets(v: &Value, path: &str) -> Result<Vec<(FallbackTarget, String)>> {
    let Value::Array(items) = v else {
        return Err(ConfigError::new(
            path,
            format!("expected a list of model groups, found {}", describe(v)),
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(j, item)| {
            let at = format!("{path}[{j}]");
            fallback_target(item, &at).map(|t| (t, at))
        })
        .collect()
}

fn fallback_target(v: &Value, path: &str) -> Result<FallbackTarget> {
    match v {
        Value::String(_) | Value::Number(_) => {
            Ok(FallbackTarget::group(name(v, path, "a model group name")?))
        }
        Value::Object(map) => {
            let model = match map.get("model") {
                Some(m @ (Value::String(_) | Value::Number(_))) => {
                    name(m, &format!("{path}.model"), "a model group name")?
                }
                Some(other) => {
                    return Err(ConfigError::new(
                        format!("{path}.model"),
                        format!("expected a model group name, found {}", describe(other)),
                    ));
                }
                None => {
                    return Err(ConfigError::new(
                        path,
                        "expected a model group name or a mapping {model: <group>, <param overrides>...} (the `model` key is missing)",
                    ));
                }
            };
            let overrides = map
                .iter()
                .filter(|(k, _)| k.as_str() != "model")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            target_with_overrides(model, overrides, path)
        }
        other => Err(ConfigError::new(
            path,
            format!(
                "expected a model group name or a mapping {{model: <group>, ...}}, found {}",
                describe(other)
            ),
        )),
    }
}

pub(super) fn default_fallbacks(v: &Value, path: &str) -> Result<RawEntry> {
    Ok(RawEntry {
        key: "*".to_string(),
        key_path: path.to_string(),
        targets: fallback_targets(v, path)?,
    })
}

/// `num_retries` (a retry count) and `max_tokens` (a count) among a fallback target's
/// overrides, validated: the hop's own values.
/// A fallback target with param overrides; `num_retries` and `max_tokens` among them are read as
/// counts the way the loader reads every count (`3`, `"3"`, `3.0`; one too large is an error at
/// `<path>.<key>`, or at `<key>` when `path` is empty).
pub fn target_with_overrides(
    model: impl Into<String>,
    overrides: BTreeMap<String, Value>,
    path: &str,
) -> Result<FallbackTarget> {
    let (num_retries, max_tokens) = override_counts(&overrides, path)?;
    Ok(FallbackTarget {
        model: model.into(),
        overrides,
        num_retries,
        max_tokens,
    })
}

fn override_counts(
    overrides: &BTreeMap<String, Value>,
    path: &str,
) -> Result<(Option<u32>, Option<u32>)> {
    let at = |key: &str| {
        if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        }
    };
    let count = |key: &str, read: fn(&Value, &str) -> Result<u32>| match overrides.get(key) {
        Some(v) => opt(v, |v| read(v, &at(key))),
        None => Ok(None),
    };
    Ok((count("num_retries", retries)?, count("max_tokens", uint32)?))
}
