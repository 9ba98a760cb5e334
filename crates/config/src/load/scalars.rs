//! Scalars as LiteLLM's configs write them: integers with underscores or as whole floats,
//! durations with units, YAML 1.1 booleans and numbers (PyYAML's binary and sexagesimal
//! spellings), names that may be numbers; and [`describe`], the one wording of a found value in
//! every error (the scenario loader's too).
//!
//! `model_group_alias` values are read as LiteLLM 1.110.2 reads them
//! (`litellm/litellm_core_utils/routing_common_utils.py`, `resolve_model_group_alias`): only a
//! non-empty string, or a mapping's `model` string, routes; anything else loads and fails only
//! the requests for that alias (`litellm/router_rust/core.py`, `_failure_error`, kind
//! `unknown_model`: a 400 "There are no healthy deployments for this model"), so it is an
//! [`AliasTarget::Unroutable`] here, not an error.

use std::time::Duration;

use serde_json::Value;

use super::error::{ConfigError, MAX_NUM_RETRIES, Result};
use crate::duration::{DurationError, Syntax, from_seconds, parse_duration_as};
use crate::numerals::{float_to_u64, yaml11_int};
use routersim_engine::config::RoutingStrategyName;

pub(super) fn opt<T>(v: &Value, parse: impl FnOnce(&Value) -> Result<T>) -> Result<Option<T>> {
    if v.is_null() {
        Ok(None)
    } else {
        parse(v).map(Some)
    }
}

/// A found value for an error message: its kind, and its content when it is a scalar
/// (`the string "x"`, `the number 2`, `a list`).
pub fn describe(v: &Value) -> String {
    match v {
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string \"{s}\""),
        Value::Null | Value::Array(_) | Value::Object(_) => kind(v).to_string(),
    }
}

/// A found value's kind, never its content (for values from an included file).
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

pub(super) fn env_ref_check(s: &str, path: &str) -> Result<()> {
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
pub(super) fn name(v: &Value, path: &str, what: &str) -> Result<String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        other => Err(ConfigError::new(
            path,
            format!("expected {what}, found {}", describe(other)),
        )),
    }
}

pub(super) fn strings(v: &Value, path: &str) -> Result<Vec<String>> {
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
pub(super) fn uint64(v: &Value, path: &str) -> Result<u64> {
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
                .or_else(|| yaml11_int(&digits))
                .ok_or_else(|| bad(describe(v)))
        }
        other => Err(bad(describe(other))),
    }
}

/// A retry count: a larger one is a typo, and would spin a failing deployment for hours.
pub(super) fn retries(v: &Value, path: &str) -> Result<u32> {
    let n = uint32(v, path)?;
    if n > MAX_NUM_RETRIES {
        return Err(ConfigError::new(
            path,
            format!("a retry count of at most {MAX_NUM_RETRIES} is expected, found {n}"),
        ));
    }
    Ok(n)
}

pub(super) fn uint32(v: &Value, path: &str) -> Result<u32> {
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

/// A list of HTTP statuses (`[429, 503]`): each an integer from 100 to 599.
pub(super) fn status_codes(v: &Value, path: &str) -> Result<Vec<u16>> {
    let Value::Array(items) = v else {
        return Err(ConfigError::new(
            path,
            format!("expected a list of HTTP statuses, found {}", describe(v)),
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let at = format!("{path}[{i}]");
            let n = uint64(item, &at)?;
            u16::try_from(n)
                .ok()
                .filter(|s| (100..=599).contains(s))
                .ok_or_else(|| {
                    ConfigError::new(at, format!("expected an HTTP status (100-599), found {n}"))
                })
        })
        .collect()
}

/// A non-negative finite number (deployment weights).
pub(super) fn weight(v: &Value, path: &str) -> Result<f64> {
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

/// A duration as LiteLLM's configs write it: a number of seconds (`30`, `0.5`, `0`) or a
/// string `30s`, `500ms`, `2m`, `1h` ([`Syntax::LiteLlm`]).
pub(super) fn duration(v: &Value, path: &str) -> Result<Duration> {
    let bad = || {
        ConfigError::new(
            path,
            format!(
                "expected a duration in seconds (e.g. 30, 0.5, \"30s\", \"500ms\", \"2m\"), found {}",
                describe(v)
            ),
        )
    };
    let read = match v {
        Value::Number(n) => from_seconds(n.as_f64().ok_or_else(bad)?),
        Value::String(s) => {
            env_ref_check(s, path)?;
            parse_duration_as(s, Syntax::LiteLlm)
        }
        _ => return Err(bad()),
    };
    read.map_err(|e| match e {
        DurationError::Malformed { .. } => bad(),
        too_long @ DurationError::TooLong { .. } => ConfigError::new(path, too_long.to_string()),
    })
}

pub(super) fn boolean(v: &Value, path: &str) -> Result<bool> {
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

pub(super) fn strategy(v: &Value, path: &str) -> Result<RoutingStrategyName> {
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

/// What a `model_group_alias` value routes to, as LiteLLM 1.110.2 reads it
/// (`litellm_core_utils/routing_common_utils.py` `resolve_model_group_alias`: the entry, or its
/// mapping's `model`, is used only when it is a non-empty string).
#[derive(Debug, PartialEq)]
pub(super) enum AliasTarget {
    /// A model group.
    Group(String),
    /// Nothing LiteLLM routes: it loads the file and fails only a request for the alias
    /// (a 400 "There are no healthy deployments for this model", raised before any attempt
    /// in `router_rust/core.py` `_failure_error`, `unknown_model`). The found value, described.
    Unroutable(String),
}

/// `model_group_alias` value: a group name, or `{model: <group>, hidden: <bool>}`; anything
/// else is [`AliasTarget::Unroutable`]. Notes for what LiteLLM reads differently go to `notes`.
pub(super) fn alias_target(v: &Value, path: &str, notes: &mut Vec<String>) -> Result<AliasTarget> {
    match v {
        Value::String(s) if !s.is_empty() => {
            env_ref_check(s, path)?;
            Ok(AliasTarget::Group(s.clone()))
        }
        Value::Object(map) => {
            for (key, value) in map {
                match key.as_str() {
                    "model" => {}
                    "hidden" if !value.is_boolean() => notes.push(format!(
                        "{path}.hidden: expected true or false, found {}; LiteLLM hides the \
                         alias only when it is true, so it is listed",
                        describe(value)
                    )),
                    "hidden" => {}
                    _ => notes.push(format!(
                        "{path}.{key}: unknown key, ignored (an alias item has `model` and \
                         `hidden`)"
                    )),
                }
            }
            match map.get("model") {
                Some(Value::String(m)) if !m.is_empty() => {
                    if !map.contains_key("hidden") {
                        notes.push(format!(
                            "{path}: no `hidden` key; LiteLLM 1.110.2 fails every request for \
                             this alias with KeyError 'hidden' (write `hidden: false`); \
                             routersim routes it to \"{m}\""
                        ));
                    }
                    Ok(AliasTarget::Group(m.clone()))
                }
                _ => Ok(AliasTarget::Unroutable(
                    "a mapping without a `model` string".to_string(),
                )),
            }
        }
        other => Ok(AliasTarget::Unroutable(describe(other))),
    }
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
        assert_eq!(
            d(Value::from("87600h")),
            Ok(routersim_engine::config::MAX_DURATION)
        );
        assert_eq!(
            d(Value::from(315_360_000)),
            Ok(routersim_engine::config::MAX_DURATION)
        );
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
}
