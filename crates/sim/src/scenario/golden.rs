//! The scenario's `golden:` key: how closely `routersim check` holds a run to its golden.
//!
//! ```yaml
//! golden:
//!   tolerance: {p99_latency_ms: 5%, fallbacks: 10%, windows.*.p99_latency_ms: 10%}
//! ```
//!
//! A tolerance is relative (`5%`: the new value may differ from the golden's by up to 5 % of
//! the golden's value) and wins over `check --tolerance` for what it names:
//!
//! - an `expect` metric ([`TOLERANCE_METRICS`], `failed.<kind>`, `cooldowns.<deployment_id>`,
//!   …): every leaf of `summary.json` that holds that number under any of its names
//!   (`cooldowns`: `cooldowns.total` and `cooldowns.sets`, see [`same_number`]), and its
//!   breakdown by deployment and by replica (`cooldowns.by_deployment.*.count`,
//!   `by_replica.*.cooldown_sets`, [`BREAKDOWNS`]); one tolerance per quantity;
//! - or a `summary.json` path or family ([`summary_path`](super::summary_path)):
//!   `windows["east: rate_limit 90%"].during.p99_latency_ms`, `windows.*.p99_latency_ms`.
//!
//! When two tolerances name one leaf, the more specific wins (more named steps; then the
//! smaller). A name that is neither is an error, with the closest metric; a path must start at
//! a key of `summary.json` the comparison reads ([`SUMMARY_KEYS`]), since a tolerance that
//! loosens nothing would be a key that does nothing (`check` also says so when a path matches
//! no number of the run's summary).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::ctx::Ctx;
use super::error::ScenarioError;
use super::summary_path::{PATTERN_EXAMPLES, PathPattern, Step};
use routersim_config::keys::closest_key;

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
    /// Relative tolerances (a fraction: 0.05 for `5%`) by name (an `expect` metric or a
    /// `summary.json` path pattern), in name order.
    pub tolerance: BTreeMap<String, f64>,
}

/// Checks `golden:`: every name is a metric or a path the comparison looks at, every value a
/// percentage.
pub(super) fn validate_golden(
    raw: Option<RawGolden>,
    ctx: &Ctx<'_>,
) -> Result<GoldenSettings, ScenarioError> {
    let Some(raw) = raw else {
        return Ok(GoldenSettings::default());
    };
    let mut tolerance = BTreeMap::new();
    for (name, value) in raw.tolerance {
        let path = format!("golden.tolerance.{name}");
        if let Err(why) = tolerance_patterns(&name) {
            return Err(ctx.error(&path, why));
        }
        let fraction = match &value {
            Value::String(text) => parse_tolerance(text),
            other => Err(format!("expected a percentage such as 5%, found {other}")),
        }
        .map_err(|why| ctx.error(&path, why))?;
        tolerance.insert(name, fraction);
    }
    Ok(GoldenSettings { tolerance })
}

/// The top-level keys of `summary.json` whose numbers the golden comparison reads (every key
/// but the version, the transport and the run's frame: `duration_ms`, `run_end_ms`, `events`).
pub const SUMMARY_KEYS: &[&str] = &[
    "scenario",
    "seed",
    "router_profile",
    "requests",
    "ok",
    "failed",
    "failed_by_kind",
    "fallback_rate",
    "retry_rate",
    "retries",
    "fallbacks",
    "attempted_fallbacks",
    "attempts",
    "attempts_per_request",
    "latency_ms",
    "cooldowns",
    "all_cooled",
    "half_open",
    "streams",
    "stream_breaks",
    "contract",
    "windows",
    "expect_windows",
    "alternatives",
    "deadline_exhausted",
    "deadline_exhaustion_rate",
    "attempts_per_completed_request",
    "ambiguous_outcomes",
    "ambiguous_replays",
    "duplicate_executions",
    "cost_per_accepted_response",
    "client_retries",
    "user_requests",
    "provider_calls_per_user_request",
    "latency_by_final_route",
    "source",
    "live",
    "by_replica",
];

/// Top-level keys the comparison ignores: the version and the transport (a version bump or
/// `--transport http` alone never fails a golden), the run's frame (`duration_ms`,
/// `run_end_ms`) and `events` (totals derived from the metrics already compared).
pub const IGNORED_SUMMARY_KEYS: [&str; 5] = [
    "routersim_version",
    "transport",
    "duration_ms",
    "run_end_ms",
    "events",
];

