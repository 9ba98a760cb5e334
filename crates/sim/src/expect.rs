//! `expect` lines: bounds on a run's summary metrics, checked after the run.
//!
//! The line's type lives here with its checks (not in `scenario`), so the scenario loader
//! and the runner both depend on this file and it depends on neither.

use std::fmt;
use std::path::Path;

use routersim_config::keys::closest_key;
use routersim_engine::config::RouterConfig;
use routersim_mock_providers::duration::{format_duration, parse_duration};
use routersim_report::summary::{METRICS, Summary, describe_metrics, is_known_metric};
use routersim_report::windows::{TimeWindow, WINDOW_METRICS, is_window_metric};

use crate::scenario::ScenarioError;
use crate::yaml::LocationIndex;

/// A bound a run's metric must meet.
#[derive(Clone, Debug, PartialEq)]
pub struct Expectation {
    /// The metric's name (checked by the runner).
    pub metric: String,
    /// Lower bound, inclusive.
    pub min: Option<f64>,
    /// Upper bound, inclusive.
    pub max: Option<f64>,
    /// `window: 5m..15m`: the bound is on the requests that arrived in this span of the run
    /// only; `None`: the whole run.
    pub window: Option<TimeWindow>,
}

/// One `expect` line, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct ExpectationResult {
    /// The line as written.
    pub expectation: Expectation,
    /// The measured value (`None` when the metric has no value in this run).
    pub measured: Option<f64>,
    /// Whether the bound holds.
    pub passed: bool,
}

impl fmt::Display for ExpectationResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = &self.expectation;
        let verdict = if self.passed { "ok  " } else { "FAIL" };
        write!(f, "{verdict} {}", e.metric)?;
        if let Some(w) = e.window {
            write!(f, " in {}", format_window(w))?;
        }
        if let Some(min) = e.min {
            write!(f, " >= {min}")?;
        }
        if let Some(max) = e.max {
            write!(f, " <= {max}")?;
        }
        match self.measured {
            Some(v) => write!(f, " (measured {})", format_value(v)),
            None => write!(f, " (no value)"),
        }
    }
}

/// A measured value, without float noise.
pub fn format_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.6}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Checks that every `expect` metric is one the summary knows, naming the line of the first
/// that is not.
pub fn validate(expect: &[Expectation], file: &Path) -> Result<(), ScenarioError> {
    for (i, e) in expect.iter().enumerate() {
        if !is_known_metric(&e.metric) {
            let path = format!("expect[{i}].metric");
            let (line, column) = routersim_config::input::read_text_file(file)
                .ok()
                .and_then(|text| LocationIndex::new(&text).locate(&path))
                .map_or((None, None), |(l, c)| (Some(l), Some(c)));
            return Err(ScenarioError {
                file: file.to_path_buf(),
                line,
                column,
                path,
                message: format!(
                    "unknown metric {:?}; {}expected one of {}",
                    e.metric,
                    suggest_metric(&e.metric)
                        .map(|m| format!("did you mean {m}? "))
                        .unwrap_or_default(),
                    describe_metrics()
                ),
            });
        }
    }
    Ok(())
}

/// The known metric closest to an unknown one (`p99_latency` → `p99_latency_ms`,
/// `cooldown.east` → `cooldowns.east`), when one is near enough to be what was meant.
pub fn suggest_metric(metric: &str) -> Option<String> {
    if let Some((head, param)) = metric.split_once('.') {
        // A metric with a parameter: the head is what was misspelt.
        let heads = METRICS
            .iter()
            .filter_map(|m| m.split_once(".<").map(|(h, _)| h));
        let candidate = format!("{}.{param}", closest_key(head, heads)?);
        return is_known_metric(&candidate).then_some(candidate);
    }
    let plain = METRICS.iter().filter(|m| !m.contains('<')).copied();
    closest_key(metric, plain).map(str::to_string)
}

