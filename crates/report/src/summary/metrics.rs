//! The summary's metrics by name: what `expect` lines, `diff`, `sweep` and `check` read.
//!
//! Why one table: the name beside how a summary answers it, so the names users write and the
//! values they get are one list (a new metric is one line in [`PLAIN_METRICS`]).

use std::collections::BTreeMap;

use routersim_engine::event::{FilterReason, ValidationReason};
use routersim_engine::failure::FailureKind;
use routersim_engine::stream::StreamOutcome;

use super::document::Summary;
use super::routing::RouteLatencyStats;
use super::sections::{AlternativesSummary, ContractSummary};
use crate::streams::{BREAKS, is_break_name};
use crate::windows::TimeWindow;

/// The alternatives' count `f` (0 when none acted).
fn alt(s: &Summary, f: fn(&AlternativesSummary) -> f64) -> f64 {
    s.alternatives.as_ref().map_or(0.0, f)
}

/// A metric of the summary: its name beside how a summary answers it, so the names `expect`
/// lines, sweeps and diffs use and the values they read are one list (a new metric is one
/// line in [`PLAIN_METRICS`]).
struct Metric {
    name: &'static str,
    value: fn(&Summary) -> f64,
}

const fn metric(name: &'static str, value: fn(&Summary) -> f64) -> Metric {
    Metric { name, value }
}

/// A metric with a parameter after a dot (`failed.<kind>`): which parameters it knows, and
/// the value for one.
struct ParamMetric {
    /// `head.<param>`, as listed in [`METRICS`].
    name: &'static str,
    known: fn(&str) -> bool,
    value: fn(&Summary, &str) -> f64,
}

impl ParamMetric {
    fn head(&self) -> &'static str {
        self.name
            .split_once('.')
            .map_or(self.name, |(head, _)| head)
    }
}

/// `part ÷ whole`, rounded (0 when `whole` is 0).
fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        crate::units::round6(part as f64 / whole as f64)
    }
}

/// How many streamed requests ended with `outcome`.
fn stream_outcome(s: &Summary, outcome: StreamOutcome) -> f64 {
    s.streams
        .outcomes
        .get(outcome.as_str())
        .copied()
        .unwrap_or(0) as f64
}

