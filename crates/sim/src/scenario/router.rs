//! Loading the router config from `router_file:` (with `set` overrides applied to its tree)
//! and locating its errors in that file.
//!
//! Separate because it reads a second file, with its own line numbers.

use std::path::Path;

use routersim_config::ConfigError;
use routersim_config::input::read_text_file;
use routersim_config::load::{
    load_router_config_file_with, load_router_config_value_with, parse_yaml_located,
};
use routersim_engine::config::RouterConfig;
use serde_json::Value;

use super::ScenarioError;
use super::load::{Ctx, router_load_options};
use super::set::{apply_sets, set_covering};
use crate::yaml::LocationIndex;

/// A config error's path under the scenario's `router:` key.
pub(super) fn router_path(e: &ConfigError) -> String {
    use routersim_config::load::{ROOT_PATH, YAML_PATH};
    if e.path.is_empty() || e.path == ROOT_PATH || e.path == YAML_PATH {
        "router".to_string()
    } else {
        format!("router.{}", e.path)
    }
}

pub(super) fn load_router_file(ctx: &Ctx<'_>, path: &Path) -> Result<RouterConfig, ScenarioError> {
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
pub(super) fn load_router_file_with_set(
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
