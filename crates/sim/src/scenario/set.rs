//! `set` and `--set` overrides: parsing a `router_settings.x[0].y` path and a YAML value,
//! and applying them to the router's JSON tree before it is validated.
//!
//! Separate because `sweep` and `run --profile` use it on their own.

use std::fmt::Write as _;

use routersim_config::load::describe;
use serde_json::{Map, Value};

use super::ctx::Ctx;
use super::error::ScenarioError;

/// The `set` path `routersim run --profile` overrides.
pub const PROFILE_SET_PATH: &str = "router_settings.profile";

/// Applies every `set` entry in file order; an error is located at `set.<path>`.
pub(super) fn apply_sets(
    ctx: &Ctx<'_>,
    tree: &mut Value,
    set: &[(String, Value)],
) -> Result<(), ScenarioError> {
    for (key, value) in set {
        apply_set(tree, key, value.clone())
            .map_err(|message| ctx.error(&format!("set.{key}"), message))?;
    }
    Ok(())
}

/// The last `set` path that covers a config error's path (equal, or an ancestor of it).
pub(super) fn set_covering<'s>(set: &'s [(String, Value)], error_path: &str) -> Option<&'s str> {
    set.iter().rev().map(|(key, _)| key.as_str()).find(|key| {
        error_path
            .strip_prefix(key)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
    })
}

/// One step of a `set` path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SetStep<'a> {
    /// A mapping key.
    Key(&'a str),
    /// A list index.
    Index(usize),
}

const SET_PATH_EXPECTED: &str = "a path of dot-separated keys with [i] list indices, such as \
     router_settings.cooldown_time or model_list[0].litellm_params.rpm";

fn parse_set_path(path: &str) -> Result<Vec<SetStep<'_>>, String> {
    let bad = |why: &str| format!("{why} in {path:?}: expected {SET_PATH_EXPECTED}");
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (key, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
        if key.trim().is_empty() {
            return Err(bad("an empty key"));
        }
        steps.push(SetStep::Key(key));
        while !rest.is_empty() {
            let Some((index, after)) = rest.strip_prefix('[').and_then(|r| r.split_once(']'))
            else {
                return Err(bad("an unclosed ["));
            };
            let index = index
                .trim()
                .parse()
                .map_err(|_| bad(&format!("[{index}] is not a list index")))?;
            steps.push(SetStep::Index(index));
            rest = after;
            if !rest.is_empty() && !rest.starts_with('[') {
                return Err(bad(&format!("{rest:?} after an index")));
            }
        }
    }
    Ok(steps)
}

/// Sets `value` at `path` in a router config tree (the parsed YAML of a LiteLLM proxy config),
/// before it is validated.
///
/// `path` is dot-separated mapping keys with `[i]` list indices:
/// `router_settings.routing_strategy`, `model_list[0].litellm_params.rpm`. The last step is
/// replaced (or added). Missing mappings on the way are created (an empty value counts as
/// missing); a list is never created or extended: an index past the end, a key into a list or
/// a scalar, or an index into anything but a list is an error, returned as a message that
/// names the part of the path at fault. Keys cannot contain dots.
pub fn apply_set(root: &mut Value, path: &str, value: Value) -> Result<(), String> {
    let steps = parse_set_path(path)?;
    let mut node = root;
    let mut walked = String::new();
    for (i, step) in steps.iter().enumerate() {
        let last = i + 1 == steps.len();
        let here = if walked.is_empty() {
            "the router config".to_string()
        } else {
            walked.clone()
        };
        match *step {
            SetStep::Key(key) => {
                if node.is_null() {
                    *node = Value::Object(Map::new());
                }
                let Value::Object(map) = node else {
                    return Err(format!(
                        "{here} is {}, not a mapping: it has no key {key:?}",
                        describe(node)
                    ));
                };
                if !walked.is_empty() {
                    walked.push('.');
                }
                walked.push_str(key);
                if last {
                    map.insert(key.to_string(), value);
                    return Ok(());
                }
                if matches!(steps[i + 1], SetStep::Index(_))
                    && map.get(key).is_none_or(Value::is_null)
                {
                    return Err(format!(
                        "{walked} does not exist: an index needs an existing list"
                    ));
                }
                node = map.entry(key.to_string()).or_insert(Value::Null);
            }
            SetStep::Index(index) => {
                let Value::Array(items) = node else {
                    return Err(format!(
                        "{here} is {}, not a list: it has no [{index}]",
                        describe(node)
                    ));
                };
                let len = items.len();
                let _ = write!(walked, "[{index}]");
                let Some(item) = items.get_mut(index) else {
                    return Err(format!(
                        "{walked} is past the end of the list ({here} has {len} entries)"
                    ));
                };
                if last {
                    *item = value;
                    return Ok(());
                }
                node = item;
            }
        }
    }
    Ok(())
}

/// A `set` value written as text (`routersim sweep --set KEY=V`): read as a YAML scalar or
/// flow collection, the way the same text in a scenario file reads (`3` is a number, `true` a
/// boolean, `least-busy` a string, `[a, b]` a list).
pub fn parse_set_value(text: &str) -> Result<Value, String> {
    crate::yaml::from_str::<Value>(text).map_err(|e| format!("{text:?}: {}", e.message))
}
