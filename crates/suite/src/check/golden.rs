//! Comparing a run's summary with its golden: which metrics count, how much they may move,
//! and in which order a difference is shown.
//!
//! - **What is compared**: every leaf of `summary.json` but [`IGNORED_KEYS`]: the version and
//!   the transport (a version bump or `--transport http` alone never fails a golden),
//!   `duration_ms` and `run_end_ms` (the scenario's length and when its last request ended:
//!   the run's frame, not its result) and `events` (totals of the engine's event kinds, each
//!   derived from the metrics already compared: a changed `RetryScheduled` total is a changed
//!   `retries`, shown once rather than twice).
//! - **Tolerances** are relative: a number passes when `|new − golden| ≤ tolerance × |golden|`.
//!   `check --tolerance 2%` applies to every number; a scenario's `golden: {tolerance: {…}}`
//!   names `expect` metrics ([`TOLERANCE_METRICS`]) and wins for those. A golden of 0 is held
//!   exactly (no relative change is small against 0); text, and a leaf only one side has,
//!   always differ.
//! - **Order**: the identity of the run first (`scenario`, `seed`: a golden of another run
//!   makes every other line noise), then leaves without a relative change (text, absent on one
//!   side, a golden of 0), then numbers by relative change, largest first; ties keep the
//!   golden's key order.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use serde_json::Value;

use routersim_sim::expect::format_value;
pub use routersim_sim::scenario::golden::{TOLERANCE_METRICS, parse_tolerance, tolerance_path};

/// The summary key the golden comparison ignores.
pub const IGNORED_KEY: &str = "routersim_version";
/// A second key it ignores: `transport` (a run over `http` must match the golden of its
/// `memory` twin, and `check --transport` must be able to run any suite either way).
pub const IGNORED_TRANSPORT_KEY: &str = "transport";

/// Top-level summary keys the comparison ignores (see the module docs).
pub const IGNORED_KEYS: [&str; 5] = [
    IGNORED_KEY,
    IGNORED_TRANSPORT_KEY,
    "duration_ms",
    "run_end_ms",
    "events",
];

/// Top-level keys that say which run a summary is of; shown first when they differ.
const IDENTITY_KEYS: [&str; 2] = ["scenario", "seed"];

/// How far each metric may move: one tolerance for every number, and per-path exceptions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tolerances {
    /// For every number (`check --tolerance`), a fraction.
    pub all: f64,
    /// By `summary.json` path (from the scenario's `golden: {tolerance}`), a fraction.
    pub by_path: BTreeMap<String, f64>,
}

impl Tolerances {
    /// `--tolerance` for everything, the scenario's own tolerances by metric on top.
    pub fn new(all: f64, by_metric: &BTreeMap<String, f64>) -> Self {
        let by_path = by_metric
            .iter()
            .filter_map(|(metric, t)| tolerance_path(metric).map(|path| (path, *t)))
            .collect();
        Self { all, by_path }
    }

    /// The tolerance of the leaf at `path`.
    pub fn of(&self, path: &str) -> f64 {
        self.by_path.get(path).copied().unwrap_or(self.all)
    }
}

/// One metric that differs between a golden and a new summary (beyond its tolerance).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MetricDiff {
    /// Its path in summary.json, keys joined with dots (`latency_ms.p99`,
    /// `cooldowns.by_deployment.east.count`).
    pub path: String,
    /// The golden's value (`None`: absent from the golden).
    pub golden: Option<Value>,
    /// The new value (`None`: absent from the new summary).
    pub new: Option<Value>,
    /// `(new − golden) / |golden|` for two numbers with a golden other than 0.
    pub relative_change: Option<f64>,
    /// The tolerance it exceeded (a fraction; 0: held exactly).
    pub tolerance: f64,
}

