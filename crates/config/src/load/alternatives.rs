//! The alternatives' keys (`retry_budget`, `retry_throttling`, `outlier_detection`,
//! `hedge_after`; see [`routersim_engine::alternatives`]). Each of the first three is `true` (the
//! source's defaults), `false` (off, as when absent) or a mapping of the fields to change;
//! every field is also a `--set` path of its own (`router_settings.retry_budget.ratio=0.1`).
//! A field the mechanism does not have is an error: it would do nothing.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Map, Value};

use super::error::{ConfigError, Result};
use super::read::{Read, Setting};
use super::scalars::{boolean, describe, duration, uint32, weight};
use crate::duration::format_duration;
use crate::spelling::closest_key;
use routersim_engine::alternatives::{
    HedgeAfter, OutlierSettings, RetryBudgetSettings, RetryThrottlingSettings, ejects_in_group_of,
};
use routersim_engine::config::{Deployment, RouterSettings};
use routersim_engine::profile::Walk;

/// The mapping a key stands for (`true`: no field changed), `None` when off.
fn fields(v: &Value, at: &str, known: &[&str]) -> Result<Option<Map<String, Value>>> {
    let map = match v {
        Value::Bool(true) => Map::new(),
        Value::Bool(false) => return Ok(None),
        Value::Object(map) => map.clone(),
        other => {
            return Err(ConfigError::new(
                at,
                format!(
                    "expected true, false or a mapping of {}, found {}",
                    known.join(", "),
                    describe(other)
                ),
            ));
        }
    };
    for key in map.keys() {
        if !known.contains(&key.as_str()) {
            let hint = closest_key(key, known.iter().copied())
                .map(|k| format!("; did you mean {k}?"))
                .unwrap_or_default();
            return Err(ConfigError::new(
                format!("{at}.{key}"),
                format!("not a field of {at} (known: {}){hint}", known.join(", ")),
            ));
        }
    }
    Ok(Some(map))
}

/// Reads field `key` of `map` with `parse`, if present (null counts as absent).
fn field<T>(
    map: &Map<String, Value>,
    at: &str,
    key: &str,
    parse: impl Fn(&Value, &str) -> Result<T>,
) -> Result<Option<T>> {
    map.get(key)
        .filter(|v| !v.is_null())
        .map(|v| parse(v, &format!("{at}.{key}")))
        .transpose()
}

fn out_of_range(at: &str, key: &str, expected: &str, found: impl std::fmt::Display) -> ConfigError {
    ConfigError::new(
        format!("{at}.{key}"),
        format!("expected {expected}, found {found}"),
    )
}

/// `retry_budget: {ratio, min_per_sec, ttl}` (tower's `TpsBudget`).
pub(super) fn retry_budget(r: &mut Read<'_>, setting: &Setting) -> Result<()> {
    let Some((v, at)) = r.router(setting) else {
        return Ok(());
    };
    let Some(map) = fields(v, &at, &["ratio", "min_per_sec", "ttl"])? else {
        return Ok(());
    };
    let mut s = RetryBudgetSettings::default();
    if let Some(ratio) = field(&map, &at, "ratio", weight)? {
        if ratio > 1000.0 {
            return Err(out_of_range(
                &at,
                "ratio",
                "a share from 0 to 1000 (tower's bound)",
                ratio,
            ));
        }
        s.ratio = ratio;
    }
    if let Some(n) = field(&map, &at, "min_per_sec", uint32)? {
        if n >= i32::MAX as u32 {
            return Err(out_of_range(&at, "min_per_sec", "less than 2147483647", n));
        }
        s.min_per_sec = n;
    }
    if let Some(ttl) = field(&map, &at, "ttl", duration)? {
        if !(1..=60).contains(&ttl.as_secs()) || ttl > Duration::from_secs(60) {
            return Err(out_of_range(
                &at,
                "ttl",
                "a window from 1s to 60s (tower's bound)",
                format!("{ttl:?}"),
            ));
        }
        s.ttl = ttl;
    }
    r.settings.retry_budget = Some(s);
    Ok(())
}

/// `retry_throttling: {max_tokens, token_ratio}` (gRPC A6).
pub(super) fn retry_throttling(r: &mut Read<'_>, setting: &Setting) -> Result<()> {
    let Some((v, at)) = r.router(setting) else {
        return Ok(());
    };
    let Some(map) = fields(v, &at, &["max_tokens", "token_ratio"])? else {
        return Ok(());
    };
    let mut s = RetryThrottlingSettings::default();
    if let Some(max) = field(&map, &at, "max_tokens", weight)? {
        if max <= 0.0 || max > 1000.0 {
            return Err(out_of_range(
                &at,
                "max_tokens",
                "a number in (0, 1000] (gRPC's bound)",
                max,
            ));
        }
        s.max_tokens = max;
    }
    if let Some(ratio) = field(&map, &at, "token_ratio", weight)? {
        if ratio < 0.001 {
            return Err(out_of_range(
                &at,
                "token_ratio",
                "at least 0.001 (gRPC keeps three decimals)",
                ratio,
            ));
        }
        s.token_ratio = ratio;
    }
    r.settings.retry_throttling = Some(s);
    Ok(())
}