/// Why a per-deployment metric (`cooldowns.<id>`, `cooled_ms.<id>`, `ejections.<id>`) names no
/// deployment of `router`, listing the ids it could name; `None` when it does, or is not per
/// deployment.
/// (Such a metric reads 0 for any id, so a typo would pass silently.)
pub fn unknown_deployment(metric: &str, router: &RouterConfig) -> Option<String> {
    let (head, id) = metric.split_once('.')?;
    if !matches!(
        head,
        "cooldowns"
            | "cooldown_sets"
            | "cooldown_periods"
            | "cooled_ms"
            | "ejections"
            | "p50_latency_ms"
            | "p99_latency_ms"
    ) || id.is_empty()
    {
        return None;
    }
    if router.deployments.iter().any(|d| *d.id == *id) {
        return None;
    }
    let ids: Vec<&str> = router.deployments.iter().map(|d| &*d.id).collect();
    let what = if router.deployments.iter().any(|d| *d.model_name == *id) {
        format!("{id:?} is a model group, not a deployment")
    } else {
        format!("no deployment {id:?}")
    };
    Some(format!(
        "{what}; {head}.<id> takes a deployment id: {}",
        ids.join(", ")
    ))
}

/// `5m..15m`, or `5m..` for a window to the run end.
pub fn format_window(w: TimeWindow) -> String {
    format!(
        "{}..{}",
        format_duration(w.from),
        w.to.map(format_duration).unwrap_or_default()
    )
}

/// Parses an `expect` line's `window`: `<from>..<to>` (`5m..15m`), or `<from>..` to the run
/// end, each a duration as everywhere in a scenario; `to` must be after `from`.
pub fn parse_window(text: &str) -> Result<TimeWindow, String> {
    let bad = |why: String| {
        format!("{why}; expected a window such as 5m..15m (from..to) or 5m.. (to the run end)")
    };
    let Some((from, to)) = text.split_once("..") else {
        return Err(bad(format!("no `..` in {text:?}")));
    };
    let from = parse_duration(from).map_err(|e| bad(e.to_string()))?;
    let to = match to.trim() {
        "" => None,
        to => Some(parse_duration(to).map_err(|e| bad(e.to_string()))?),
    };
    if let Some(to) = to
        && to <= from
    {
        return Err(bad(format!("the window {text:?} ends before it starts")));
    }
    Ok(TimeWindow { from, to })
}

/// Why `metric` cannot be scoped to a window, naming those that can; `None` when it can.
pub fn unwindowable(metric: &str) -> Option<String> {
    (!is_window_metric(metric)).then(|| {
        format!(
            "metric {metric:?} cannot be scoped to a window; a `window` takes one of {}",
            WINDOW_METRICS.join(", ")
        )
    })
}

/// The windows the `expect` lines are scoped to, for the recorder to aggregate as it goes.
pub fn scoped_windows(expect: &[Expectation]) -> Vec<TimeWindow> {
    expect.iter().filter_map(|e| e.window).collect()
}

/// Checks every `expect` line against a summary.
pub fn evaluate(expect: &[Expectation], summary: &Summary) -> Vec<ExpectationResult> {
    expect
        .iter()
        .map(|e| {
            let measured = match e.window {
                Some(w) => summary.window_metric(w, &e.metric),
                None => summary.metric(&e.metric),
            };
            let passed = measured.is_some_and(|v| {
                e.min.is_none_or(|min| v >= min) && e.max.is_none_or(|max| v <= max)
            });
            ExpectationResult {
                expectation: e.clone(),
                measured,
                passed,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_metric_gets_the_closest_known_one() {
        assert_eq!(
            suggest_metric("p99_latency").as_deref(),
            Some("p99_latency_ms")
        );
        assert_eq!(suggest_metric("retry_rte").as_deref(), Some("retry_rate"));
        assert_eq!(
            suggest_metric("cooldown.east").as_deref(),
            Some("cooldowns.east")
        );
        assert_eq!(suggest_metric("something_else_entirely"), None);
    }
}
