//! Per-kind counts: `retry_policy`, `model_group_retry_policy` and `allowed_fails_policy`, keyed
//! by LiteLLM's field names (`RateLimitErrorRetries`) or the snake_case kind names.
//!
//! LiteLLM's `RetryPolicy` and `AllowedFailsPolicy` are pydantic models that ignore fields they
//! do not have, so a real config with `retry_policy: {max_retries: 3}` loads there; here too,
//! and the unknown field is an [`UnknownKey`] with the closest field (an error under
//! `--strict`).

use std::collections::BTreeSet;

use serde_json::Value;

use super::error::{ConfigError, Result};
use super::scalars::{describe, opt, retries, uint32};
use crate::spelling::closest_key;
use routersim_engine::config::KindPolicy;
use routersim_engine::config::UnknownKey;
use routersim_engine::failure::FailureKind;

/// What a policy counts.
#[derive(Clone, Copy)]
pub(super) enum PolicyUnit {
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

/// LiteLLM's field names for `unit` (`DefaultRetries`, `RateLimitErrorRetries`, …).
fn field_names(unit: PolicyUnit) -> Vec<String> {
    let suffix = unit.suffix();
    let mut names = vec![format!("Default{suffix}")];
    for kind in FailureKind::ALL {
        if let Some(stem) = kind.policy_stems().first() {
            names.push(format!("{stem}{suffix}"));
        }
    }
    names
}

/// An unknown policy field, with the closest field it may have meant: the same kind's field
/// when it has the other policy's suffix (`TimeoutErrorRetries` in `allowed_fails_policy`),
/// else the nearest name, else `Default…` for a count with no kind (`max_retries`).
fn unknown_field(key: &str, path: &str, unit: PolicyUnit) -> UnknownKey {
    let names = field_names(unit);
    let other = match unit {
        PolicyUnit::Retries => PolicyUnit::AllowedFails,
        PolicyUnit::AllowedFails => PolicyUnit::Retries,
    };
    let swapped = key
        .strip_suffix(other.suffix())
        .map(|stem| format!("{stem}{}", unit.suffix()))
        .filter(|field| names.contains(field));
    if let Some(field) = swapped {
        return UnknownKey {
            path: format!("{path}.{key}"),
            suggestion: Some(format!("{path}.{field}")),
        };
    }
    let snake = std::iter::once("default").chain(FailureKind::ALL.iter().map(|k| k.as_str()));
    let suffix = unit.suffix();
    let default = format!("Default{suffix}");
    let suggestion =
        closest_key(key, names.iter().map(String::as_str).chain(snake)).or_else(|| {
            let word = if matches!(unit, PolicyUnit::Retries) {
                "retr"
            } else {
                "fail"
            };
            key.to_ascii_lowercase()
                .contains(word)
                .then_some(default.as_str())
        });
    UnknownKey {
        path: format!("{path}.{key}"),
        suggestion: suggestion.map(|field| format!("{path}.{field}")),
    }
}

/// Reads a policy mapping at `path`; its unknown fields go into `unknown` and are skipped.
pub(super) fn kind_policy(
    v: &Value,
    path: &str,
    unit: PolicyUnit,
    unknown: &mut BTreeSet<UnknownKey>,
) -> Result<Option<KindPolicy>> {
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
            unknown.insert(unknown_field(key, path, unit));
            continue;
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

#[cfg(test)]
mod tests {
    use super::*;

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
