//! `model_list`: each entry into a [`Deployment`], its id unique.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::error::{ConfigError, Result};
use super::loader::{EMPTY_MODEL_LIST, Loader};
use super::policy::{PolicyUnit, kind_policy};
use super::scalars::{
    boolean, describe, duration, name, opt, retries, strings, uint32, uint64, weight,
};
use routersim_engine::config::Deployment;
use routersim_engine::contract::capability::SchemaMode;

impl Loader {
    /// Every `model_list` entry, in order.
    pub(super) fn deployments(&mut self, model_list: Option<&Value>) -> Result<Vec<Deployment>> {
        let entries = match model_list {
            None | Some(Value::Null) => {
                return Err(ConfigError::new("model_list", EMPTY_MODEL_LIST));
            }
            Some(Value::Array(entries)) if entries.is_empty() => {
                return Err(ConfigError::new("model_list", EMPTY_MODEL_LIST));
            }
            Some(Value::Array(entries)) => entries,
            Some(other) => {
                return Err(ConfigError::new(
                    "model_list",
                    format!("expected a list of deployments, found {}", describe(other)),
                ));
            }
        };
        let mut deployments = Vec::with_capacity(entries.len());
        let mut seen_ids: BTreeMap<String, String> = BTreeMap::new();
        for (index, entry) in entries.iter().enumerate() {
            let path = format!("model_list[{index}]");
            let (deployment, id_path) = self.deployment(entry, index, &path)?;
            if let Some(first) = seen_ids.get(deployment.id.as_ref()) {
                return Err(ConfigError::new(
                    id_path,
                    format!(
                        "duplicate deployment id \"{}\" (also the id of {first})",
                        deployment.id
                    ),
                ));
            }
            seen_ids.insert(deployment.id.to_string(), path);
            deployments.push(deployment);
        }
        Ok(deployments)
    }

    /// One deployment, and the path its id came from (for the duplicate-id error).
    fn deployment(
        &mut self,
        entry: &Value,
        index: usize,
        path: &str,
    ) -> Result<(Deployment, String)> {
        let Value::Object(entry) = entry else {
            return Err(ConfigError::new(
                path,
                format!(
                    "expected a mapping with model_name and litellm_params, found {}",
                    describe(entry)
                ),
            ));
        };
        for key in entry.keys() {
            if !matches!(
                key.as_str(),
                "model_name" | "litellm_params" | "model_info" | "rpm" | "tpm"
            ) {
                self.ignore(format!("model_list[*].{key}"));
            }
        }

        let name_path = format!("{path}.model_name");
        let model_name = match entry.get("model_name") {
            None | Some(Value::Null) => {
                return Err(ConfigError::new(
                    name_path,
                    "missing: every deployment needs a model_name (its model group)",
                ));
            }
            Some(v) => name(v, &name_path, "a model group name")?,
        };
        if model_name.trim().is_empty() {
            return Err(ConfigError::new(name_path, "must not be empty"));
        }

        let params_path = format!("{path}.litellm_params");
        let params = match entry.get("litellm_params") {
            None | Some(Value::Null) => {
                return Err(ConfigError::new(
                    params_path,
                    "missing: every deployment needs litellm_params with a model",
                ));
            }
            Some(Value::Object(params)) => params,
            Some(other) => {
                return Err(ConfigError::new(
                    params_path,
                    format!("expected a mapping, found {}", describe(other)),
                ));
            }
        };
        let info_path = format!("{path}.model_info");
        let empty = Map::new();
        let info = match entry.get("model_info") {
            None | Some(Value::Null) => &empty,
            Some(Value::Object(info)) => info,
            Some(other) => {
                return Err(ConfigError::new(
                    info_path,
                    format!("expected a mapping, found {}", describe(other)),
                ));
            }
        };

        let mut d = Deployment {
            model_name: Arc::from(model_name.as_str()),
            ..Deployment::default()
        };

        let model_path = format!("{params_path}.model");
        d.model = match params.get("model") {
            None | Some(Value::Null) => {
                return Err(ConfigError::new(
                    model_path,
                    "missing: every deployment needs litellm_params.model (e.g. openai/gpt-4o)",
                ));
            }
            Some(v) => name(v, &model_path, "a model string")?,
        };

        let params_tags = self.litellm_params(&mut d, params, &params_path)?;
        self.legacy_limits(&mut d, entry, path)?;
        let (id, id_path, info_tags) = self.model_info(&mut d, info, &info_path, path)?;
        for tag in params_tags.into_iter().chain(info_tags) {
            if !d.tags.contains(&tag) {
                d.tags.push(tag);
            }
        }
        let id = id.unwrap_or_else(|| format!("{model_name}-{index}"));
        d.id = Arc::from(id.as_str());
        Ok((d, id_path))
    }

    /// `litellm_params` (but `model`, read already); returns its `tags`.
    fn litellm_params(
        &mut self,
        d: &mut Deployment,
        params: &Map<String, Value>,
        params_path: &str,
    ) -> Result<Vec<String>> {
        let mut params_tags = Vec::new();
        for (key, value) in params {
            let at = format!("{params_path}.{key}");
            match key.as_str() {
                "model" => {}
                "order" => d.order = opt(value, |v| uint32(v, &at))?,
                "weight" => d.weight = opt(value, |v| weight(v, &at))?,
                "rpm" => d.rpm = opt(value, |v| uint64(v, &at))?,
                "tpm" => d.tpm = opt(value, |v| uint64(v, &at))?,
                "cooldown_time" => d.cooldown_time = opt(value, |v| duration(v, &at))?,
                "num_retries" => d.num_retries = opt(value, |v| retries(v, &at))?,
                "timeout" => d.timeout = self.timeout(value, &at)?,
                "stream_timeout" => d.stream_timeout = self.timeout(value, &at)?,
                "input_cost_per_token" => {
                    d.input_cost_per_token = opt(value, |v| weight(v, &at))?;
                }
                "output_cost_per_token" => {
                    d.output_cost_per_token = opt(value, |v| weight(v, &at))?;
                }
                "tags" => params_tags = opt(value, |v| strings(v, &at))?.unwrap_or_default(),
                _ => {
                    self.ignore(format!("model_list[*].litellm_params.{key}"));
                    d.params.insert(key.clone(), value.clone());
                }
            }
        }
        Ok(params_tags)
    }