/// What a tolerance named `name` loosens: the patterns of the leaves it covers, and whether it
/// is an `expect` metric (a metric may match nothing in a run: `failed.timeout` is absent when
/// no request timed out). An error says why the name is neither, with the closest metric.
pub fn tolerance_patterns(name: &str) -> Result<(Vec<PathPattern>, bool), String> {
    let mut patterns = metric_patterns(name);
    let is_metric = !patterns.is_empty();
    if TOLERANCE_METRICS.iter().any(|(metric, _)| *metric == name) {
        // A plain metric is its quantity only (`cooldowns` is not all of `cooldowns.*`).
        return Ok((patterns, true));
    }
    // `cooldowns.sets` reads as a metric (deployment `sets`) and as a path: both count.
    match PathPattern::parse(name) {
        Ok(pattern) => match pattern.first_name() {
            Some(first) if SUMMARY_KEYS.contains(&first) => patterns.push(pattern),
            Some(first) if IGNORED_SUMMARY_KEYS.contains(&first) && !is_metric => {
                return Err(format!(
                    "unknown metric {name:?}: {first} is not compared with the golden (the \
                     version, the transport and the run's frame are not), so a tolerance on \
                     it would loosen nothing"
                ));
            }
            _ => {}
        },
        Err(why) if !is_metric && (name.contains('[') || name.contains('*')) => return Err(why),
        Err(_) => {}
    }
    if patterns.is_empty() {
        return Err(unknown_name(name));
    }
    Ok((patterns, is_metric))
}

/// Why `name` is no tolerance name, with the closest metric or summary key.
fn unknown_name(name: &str) -> String {
    let metrics = TOLERANCE_METRICS.iter().map(|(m, _)| *m);
    let heads = PARAM_HEADS.iter().copied();
    let head = name.split_once('.').map_or(name, |(h, _)| h);
    let hint = closest_key(name, metrics.clone())
        .or_else(|| closest_key(head, heads.clone().chain(SUMMARY_KEYS.iter().copied())))
        .map(|m| format!("did you mean {m}? "))
        .unwrap_or_default();
    format!(
        "unknown metric {name:?}: {hint}a golden tolerance names an expect metric ({}, or \
         failed.<kind>, cooldowns.<deployment_id>, cooled_ms.<deployment_id>, …) or {}",
        metrics.collect::<Vec<_>>().join(", "),
        PATTERN_EXAMPLES
    )
}

/// The `expect` metrics a golden tolerance can name, with their `summary.json` path; also
/// the metrics with a parameter ([`PARAM_HEADS`], [`tolerance_path`]).
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
    ("cooldown_sets", "cooldowns.sets"),
    ("cooldown_periods", "cooldowns.periods"),
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
    ("ejections", "alternatives.ejections"),
    ("deadline_exhausted", "deadline_exhausted"),
    ("deadline_exhaustion_rate", "deadline_exhaustion_rate"),
];

/// The breakdown of a metric by deployment and by replica: the same quantity, counted per
/// part, which the metric's tolerance covers too (a more specific tolerance wins).
pub const BREAKDOWNS: &[(&str, &[&str])] = &[
    ("requests", &["by_replica.*.requests"]),
    ("ok", &["by_replica.*.ok"]),
    ("failed", &["by_replica.*.failed"]),
    ("attempts", &["by_replica.*.attempts"]),
    (
        "cooldowns",
        &[
            "cooldowns.by_deployment.*.count",
            "by_replica.*.cooldown_sets",
        ],
    ),
    (
        "cooldown_sets",
        &[
            "cooldowns.by_deployment.*.count",
            "by_replica.*.cooldown_sets",
        ],
    ),
    (
        "cooldown_periods",
        &[
            "cooldowns.by_deployment.*.periods",
            "by_replica.*.cooldown_periods",
        ],
    ),
    (
        "cooled_ms_total",
        &["cooldowns.by_deployment.*.total_cooled_ms"],
    ),
    ("half_open", &["half_open.by_deployment.*.count"]),
    (
        "half_open_ms_total",
        &["half_open.by_deployment.*.total_half_open_ms"],
    ),
    ("ejections", &["alternatives.ejections_by_deployment.*"]),
];

/// The metrics with a parameter a golden tolerance can name: `<head>.<parameter>`.
pub const PARAM_HEADS: &[&str] = &[
    "failed",
    "cooldowns",
    "cooldown_sets",
    "cooldown_periods",
    "cooled_ms",
    "ejections",
    "p50_latency_ms",
    "p99_latency_ms",
    "stream_breaks",
];

/// The path of a metric with a parameter (`cooldowns.east`), by name steps.
fn param_path(head: &str, param: &str) -> Option<Vec<String>> {
    let names: &[&str] = match head {
        "failed" => &["failed_by_kind", param],
        "cooldowns" | "cooldown_sets" => &["cooldowns", "by_deployment", param, "count"],
        "cooldown_periods" => &["cooldowns", "by_deployment", param, "periods"],
        "cooled_ms" => &["cooldowns", "by_deployment", param, "total_cooled_ms"],
        "ejections" => &["alternatives", "ejections_by_deployment", param],
        "p50_latency_ms" => &["latency_by_final_route", param, "p50"],
        "p99_latency_ms" => &["latency_by_final_route", param, "p99"],
        "stream_breaks" => &["stream_breaks", param],
        _ => return None,
    };
    Some(names.iter().map(|n| n.to_string()).collect())
}

