//! The scenario's `golden:` key: how closely `routersim check` holds a run to its golden.
//!
//! ```yaml
//! golden:
//!   tolerance: {p99_latency_ms: 5%, fallbacks: 10%}
//! ```
//!
//! A tolerance is relative (`5%`: the new value may differ from the golden's by up to 5 % of
//! the golden's value) and is named by the `expect` metric it loosens; it wins over
//! `check --tolerance` for that metric. Only metrics the golden comparison looks at can be
//! named ([`TOLERANCE_METRICS`]); anything else is an error, since a
//! tolerance that loosens nothing would be a key that does nothing.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::ctx::Ctx;
use super::error::ScenarioError;

/// The `golden:` key as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGolden {
    #[serde(default)]
    tolerance: BTreeMap<String, Value>,
}

/// How `check` compares a run with its golden.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GoldenSettings {
    /// Relative tolerances (a fraction: 0.05 for `5%`) by `expect` metric name, in name order.
    pub tolerance: BTreeMap<String, f64>,
}

/// Checks `golden:`: every metric is one the comparison looks at, every value a percentage.
pub(super) fn validate_golden(
    raw: Option<RawGolden>,
    ctx: &Ctx<'_>,
) -> Result<GoldenSettings, ScenarioError> {
    let Some(raw) = raw else {
        return Ok(GoldenSettings::default());
    };
    let mut tolerance = BTreeMap::new();
    for (metric, value) in raw.tolerance {
        let path = format!("golden.tolerance.{metric}");
        if tolerance_path(&metric).is_none() {
            return Err(ctx.error(
                &path,
                format!(
                    "unknown metric {metric:?}: a golden tolerance names one of {}, or \
                     failed.<kind>, cooldowns.<deployment_id>, cooled_ms.<deployment_id>",
                    TOLERANCE_METRICS
                        .iter()
                        .map(|(name, _)| *name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        let fraction = match &value {
            Value::String(text) => parse_tolerance(text),
            other => Err(format!("expected a percentage such as 5%, found {other}")),
        }
        .map_err(|why| ctx.error(&path, why))?;
        tolerance.insert(metric, fraction);
    }
    Ok(GoldenSettings { tolerance })
}

/// The `expect` metrics a golden tolerance can name, with their `summary.json` path; also
/// `failed.<kind>`, `cooldowns.<deployment_id>` and `cooled_ms.<deployment_id>`
/// ([`tolerance_path`]).
pub const TOLERANCE_METRICS: &[(&str, &str)] = &[
    ("requests", "requests"),
    ("ok", "ok"),
    ("failed", "failed"),
    ("fallback_rate", "fallback_rate"),
    ("retry_rate", "retry_rate"),
    ("retries", "retries"),
    ("fallbacks", "fallbacks"),
    ("attempted_fallbacks", "attempted_fallbacks"),
    ("attempts", "attempts"),
    ("attempts_per_request_mean", "attempts_per_request.mean"),
    ("attempts_max", "attempts_per_request.max"),
    ("p50_latency_ms", "latency_ms.p50"),
    ("p90_latency_ms", "latency_ms.p90"),
    ("p99_latency_ms", "latency_ms.p99"),
    ("p999_latency_ms", "latency_ms.p99_9"),
    ("max_latency_ms", "latency_ms.max"),
    ("mean_latency_ms", "latency_ms.mean"),
    ("cooldowns", "cooldowns.total"),
    ("cooled_ms_total", "cooldowns.cooled_ms_total"),
    ("all_cooled", "all_cooled"),
    ("half_open", "half_open.total"),
    ("half_open_ms_total", "half_open.half_open_ms_total"),
    ("recovered", "half_open.recovered"),
    ("probe_failed", "half_open.probe_failed"),
    ("streamed", "streams.requests"),
    ("continuation_rate", "streams.continuation_rate"),
    ("p50_ttft_ms", "streams.ttft_ms.p50"),
    ("p99_ttft_ms", "streams.ttft_ms.p99"),
    ("tokens_delivered", "streams.tokens_delivered"),
    ("tokens_billed", "streams.tokens_billed"),
];

/// The `summary.json` path a golden tolerance named `metric` loosens, or `None` when the
/// comparison has no such metric.
pub fn tolerance_path(metric: &str) -> Option<String> {
    if let Some((_, path)) = TOLERANCE_METRICS.iter().find(|(name, _)| *name == metric) {
        return Some((*path).to_string());
    }
    let (head, param) = metric.split_once('.')?;
    if param.is_empty() {
        return None;
    }
    match head {
        "failed" => Some(format!("failed_by_kind.{param}")),
        "cooldowns" => Some(format!("cooldowns.by_deployment.{param}.count")),
        "cooled_ms" => Some(format!("cooldowns.by_deployment.{param}.total_cooled_ms")),
        _ => None,
    }
}

/// A relative tolerance as written (`2%`, `0.5%`) as a fraction (0.02, 0.005).
pub fn parse_tolerance(text: &str) -> Result<f64, String> {
    let number = text
        .trim()
        .strip_suffix('%')
        .ok_or_else(|| format!("expected a percentage such as 5%, found {text:?}"))?;
    match number.trim().parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 0.0 => Ok(value / 100.0),
        _ => Err(format!(
            "expected a percentage of 0% or more such as 5%, found {text:?}"
        )),
    }
}