/// `outlier_detection: {consecutive_5xx, base_ejection_time, max_ejection_time,
/// max_ejection_percent, always_eject_one_host, interval}` (Envoy's `OutlierDetection`, with
/// its bounds: the durations above 0, `max_ejection_time` not below `base_ejection_time`, and
/// by default the larger of 300 s and `base_ejection_time`).
pub(super) fn outlier_detection(r: &mut Read<'_>, setting: &Setting) -> Result<()> {
    let Some((v, at)) = r.router(setting) else {
        return Ok(());
    };
    let known = [
        "consecutive_5xx",
        "base_ejection_time",
        "max_ejection_time",
        "max_ejection_percent",
        "always_eject_one_host",
        "interval",
    ];
    let Some(map) = fields(v, &at, &known)? else {
        return Ok(());
    };
    let mut s = OutlierSettings::default();
    if let Some(n) = field(&map, &at, "consecutive_5xx", uint32)? {
        if n == 0 {
            return Err(out_of_range(&at, "consecutive_5xx", "at least 1", n));
        }
        s.consecutive_5xx = n;
    }
    let positive = |key: &str| -> Result<Option<Duration>> {
        match field(&map, &at, key, duration)? {
            Some(d) if d.is_zero() => Err(out_of_range(
                &at,
                key,
                "a duration above 0 (Envoy's bound)",
                "0",
            )),
            other => Ok(other),
        }
    };
    if let Some(d) = positive("base_ejection_time")? {
        s.base_ejection_time = d;
        s.max_ejection_time = s.max_ejection_time.max(d);
    }
    if let Some(d) = positive("max_ejection_time")? {
        if d < s.base_ejection_time {
            return Err(out_of_range(
                &at,
                "max_ejection_time",
                &format!(
                    "at least base_ejection_time ({}), as Envoy requires",
                    format_duration(s.base_ejection_time)
                ),
                format_duration(d),
            ));
        }
        s.max_ejection_time = d;
    }
    if let Some(d) = positive("interval")? {
        s.interval = d;
    }
    if let Some(p) = field(&map, &at, "max_ejection_percent", uint32)? {
        if p > 100 {
            return Err(out_of_range(
                &at,
                "max_ejection_percent",
                "a percentage from 0 to 100",
                p,
            ));
        }
        s.max_ejection_percent = p;
    }
    if let Some(on) = field(&map, &at, "always_eject_one_host", boolean)? {
        s.always_eject_one_host = on;
    }
    r.settings.outlier_detection = Some(s);
    Ok(())
}

/// `hedge_after: p95 | 800ms | false`; set under a profile that walks candidates, it does
/// nothing (said, and an error under `--strict`).
pub(super) fn hedge_after(r: &mut Read<'_>, setting: &Setting) -> Result<()> {
    let Some((v, at)) = r.router(setting) else {
        return Ok(());
    };
    r.settings.hedge_after = match v {
        Value::Bool(false) => None,
        Value::String(text) if text.trim().starts_with('p') => {
            Some(HedgeAfter::percentile(text.trim()).ok_or_else(|| {
                ConfigError::new(
                    &at,
                    format!("expected a percentile p1 to p99 (such as p95), found \"{text}\""),
                )
            })?)
        }
        other => {
            let d = duration(other, &at).map_err(|_| {
                ConfigError::new(
                    &at,
                    format!(
                        "expected a percentile such as p95, a delay such as 800ms, or false, found {}",
                        describe(other)
                    ),
                )
            })?;
            if d.is_zero() {
                return Err(ConfigError::new(
                    &at,
                    "a hedge delay above 0 is expected (0 would send every request twice at once)",
                ));
            }
            Some(HedgeAfter::Fixed(d))
        }
    };
    if r.settings.hedge_after.is_some() {
        // Only the retry loop of a group's deployments hedges: the candidate walk's routes
        // are tried one at a time.
        r.profile_key(
            setting,
            |p| p.walk != Walk::Candidates,
            " (the candidate walk does not hedge)",
        );
    }
    Ok(())
}

/// A warning when `outlier_detection` is on but no group of the config can ever have a
/// deployment ejected (Envoy's share check: at the default 10 %, a group needs 10 deployments
/// for its first ejection): the key then does nothing here.
pub(super) fn never_ejects(
    settings: &RouterSettings,
    deployments: &[Deployment],
) -> Option<String> {
    let outlier = settings.outlier_detection.as_ref()?;
    let mut sizes: BTreeMap<&str, usize> = BTreeMap::new();
    for d in deployments {
        *sizes.entry(d.model_name.as_ref()).or_default() += 1;
    }
    let largest = sizes.values().copied().max()?;
    if sizes.values().any(|&n| ejects_in_group_of(outlier, n)) {
        return None;
    }
    let how = if outlier.always_eject_one_host {
        "a lone deployment is never ejected (Envoy's panic threshold would route to it anyway)"
            .to_string()
    } else {
        format!(
            "Envoy ejects only if 100 × (ejected + 1) ÷ deployments ≤ max_ejection_percent ({}), \
             and the largest group here has {largest}; always_eject_one_host: true lets a \
             group's first ejection through",
            outlier.max_ejection_percent
        )
    };
    Some(format!(
        "router_settings.outlier_detection: no group can have a deployment ejected, so it does \
         nothing here: {how}"
    ))
}
