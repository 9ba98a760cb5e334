//! Loading LiteLLM's proxy `config.yaml` into a [`RouterConfig`].
//!
//! Two phases: the YAML text is parsed (PyYAML-compatible where real configs need it: anchors,
//! merge keys, duplicate keys with the last one winning) into a [`serde_json::Value`], and that
//! tree is walked into the validated types, naming the YAML path of anything wrong.
//!
//! Keys the engine does not model are listed once each in
//! [`RouterConfig::ignored_keys`](super::RouterConfig::ignored_keys) as a path pattern
//! (`model_list[*].litellm_params.api_key`), never an error. Nothing is ever resolved: an
//! `os.environ/NAME` value stays that literal string, and no environment variable is read except
//! LiteLLM's own `ROUTER_MAX_FALLBACKS` default for `max_fallbacks`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::{
    Classification, Deployment, FallbackMap, FallbackTarget, KindPolicy, MAX_FALLBACKS_ENV,
    Profile, Recovery, RouterConfig, RouterSettings, RoutingStrategyName, resolve_max_fallbacks,
};
use crate::failure::FailureKind;
use crate::stream::StreamRecovery;

/// A config that cannot be used, naming the YAML path and what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ConfigError {
    /// The YAML path, e.g. `router_settings.fallbacks[0].gpt-4o`.
    pub path: String,
    /// What was expected.
    pub message: String,
}

impl ConfigError {
    fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }
}

type Result<T> = std::result::Result<T, ConfigError>;

/// The largest retry count accepted anywhere (`num_retries`, `retry_policy`).
pub const MAX_NUM_RETRIES: u32 = 1000;

/// The path used for errors about the YAML text itself (it does not parse).
pub const YAML_PATH: &str = "(yaml)";
/// The path used for errors about the document as a whole (it is not a mapping).
pub const ROOT_PATH: &str = "(root)";

const EMPTY_MODEL_LIST: &str = "model_list is empty: routersim needs the deployments in the file";

/// `router_settings` keys the engine models.
const ROUTER_KEYS: [&str; 27] = [
    "enable_pre_call_checks",
    "recovery",
    "classification",
    "health_check_interval",
    "profile",
    "stream_timeout",
    "stream_stall_timeout",
    "enable_mid_stream_fallback_continuation",
    "stream_recovery",
    "routing_strategy",
    "num_retries",
    "retry_after",
    "cooldown_time",
    "allowed_fails",
    "allowed_fails_policy",
    "retry_policy",
    "model_group_retry_policy",
    "fallbacks",
    "context_window_fallbacks",
    "content_policy_fallbacks",
    "default_fallbacks",
    "max_fallbacks",
    "enable_weighted_failover",
    "disable_cooldowns",
    "enable_health_check_routing",
    "timeout",
    "model_group_alias",
];

/// Router keys that are also read from `litellm_settings` (where real configs often put them).
const LITELLM_ROUTER_KEYS: [&str; 9] = [
    "request_timeout",
    "fallbacks",
    "context_window_fallbacks",
    "content_policy_fallbacks",
    "default_fallbacks",
    "num_retries",
    "allowed_fails",
    "cooldown_time",
    "retry_after",
];

/// Parses a LiteLLM proxy config.
///
/// A top-level `include:` cannot be resolved here (there is no file to resolve it against):
/// use [`load_router_config_file`].
pub fn load_router_config_str(yaml: &str) -> Result<RouterConfig> {
    let root = parse_yaml(yaml)?;
    load_router_config_value(&root)
}

/// Reads a LiteLLM proxy config file, resolving its top-level `include: [other.yaml, …]`
/// relative to the file (the included files' `model_list` entries are appended; their other
/// top-level sections are used where the including file has none).
pub fn load_router_config_file(path: &Path) -> Result<RouterConfig> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError::new(origin.clone(), format!("cannot read the file: {e}")))?;
    let mut root = parse_yaml_as(&text, &origin)?;
    let mut warnings = Vec::new();
    let mut stack = vec![std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())];
    resolve_includes(&mut root, path, &mut stack, &mut warnings)?;
    let mut config = load_router_config_value(&root)?;
    warnings.append(&mut config.warnings);
    config.warnings = warnings;
    Ok(config)
}

/// Parses YAML text the way the loader does (PyYAML-compatible where real configs need it:
/// merge keys incl. `<<: [*a, *b]`, duplicate keys with the last one winning, non-string keys
/// turned into strings). A syntax error names its line and column.
pub fn parse_yaml(yaml: &str) -> Result<Value> {
    parse_yaml_as(yaml, YAML_PATH)
}

