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

use super::{ConfigError, MAX_NUM_RETRIES, Result};
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

/// The YAML 1.1 integer spellings PyYAML (which LiteLLM reads configs with) resolves and YAML
/// 1.2 leaves as strings: binary `0b101`, sexagesimal `1:30` (= 90). `digits` has no `_`.
/// (Octal `010` is the parser's `legacy_octal_numbers`.)
fn yaml11_int(digits: &str) -> Option<u64> {
    if let Some(bits) = digits.strip_prefix("0b") {
        return u64::from_str_radix(bits, 2).ok();
    }
    sexagesimal(digits).and_then(float_to_u64)
}

/// PyYAML's sexagesimal number: `1:30` = 90, `1:00:00` = 3600, `1:30.5` = 90.5. Each part
/// after the first is below 60.
fn sexagesimal(text: &str) -> Option<f64> {
    let mut parts = text.split(':');
    let first = parts.next()?;
    if first.is_empty() || !first.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut value: f64 = first.parse().ok()?;
    let mut any = false;
    let mut parts = parts.peekable();
    while let Some(part) = parts.next() {
        let last = parts.peek().is_none();
        let (whole, _) = part.split_once('.').unwrap_or((part, ""));
        let ok = !whole.is_empty()
            && whole.len() <= 2
            && whole.bytes().all(|b| b.is_ascii_digit())
            && (last || whole.len() == part.len());
        let n: f64 = if ok { part.parse().ok()? } else { return None };
        if n >= 60.0 {
            return None;
        }
        value = value * 60.0 + n;
        any = true;
    }
    any.then_some(value)
}

fn float_to_u64(f: f64) -> Option<u64> {
    // 2^64 is exactly representable; anything below it with no fraction fits.
    (f.is_finite() && f >= 0.0 && f.fract() == 0.0 && f < 18_446_744_073_709_551_616.0)
        .then_some(f as u64)
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

/// A duration: a number of seconds (`30`, `0.5`, `0`) or a string `30s`, `500ms`, `2m`, `1h`.
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
            digits
                .parse::<f64>()
                .ok()
                .or_else(|| yaml11_int(&digits).map(|n| n as f64))
                .or_else(|| sexagesimal(&digits))
                .ok_or_else(bad)?
                * scale
        }
        _ => return Err(bad()),
    };
    if !secs.is_finite() || secs < 0.0 {
        return Err(bad());
    }
    let d = Duration::try_from_secs_f64(secs).map_err(|_| bad())?;
    if d > routersim_engine::config::MAX_DURATION {
        return Err(ConfigError::new(
            path,
            format!(
                "{secs} s is more than the longest duration routersim serves (87600h, 10 years)"
            ),
        ));
    }
    Ok(d)
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
    fn sexagesimal_and_binary_as_pyyaml() {
        assert_eq!(sexagesimal("1:30"), Some(90.0));
        assert_eq!(sexagesimal("1:00:00"), Some(3600.0));
        assert_eq!(sexagesimal("1:30.5"), Some(90.5));
        assert_eq!(sexagesimal("1:60"), None);
        assert_eq!(sexagesimal("1:3.0:00"), None);
        assert_eq!(sexagesimal("30"), None);
        assert_eq!(sexagesimal(":30"), None);
        assert_eq!(sexagesimal("a:30"), None);
        assert_eq!(yaml11_int("0b101"), Some(5));
        assert_eq!(yaml11_int("0b2"), None);
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