    /// Legacy deployment-level `rpm`/`tpm` (beside `litellm_params`, which wins).
    fn legacy_limits(
        &mut self,
        d: &mut Deployment,
        entry: &Map<String, Value>,
        path: &str,
    ) -> Result<()> {
        for key in ["rpm", "tpm"] {
            let Some(value) = entry.get(key) else {
                continue;
            };
            let at = format!("{path}.{key}");
            let Some(limit) = opt(value, |v| uint64(v, &at))? else {
                continue;
            };
            let slot = if key == "rpm" { &mut d.rpm } else { &mut d.tpm };
            if slot.is_some() {
                self.warn(format!(
                    "{at}: litellm_params.{key} is also set and wins over this deployment-level {key}"
                ));
            } else {
                *slot = Some(limit);
            }
        }
        Ok(())
    }

    /// `model_info`: returns the id (if set), the path it came from, and its `tags`.
    fn model_info(
        &mut self,
        d: &mut Deployment,
        info: &Map<String, Value>,
        info_path: &str,
        path: &str,
    ) -> Result<(Option<String>, String, Vec<String>)> {
        let mut id = None;
        let mut id_path = path.to_string();
        let mut info_tags = Vec::new();
        for (key, value) in info {
            let at = format!("{info_path}.{key}");
            match key.as_str() {
                "id" => {
                    if !value.is_null() {
                        id = Some(name(value, &at, "a deployment id")?);
                        id_path = at;
                    }
                }
                "allowed_fails" => d.allowed_fails = opt(value, |v| uint32(v, &at))?,
                "priority" => d.priority = opt(value, |v| uint32(v, &at))?,
                "max_input_tokens" => d.max_input_tokens = opt(value, |v| uint32(v, &at))?,
                "input_cost_per_token" => {
                    let own = opt(value, |v| weight(v, &at))?;
                    if d.input_cost_per_token.is_none() {
                        d.input_cost_per_token = own;
                    }
                }
                "output_cost_per_token" => {
                    let own = opt(value, |v| weight(v, &at))?;
                    if d.output_cost_per_token.is_none() {
                        d.output_cost_per_token = own;
                    }
                }
                "rpm_limit" | "tpm_limit" => {
                    let own = opt(value, |v| uint64(v, &at))?;
                    let slot = if key == "rpm_limit" {
                        &mut d.rpm
                    } else {
                        &mut d.tpm
                    };
                    if slot.is_none() {
                        *slot = own;
                    }
                }
                "supports_assistant_prefill" => {
                    d.supports_assistant_prefill =
                        opt(value, |v| boolean(v, &at))?.unwrap_or(false);
                }
                "allowed_fails_policy" => {
                    d.allowed_fails_policy =
                        kind_policy(value, &at, PolicyUnit::AllowedFails, &mut self.unknown)?;
                }
                "cooldown_time" => {
                    let own = opt(value, |v| duration(v, &at))?;
                    if d.cooldown_time.is_none() {
                        d.cooldown_time = own;
                    }
                }
                "weight" => {
                    let own = opt(value, |v| weight(v, &at))?;
                    if d.weight.is_none() {
                        d.weight = own;
                    }
                }
                "tags" => info_tags = opt(value, |v| strings(v, &at))?.unwrap_or_default(),
                _ if capability(d, key, value, &at)? => {}
                _ => {
                    self.ignore(format!("model_list[*].model_info.{key}"));
                    d.info.insert(key.clone(), value.clone());
                }
            }
        }
        Ok((id, id_path, info_tags))
    }
}

/// A capability key of `model_info` (`profile: contract`, LiteLLM's names where it has them);
/// `false` when `key` is not one.
fn capability(d: &mut Deployment, key: &str, value: &Value, at: &str) -> Result<bool> {
    match key {
        "modalities" => d.modalities = opt(value, |v| strings(v, at))?.unwrap_or_default(),
        "supports_function_calling" => {
            d.supports_function_calling = opt(value, |v| boolean(v, at))?.unwrap_or(false);
        }
        "supports_response_schema" => {
            if opt(value, |v| boolean(v, at))?.unwrap_or(false) {
                for mode in [SchemaMode::JsonObject, SchemaMode::JsonSchema] {
                    if !d.schema_modes.contains(&mode) {
                        d.schema_modes.push(mode);
                    }
                }
            }
        }
        "schema_modes" => {
            for (i, mode) in opt(value, |v| strings(v, at))?
                .unwrap_or_default()
                .iter()
                .enumerate()
            {
                let mode = SchemaMode::from_name(mode).ok_or_else(|| {
                    ConfigError::new(
                        format!("{at}[{i}]"),
                        format!("expected json_object, json_schema or strict, found {mode:?}"),
                    )
                })?;
                if !d.schema_modes.contains(&mode) {
                    d.schema_modes.push(mode);
                }
            }
        }
        "model_class" => {
            d.model_class = opt(value, |v| name(v, at, "a model class name"))?;
        }
        "region" => d.region = opt(value, |v| name(v, at, "a region name"))?,
        _ => return Ok(false),
    }
    Ok(true)
}