fn parse_yaml_as(yaml: &str, origin: &str) -> Result<Value> {
    let options = serde_saphyr::options! {
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::LastWins,
        merge_keys: serde_saphyr::MergeKeyPolicy::Merge,
        // `~:` as a mapping key becomes a string key instead of failing the whole file.
        null_as_string: true,
        // Only true/false (any case) are booleans, so a model named `y`, `no` or `on` stays a
        // string; the loader's own bool fields still accept yes/no/on/off.
        strict_booleans: true,
        non_finite_float_policy: serde_saphyr::NonFiniteFloatPolicy::AsString,
        with_snippet: false,
    };
    serde_saphyr::from_str_with_options::<Value>(yaml, options).map_err(|e| {
        let mut message = format!("invalid YAML: {e}");
        if let Some(loc) = e.location() {
            let needle = format!("line {}", loc.line());
            if !message.contains(&needle) {
                message.push_str(&format!(
                    " (at line {}, column {})",
                    loc.line(),
                    loc.column()
                ));
            }
        }
        ConfigError::new(origin, message)
    })
}

/// Walks a parsed LiteLLM proxy config (a mapping with `model_list`, `router_settings`,
/// `litellm_settings`, …) into a validated [`RouterConfig`]. Error paths are relative to `root`.
pub fn load_router_config_value(root: &Value) -> Result<RouterConfig> {
    let map = match root {
        Value::Object(map) => map,
        Value::Null => return Err(ConfigError::new("model_list", EMPTY_MODEL_LIST)),
        other => {
            return Err(ConfigError::new(
                ROOT_PATH,
                format!(
                    "expected a mapping with model_list (and router_settings, litellm_settings), found {}",
                    describe(other)
                ),
            ));
        }
    };
    let mut loader = Loader::default();
    for (key, value) in map {
        match key.as_str() {
            "model_list" | "router_settings" | "litellm_settings" => {}
            "include" => {
                let empty = match value {
                    Value::Null => true,
                    Value::Array(items) => items.is_empty(),
                    _ => false,
                };
                if !empty {
                    return Err(ConfigError::new(
                        "include",
                        "included files are resolved only when loading from a file \
                         (load_router_config_file); inline the included model_list here",
                    ));
                }
            }
            _ => loader.ignore(key.clone()),
        }
    }

    let deployments = loader.deployments(map.get("model_list"))?;
    let router = section(map, "router_settings")?;
    let litellm = section(map, "litellm_settings")?;
    let settings = loader.settings(router, litellm, &deployments)?;

    Ok(RouterConfig {
        deployments,
        settings,
        ignored_keys: loader.ignored.into_iter().collect(),
        warnings: loader.warnings,
    })
}

// ---------------------------------------------------------------------------------------------
// include

