//! The verdict: for each metric, the best combination and which others cannot be told apart
//! from it, so a sweep answers "which setting is best, and is it significantly better".
//!
//! Separate because it is a judgement on top of the statistics, with its own rules:
//! - Direction: every metric a sweep records is "lower is better" (failed, fallback, retry,
//!   deadline-exhaustion and rejection rates, latencies, time cooled, attempts per request:
//!   each is a cost); a metric named like a success share (`ok_rate`, `accepted_rate`,
//!   `…success_rate`) would be "higher is better" ([`lower_is_better`]).
//! - Best: the combination with the lowest (highest) mean over seeds; on a tie the first in
//!   grid order.
//! - Indistinguishable: a combination whose 95 % interval of the mean overlaps the best's.
//!   That is a conservative reading (two overlapping intervals can still differ at 5 %), so
//!   "distinguishable" is safe to act on and "indistinguishable" means "not shown different".
//!   With one seed an interval is its mean alone: only equal means overlap.

use serde::Serialize;
use serde_json::{Map, Value};

use super::manifest::Manifest;
use super::stats::{ComboStats, Interval};

/// Whether a lower value of `metric` is better (see the module docs).
pub fn lower_is_better(metric: &str) -> bool {
    !(metric == "ok_rate" || metric == "accepted_rate" || metric.ends_with("success_rate"))
}

/// Where a combination stands for one metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// The best mean.
    Best,
    /// Its interval overlaps the best's.
    Indistinguishable,
    /// Its interval does not overlap the best's: significantly worse.
    Worse,
    /// No value (not a number).
    Unknown,
}

impl Mark {
    /// The word in `sweep.csv`'s `<metric>_verdict` column.
    pub fn as_str(self) -> &'static str {
        match self {
            Mark::Best => "best",
            Mark::Indistinguishable => "indistinguishable",
            Mark::Worse => "worse",
            Mark::Unknown => "",
        }
    }
}

/// The marks of every combination (in `stats` order) for metric column `m`.
pub fn marks(metric: &str, stats: &[ComboStats], m: usize) -> Vec<Mark> {
    let lower = lower_is_better(metric);
    let mut best: Option<(usize, Interval)> = None;
    for (i, c) in stats.iter().enumerate() {
        let x = c.metrics[m];
        if !x.mean.is_finite() {
            continue;
        }
        let better = best.is_none_or(|(_, b)| {
            if lower {
                x.mean < b.mean
            } else {
                x.mean > b.mean
            }
        });
        if better {
            best = Some((i, x));
        }
    }
    stats
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let x = c.metrics[m];
            match best {
                _ if !x.mean.is_finite() => Mark::Unknown,
                Some((b, _)) if b == i => Mark::Best,
                Some((_, b)) if x.low <= b.high && b.low <= x.high => Mark::Indistinguishable,
                _ => Mark::Worse,
            }
        })
        .collect()
}

/// A combination in the verdict.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Standing {
    /// `key=value key=value`.
    pub settings: String,
    /// The same, as an object (key path to the value as written).
    pub values: Map<String, Value>,
    /// Mean over seeds.
    pub mean: f64,
    /// The 95 % interval of the mean.
    pub ci95_low: f64,
    /// The 95 % interval of the mean.
    pub ci95_high: f64,
}

/// One metric's verdict, as written to `sweep.json`'s `verdict`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MetricVerdict {
    /// The metric.
    pub metric: String,
    /// `"lower"` or `"higher"`: which is better.
    pub better: &'static str,
    /// The best combination (absent when no combination has a value).
    pub best: Option<Standing>,
    /// The other combinations whose 95 % interval overlaps the best's.
    pub indistinguishable: Vec<Standing>,
    /// How many other combinations are significantly worse (intervals apart).
    pub worse: usize,
    /// Whether the best is significantly better than at least one other combination.
    pub significant: bool,
}

fn standing(manifest: &Manifest, c: &ComboStats, m: usize) -> Standing {
    let values = manifest
        .keys
        .iter()
        .zip(&c.values)
        .map(|(k, &v)| (k.path.clone(), Value::String(k.values[v].clone())))
        .collect();
    let i = c.metrics[m];
    Standing {
        settings: manifest.describe(&c.values),
        values,
        mean: i.mean,
        ci95_low: i.low,
        ci95_high: i.high,
    }
}

/// The verdict for every metric (not the counts), in [`Manifest::metrics`] order.
pub fn verdicts(manifest: &Manifest, stats: &[ComboStats]) -> Vec<MetricVerdict> {
    manifest
        .metrics
        .iter()
        .enumerate()
        .map(|(m, metric)| {
            let marks = marks(metric, stats, m);
            let pick = |want: Mark| {
                stats
                    .iter()
                    .zip(&marks)
                    .filter(move |(_, k)| **k == want)
                    .map(|(c, _)| standing(manifest, c, m))
            };
            let worse = marks.iter().filter(|&&k| k == Mark::Worse).count();
            MetricVerdict {
                metric: metric.clone(),
                better: if lower_is_better(metric) {
                    "lower"
                } else {
                    "higher"
                },
                best: pick(Mark::Best).next(),
                indistinguishable: pick(Mark::Indistinguishable).collect(),
                worse,
                significant: worse > 0,
            }
        })
        .collect()
}

/// The verdict lines under the terminal table: per metric, the best and what it beats.
pub fn verdict_lines(manifest: &Manifest, stats: &[ComboStats]) -> Vec<String> {
    if stats.len() < 2 {
        return Vec::new();
    }
    let mut lines = vec![
        "verdict (* best, ~ its 95% interval overlaps the best's: not significantly different):"
            .to_string(),
    ];
    for v in verdicts(manifest, stats) {
        let Some(best) = &v.best else { continue };
        let line = if v.worse == 0 {
            format!(
                "  {} ({} is better): no combination is significantly different",
                v.metric, v.better
            )
        } else {
            format!(
                "  {} ({} is better): best {}; significantly better than {} of {} other(s){}",
                v.metric,
                v.better,
                best.settings,
                v.worse,
                stats.len() - 1,
                if v.indistinguishable.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; indistinguishable: {}",
                        v.indistinguishable
                            .iter()
                            .map(|s| s.settings.as_str())
                            .collect::<Vec<_>>()
                            .join(" | ")
                    )
                }
            )
        };
        lines.push(line);
    }
    lines
}
