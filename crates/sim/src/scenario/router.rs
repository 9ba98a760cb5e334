//! The router section: the config inline under `router:` (its fleet keys taken out first) or
//! from `router_file:`, with `set` overrides applied to its tree, and its errors located.
//!
//! Separate because it is the one section that may read a second file, with its own line
//! numbers, and the one whose errors may belong to a `set` entry instead.

use std::path::{Path, PathBuf};

use routersim_config::ConfigError;
use routersim_config::input::read_text_file;
use routersim_config::load::{
    load_router_config_file_with, load_router_config_value_with, parse_yaml_located,
};
use routersim_engine::config::RouterConfig;
use serde_json::Value;

use super::ctx::Ctx;
use super::error::ScenarioError;
use super::options::router_load_options;
use super::set::{apply_sets, set_covering};
use super::validated::RouterSource;
use crate::fleet::FleetConfig;
use crate::fleet::config::take_fleet_config;
use crate::yaml::LocationIndex;

/// The router section read: the config, where it came from, and the fleet around it.
pub(super) struct RouterSection {
    pub(super) config: RouterConfig,
    pub(super) source: RouterSource,
    pub(super) fleet: FleetConfig,
}

/// Reads `router:` or `router_file:` (exactly one is set), with `set` applied.
pub(super) fn router_section(
    ctx: &Ctx<'_>,
    inline: Option<Value>,
    router_file: Option<String>,
    set: &[(String, Value)],
) -> Result<RouterSection, ScenarioError> {
    let mut section = match (inline, router_file) {
        (Some(value), None) => {
            let (config, fleet) = load_inline_router(ctx, value, set)?;
            RouterSection {
                config,
                source: RouterSource::Inline,
                fleet,
            }
        }
        (None, Some(relative)) => {
            let path = beside(ctx.file(), &relative);
            let config = if set.is_empty() {
                load_router_file(ctx, &path)?
            } else {
                load_router_file_with_set(ctx, &path, set)?
            };
            RouterSection {
                config,
                source: RouterSource::File(path),
                fleet: FleetConfig::default(),
            }
        }
        (Some(_), Some(_)) => {
            return Err(ctx.error(
                "router_file",
                "set either `router` (the config inline) or `router_file`, not both",
            ));
        }
        (None, None) => {
            return Err(ctx.error(
                "",
                "missing the router config: set `router` (LiteLLM's config inline) or \
                 `router_file` (a path relative to this file)",
            ));
        }
    };
    section.config.warnings.extend(fleet_note(&section.fleet));
    Ok(section)
}

/// A path the scenario names, resolved against the scenario's directory.
pub(super) fn beside(scenario: &Path, relative: &str) -> PathBuf {
    scenario.parent().unwrap_or(Path::new("")).join(relative)
}

/// Whether a router tree runs DeltaLLM's rules (`router_settings.profile: deltallm`): its
/// replicas read the shared store on every lookup by default.
fn is_deltallm(tree: &Value) -> bool {
    tree.get("router_settings")
        .and_then(|s| s.get("profile"))
        .and_then(Value::as_str)
        .is_some_and(|p| p.starts_with("deltallm"))
}

/// An inline `router:` with `set` applied: its fleet keys taken out and read, the rest loaded
/// as the router config. Errors are located at `router.<path>`, or at `set.<key>` when a
/// `set` entry wrote the value.
fn load_inline_router(
    ctx: &Ctx<'_>,
    mut value: Value,
    set: &[(String, Value)],
) -> Result<(RouterConfig, FleetConfig), ScenarioError> {
    apply_sets(ctx, &mut value, set)?;
    let deltallm = is_deltallm(&value);
    let fleet =
        take_fleet_config(&mut value, deltallm).map_err(|e| match set_covering(set, &e.path) {
            Some(key) => ctx.error(&format!("set.{key}"), e.message),
            None => ctx.error(&format!("router.{}", e.path), e.message),
        })?;
    let mut config =
        load_router_config_value_with(&value, router_load_options()).map_err(
            |e| match set_covering(set, &e.path) {
                Some(key) => ctx.error(&format!("set.{key}"), e.message),
                None => ctx.error(&router_path(&e), e.message),
            },
        )?;
    if fleet.state_from_redis_host {
        // It chose the shared store: no longer a key that does nothing.
        config
            .ignored_keys
            .retain(|k| k != "router_settings.redis_host");
    }
    Ok((config, fleet))
}