fn resolve_includes(
    root: &mut Value,
    file: &Path,
    stack: &mut Vec<PathBuf>,
    warnings: &mut Vec<String>,
) -> Result<()> {
    let Value::Object(map) = root else {
        return Ok(());
    };
    let Some(include) = map.shift_remove("include") else {
        return Ok(());
    };
    let names: Vec<String> = match include {
        Value::Null => Vec::new(),
        Value::String(name) => vec![name],
        Value::Array(items) => items
            .into_iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::String(name) => Ok(name),
                other => Err(ConfigError::new(
                    format!("include[{i}]"),
                    format!("expected a file path, found {}", describe(&other)),
                )),
            })
            .collect::<Result<_>>()?,
        other => {
            return Err(ConfigError::new(
                "include",
                format!("expected a list of file paths, found {}", describe(&other)),
            ));
        }
    };
    let base = file.parent().unwrap_or_else(|| Path::new(""));
    for (i, name) in names.iter().enumerate() {
        let at = format!("include[{i}]");
        let target = base.join(name);
        let text = std::fs::read_to_string(&target).map_err(|e| {
            ConfigError::new(
                at.clone(),
                format!(
                    "cannot read included file {} (included from {}): {e}",
                    target.display(),
                    file.display()
                ),
            )
        })?;
        let canonical = std::fs::canonicalize(&target).unwrap_or_else(|_| target.clone());
        if stack.contains(&canonical) {
            return Err(ConfigError::new(
                at,
                format!(
                    "include cycle: {} is already being included",
                    target.display()
                ),
            ));
        }
        let mut included = parse_yaml_as(&text, &target.display().to_string())?;
        stack.push(canonical);
        resolve_includes(&mut included, &target, stack, warnings)?;
        stack.pop();
        let included = match included {
            Value::Null => continue,
            Value::Object(included) => included,
            other => {
                return Err(ConfigError::new(
                    at,
                    format!(
                        "included file {} must be a mapping, found {}",
                        target.display(),
                        describe(&other)
                    ),
                ));
            }
        };
        for (key, value) in included {
            if key == "model_list" {
                let entries = match value {
                    Value::Null => Vec::new(),
                    Value::Array(entries) => entries,
                    other => {
                        return Err(ConfigError::new(
                            format!("{at}.model_list"),
                            format!(
                                "expected a list of deployments in {}, found {}",
                                target.display(),
                                describe(&other)
                            ),
                        ));
                    }
                };
                match map.get_mut("model_list") {
                    Some(Value::Array(list)) => list.extend(entries),
                    _ => {
                        map.insert(key, Value::Array(entries));
                    }
                }
            } else if map.get(&key).is_none_or(Value::is_null) {
                map.insert(key, value);
            } else {
                warnings.push(format!(
                    "{at}: {key} is set both in {} and in the including file {}; \
                     the including file's value is kept",
                    target.display(),
                    file.display()
                ));
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// the walk

#[derive(Default)]
struct Loader {
    ignored: BTreeSet<String>,
    warnings: Vec<String>,
}

/// A fallback list as read, with the path of every entry and target (for warnings).
#[derive(Default)]
struct RawFallbacks {
    entries: Vec<RawEntry>,
}

struct RawEntry {
    key: String,
    key_path: String,
    targets: Vec<(FallbackTarget, String)>,
}

impl RawFallbacks {
    fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn into_map(self) -> FallbackMap {
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
struct Names<'a> {
    groups: BTreeSet<&'a str>,
    wildcards: Vec<&'a str>,
    aliases: BTreeSet<String>,
}

impl Names<'_> {
    fn knows(&self, name: &str) -> bool {
        self.groups.contains(name)
            || self.aliases.contains(name)
            || self.wildcards.iter().any(|p| wildcard_match(p, name))
    }
}

impl Loader {
    fn ignore(&mut self, path: String) {
        self.ignored.insert(path);
    }

    fn warn(&mut self, warning: String) {
        self.warnings.push(warning);
    }

    // -- model_list ---------------------------------------------------------------------------

    fn deployments(&mut self, model_list: Option<&Value>) -> Result<Vec<Deployment>> {
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
                "timeout" => d.timeout = opt(value, |v| duration(v, &at))?,
                "stream_timeout" => d.stream_timeout = opt(value, |v| duration(v, &at))?,
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

        // Legacy deployment-level rpm/tpm (beside litellm_params).
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
                    d.allowed_fails_policy = kind_policy(value, &at, PolicyUnit::AllowedFails)?;
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
                _ => {
                    self.ignore(format!("model_list[*].model_info.{key}"));
                    d.info.insert(key.clone(), value.clone());
                }
            }
        }
        for tag in params_tags.into_iter().chain(info_tags) {
            if !d.tags.contains(&tag) {
                d.tags.push(tag);
            }
        }
        let id = id.unwrap_or_else(|| format!("{model_name}-{index}"));
        d.id = Arc::from(id.as_str());
        Ok((d, id_path))
    }

    // -- router_settings / litellm_settings ---------------------------------------------------

    fn settings(
        &mut self,
        router: Option<&Map<String, Value>>,
        litellm: Option<&Map<String, Value>>,
        deployments: &[Deployment],
    ) -> Result<RouterSettings> {
        if let Some(router) = router {
            for key in router.keys() {
                if !ROUTER_KEYS.contains(&key.as_str()) {
                    self.ignore(format!("router_settings.{key}"));
                }
            }
        }
        if let Some(litellm) = litellm {
            for key in litellm.keys() {
                if !LITELLM_ROUTER_KEYS.contains(&key.as_str()) {
                    self.ignore(format!("litellm_settings.{key}"));
                }
            }
        }
        let r = |key: &str| router.and_then(|m| m.get(key)).filter(|v| !v.is_null());

        let mut s = RouterSettings::default();

        if let Some(v) = r("routing_strategy") {
            s.routing_strategy = strategy(v, "router_settings.routing_strategy")?;
        }
        if let Some(n) = self.either(router, litellm, "num_retries", retries, |_| true)? {
            s.num_retries = n;
        }
        if let Some(d) = self.either(router, litellm, "retry_after", duration, |_| true)? {
            s.retry_after = d;
        }
        if let Some(d) = self.either(router, litellm, "cooldown_time", duration, |_| true)? {
            s.cooldown_time = d;
        }
        s.allowed_fails = self.either(router, litellm, "allowed_fails", uint32, |_| true)?;
        if let Some(v) = r("allowed_fails_policy") {
            s.allowed_fails_policy = kind_policy(
                v,
                "router_settings.allowed_fails_policy",
                PolicyUnit::AllowedFails,
            )?;
        }
        if let Some(v) = r("retry_policy") {
            s.retry_policy = kind_policy(v, "router_settings.retry_policy", PolicyUnit::Retries)?;
        }
        let mut group_policy_paths = Vec::new();
        if let Some(v) = r("model_group_retry_policy") {
            let at = "router_settings.model_group_retry_policy";
            let Value::Object(groups) = v else {
                return Err(ConfigError::new(
                    at,
                    format!(
                        "expected a mapping of model group to retry policy, found {}",
                        describe(v)
                    ),
                ));
            };
            for (group, policy) in groups {
                let group_path = format!("{at}.{group}");
                if let Some(policy) = kind_policy(policy, &group_path, PolicyUnit::Retries)? {
                    s.model_group_retry_policy.insert(group.clone(), policy);
                    group_policy_paths.push((group.clone(), group_path));
                }
            }
        }
        if let Some(v) = r("max_fallbacks") {
            let configured = uint32(v, "router_settings.max_fallbacks")?;
            s.max_fallbacks = resolve_max_fallbacks(Some(configured), None);
        } else {
            s.max_fallbacks =
                resolve_max_fallbacks(None, std::env::var(MAX_FALLBACKS_ENV).ok().as_deref());
        }
        if let Some(v) = r("enable_weighted_failover") {
            s.enable_weighted_failover = boolean(v, "router_settings.enable_weighted_failover")?;
        }
        if let Some(v) = r("disable_cooldowns") {
            s.disable_cooldowns = boolean(v, "router_settings.disable_cooldowns")?;
        }
        if let Some(v) = r("enable_health_check_routing") {
            s.enable_health_check_routing =
                boolean(v, "router_settings.enable_health_check_routing")?;
        }
        if let Some(v) = r("timeout") {
            s.timeout = Some(duration(v, "router_settings.timeout")?);
        } else if let Some(v) = litellm
            .and_then(|m| m.get("request_timeout"))
            .filter(|v| !v.is_null())
        {
            // LiteLLM's Router falls back on `litellm.request_timeout` for its timeout.
            s.timeout = Some(duration(v, "litellm_settings.request_timeout")?);
        }
        if let Some(v) = r("enable_pre_call_checks") {
            s.enable_pre_call_checks = boolean(v, "router_settings.enable_pre_call_checks")?;
        }
        if let Some(v) = r("health_check_interval") {
            s.health_check_interval = Some(duration(v, "router_settings.health_check_interval")?);
        }
        let named = |key: &str, expected: &str| -> Result<Option<String>> {
            match r(key) {
                None => Ok(None),
                Some(Value::String(text)) => Ok(Some(text.clone())),
                Some(other) => Err(ConfigError::new(
                    format!("router_settings.{key}"),
                    format!("expected {expected}, found {}", describe(other)),
                )),
            }
        };
        let unknown = |key: &str, expected: &str, found: &str| {
            ConfigError::new(
                format!("router_settings.{key}"),
                format!("expected {expected}, found \"{found}\""),
            )
        };
        if let Some(text) = named("profile", "litellm or deltallm")? {
            let profile = Profile::from_name(&text)
                .ok_or_else(|| unknown("profile", "litellm or deltallm", &text))?;
            (s.recovery, s.classification) = profile.bundle();
            s.profile = Some(profile);
        }
        if let Some(text) = named("recovery", "ttl or half_open")? {
            s.recovery = Recovery::from_name(&text)
                .ok_or_else(|| unknown("recovery", "ttl or half_open", &text))?;
        }
        if let Some(text) = named("classification", "litellm or deltallm")? {
            s.classification = Classification::from_name(&text)
                .ok_or_else(|| unknown("classification", "litellm or deltallm", &text))?;
        }
        if let Some(v) = r("stream_timeout") {
            s.stream_timeout = Some(duration(v, "router_settings.stream_timeout")?);
        }
        if let Some(v) = r("stream_stall_timeout") {
            s.stream_stall_timeout = Some(duration(v, "router_settings.stream_stall_timeout")?);
        }
        if let Some(v) = r("enable_mid_stream_fallback_continuation") {
            s.enable_mid_stream_fallback_continuation =
                boolean(v, "router_settings.enable_mid_stream_fallback_continuation")?;
        }
        if let Some(v) = r("stream_recovery") {
            let at = "router_settings.stream_recovery";
            s.stream_recovery =
                v.as_str()
                    .and_then(StreamRecovery::from_name)
                    .ok_or_else(|| {
                        ConfigError::new(
                            at,
                            format!("expected litellm or multigrid, found {}", describe(v)),
                        )
                    })?;
        }
        let mut alias_paths = Vec::new();
        if let Some(v) = r("model_group_alias") {
            let at = "router_settings.model_group_alias";
            let Value::Object(aliases) = v else {
                return Err(ConfigError::new(
                    at,
                    format!(
                        "expected a mapping of alias to model group, found {}",
                        describe(v)
                    ),
                ));
            };
            for (alias, target) in aliases {
                let alias_path = format!("{at}.{alias}");
                let group = alias_target(target, &alias_path)?;
                alias_paths.push((group.clone(), alias_path));
                s.model_group_alias.insert(alias.clone(), group);
            }
        }

        let fallbacks = self.either(
            router,
            litellm,
            "fallbacks",
            fallback_list,
            |f: &RawFallbacks| !f.is_empty(),
        )?;
        let context_window = self.either(
            router,
            litellm,
            "context_window_fallbacks",
            fallback_list,
            |f: &RawFallbacks| !f.is_empty(),
        )?;
        let content_policy = self.either(
            router,
            litellm,
            "content_policy_fallbacks",
            fallback_list,
            |f: &RawFallbacks| !f.is_empty(),
        )?;
        let defaults = self.either(
            router,
            litellm,
            "default_fallbacks",
            default_fallbacks,
            |e: &RawEntry| !e.targets.is_empty(),
        )?;
        let mut fallbacks = fallbacks.unwrap_or_default();
        if let Some(defaults) = defaults {
            fallbacks.entries.push(defaults);
        }
        let context_window = context_window.unwrap_or_default();
        let content_policy = content_policy.unwrap_or_default();

        // Semantic checks: these load, with a warning each.
        let names = Names {
            groups: deployments.iter().map(|d| d.model_name.as_ref()).collect(),
            wildcards: deployments
                .iter()
                .map(|d| d.model_name.as_ref())
                .filter(|n| n.contains('*'))
                .collect(),
            aliases: s.model_group_alias.keys().cloned().collect(),
        };
        for raw in [&fallbacks, &context_window, &content_policy] {
            self.check_fallbacks(raw, &names);
        }
        for (group, at) in alias_paths {
            if !names.groups.contains(group.as_str())
                && !names.wildcards.iter().any(|p| wildcard_match(p, &group))
            {
                self.warn(format!(
                    "{at}: \"{group}\" is not a model_name in model_list"
                ));
            }
        }
        for (group, at) in group_policy_paths {
            if !names.knows(&group) {
                self.warn(format!(
                    "{at}: \"{group}\" is not a model_name in model_list (nor an alias)"
                ));
            }
        }

        s.fallbacks = fallbacks.into_map();
        s.context_window_fallbacks = context_window.into_map();
        s.content_policy_fallbacks = content_policy.into_map();
        Ok(s)
    }

    /// Reads `key` from `router_settings`, else from `litellm_settings` (both are validated).
    /// `router_settings` wins when its value `is_set`; LiteLLM reads fallback lists as
    /// `router_value or litellm_value`, so an empty router list gives way to a non-empty one.
    fn either<T>(
        &mut self,
        router: Option<&Map<String, Value>>,
        litellm: Option<&Map<String, Value>>,
        key: &str,
        parse: impl Fn(&Value, &str) -> Result<T>,
        is_set: impl Fn(&T) -> bool,
    ) -> Result<Option<T>> {
        fn get<'m>(m: Option<&'m Map<String, Value>>, key: &str) -> Option<&'m Value> {
            m.and_then(|m| m.get(key)).filter(|v| !v.is_null())
        }
        let rp = format!("router_settings.{key}");
        let lp = format!("litellm_settings.{key}");
        let from_router = get(router, key).map(|v| parse(v, &rp)).transpose()?;
        let from_litellm = if LITELLM_ROUTER_KEYS.contains(&key) {
            get(litellm, key).map(|v| parse(v, &lp)).transpose()?
        } else {
            None
        };
        Ok(match (from_router, from_litellm) {
            (Some(r), Some(l)) => {
                if is_set(&r) || !is_set(&l) {
                    self.warn(format!(
                        "{lp}: also set in router_settings; router_settings.{key} wins"
                    ));
                    Some(r)
                } else {
                    self.warn(format!(
                        "{lp}: used as the router's {key} because router_settings.{key} is empty"
                    ));
                    Some(l)
                }
            }
            (None, Some(l)) => {
                self.warn(format!(
                    "{lp}: a router setting placed in litellm_settings; honored as the router's {key}"
                ));
                Some(l)
            }
            (r, None) => r,
        })
    }

    fn check_fallbacks(&mut self, raw: &RawFallbacks, names: &Names<'_>) {
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

fn section<'a>(map: &'a Map<String, Value>, key: &str) -> Result<Option<&'a Map<String, Value>>> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(section)) => Ok(Some(section)),
        Some(other) => Err(ConfigError::new(
            key,
            format!("expected a mapping, found {}", describe(other)),
        )),
    }
}

