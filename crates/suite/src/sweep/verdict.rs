//! The verdict: for each metric, the best combination and which others cannot be told apart
//! from it, so a sweep answers "which setting is best, and is it significantly better".
//!
//! Separate because it is a judgement on top of the statistics, with its own rules:
//! - Ranked or descriptive: a metric that is a cost is ranked, "lower is better" (failed,
//!   fallback, retry, deadline-exhaustion and rejection rates, latencies, attempts per
//!   request); a metric named like a success share (`ok_rate`, `accepted_rate`,
//!   `…success_rate`) would be "higher is better" ([`lower_is_better`]). Time cooled and the
//!   counts of cooldowns describe what the router did and are **not ranked** ([`is_ranked`]):
//!   less cooling is not better in itself (an unset `allowed_fails` cooled nothing and had a
//!   64 s p99).
//! - Best: the combination with the lowest (highest) mean over seeds, the first in grid order
//!   on a tie, named only when it is **significantly better** than some other combination;
//!   when no combination differs from it, no best is named and every combination is
//!   indistinguishable (nine combinations all at 0 have no winner).
//! - Indistinguishable: a combination whose 95 % interval of the mean overlaps the best's.
//!   That is a conservative reading (two overlapping intervals can still differ at 5 %), so
//!   "distinguishable" is safe to act on and "indistinguishable" means "not shown different".
//!   A combination with one run has no interval (no spread to measure): it is never shown
//!   different, so with one seed no best is named.

use serde::Serialize;
use serde_json::{Map, Value};

use super::manifest::Manifest;
use super::stats::{ComboStats, Interval};

/// Whether a lower value of `metric` is better (see the module docs).
pub fn lower_is_better(metric: &str) -> bool {
    !(metric == "ok_rate" || metric == "accepted_rate" || metric.ends_with("success_rate"))
}

/// Metrics a sweep records that describe what the router did rather than what it cost: shown
/// with their intervals, never ranked.
pub const DESCRIPTIVE: &[&str] = &["cooled_ms_total", "cooldown_periods", "cooldown_sets"];

/// Whether the verdict ranks `metric` (see the module docs).
pub fn is_ranked(metric: &str) -> bool {
    !DESCRIPTIVE.contains(&metric)
}

/// Where a combination stands for one metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// The best mean, significantly better than some other combination.
    Best,
    /// Its interval overlaps the best's (or no combination differs from another).
    Indistinguishable,
    /// Its interval does not overlap the best's: significantly worse.
    Worse,
    /// No value (not a number).
    Unknown,
    /// The metric is descriptive, not ranked.
    NotRanked,
}

impl Mark {
    /// The word in `sweep.csv`'s `<metric>_verdict` column.
    pub fn as_str(self) -> &'static str {
        match self {
            Mark::Best => "best",
            Mark::Indistinguishable => "indistinguishable",
            Mark::Worse => "worse",
            Mark::Unknown => "",
            Mark::NotRanked => "not_ranked",
        }
    }
}

/// Whether two combinations' intervals cannot be told apart (one without an interval, a
/// single run, never can).
fn overlap(a: (&ComboStats, Interval), b: (&ComboStats, Interval)) -> bool {
    a.0.runs < 2 || b.0.runs < 2 || (a.1.low <= b.1.high && b.1.low <= a.1.high)
}

/// The marks of every combination (in `stats` order) for metric column `m`.
pub fn marks(metric: &str, stats: &[ComboStats], m: usize) -> Vec<Mark> {
    if !is_ranked(metric) {
        return stats
            .iter()
            .map(|c| {
                if c.metrics[m].mean.is_finite() {
                    Mark::NotRanked
                } else {
                    Mark::Unknown
                }
            })
            .collect();
    }
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
    let marks: Vec<Mark> = stats
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let x = c.metrics[m];
            match best {
                _ if !x.mean.is_finite() => Mark::Unknown,
                Some((b, _)) if b == i => Mark::Best,
                Some((b, bx)) if overlap((c, x), (&stats[b], bx)) => Mark::Indistinguishable,
                _ => Mark::Worse,
            }
        })
        .collect();
    if marks.contains(&Mark::Worse) {
        return marks;
    }
    // Nothing is significantly worse: no best either.
    marks
        .into_iter()
        .map(|k| {
            if k == Mark::Best {
                Mark::Indistinguishable
            } else {
                k
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
    /// `"lower"` or `"higher"`: which is better; `"not ranked"` for a descriptive metric.
    pub better: &'static str,
    /// Whether the metric is ranked at all ([`is_ranked`]).
    pub ranked: bool,
    /// The best combination, present only when it is significantly better than some other
    /// (absent on a tie, for a descriptive metric, or when no combination has a value).
    pub best: Option<Standing>,
    /// The other combinations whose 95 % interval overlaps the best's; every combination
    /// when no best is named (none is shown different).
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

/// `"lower"`, `"higher"` or `"not ranked"`.
pub fn better_word(metric: &str) -> &'static str {
    if !is_ranked(metric) {
        "not ranked"
    } else if lower_is_better(metric) {
        "lower"
    } else {
        "higher"
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
                better: better_word(metric),
                ranked: is_ranked(metric),
                best: pick(Mark::Best).next(),
                indistinguishable: pick(Mark::Indistinguishable).collect(),
                worse,
                significant: worse > 0,
            }
        })
        .collect()
}

/// One metric's verdict in words: the best and what it beats, or why there is none.
pub fn verdict_text(v: &MetricVerdict, others: usize) -> String {
    if !v.ranked {
        return format!(
            "{}: not ranked (it describes what the router did; neither more nor less is \
             better in itself)",
            v.metric
        );
    }
    let Some(best) = v.best.as_ref().filter(|_| v.significant) else {
        return format!(
            "{} ({} is better): no combination is significantly different, so none is best",
            v.metric, v.better
        );
    };
    let twins = if v.indistinguishable.is_empty() {
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
    };
    format!(
        "{} ({} is better): best {}; significantly better than {} of {others} other(s){twins}",
        v.metric, v.better, best.settings, v.worse
    )
}

/// The verdict lines under the terminal table: per metric, the best and what it beats.
pub fn verdict_lines(manifest: &Manifest, stats: &[ComboStats]) -> Vec<String> {
    if stats.len() < 2 {
        return Vec::new();
    }
    let mut lines = vec![
        "verdict (* best, ~ its 95% interval overlaps the best's: not significantly different; \
         a best is named only when significantly better):"
            .to_string(),
    ];
    for v in verdicts(manifest, stats) {
        lines.push(format!("  {}", verdict_text(&v, stats.len() - 1)));
    }
    lines
}
