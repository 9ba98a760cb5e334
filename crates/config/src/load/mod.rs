//! Loading LiteLLM's proxy `config.yaml` into a [`RouterConfig`].
//!
//! Two phases: the YAML text is parsed ([`yaml`]: PyYAML-compatible where real configs need
//! it: anchors, merge keys, duplicate keys with the last one winning) into a
//! [`serde_json::Value`], and that tree is walked into the validated types, naming the YAML
//! path of anything wrong: `model_list` in [`deployment`], `router_settings` in [`settings`]
//! (one table of keys and their readers), fallback lists in [`fallbacks`], per-kind counts in
//! [`policy`], and every scalar in [`scalars`].
//!
//! Keys the engine does not model are listed once each in
//! [`RouterConfig::ignored_keys`](routersim_engine::config::RouterConfig::ignored_keys) as a path pattern
//! (`model_list[*].litellm_params.api_key`), and keys LiteLLM itself would not know (a
//! misspelt `router_settings` key or section, or policy field, see [`keys`](crate::keys)) in
//! [`RouterConfig::unknown_keys`](routersim_engine::config::RouterConfig::unknown_keys); neither is an error.
//! Nothing is ever resolved: an `os.environ/NAME` value stays that literal string, and no
//! environment variable is read: LiteLLM's own `ROUTER_MAX_FALLBACKS` default for
//! `max_fallbacks` comes in through [`LoadOptions`], set by the caller (the CLI reads the
//! environment once), and its use is recorded in the config's warnings.

mod alternatives;
mod deployment;
mod fallbacks;
mod policy;
pub(super) mod scalars;
pub(super) mod settings;
mod yaml;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::include::resolve_includes;
use crate::input::read_text_file;
use crate::keys::{
    MAX_SECTION_TYPO, MODELLED_ROUTER_KEYS, MODELLED_SECTIONS, UnknownKey, closest_key,
    closest_within, is_known_router_key, known_router_keys,
};
use routersim_engine::config::RouterConfig;
use scalars::{duration, opt};

pub use fallbacks::target_with_overrides;
pub use scalars::{describe, kind};
pub use yaml::{parse_yaml, parse_yaml_located};

/// A config that cannot be used, naming the YAML path and what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    /// The YAML path, e.g. `router_settings.fallbacks[0].gpt-4o`.
    pub path: String,
    /// What was expected.
    pub message: String,
    /// The `include:`d file the error is in, when it is not the file being loaded; `path` is
    /// then a path in that file. Its string values are never quoted in `message` (an
    /// included file is where secrets live).
    pub file: Option<PathBuf>,
    /// Line and column (1-based) when the loader knows them: a YAML syntax error.
    pub location: Option<(u64, u64)>,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}", file.display())?;
            if let Some((line, column)) = self.location {
                write!(f, ":{line}:{column}")?;
            }
            write!(f, ": ")?;
        }
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl ConfigError {
    /// An error at `path` (a YAML path) saying what was expected.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
            file: None,
            location: None,
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

/// What the loader takes from outside the file. Nothing here is read by the loader itself:
/// the caller fills it (the CLI from its environment, once), so a run depends only on what it
/// was given, and every value used is recorded in the config's warnings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// The value of `ROUTER_MAX_FALLBACKS` ([`MAX_FALLBACKS_ENV`](routersim_engine::config::MAX_FALLBACKS_ENV)),
    /// if set: LiteLLM's default for `max_fallbacks` when the config sets none.
    pub max_fallbacks_env: Option<String>,
}

/// Parses a LiteLLM proxy config.
///
/// A top-level `include:` cannot be resolved here (there is no file to resolve it against):
/// use [`load_router_config_file`].
pub fn load_router_config_str(yaml: &str) -> Result<RouterConfig> {
    load_router_config_str_with(yaml, &LoadOptions::default())
}

/// [`load_router_config_str`] with [`LoadOptions`].
pub fn load_router_config_str_with(yaml: &str, options: &LoadOptions) -> Result<RouterConfig> {
    let root = parse_yaml(yaml)?;
    load_router_config_value_with(&root, options)
}

/// Reads a LiteLLM proxy config file, resolving its top-level `include: [other.yaml, …]`
/// relative to the file as LiteLLM's proxy does (lists such as `model_list` are appended; any
/// other top-level value of an included file replaces the including file's: see
/// `config::include`).
///
/// Files over [`MAX_INPUT_FILE_BYTES`](crate::input::MAX_INPUT_FILE_BYTES) are refused. An
/// error in an included file names it in [`ConfigError::file`], with the path in that file.
pub fn load_router_config_file(path: &Path) -> Result<RouterConfig> {
    load_router_config_file_with(path, &LoadOptions::default())
}