// ---------------------------------------------------------------------------------------------
// fallbacks

const FALLBACK_SHAPE: &str = "a list of single-key mappings of model group to fallback groups, e.g. [{\"gpt-4o\": [\"claude-sonnet\", \"gpt-4o-mini\"]}]";

fn fallback_list(v: &Value, path: &str) -> Result<RawFallbacks> {
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
            Ok(FallbackTarget { model, overrides })
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

fn default_fallbacks(v: &Value, path: &str) -> Result<RawEntry> {
    Ok(RawEntry {
        key: "*".to_string(),
        key_path: path.to_string(),
        targets: fallback_targets(v, path)?,
    })
}

// ---------------------------------------------------------------------------------------------
// policies

#[derive(Clone, Copy)]
enum PolicyUnit {
    Retries,
    AllowedFails,
}

impl PolicyUnit {
    fn suffix(self) -> &'static str {
        match self {
            PolicyUnit::Retries => "Retries",
            PolicyUnit::AllowedFails => "AllowedFails",
        }
    }
}

/// Where a policy key sends its count.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PolicySlot {
    Default,
    Kind(FailureKind),
}

fn policy_slot(key: &str, unit: PolicyUnit) -> Option<PolicySlot> {
    let suffix = unit.suffix();
    if key == "default" {
        return Some(PolicySlot::Default);
    }
    if let Some(stem) = key.strip_suffix(suffix) {
        if stem == "Default" {
            return Some(PolicySlot::Default);
        }
        if let Some(kind) = FailureKind::ALL
            .into_iter()
            .find(|k| k.policy_stems().first() == Some(&stem))
        {
            return Some(PolicySlot::Kind(kind));
        }
    }
    FailureKind::from_name(key).map(PolicySlot::Kind)
}