/// The patterns an `expect` metric names: its path and its breakdown; empty for another name.
fn metric_patterns(metric: &str) -> Vec<PathPattern> {
    let split = |path: &str| PathPattern::of_names(&path.split('.').collect::<Vec<_>>());
    if let Some((_, path)) = TOLERANCE_METRICS.iter().find(|(name, _)| *name == metric) {
        let breakdown = BREAKDOWNS
            .iter()
            .filter(|(name, _)| *name == metric)
            .flat_map(|(_, paths)| paths.iter());
        return std::iter::once(*path)
            .chain(breakdown.copied())
            .map(split)
            .collect();
    }
    metric
        .split_once('.')
        .filter(|(_, param)| !param.is_empty())
        .and_then(|(head, param)| param_path(head, param))
        .map(|names| vec![PathPattern::of_names(&names)])
        .unwrap_or_default()
}

/// The other names of the number at `leaf` (`cooldowns.sets` for `cooldowns.total`, a
/// deployment's `sets` for its `count`): `summary.json` keeps older names beside newer ones.
pub fn same_number(leaf: &[Step]) -> Vec<Vec<Step>> {
    let swap = |from: &str, to: &str| -> Option<Vec<Step>> {
        let (last, rest) = leaf.split_last()?;
        (*last == Step::Key(from.into())).then(|| {
            let mut other = rest.to_vec();
            other.push(Step::Key(to.into()));
            other
        })
    };
    let cooldowns = leaf.first() == Some(&Step::Key("cooldowns".into()));
    let per_deployment = leaf.get(1) == Some(&Step::Key("by_deployment".into()));
    let pairs: &[(&str, &str)] = match (cooldowns, leaf.len(), per_deployment) {
        (true, 2, _) => &[("total", "sets"), ("sets", "total")],
        (true, 4, true) => &[("count", "sets"), ("sets", "count")],
        _ => &[],
    };
    pairs.iter().filter_map(|(a, b)| swap(a, b)).collect()
}

/// The `summary.json` path of an `expect` metric a golden tolerance names (its first path:
/// [`tolerance_patterns`] also gives its breakdown), or `None` when it is no such metric.
pub fn tolerance_path(metric: &str) -> Option<String> {
    metric_patterns(metric).first().map(ToString::to_string)
}

/// A relative tolerance as written (`2%`, `0.5%`) as a fraction (0.02, 0.005).
pub fn parse_tolerance(text: &str) -> Result<f64, String> {
    let number = text
        .trim()
        .strip_suffix('%')
        .ok_or_else(|| format!("expected a percentage such as 5%, found {text:?}"))?;
    match number.trim().parse::<f64>() {
        Ok(value) if !value.is_finite() => Err(format!(
            "{text:?} is not a finite number: expected a percentage such as 5%"
        )),
        Ok(value) if value >= 0.0 => Ok(value / 100.0),
        Ok(_) => Err(format!(
            "expected a percentage of 0% or more such as 5%, found {text:?}"
        )),
        Err(_) => Err(format!(
            "expected a percentage such as 5%, found {text:?} (not a number before the %)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tolerance_names_a_metric_a_path_or_a_family() {
        let (patterns, is_metric) = tolerance_patterns("cooldowns").unwrap();
        assert!(is_metric);
        let shown: Vec<String> = patterns.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "cooldowns.total",
                "cooldowns.by_deployment.*.count",
                "by_replica.*.cooldown_sets"
            ]
        );
        let (_, is_metric) = tolerance_patterns("windows.*.p99_latency_ms").unwrap();
        assert!(!is_metric);
        assert!(tolerance_patterns("windows[\"east: rate_limit 90%\"].during.ok").is_ok());
        // Both readings of `cooldowns.sets`: deployment `sets`, and the total's other name.
        assert_eq!(tolerance_patterns("cooldowns.sets").unwrap().0.len(), 2);
    }

    #[test]
    fn an_unknown_name_is_refused_with_the_closest_metric() {
        let why = tolerance_patterns("p99_latency").unwrap_err();
        assert!(
            why.starts_with("unknown metric \"p99_latency\": did you mean p99_latency_ms?"),
            "{why}"
        );
        let why = tolerance_patterns("window.*.p99_latency_ms").unwrap_err();
        assert!(why.contains("did you mean windows?"), "{why}");
        assert!(
            tolerance_patterns("duration_ms")
                .unwrap_err()
                .contains("not compared")
        );
        assert!(tolerance_patterns("windows[east]").is_err());
    }

    #[test]
    fn the_same_number_under_another_name() {
        let key = |k: &str| Step::Key(k.into());
        assert_eq!(
            same_number(&[key("cooldowns"), key("total")]),
            [vec![key("cooldowns"), key("sets")]]
        );
        assert_eq!(
            same_number(&[
                key("cooldowns"),
                key("by_deployment"),
                key("east"),
                key("sets")
            ]),
            [vec![
                key("cooldowns"),
                key("by_deployment"),
                key("east"),
                key("count")
            ]]
        );
        assert!(same_number(&[key("cooldowns"), key("periods")]).is_empty());
        assert!(same_number(&[key("half_open"), key("total")]).is_empty());
    }
}