/// [`load_router_config_file`] with [`LoadOptions`].
pub fn load_router_config_file_with(path: &Path, options: &LoadOptions) -> Result<RouterConfig> {
    let origin = path.display().to_string();
    let text = read_text_file(path)
        .map_err(|e| ConfigError::new(origin.clone(), format!("cannot read the file: {e}")))?;
    let mut root = parse_yaml_located(&text)?;
    let mut warnings = Vec::new();
    let origins = resolve_includes(&mut root, path, &mut warnings)?;
    let mut config =
        load_router_config_value_with(&root, options).map_err(|e| origins.attribute(e, &root))?;
    warnings.append(&mut config.warnings);
    config.warnings = warnings;
    Ok(config)
}

/// Walks a parsed LiteLLM proxy config (a mapping with `model_list`, `router_settings`,
/// `litellm_settings`, …) into a validated [`RouterConfig`]. Error paths are relative to `root`.
pub fn load_router_config_value(root: &Value) -> Result<RouterConfig> {
    load_router_config_value_with(root, &LoadOptions::default())
}

/// [`load_router_config_value`] with [`LoadOptions`].
pub fn load_router_config_value_with(root: &Value, options: &LoadOptions) -> Result<RouterConfig> {
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
    let mut loader = Loader {
        options: options.clone(),
        ..Loader::default()
    };
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
            _ => loader.section_key(key),
        }
    }

    if map.get("model_list").is_none_or(Value::is_null)
        && let Some(typo) = loader
            .unknown
            .iter()
            .find(|k| k.suggestion.as_deref() == Some("model_list"))
    {
        return Err(ConfigError::new(
            typo.path.clone(),
            format!(
                "{} routersim needs the deployments in the file",
                typo.message()
            ),
        ));
    }
    let deployments = loader.deployments(map.get("model_list"))?;
    let router = section(map, "router_settings")?;
    let litellm = section(map, "litellm_settings")?;
    let settings = loader.settings(router, litellm, &deployments)?;

    Ok(RouterConfig {
        deployments,
        settings,
        ignored_keys: loader.ignored.into_iter().collect(),
        unknown_keys: loader.unknown.into_iter().collect(),
        warnings: loader.warnings,
    })
}

// ---------------------------------------------------------------------------------------------
// the walk

/// What the walk has found besides the config: keys it passed over, and warnings.
#[derive(Default)]
struct Loader {
    options: LoadOptions,
    ignored: BTreeSet<String>,
    unknown: BTreeSet<UnknownKey>,
    warnings: Vec<String>,
}

impl Loader {
    fn ignore(&mut self, path: String) {
        self.ignored.insert(path);
    }

    fn warn(&mut self, warning: String) {
        self.warnings.push(warning);
    }

    /// A top-level key other than the sections read: a misspelt section, or a note.
    fn section_key(&mut self, key: &str) {
        match closest_within(key, MODELLED_SECTIONS, MAX_SECTION_TYPO) {
            Some(section) => {
                self.unknown.insert(UnknownKey {
                    path: key.to_string(),
                    suggestion: Some(section.to_string()),
                });
            }
            None => self.ignore(key.to_string()),
        }
    }

    /// A `router_settings` key: modelled, LiteLLM's but not modelled (a note), or unknown to
    /// LiteLLM (a typo, with the closest known key).
    fn router_key(&mut self, key: &str) {
        if MODELLED_ROUTER_KEYS.contains(&key) {
            return;
        }
        let path = format!("router_settings.{key}");
        if is_known_router_key(key) {
            self.ignore(path);
        } else {
            let suggestion = closest_key(key, known_router_keys())
                .map(|known| format!("router_settings.{known}"));
            self.unknown.insert(UnknownKey { path, suggestion });
        }
    }

    /// A timeout (`timeout`, `stream_timeout`, `request_timeout`). LiteLLM picks one with
    /// `a or b or c`, where 0 is false, so 0 is "not set" there: the next source applies
    /// (the deployment's, then the router's, then `litellm_settings.request_timeout` for
    /// `timeout`; the deployment's, then the router's for `stream_timeout`). routersim does
    /// the same, and says so in a warning.
    fn timeout(&mut self, v: &Value, path: &str) -> Result<Option<Duration>> {
        match opt(v, |v| duration(v, path))? {
            Some(d) if d.is_zero() => {
                self.warn(format!(
                    "{path}: 0 means not set, as in LiteLLM (where 0 counts as false): the \
                     next timeout that is set applies, else none; remove the key, or set \
                     the deadline you mean"
                ));
                Ok(None)
            }
            other => Ok(other),
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