/// What the run should say about its fleet (`state` made `shared` by `redis_host`).
fn fleet_note(fleet: &FleetConfig) -> Option<String> {
    fleet.state_from_redis_host.then(|| {
        "router.state: shared (the default when router_settings.redis_host is set): the \
         replicas share a simulated store, not a real Redis"
            .to_string()
    })
}

/// A config error's path under the scenario's `router:` key.
fn router_path(e: &ConfigError) -> String {
    use routersim_config::load::{ROOT_PATH, YAML_PATH};
    if e.path.is_empty() || e.path == ROOT_PATH || e.path == YAML_PATH {
        "router".to_string()
    } else {
        format!("router.{}", e.path)
    }
}

fn load_router_file(ctx: &Ctx<'_>, path: &Path) -> Result<RouterConfig, ScenarioError> {
    // Read it here too: a missing file is the scenario's mistake (at `router_file`), and the
    // text locates the loader's errors.
    let text = read_router_text(ctx, path)?;
    load_router_config_file_with(path, router_load_options())
        .map_err(|e| router_file_error(path, &text, e))
}

fn read_router_text(ctx: &Ctx<'_>, path: &Path) -> Result<String, ScenarioError> {
    read_text_file(path).map_err(|e| {
        ctx.error(
            "router_file",
            format!("cannot read {}: {e}", path.display()),
        )
    })
}

/// A router config error as a located error: in the router file (`text`), or in the
/// included file the loader names (read again to locate the path in it).
fn router_file_error(path: &Path, text: &str, e: ConfigError) -> ScenarioError {
    use routersim_config::load::{ROOT_PATH, YAML_PATH};
    let origin = path.display().to_string();
    let whole = e.path.is_empty() || e.path == origin || e.path == YAML_PATH || e.path == ROOT_PATH;
    let (line, column) = match (e.location, &e.file) {
        (Some((line, column)), _) => (Some(line), Some(column)),
        _ if whole => (None, None),
        (None, None) => LocationIndex::new(text).locate(&e.path).unzip(),
        (None, Some(included)) => read_text_file(included)
            .ok()
            .and_then(|text| LocationIndex::new(&text).locate(&e.path))
            .unzip(),
    };
    ScenarioError {
        file: e.file.unwrap_or_else(|| path.to_path_buf()),
        line,
        column,
        path: if whole { String::new() } else { e.path },
        message: e.message,
    }
}

/// A `router_file` with `set` overrides: the file's tree is parsed (as the engine's loader
/// parses it), overridden, then validated. A config error under an overridden path is the
/// scenario's (at `set.<path>`); any other is the router file's.
fn load_router_file_with_set(
    ctx: &Ctx<'_>,
    path: &Path,
    set: &[(String, Value)],
) -> Result<RouterConfig, ScenarioError> {
    let text = read_router_text(ctx, path)?;
    let in_router_file = |e: ConfigError| router_file_error(path, &text, e);
    let mut tree = parse_yaml_located(&text).map_err(in_router_file)?;
    let includes = match tree.get("include") {
        None | Some(Value::Null) => false,
        Some(Value::Array(items)) => !items.is_empty(),
        Some(_) => true,
    };
    if includes {
        return Err(ctx.error(
            "set",
            format!(
                "`set` cannot yet override a router_file that uses `include` ({}); inline \
                 the included model_list, or drop `set`",
                path.display()
            ),
        ));
    }
    apply_sets(ctx, &mut tree, set)?;
    load_router_config_value_with(&tree, router_load_options()).map_err(|e| {
        match set_covering(set, &e.path) {
            Some(key) => ctx.error(&format!("set.{key}"), e.message),
            None => in_router_file(e),
        }
    })
}