fn valid_policy_keys(unit: PolicyUnit) -> String {
    let suffix = unit.suffix();
    let mut names = vec![format!("Default{suffix}")];
    for kind in FailureKind::ALL {
        if let Some(stem) = kind.policy_stems().first() {
            names.push(format!("{stem}{suffix}"));
        }
    }
    let snake: Vec<&str> = std::iter::once("default")
        .chain(FailureKind::ALL.iter().map(|k| k.as_str()))
        .collect();
    format!(
        "expected one of {}, or a kind name: {}",
        names.join(", "),
        snake.join(", ")
    )
}

fn kind_policy(v: &Value, path: &str, unit: PolicyUnit) -> Result<Option<KindPolicy>> {
    let map = match v {
        Value::Null => return Ok(None),
        Value::Object(map) => map,
        other => {
            return Err(ConfigError::new(
                path,
                format!(
                    "expected a mapping such as {{RateLimitError{0}: 3, Default{0}: 1}}, found {1}",
                    unit.suffix(),
                    describe(other)
                ),
            ));
        }
    };
    let mut policy = KindPolicy::default();
    let mut seen: Vec<(PolicySlot, &str)> = Vec::new();
    for (key, value) in map {
        let at = format!("{path}.{key}");
        let Some(slot) = policy_slot(key, unit) else {
            return Err(ConfigError::new(
                at,
                format!("unknown key \"{key}\" ({})", valid_policy_keys(unit)),
            ));
        };
        if let Some((_, other)) = seen.iter().find(|(s, _)| *s == slot) {
            return Err(ConfigError::new(
                at,
                format!("sets the same count as {other}; keep one of them"),
            ));
        }
        seen.push((slot, key));
        let read = if matches!(unit, PolicyUnit::Retries) {
            retries
        } else {
            uint32
        };
        let Some(count) = opt(value, |v| read(v, &at))? else {
            continue;
        };
        match slot {
            PolicySlot::Default => policy.default = Some(count),
            PolicySlot::Kind(kind) => {
                policy.per_kind.insert(kind, count);
            }
        }
    }
    Ok(Some(policy))
}