/// The metrics without a parameter, in the order [`METRICS`] lists them.
const PLAIN_METRICS: &[Metric] = &[
    metric("requests", |s| s.requests as f64),
    metric("ok", |s| s.ok as f64),
    metric("failed", |s| s.failed as f64),
    metric("ok_rate", |s| share(s.ok, s.requests)),
    metric("failed_rate", |s| share(s.failed, s.requests)),
    metric("fallback_rate", |s| s.fallback_rate),
    metric("retry_rate", |s| s.retry_rate),
    metric("retries", |s| s.retries as f64),
    metric("fallbacks", |s| s.fallbacks as f64),
    metric("attempted_fallbacks", |s| {
        s.attempted_fallbacks.unwrap_or(s.fallbacks) as f64
    }),
    metric("attempts", |s| s.attempts as f64),
    metric("attempts_per_request_mean", |s| s.attempts_per_request.mean),
    metric("attempts_max", |s| s.attempts_per_request.max as f64),
    metric("p50_latency_ms", |s| s.latency_ms.p50),
    metric("p90_latency_ms", |s| s.latency_ms.p90),
    metric("p99_latency_ms", |s| s.latency_ms.p99),
    metric("p999_latency_ms", |s| s.latency_ms.p99_9),
    metric("max_latency_ms", |s| s.latency_ms.max),
    metric("mean_latency_ms", |s| s.latency_ms.mean),
    metric("cooldowns", |s| s.cooldowns.total as f64),
    metric("cooldown_sets", |s| s.cooldowns.sets as f64),
    metric("cooldown_periods", |s| s.cooldowns.periods as f64),
    metric("cooled_ms_total", |s| s.cooldowns.cooled_ms_total),
    metric("all_cooled", |s| s.all_cooled as f64),
    metric("half_open", |s| s.half_open.total as f64),
    metric("half_open_ms_total", |s| s.half_open.half_open_ms_total),
    metric("recovered", |s| s.half_open.recovered as f64),
    metric("probe_failed", |s| s.half_open.probe_failed as f64),
    metric("duration_ms", |s| s.duration_ms),
    metric("streamed", |s| s.streams.requests as f64),
    // `stream_<outcome>` counts streamed requests by outcome (so `stream_continued` counts
    // requests, not `StreamContinued` events); one line per outcome the engine knows.
    metric("stream_completed", |s| {
        stream_outcome(s, StreamOutcome::Completed)
    }),
    metric("stream_broken_before_content", |s| {
        stream_outcome(s, StreamOutcome::BrokenBeforeContent)
    }),
    metric("stream_broken_after_content", |s| {
        stream_outcome(s, StreamOutcome::BrokenAfterContent)
    }),
    metric("stream_continued", |s| {
        stream_outcome(s, StreamOutcome::Continued)
    }),
    metric("stream_stalled", |s| {
        stream_outcome(s, StreamOutcome::Stalled)
    }),
    metric("stream_empty", |s| stream_outcome(s, StreamOutcome::Empty)),
    metric("continuation_rate", |s| s.streams.continuation_rate),
    metric("p50_ttft_ms", |s| s.streams.ttft_ms.p50),
    metric("p99_ttft_ms", |s| s.streams.ttft_ms.p99),
    metric("tokens_delivered", |s| s.streams.tokens_delivered as f64),
    metric("tokens_billed", |s| s.streams.tokens_billed as f64),
    metric("stream_breaks", |s| {
        s.stream_breaks.values().sum::<u64>() as f64
    }),
    metric("http_success_rate", |s| {
        s.contract.as_ref().map_or(0.0, |c| c.http_success_rate)
    }),
    metric("accepted_rate", |s| {
        s.contract.as_ref().map_or(0.0, |c| c.accepted_rate)
    }),
    metric("validation_rejection_rate", |s| {
        s.contract
            .as_ref()
            .map_or(0.0, |c| c.validation_rejection_rate)
    }),
    metric("validation_rejections", |s| {
        contract_count(s, |c| &c.validation_rejections)
    }),
    metric("routes_filtered", |s| {
        contract_count(s, |c| &c.routes_filtered)
    }),
    metric("retries_denied_by_budget", |s| {
        alt(s, |a| a.retries_denied_by_budget as f64)
    }),
    metric("retries_denied_by_throttling", |s| {
        alt(s, |a| a.retries_denied_by_throttling as f64)
    }),
    metric("ejections", |s| alt(s, |a| a.ejections as f64)),
    metric("hedged_requests", |s| alt(s, |a| a.hedged_requests as f64)),
    metric("hedge_wins", |s| alt(s, |a| a.hedge_wins as f64)),
    metric("hedge_extra_input_tokens", |s| {
        alt(s, |a| a.hedge_extra_input_tokens as f64)
    }),
    metric("hedge_extra_cost_usd", |s| {
        alt(s, |a| a.hedge_extra_cost_usd)
    }),
    // 0 where the metrics are left out: those profiles have no end-to-end deadline.
    metric("deadline_exhausted", |s| {
        s.routing
            .as_ref()
            .map_or(0.0, |r| r.deadline_exhausted as f64)
    }),
    metric("deadline_exhaustion_rate", |s| {
        s.routing
            .as_ref()
            .map_or(0.0, |r| r.deadline_exhaustion_rate)
    }),
    // 0 where left out: no attempt was ambiguous.
    metric("ambiguous_outcomes", |s| {
        s.routing
            .as_ref()
            .map_or(0.0, |r| r.ambiguous_outcomes as f64)
    }),
    metric("ambiguous_replays", |s| {
        s.routing
            .as_ref()
            .map_or(0.0, |r| r.ambiguous_replays as f64)
    }),
    // Without client retries every request is a user request.
    metric("client_retries", |s| {
        s.routing.as_ref().map_or(0.0, |r| r.client_retries as f64)
    }),
    metric("user_requests", |s| {
        s.routing
            .as_ref()
            .map_or(s.requests as f64, |r| r.user_requests as f64)
    }),
    metric("provider_calls_per_user_request_mean", |s| {
        s.routing.as_ref().map_or(s.attempts_per_request.mean, |r| {
            r.provider_calls_per_user_request.mean
        })
    }),
    metric("provider_calls_per_user_request_max", |s| {
        s.routing
            .as_ref()
            .map_or(s.attempts_per_request.max as f64, |r| {
                r.provider_calls_per_user_request.max as f64
            })
    }),
    metric("duplicate_executions", |s| {
        s.routing
            .as_ref()
            .map_or(0.0, |r| r.duplicate_executions as f64)
    }),
];

/// The metrics without a parameter that have no value in some runs (the reliability metrics
/// where `summary.json` leaves them out), listed after [`PLAIN_METRICS`].
const OPTIONAL_METRICS: &[OptionalMetric] = &[
    OptionalMetric {
        name: "attempts_per_completed_request",
        value: |s| s.routing.as_ref().map(|r| r.attempts_per_completed_request),
    },
    OptionalMetric {
        name: "cost_per_accepted_response",
        value: |s| {
            s.routing
                .as_ref()
                .and_then(|r| r.cost_per_accepted_response)
        },
    },
];

