//! Comparing a run's summary with its golden: which numbers count, how much they may move,
//! and in which order a difference is shown.
//!
//! - **What is compared**: every leaf of `summary.json` ([`leaves`](super::leaves)), lists
//!   included: a fault window's numbers are leaves such as
//!   `windows["east: rate_limit 90%"].during.p99_latency_ms`, each held to its own tolerance
//!   and shown alone when it moves. Not compared: the version and the transport (a version
//!   bump or `--transport http` alone never fails a golden), `duration_ms` and `run_end_ms`
//!   (the scenario's length and when its last request ended: the run's frame, not its result)
//!   and `events` (totals of the engine's event kinds, each derived from the metrics already
//!   compared: a changed `RetryScheduled` total is a changed `retries`, shown once rather than
//!   twice).
//! - **Tolerances** are relative: a number passes when `|new − golden| ≤ tolerance × |golden|`.
//!   `check --tolerance 2%` applies to every number; a scenario's `golden: {tolerance: {…}}`
//!   names `expect` metrics or `summary.json` paths and families
//!   ([`golden`](routersim_sim::scenario::golden)) and wins for the leaves they cover, the most
//!   specific first; a metric's tolerance covers every name of its number (`cooldowns.total`
//!   and `cooldowns.sets`). A golden of 0 is held exactly (no relative change is small against
//!   0); text, and a leaf only one side has, always differ.
//! - **Order**: the identity of the run first (`scenario`, `seed`: a golden of another run
//!   makes every other line noise), then leaves without a relative change (text, absent on one
//!   side, a golden of 0), then numbers by relative change, largest first; ties keep the
//!   golden's order.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use serde_json::Value;

use super::leaves::{Leaf, leaves};
use routersim_config::keys::closest_key;
use routersim_sim::expect::format_value;
pub use routersim_sim::scenario::golden::{
    IGNORED_SUMMARY_KEYS as IGNORED_KEYS, TOLERANCE_METRICS, parse_tolerance, tolerance_path,
};
use routersim_sim::scenario::golden::{same_number, tolerance_patterns};
use routersim_sim::scenario::summary_path::{PathPattern, Step, render};

/// The summary key the golden comparison ignores.
pub const IGNORED_KEY: &str = "routersim_version";
/// A second key it ignores: `transport` (a run over `http` must match the golden of its
/// `memory` twin, and `check --transport` must be able to run any suite either way).
pub const IGNORED_TRANSPORT_KEY: &str = "transport";

/// Top-level keys that say which run a summary is of; shown first when they differ.
const IDENTITY_KEYS: [&str; 2] = ["scenario", "seed"];

/// One tolerance of the scenario's `golden: {tolerance}`.
#[derive(Clone, Debug, PartialEq)]
struct Named {
    name: String,
    patterns: Vec<PathPattern>,
    fraction: f64,
    is_metric: bool,
}

/// How far each number may move: one tolerance for every number, and the scenario's named
/// ones.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tolerances {
    /// For every number (`check --tolerance`), a fraction.
    pub all: f64,
    named: Vec<Named>,
}

impl Tolerances {
    /// `--tolerance` for everything, the scenario's own tolerances (by metric or path, as
    /// [`GoldenSettings`](routersim_sim::scenario::GoldenSettings) holds them) on top; a name
    /// that names nothing (the scenario loader refuses those) is left out.
    pub fn new(all: f64, by_name: &BTreeMap<String, f64>) -> Self {
        let named = by_name
            .iter()
            .filter_map(|(name, fraction)| {
                let (patterns, is_metric) = tolerance_patterns(name).ok()?;
                Some(Named {
                    name: name.clone(),
                    patterns,
                    fraction: *fraction,
                    is_metric,
                })
            })
            .collect();
        Self { all, named }
    }