// ---------------------------------------------------------------------------------------------
// scalars

fn opt<T>(v: &Value, parse: impl FnOnce(&Value) -> Result<T>) -> Result<Option<T>> {
    if v.is_null() {
        Ok(None)
    } else {
        parse(v).map(Some)
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string \"{s}\""),
        Value::Array(_) => "a list".to_string(),
        Value::Object(_) => "a mapping".to_string(),
    }
}

fn env_ref_check(s: &str, path: &str) -> Result<()> {
    if s.trim_start().starts_with("os.environ/") {
        return Err(ConfigError::new(
            path,
            format!(
                "environment references are not resolved (found \"{s}\"): write the value itself"
            ),
        ));
    }
    Ok(())
}

/// A name-like string: strings as written, numbers stringified (ids such as `id: 1`).
fn name(v: &Value, path: &str, what: &str) -> Result<String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        other => Err(ConfigError::new(
            path,
            format!("expected {what}, found {}", describe(other)),
        )),
    }
}

fn strings(v: &Value, path: &str) -> Result<Vec<String>> {
    let Value::Array(items) = v else {
        return Err(ConfigError::new(
            path,
            format!("expected a list of strings, found {}", describe(v)),
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| name(item, &format!("{path}[{i}]"), "a string"))
        .collect()
}

/// A non-negative integer: `3`, `80_000`, `3.0`, or a string holding one.
fn uint64(v: &Value, path: &str) -> Result<u64> {
    let bad = |found: String| {
        ConfigError::new(
            path,
            format!("expected a non-negative integer, found {found}"),
        )
    };
    match v {
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                Ok(u)
            } else if n.is_i64() {
                Err(bad(describe(v)))
            } else {
                n.as_f64()
                    .and_then(float_to_u64)
                    .ok_or_else(|| bad(describe(v)))
            }
        }
        Value::String(s) => {
            env_ref_check(s, path)?;
            let digits: String = s.trim().chars().filter(|c| *c != '_').collect();
            digits
                .parse::<u64>()
                .ok()
                .or_else(|| digits.parse::<f64>().ok().and_then(float_to_u64))
                .ok_or_else(|| bad(describe(v)))
        }
        other => Err(bad(describe(other))),
    }
}