/// A metric without a parameter that may have no value.
struct OptionalMetric {
    name: &'static str,
    value: fn(&Summary) -> Option<f64>,
}

/// A stat of the requests that ended on deployment `id` (0 when none did).
fn route_stat(s: &Summary, id: &str, stat: fn(&RouteLatencyStats) -> f64) -> f64 {
    s.routing
        .as_ref()
        .and_then(|r| r.latency_by_final_route.get(id))
        .map_or(0.0, stat)
}

/// A contract-summary count: `field`'s total, or one reason's count.
fn contract_count(s: &Summary, field: fn(&ContractSummary) -> &BTreeMap<String, u64>) -> f64 {
    s.contract
        .as_ref()
        .map_or(0, |c| field(c).values().sum::<u64>()) as f64
}

fn contract_reason(
    s: &Summary,
    field: fn(&ContractSummary) -> &BTreeMap<String, u64>,
    reason: &str,
) -> f64 {
    s.contract
        .as_ref()
        .and_then(|c| field(c).get(reason).copied())
        .unwrap_or(0) as f64
}

/// The metrics with a parameter, in the order [`METRICS`] lists them after the plain ones.
const PARAM_METRICS: &[ParamMetric] = &[
    ParamMetric {
        name: "failed.<kind>",
        known: |kind| FailureKind::from_name(kind).is_some(),
        value: |s, kind| {
            FailureKind::from_name(kind)
                .and_then(|k| s.failed_by_kind.get(k.as_str()))
                .copied()
                .unwrap_or(0) as f64
        },
    },
    ParamMetric {
        name: "cooldowns.<deployment_id>",
        known: |id| !id.is_empty(),
        value: |s, id| {
            s.cooldowns
                .by_deployment
                .get(id)
                .map_or(0.0, |d| d.count as f64)
        },
    },
    ParamMetric {
        name: "cooldown_sets.<deployment_id>",
        known: |id| !id.is_empty(),
        value: |s, id| {
            s.cooldowns
                .by_deployment
                .get(id)
                .map_or(0.0, |d| d.sets as f64)
        },
    },
    ParamMetric {
        name: "cooldown_periods.<deployment_id>",
        known: |id| !id.is_empty(),
        value: |s, id| {
            s.cooldowns
                .by_deployment
                .get(id)
                .map_or(0.0, |d| d.periods as f64)
        },
    },
    ParamMetric {
        name: "cooled_ms.<deployment_id>",
        known: |id| !id.is_empty(),
        value: |s, id| {
            s.cooldowns
                .by_deployment
                .get(id)
                .map_or(0.0, |d| d.total_cooled_ms)
        },
    },
    ParamMetric {
        name: "ejections.<deployment_id>",
        known: |id| !id.is_empty(),
        value: |s, id| {
            s.alternatives
                .as_ref()
                .and_then(|a| a.ejections_by_deployment.get(id))
                .copied()
                .unwrap_or(0) as f64
        },
    },
    ParamMetric {
        name: "p50_latency_ms.<final_deployment_id>",
        known: |id| !id.is_empty(),
        value: |s, id| route_stat(s, id, |r| r.p50),
    },
    ParamMetric {
        name: "p99_latency_ms.<final_deployment_id>",
        known: |id| !id.is_empty(),
        value: |s, id| route_stat(s, id, |r| r.p99),
    },
    ParamMetric {
        name: "stream_breaks.<how>",
        known: is_break_name,
        value: |s, how| s.stream_breaks.get(how).copied().unwrap_or(0) as f64,
    },
    ParamMetric {
        name: "validation_rejections.<reason>",
        known: |r| ValidationReason::ALL.iter().any(|v| v.as_str() == r),
        value: |s, r| contract_reason(s, |c| &c.validation_rejections, r),
    },
    ParamMetric {
        name: "routes_filtered.<reason>",
        known: |r| FilterReason::ALL.iter().any(|f| f.as_str() == r),
        value: |s, r| contract_reason(s, |c| &c.routes_filtered, r),
    },
];

const METRIC_COUNT: usize = PLAIN_METRICS.len() + OPTIONAL_METRICS.len() + PARAM_METRICS.len();