impl fmt::Display for MetricDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: golden {}, new {}",
            self.path,
            show_value(self.golden.as_ref()),
            show_value(self.new.as_ref())
        )?;
        if let Some(change) = self.relative_change {
            let sign = if change > 0.0 { "+" } else { "" };
            write!(f, " ({sign}{}%", format_value(round2(change * 100.0)))?;
            if self.tolerance > 0.0 {
                write!(f, ", tolerance {}%", format_value(self.tolerance * 100.0))?;
            }
            write!(f, ")")?;
        }
        Ok(())
    }
}

fn round2(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

/// A JSON value for people: numbers without float noise, `absent` for a missing one.
pub fn show_value(value: Option<&Value>) -> String {
    match value {
        None => "absent".into(),
        Some(Value::Number(n)) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => u.to_string(),
            (None, Some(i), _) => i.to_string(),
            (None, None, Some(f)) => format_value(f),
            _ => n.to_string(),
        },
        Some(other) => other.to_string(),
    }
}

/// Every leaf that differs between two summaries (as JSON trees) beyond its tolerance, in the
/// order of the module docs, ignoring [`IGNORED_KEYS`]. Numbers compare by value (`1` equals
/// `1.0`).
pub fn diff_summaries(golden: &Value, new: &Value, tolerances: &Tolerances) -> Vec<MetricDiff> {
    let mut diffs = Vec::new();
    diff_values("", Some(golden), Some(new), tolerances, &mut diffs);
    // Stable: ties keep the golden's key order.
    diffs.sort_by(|a, b| rank(b).partial_cmp(&rank(a)).unwrap_or(Ordering::Equal));
    diffs
}

/// Larger first: identity keys, then leaves without a relative change, then by change.
fn rank(diff: &MetricDiff) -> (u8, f64) {
    if IDENTITY_KEYS.contains(&diff.path.as_str()) {
        (2, 0.0)
    } else {
        match diff.relative_change {
            None => (1, 0.0),
            Some(change) => (0, change.abs()),
        }
    }
}

