//! Loading LiteLLM's proxy `config.yaml` into a [`RouterConfig`].
//!
//! Two phases: the YAML text is parsed ([`yaml`]: PyYAML-compatible where real configs need
//! it: anchors, merge keys, duplicate keys with the last one winning) into a
//! [`serde_json::Value`], and that tree is walked into the validated types, naming the YAML
//! path of anything wrong: `model_list` in [`deployment`], `router_settings` in [`settings`]
//! (one table of keys, their shared reading in `read.rs`, the longer readers in `readers.rs`),
//! fallback lists in [`fallbacks`], per-kind counts in [`policy`], and every scalar in
//! [`scalars`]; the walk's own state (options, keys passed over, warnings) is `loader.rs`, and
//! its errors `error.rs`. This file only starts the walk.
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
mod error;
mod fallbacks;
mod loader;
mod policy;
mod read;
mod readers;
pub(super) mod scalars;
pub(super) mod settings;
mod yaml;

use std::path::Path;

use serde_json::{Map, Value};

use crate::include::resolve_includes;
use crate::input::read_text_file;
use error::Result;
use loader::{EMPTY_MODEL_LIST, Loader};
use routersim_engine::config::RouterConfig;

pub use error::{ConfigError, MAX_NUM_RETRIES, ROOT_PATH, YAML_PATH};
pub use fallbacks::target_with_overrides;
pub use loader::LoadOptions;
pub use scalars::{describe, kind};
pub use yaml::{parse_yaml, parse_yaml_located};

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
        unread_keys: loader.unread,
    })
}

// ---------------------------------------------------------------------------------------------
// the walk

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