const fn metric_names() -> [&'static str; METRIC_COUNT] {
    let mut names = [""; METRIC_COUNT];
    let mut i = 0;
    while i < PLAIN_METRICS.len() {
        names[i] = PLAIN_METRICS[i].name;
        i += 1;
    }
    let mut k = 0;
    while k < OPTIONAL_METRICS.len() {
        names[i] = OPTIONAL_METRICS[k].name;
        i += 1;
        k += 1;
    }
    let mut j = 0;
    while j < PARAM_METRICS.len() {
        names[i + j] = PARAM_METRICS[j].name;
        j += 1;
    }
    names
}

const METRIC_NAMES: [&str; METRIC_COUNT] = metric_names();

/// Metric names [`Summary::metric`] accepts; `<…>` marks a parameter. Built from the tables
/// above, so a name here always has a value — but those of `OPTIONAL_METRICS` where the
/// summary leaves the reliability metrics out (see [`Summary::routing`]).
pub const METRICS: &[&str] = &METRIC_NAMES;

/// The metric with a parameter whose head is `head`, and whether it knows `param`.
fn param_metric(head: &str, param: &str) -> Option<&'static ParamMetric> {
    PARAM_METRICS
        .iter()
        .find(|m| m.head() == head && (m.known)(param))
}

/// The accepted metric names and failure kinds, for error messages.
pub fn describe_metrics() -> String {
    let kinds: Vec<&str> = FailureKind::ALL.iter().map(|k| k.as_str()).collect();
    let hows: Vec<&str> = BREAKS.iter().map(|b| b.as_str()).collect();
    format!(
        "known metrics: {}; <kind> is one of: {}; <how> is one of: {}",
        METRICS.join(", "),
        kinds.join(", "),
        hows.join(", ")
    )
}

/// Whether `name` is a metric [`Summary::metric`] can answer (checkable before a run).
/// A deployment id is not checked here: the scenario knows its deployments.
pub fn is_known_metric(name: &str) -> bool {
    match name.split_once('.') {
        Some((head, param)) => param_metric(head, param).is_some(),
        None => {
            PLAIN_METRICS.iter().any(|m| m.name == name)
                || OPTIONAL_METRICS.iter().any(|m| m.name == name)
        }
    }
}

impl Summary {
    /// The value of a metric over the requests that arrived in `window` (an `expect` line's
    /// `window:`); `None` when the metric cannot be windowed (see
    /// [`crate::windows::WINDOW_METRICS`]) or the run did not aggregate that window.
    pub fn window_metric(&self, window: TimeWindow, name: &str) -> Option<f64> {
        let (from_ms, to_ms) = crate::windows::window_ms(window);
        self.expect_windows
            .iter()
            .find(|w| w.from_ms == from_ms && w.to_ms == to_ms)
            .and_then(|w| w.stats.metric(name))
    }

    /// The value of a metric for scenario `expect` lines, `None` for an unknown name.
    ///
    /// `failed.<kind>` is 0 for a known kind that never occurred; `cooldowns.<id>` and
    /// `cooled_ms.<id>` are 0 for a deployment that never cooled; `stream_breaks.<how>` is 0 for
    /// a known break kind never seen. `stream_<outcome>` counts streamed requests by outcome
    /// (so `stream_continued` counts requests, not `StreamContinued` events); `stream_breaks`
    /// counts `StreamBreak` events.
    pub fn metric(&self, name: &str) -> Option<f64> {
        match name.split_once('.') {
            Some((head, param)) => param_metric(head, param).map(|m| (m.value)(self, param)),
            None => match PLAIN_METRICS.iter().find(|m| m.name == name) {
                Some(m) => Some((m.value)(self)),
                None => OPTIONAL_METRICS
                    .iter()
                    .find(|m| m.name == name)
                    .and_then(|m| (m.value)(self)),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::streams::OUTCOMES;

    #[test]
    fn every_stream_outcome_has_its_metric() {
        for outcome in OUTCOMES {
            let name = format!("stream_{}", outcome.as_str());
            assert!(METRICS.contains(&name.as_str()), "{name}");
        }
    }

    #[test]
    fn metric_names_are_unique_and_each_has_one_reading() {
        for (i, name) in METRICS.iter().enumerate() {
            assert!(!METRICS[..i].contains(name), "{name} listed twice");
        }
        for m in PARAM_METRICS {
            assert_eq!(
                PARAM_METRICS
                    .iter()
                    .filter(|n| n.head() == m.head())
                    .count(),
                1,
                "{}",
                m.name
            );
        }
        assert!(!PLAIN_METRICS.iter().any(|p| p.name.contains('.')));
        assert!(!OPTIONAL_METRICS.iter().any(|p| p.name.contains('.')));
    }
}