    /// The tolerance of the leaf at `steps`: the most specific named tolerance that covers it
    /// or one of its other names (on a tie, the smaller), else `--tolerance`.
    pub fn of(&self, steps: &[Step]) -> f64 {
        let mut names = same_number(steps);
        names.push(steps.to_vec());
        self.named
            .iter()
            .flat_map(|n| {
                n.patterns
                    .iter()
                    .filter(|p| names.iter().any(|leaf| p.covers(leaf)))
                    .map(move |p| (p.specificity(), n.fraction))
            })
            .max_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)))
            .map_or(self.all, |(_, fraction)| fraction)
    }

    /// Why a named path covers no number of these summaries, one line each (a metric may
    /// cover none: `failed.timeout` is absent when no request timed out). With the closest
    /// path where one is near.
    pub fn unmatched(&self, summaries: &[&Value]) -> Vec<String> {
        let numbers: Vec<Leaf<'_>> = summaries
            .iter()
            .flat_map(|s| leaves(s))
            .filter(|l| l.value.is_number())
            .collect();
        let paths: Vec<String> = numbers.iter().map(|l| render(&l.steps)).collect();
        self.named
            .iter()
            .filter(|n| !n.is_metric)
            .filter(|n| {
                !numbers
                    .iter()
                    .any(|l| n.patterns.iter().any(|p| p.covers(&l.steps)))
            })
            .map(|n| {
                let hint = closest_key(&n.name, paths.iter().map(String::as_str))
                    .map(|p| format!("; did you mean {p}?"))
                    .unwrap_or_default();
                format!(
                    "golden.tolerance.{}: covers no number of the run's summary.json{hint}",
                    n.name
                )
            })
            .collect()
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
    let old = leaves(golden);
    let now = leaves(new);
    let by_path: BTreeMap<&[Step], &Value> =
        now.iter().map(|l| (l.steps.as_slice(), l.value)).collect();
    let in_golden: BTreeMap<&[Step], &Value> =
        old.iter().map(|l| (l.steps.as_slice(), l.value)).collect();
    let mut diffs = Vec::new();
    for leaf in &old {
        let steps = leaf.steps.as_slice();
        diff_leaf(
            steps,
            Some(leaf.value),
            by_path.get(steps).copied(),
            tolerances,
            &mut diffs,
        );
    }
    for leaf in now
        .iter()
        .filter(|l| !in_golden.contains_key(l.steps.as_slice()))
    {
        diff_leaf(&leaf.steps, None, Some(leaf.value), tolerances, &mut diffs);
    }
    // Stable: ties keep the golden's order.
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

fn diff_leaf(
    steps: &[Step],
    golden: Option<&Value>,
    new: Option<&Value>,
    tolerances: &Tolerances,
    out: &mut Vec<MetricDiff>,
) {
    let path = || render(steps);
    match (golden, new) {
        (Some(Value::Number(g)), Some(Value::Number(n)))
            if g == n || (g.as_f64().is_some() && g.as_f64() == n.as_f64()) => {}
        (Some(Value::Number(g)), Some(Value::Number(n))) => {
            let (g_f, n_f) = (g.as_f64().unwrap_or(0.0), n.as_f64().unwrap_or(0.0));
            let tolerance = tolerances.of(steps);
            let relative_change = (g_f != 0.0).then(|| (n_f - g_f) / g_f.abs());
            if relative_change.is_some_and(|c| c.abs() <= tolerance) {
                return;
            }
            out.push(MetricDiff {
                path: path(),
                golden: golden.cloned(),
                new: new.cloned(),
                relative_change,
                tolerance,
            });
        }
        (g, n) if g == n => {}
        (g, n) => out.push(MetricDiff {
            path: path(),
            golden: g.cloned(),
            new: n.cloned(),
            relative_change: None,
            tolerance: tolerances.of(steps),
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
        assert!(
            parse_tolerance("1e400%")
                .unwrap_err()
                .contains("not a finite number")
        );
        assert!(
            parse_tolerance("nan%")
                .unwrap_err()
                .contains("not a finite number")
        );
    }

    /// A summary with one fault window whose p50 is `p50` during it.
    fn windowed(p50: f64, cooldowns: u64) -> Value {
        serde_json::json!({
            "scenario": "s", "requests": 100,
            "cooldowns": {"total": cooldowns, "sets": cooldowns, "periods": 1,
                "by_deployment": {"east": {"count": cooldowns, "sets": cooldowns, "periods": 1}}},
            "windows": [{
                "label": "east: rate_limit 90%", "from_ms": 30000.0, "to_ms": 120000.0,
                "during": {"requests": 50, "p50_latency_ms": p50, "p99_latency_ms": 3000.0},
                "after": {"requests": 40, "p50_latency_ms": 650.0, "p99_latency_ms": 2000.0}
            }]
        })
    }

    fn diff_paths(golden: &Value, new: &Value, t: &Tolerances) -> Vec<String> {
        diff_summaries(golden, new, t)
            .into_iter()
            .map(|d| d.path)
            .collect()
    }

    #[test]
    fn a_fault_window_is_compared_number_by_number_under_every_tolerance() {
        let (golden, new) = (windowed(700.0, 9), windowed(710.0, 9));
        let p50 = "windows[\"east: rate_limit 90%\"].during.p50_latency_ms";
        // +1.43 %: fails exactly and at 0.5 %, passes at 10 % and at 1000 %.
        assert_eq!(diff_paths(&golden, &new, &exact()), [p50]);
        let half = Tolerances::new(0.005, &BTreeMap::new());
        let diffs = diff_summaries(&golden, &new, &half);
        assert_eq!(
            diffs[0].to_string(),
            format!("{p50}: golden 700, new 710 (+1.43%, tolerance 0.5%)")
        );
        for all in [0.1, 10.0] {
            assert!(diff_paths(&golden, &new, &Tolerances::new(all, &BTreeMap::new())).is_empty());
        }
        // A family, a window by name, or the whole list.
        for name in [
            "windows.*.p50_latency_ms",
            "windows[\"east: rate_limit 90%\"].during.p50_latency_ms",
            "windows",
        ] {
            let t = Tolerances::new(0.0, &BTreeMap::from([(name.to_string(), 0.02)]));
            assert!(diff_paths(&golden, &new, &t).is_empty(), "{name}");
        }
        // A family of another number loosens nothing here.
        let p99 = Tolerances::new(
            0.0,
            &BTreeMap::from([("windows.*.p99_latency_ms".to_string(), 0.5)]),
        );
        assert_eq!(diff_paths(&golden, &new, &p99), [p50]);
    }

    #[test]
    fn one_tolerance_covers_every_name_of_its_number() {
        let (golden, new) = (windowed(700.0, 10), windowed(700.0, 11));
        let moved = [
            "cooldowns.total",
            "cooldowns.sets",
            "cooldowns.by_deployment.east.count",
            "cooldowns.by_deployment.east.sets",
        ];
        assert_eq!(diff_paths(&golden, &new, &exact()), moved);
        for name in ["cooldowns", "cooldown_sets"] {
            let t = Tolerances::new(0.0, &BTreeMap::from([(name.to_string(), 0.1)]));
            assert!(diff_paths(&golden, &new, &t).is_empty(), "{name}");
        }
        // The deployment's own tolerance is more specific than the total's, and wins for it.
        let both = Tolerances::new(
            0.0,
            &BTreeMap::from([
                ("cooldowns".to_string(), 0.1),
                ("cooldowns.east".to_string(), 0.01),
            ]),
        );
        assert_eq!(diff_paths(&golden, &new, &both), &moved[2..]);
        // Named by a path, an alias covers its twin too.
        let path = Tolerances::new(0.0, &BTreeMap::from([("cooldowns.sets".to_string(), 0.1)]));
        assert_eq!(diff_paths(&golden, &new, &path), &moved[2..]);
    }

    #[test]
    fn a_path_that_covers_no_number_is_said_with_the_closest() {
        let summary = windowed(700.0, 1);
        let t = Tolerances::new(
            0.0,
            &BTreeMap::from([
                ("windows.*.p99_latncy_ms".to_string(), 0.1),
                ("failed.timeout".to_string(), 0.1),
                ("windows.*.p99_latency_ms".to_string(), 0.1),
            ]),
        );
        // `failed.timeout` is a metric: absent when nothing timed out, which is no mistake.
        let lines = t.unmatched(&[&summary]);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].starts_with(
                "golden.tolerance.windows.*.p99_latncy_ms: covers no number of the run's \
                 summary.json"
            ),
            "{lines:?}"
        );
    }
}