fn float_to_u64(f: f64) -> Option<u64> {
    // 2^64 is exactly representable; anything below it with no fraction fits.
    (f.is_finite() && f >= 0.0 && f.fract() == 0.0 && f < 18_446_744_073_709_551_616.0)
        .then_some(f as u64)
}

/// A retry count: a larger one is a typo, and would spin a failing deployment for hours.
fn retries(v: &Value, path: &str) -> Result<u32> {
    let n = uint32(v, path)?;
    if n > MAX_NUM_RETRIES {
        return Err(ConfigError::new(
            path,
            format!("a retry count of at most {MAX_NUM_RETRIES} is expected, found {n}"),
        ));
    }
    Ok(n)
}

fn uint32(v: &Value, path: &str) -> Result<u32> {
    let n = uint64(v, path)?;
    u32::try_from(n).map_err(|_| {
        ConfigError::new(
            path,
            format!(
                "expected a non-negative integer no larger than {}, found {n}",
                u32::MAX
            ),
        )
    })
}

/// A non-negative finite number (deployment weights).
fn weight(v: &Value, path: &str) -> Result<f64> {
    let f = match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => {
            env_ref_check(s, path)?;
            let digits: String = s.trim().chars().filter(|c| *c != '_').collect();
            digits.parse::<f64>().ok()
        }
        _ => None,
    };
    f.filter(|f| f.is_finite() && *f >= 0.0).ok_or_else(|| {
        ConfigError::new(
            path,
            format!("expected a non-negative number, found {}", describe(v)),
        )
    })
}

/// A duration: a number of seconds (`30`, `0.5`, `0`) or a string `30s`, `500ms`, `2m`, `1h`.
fn duration(v: &Value, path: &str) -> Result<Duration> {
    let bad = || {
        ConfigError::new(
            path,
            format!(
                "expected a duration in seconds (e.g. 30, 0.5, \"30s\", \"500ms\", \"2m\"), found {}",
                describe(v)
            ),
        )
    };
    let secs = match v {
        Value::Number(n) => n.as_f64().ok_or_else(bad)?,
        Value::String(s) => {
            env_ref_check(s, path)?;
            let t = s.trim();
            let (number, scale) = if let Some(n) = t.strip_suffix("ms") {
                (n, 0.001)
            } else if let Some(n) = t.strip_suffix('s') {
                (n, 1.0)
            } else if let Some(n) = t.strip_suffix('m') {
                (n, 60.0)
            } else if let Some(n) = t.strip_suffix('h') {
                (n, 3600.0)
            } else {
                (t, 1.0)
            };
            let digits: String = number.trim().chars().filter(|c| *c != '_').collect();
            digits.parse::<f64>().map_err(|_| bad())? * scale
        }
        _ => return Err(bad()),
    };
    if !secs.is_finite() || secs < 0.0 {
        return Err(bad());
    }
    let d = Duration::try_from_secs_f64(secs).map_err(|_| bad())?;
    if d > super::MAX_DURATION {
        return Err(ConfigError::new(
            path,
            format!(
                "{secs} s is more than the longest duration routersim serves (87600h, 10 years)"
            ),
        ));
    }
    Ok(d)
}

fn boolean(v: &Value, path: &str) -> Result<bool> {
    let parsed = match v {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => match n.as_u64() {
            Some(0) => Some(false),
            Some(1) => Some(true),
            _ => None,
        },
        Value::String(s) => {
            env_ref_check(s, path)?;
            match s.trim().to_ascii_lowercase().as_str() {
                "true" | "yes" | "on" => Some(true),
                "false" | "no" | "off" => Some(false),
                _ => None,
            }
        }
        _ => None,
    };
    parsed.ok_or_else(|| {
        ConfigError::new(
            path,
            format!("expected true or false, found {}", describe(v)),
        )
    })
}

fn strategy(v: &Value, path: &str) -> Result<RoutingStrategyName> {
    let Value::String(s) = v else {
        return Err(ConfigError::new(
            path,
            format!("expected a routing strategy name, found {}", describe(v)),
        ));
    };
    env_ref_check(s, path)?;
    RoutingStrategyName::from_name(s).ok_or_else(|| {
        ConfigError::new(
            path,
            format!(
                "unknown routing strategy \"{s}\" (expected one of {})",
                RoutingStrategyName::NAMES.join(", ")
            ),
        )
    })
}