fn diff_values(
    path: &str,
    golden: Option<&Value>,
    new: Option<&Value>,
    tolerances: &Tolerances,
    out: &mut Vec<MetricDiff>,
) {
    match (golden, new) {
        (Some(Value::Object(g)), Some(Value::Object(n))) => {
            let keys = g.keys().chain(n.keys().filter(|k| !g.contains_key(*k)));
            for key in keys {
                if path.is_empty() && IGNORED_KEYS.contains(&key.as_str()) {
                    continue;
                }
                let child = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                diff_values(&child, g.get(key), n.get(key), tolerances, out);
            }
        }
        (Some(Value::Number(g)), Some(Value::Number(n)))
            if g == n || (g.as_f64().is_some() && g.as_f64() == n.as_f64()) => {}
        (Some(Value::Number(g)), Some(Value::Number(n))) => {
            let (g_f, n_f) = (g.as_f64().unwrap_or(0.0), n.as_f64().unwrap_or(0.0));
            let tolerance = tolerances.of(path);
            let relative_change = (g_f != 0.0).then(|| (n_f - g_f) / g_f.abs());
            if relative_change.is_some_and(|c| c.abs() <= tolerance) {
                return;
            }
            out.push(MetricDiff {
                path: path.to_string(),
                golden: golden.cloned(),
                new: new.cloned(),
                relative_change,
                tolerance,
            });
        }
        (g, n) if g == n => {}
        (g, n) => out.push(MetricDiff {
            path: path.to_string(),
            golden: g.cloned(),
            new: n.cloned(),
            relative_change: None,
            tolerance: tolerances.of(path),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact() -> Tolerances {
        Tolerances::default()
    }

    #[test]
    fn the_diff_ignores_the_frame_and_sorts_by_relative_change() {
        let golden = serde_json::json!({
            "scenario": "s", "routersim_version": "0.1.0", "requests": 10,
            "latency_ms": {"p99": 1.5, "max": 2.0, "p50": 1.0},
            "failed_by_kind": {"timeout": 1},
            "duration_ms": 1000.0, "run_end_ms": 900.0, "events": {"RequestEnd": 10}
        });
        let new = serde_json::json!({
            "scenario": "s", "routersim_version": "9.9.9", "requests": 10,
            "latency_ms": {"p99": 1.75, "max": 2, "p50": 2.0},
            "failed_by_kind": {"rate_limit": 3},
            "duration_ms": 2000.0, "run_end_ms": 1900.0, "events": {"RequestEnd": 11}
        });
        let lines: Vec<String> = diff_summaries(&golden, &new, &exact())
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            lines,
            [
                "failed_by_kind.timeout: golden 1, new absent",
                "failed_by_kind.rate_limit: golden absent, new 3",
                "latency_ms.p50: golden 1, new 2 (+100%)",
                "latency_ms.p99: golden 1.5, new 1.75 (+16.67%)",
            ]
        );
        assert!(diff_summaries(&golden, &golden, &exact()).is_empty());
    }

    #[test]
    fn the_run_identity_comes_first() {
        let golden = serde_json::json!({"latency_ms": {"p50": 1.0}, "seed": 3});
        let new = serde_json::json!({"latency_ms": {"p50": 9.0}, "seed": 4});
        let paths: Vec<String> = diff_summaries(&golden, &new, &exact())
            .into_iter()
            .map(|d| d.path)
            .collect();
        assert_eq!(paths, ["seed", "latency_ms.p50"]);
    }

    /// A run over `transport: http` matches the golden of its memory twin, and back.
    #[test]
    fn the_diff_ignores_the_transport() {
        let golden = serde_json::json!({"scenario": "s", "requests": 10});
        let http = serde_json::json!({"scenario": "s", "transport": "http", "requests": 10});
        assert!(diff_summaries(&golden, &http, &exact()).is_empty());
        assert!(diff_summaries(&http, &golden, &exact()).is_empty());
        let other = serde_json::json!({"scenario": "s", "transport": "http", "requests": 11});
        assert_eq!(diff_summaries(&golden, &other, &exact()).len(), 1);
    }

    #[test]
    fn tolerances_are_relative_and_per_metric_wins() {
        let golden =
            serde_json::json!({"latency_ms": {"p99": 100.0}, "requests": 100, "failed": 0});
        let new = serde_json::json!({"latency_ms": {"p99": 104.0}, "requests": 103, "failed": 1});
        let all = Tolerances::new(0.02, &BTreeMap::new());
        let paths = |t: &Tolerances| -> Vec<String> {
            diff_summaries(&golden, &new, t)
                .into_iter()
                .map(|d| d.path)
                .collect()
        };
        // 2 %: p99 (+4 %) and requests (+3 %) fail; a golden 0 is held exactly.
        assert_eq!(paths(&all), ["failed", "latency_ms.p99", "requests"]);
        let loose_p99 = Tolerances::new(
            0.02,
            &BTreeMap::from([("p99_latency_ms".to_string(), 0.05)]),
        );
        assert_eq!(paths(&loose_p99), ["failed", "requests"]);
        let d = &diff_summaries(&golden, &new, &all)[1];
        assert_eq!(
            d.to_string(),
            "latency_ms.p99: golden 100, new 104 (+4%, tolerance 2%)"
        );
    }

    #[test]
    fn tolerances_parse_as_percentages_and_name_known_metrics() {
        assert_eq!(parse_tolerance("2%"), Ok(0.02));
        assert_eq!(parse_tolerance("0%"), Ok(0.0));
        assert!(parse_tolerance("2").is_err());
        assert!(parse_tolerance("-1%").is_err());
        assert!(parse_tolerance("x%").is_err());
        assert_eq!(
            tolerance_path("p99_latency_ms").as_deref(),
            Some("latency_ms.p99")
        );
        assert_eq!(
            tolerance_path("failed.timeout").as_deref(),
            Some("failed_by_kind.timeout")
        );
        assert_eq!(tolerance_path("duration_ms"), None);
        for (name, _) in TOLERANCE_METRICS {
            assert!(
                routersim_report::is_known_metric(name),
                "{name} is an expect metric"
            );
        }
        assert_eq!(tolerance_path("p99_latncy_ms"), None);
    }
}