/// `model_group_alias` value: a group name, or `{model: <group>, hidden: <bool>}`.
fn alias_target(v: &Value, path: &str) -> Result<String> {
    match v {
        Value::String(_) | Value::Number(_) => name(v, path, "a model group name"),
        Value::Object(map) => {
            for (key, value) in map {
                match key.as_str() {
                    "model" => {}
                    "hidden" => {
                        boolean(value, &format!("{path}.hidden"))?;
                    }
                    _ => {
                        return Err(ConfigError::new(
                            format!("{path}.{key}"),
                            "unknown key (expected {model: <group>, hidden: <bool>})",
                        ));
                    }
                }
            }
            match map.get("model") {
                Some(m @ (Value::String(_) | Value::Number(_))) => {
                    name(m, &format!("{path}.model"), "a model group name")
                }
                Some(other) => Err(ConfigError::new(
                    format!("{path}.model"),
                    format!("expected a model group name, found {}", describe(other)),
                )),
                None => Err(ConfigError::new(
                    path,
                    "expected {model: <group>, hidden: <bool>} (the `model` key is missing)",
                )),
            }
        }
        Value::Array(_) => Err(ConfigError::new(
            path,
            "expected a model group name (or {model: <group>, hidden: <bool>}), found a list: \
             an alias maps to exactly one model group (LiteLLM would not route a list as intended; \
             to spread load, give several deployments the same model_name, or use fallbacks)",
        )),
        other => Err(ConfigError::new(
            path,
            format!(
                "expected a model group name (or {{model: <group>, hidden: <bool>}}), found {}",
                describe(other)
            ),
        )),
    }
}

/// `*`-glob match (a wildcard `model_name` such as `openai/*` or `claude-*`).
fn wildcard_match(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let Some(first) = parts.next() else {
        return pattern == name;
    };
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let tail: Vec<&str> = parts.collect();
    let Some((last, middle)) = tail.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_accept_numbers_and_suffixed_strings() {
        let d = |v: Value| duration(&v, "x");
        assert_eq!(d(Value::from(0)), Ok(Duration::ZERO));
        assert_eq!(d(Value::from(1.5)), Ok(Duration::from_millis(1500)));
        assert_eq!(d(Value::from("30s")), Ok(Duration::from_secs(30)));
        assert_eq!(d(Value::from("500ms")), Ok(Duration::from_millis(500)));
        assert_eq!(d(Value::from("2m")), Ok(Duration::from_secs(120)));
        assert_eq!(d(Value::from("1h")), Ok(Duration::from_secs(3600)));
        assert_eq!(d(Value::from("45")), Ok(Duration::from_secs(45)));
        assert!(d(Value::from(-1)).is_err());
        assert!(d(Value::from("soon")).is_err());
        assert!(d(Value::from(true)).is_err());
    }

    #[test]
    fn durations_stop_at_ten_years() {
        let d = |v: Value| duration(&v, "router_settings.timeout");
        assert_eq!(d(Value::from("87600h")), Ok(super::super::MAX_DURATION));
        assert_eq!(d(Value::from(315_360_000)), Ok(super::super::MAX_DURATION));
        let e = d(Value::from(1e19)).expect_err("too long");
        assert_eq!(e.path, "router_settings.timeout");
        assert_eq!(
            e.message,
            "10000000000000000000 s is more than the longest duration routersim serves \
             (87600h, 10 years)"
        );
        assert!(d(Value::from("87601h")).is_err());
    }

    #[test]
    fn integers_accept_underscores_and_whole_floats() {
        let u = |v: Value| uint64(&v, "x");
        assert_eq!(u(Value::from("80_000")), Ok(80_000));
        assert_eq!(u(Value::from(3.0)), Ok(3));
        assert_eq!(u(Value::from(7)), Ok(7));
        assert!(u(Value::from(2.5)).is_err());
        assert!(u(Value::from(-1)).is_err());
        assert!(u(Value::from(1e30)).is_err());
        assert!(uint32(&Value::from(5_000_000_000u64), "x").is_err());
    }

    #[test]
    fn wildcards_match_like_globs() {
        assert!(wildcard_match("*", "anything"));
        assert!(wildcard_match("openai/*", "openai/gpt-4o"));
        assert!(wildcard_match("claude-*", "claude-3"));
        assert!(wildcard_match("a*b*c", "a-x-b-y-c"));
        assert!(!wildcard_match("a*b*c", "a-x-c"));
        assert!(!wildcard_match("gpt-*", "claude"));
        assert!(!wildcard_match("plain", "plainer"));
        assert!(wildcard_match("plain", "plain"));
    }

    #[test]
    fn policy_keys_map_to_the_first_stem() {
        let retries = PolicyUnit::Retries;
        assert!(matches!(
            policy_slot("BadRequestErrorRetries", retries),
            Some(PolicySlot::Kind(FailureKind::BadRequest))
        ));
        assert!(matches!(
            policy_slot("RateLimitErrorRetries", retries),
            Some(PolicySlot::Kind(FailureKind::RateLimit))
        ));
        assert!(matches!(
            policy_slot("DefaultRetries", retries),
            Some(PolicySlot::Default)
        ));
        assert!(policy_slot("RateLimitErrorAllowedFails", retries).is_none());
        assert!(policy_slot("max_retries", retries).is_none());
    }
}
