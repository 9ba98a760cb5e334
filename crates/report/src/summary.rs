//! `summary.json`: the run in numbers, and the names scenario `expect` lines check.
//!
//! The struct's field order is the JSON key order and every map is a `BTreeMap`, so the file is
//! byte-stable; floats are rounded to 6 decimals when the summary is built. Deriving
//! `Deserialize` too lets later tools (sweeps, diffs) read a summary back; fields added later
//! (`streams`, `stream_breaks`) default when absent, so older files still read.
//!
//! Streams: `streams.outcomes` and `stream_breaks` list every outcome and break kind the engine
//! knows, with 0 for the ones never seen, so the shape of the file does not depend on the run.

use std::collections::BTreeMap;
use std::io::{self, Write};

use routersim_engine::failure::FailureKind;
use serde::{Deserialize, Serialize};

use crate::streams::{BREAKS, is_break_name, is_outcome_name};

/// The run's summary, as written to `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Scenario name.
    pub scenario: String,
    /// The scenario seed.
    pub seed: u64,
    /// routersim's version.
    pub routersim_version: String,
    /// Requests finished (`RequestEnd` events).
    pub requests: u64,
    /// Requests that succeeded.
    pub ok: u64,
    /// Requests that failed.
    pub failed: u64,
    /// Failed requests by the failure kind the caller received.
    pub failed_by_kind: BTreeMap<String, u64>,
    /// Share of requests with at least one fallback hop.
    pub fallback_rate: f64,
    /// Share of requests with at least one retry.
    pub retry_rate: f64,
    /// `Retry` events.
    pub retries: u64,
    /// `Fallback` events (hops).
    pub fallbacks: u64,
    /// Provider attempts of finished requests.
    pub attempts: u64,
    /// Attempts per finished request.
    pub attempts_per_request: AttemptStats,
    /// End-to-end latency of finished requests.
    pub latency_ms: LatencyStats,
    /// Cooldowns.
    pub cooldowns: CooldownStats,
    /// `AllCooled` events (picks that failed because every candidate was cooling).
    pub all_cooled: u64,
    /// Half-open recovery periods (DeltaLLM's recovery), recoveries and failed probes.
    #[serde(default)]
    pub half_open: HalfOpenStats,
    /// Streamed requests.
    #[serde(default)]
    pub streams: StreamSummary,
    /// `StreamBreak` events by how the stream broke (every break kind, 0 when unseen).
    #[serde(default)]
    pub stream_breaks: BTreeMap<String, u64>,
    /// Virtual time of the last event, ms since the run start.
    pub duration_ms: f64,
    /// Virtual time the run ended (cooldowns are clipped to it), ms since the run start.
    pub run_end_ms: f64,
    /// Every event, counted by name.
    pub events: BTreeMap<String, u64>,
}

/// Half-open periods: from a `half_open` event to `recovered` or the next `cooldown_set`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HalfOpenStats {
    /// Half-open periods.
    pub total: u64,
    /// Time deployments spent half-open, summed, ms.
    pub half_open_ms_total: f64,
    /// `recovered` events (a trial or a probe succeeded).
    pub recovered: u64,
    /// `probe_failed` events.
    pub probe_failed: u64,
    /// Per deployment id.
    pub by_deployment: BTreeMap<String, DeploymentHalfOpenStats>,
}

/// One deployment's half-open periods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeploymentHalfOpenStats {
    /// Periods.
    pub count: u64,
    /// Time spent half-open, ms.
    pub total_half_open_ms: f64,
}

/// Attempts per request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AttemptStats {
    /// Mean.
    pub mean: f64,
    /// Most attempts any request made.
    pub max: u64,
}

/// Latency in milliseconds. Percentiles come from the HdrHistogram (3 significant digits,
/// reported as the bucket's highest equivalent value, capped at the exact maximum); `max` and
/// `mean` are exact.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencyStats {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p99_9: f64,
    /// Maximum.
    pub max: f64,
    /// Mean.
    pub mean: f64,
}

/// Cooldowns over the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CooldownStats {
    /// `CooldownSet` events (a re-cool that extends a cooldown counts again).
    pub total: u64,
    /// Time deployments spent cooling, summed over deployments, ms.
    pub cooled_ms_total: f64,
    /// Per deployment id.
    pub by_deployment: BTreeMap<String, DeploymentCooldownStats>,
}

/// One deployment's cooldowns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeploymentCooldownStats {
    /// `CooldownSet` events for it.
    pub count: u64,
    /// Time it spent cooling (overlapping cooldowns counted once, clipped to the run end), ms.
    pub total_cooled_ms: f64,
}

/// Streamed requests (those whose `RequestEnd` carries stream stats).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamSummary {
    /// Streamed requests finished.
    pub requests: u64,
    /// Streamed requests by how the caller's stream ended; every outcome name is present (0
    /// when unseen). A streamed request that failed before any stream opened has no outcome,
    /// so the counts may sum to less than `requests`.
    pub outcomes: BTreeMap<String, u64>,
    /// `continued ÷ (continued + broken_after_content)`: the share of streams that broke after
    /// content and were rescued by continuation; 0 when no stream broke after content.
    pub continuation_rate: f64,
    /// Output tokens the callers received.
    pub tokens_delivered: u64,
    /// Output tokens the callers are billed for.
    pub tokens_billed: u64,
    /// Time to first token of the streamed requests that received one.
    pub ttft_ms: TtftStats,
    /// Gaps between consecutive tokens the callers received.
    pub inter_token_ms: InterTokenStats,
}

/// Time to first token in milliseconds; percentiles as in [`LatencyStats`], `max` exact.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TtftStats {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Maximum.
    pub max: f64,
}

/// Inter-token gaps in milliseconds; percentiles as in [`LatencyStats`], `max` exact.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct InterTokenStats {
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Maximum.
    pub max: f64,
}

/// Metric names [`Summary::metric`] accepts; `<…>` marks a parameter.
pub const METRICS: &[&str] = &[
    "requests",
    "ok",
    "failed",
    "ok_rate",
    "failed_rate",
    "fallback_rate",
    "retry_rate",
    "retries",
    "fallbacks",
    "attempts",
    "attempts_per_request_mean",
    "attempts_max",
    "p50_latency_ms",
    "p90_latency_ms",
    "p99_latency_ms",
    "p999_latency_ms",
    "max_latency_ms",
    "mean_latency_ms",
    "cooldowns",
    "cooled_ms_total",
    "all_cooled",
    "half_open",
    "half_open_ms_total",
    "recovered",
    "probe_failed",
    "duration_ms",
    "streamed",
    "stream_completed",
    "stream_broken_before_content",
    "stream_broken_after_content",
    "stream_continued",
    "stream_stalled",
    "stream_empty",
    "continuation_rate",
    "p50_ttft_ms",
    "p99_ttft_ms",
    "tokens_delivered",
    "tokens_billed",
    "stream_breaks",
    "failed.<kind>",
    "cooldowns.<deployment_id>",
    "cooled_ms.<deployment_id>",
    "stream_breaks.<how>",
];

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
        Some(("failed", kind)) => FailureKind::from_name(kind).is_some(),
        Some(("cooldowns" | "cooled_ms", id)) => !id.is_empty(),
        Some(("stream_breaks", how)) => is_break_name(how),
        Some(_) => false,
        None => METRICS.contains(&name),
    }
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        crate::units::round6(part as f64 / whole as f64)
    }
}

impl Summary {
    /// The value of a metric for scenario `expect` lines, `None` for an unknown name.
    ///
    /// `failed.<kind>` is 0 for a known kind that never occurred; `cooldowns.<id>` and
    /// `cooled_ms.<id>` are 0 for a deployment that never cooled; `stream_breaks.<how>` is 0 for
    /// a known break kind never seen. `stream_<outcome>` counts streamed requests by outcome
    /// (so `stream_continued` counts requests, not `StreamContinued` events); `stream_breaks`
    /// counts `StreamBreak` events.
    pub fn metric(&self, name: &str) -> Option<f64> {
        if let Some((head, param)) = name.split_once('.') {
            return match head {
                "failed" => {
                    let kind = FailureKind::from_name(param)?;
                    Some(self.failed_by_kind.get(kind.as_str()).copied().unwrap_or(0) as f64)
                }
                "cooldowns" if !param.is_empty() => Some(
                    self.cooldowns
                        .by_deployment
                        .get(param)
                        .map_or(0.0, |d| d.count as f64),
                ),
                "cooled_ms" if !param.is_empty() => Some(
                    self.cooldowns
                        .by_deployment
                        .get(param)
                        .map_or(0.0, |d| d.total_cooled_ms),
                ),
                "stream_breaks" if is_break_name(param) => {
                    Some(self.stream_breaks.get(param).copied().unwrap_or(0) as f64)
                }
                _ => None,
            };
        }
        let value = match name {
            "requests" => self.requests as f64,
            "ok" => self.ok as f64,
            "failed" => self.failed as f64,
            "ok_rate" => share(self.ok, self.requests),
            "failed_rate" => share(self.failed, self.requests),
            "fallback_rate" => self.fallback_rate,
            "retry_rate" => self.retry_rate,
            "retries" => self.retries as f64,
            "fallbacks" => self.fallbacks as f64,
            "attempts" => self.attempts as f64,
            "attempts_per_request_mean" => self.attempts_per_request.mean,
            "attempts_max" => self.attempts_per_request.max as f64,
            "p50_latency_ms" => self.latency_ms.p50,
            "p90_latency_ms" => self.latency_ms.p90,
            "p99_latency_ms" => self.latency_ms.p99,
            "p999_latency_ms" => self.latency_ms.p99_9,
            "max_latency_ms" => self.latency_ms.max,
            "mean_latency_ms" => self.latency_ms.mean,
            "cooldowns" => self.cooldowns.total as f64,
            "cooled_ms_total" => self.cooldowns.cooled_ms_total,
            "all_cooled" => self.all_cooled as f64,
            "half_open" => self.half_open.total as f64,
            "half_open_ms_total" => self.half_open.half_open_ms_total,
            "recovered" => self.half_open.recovered as f64,
            "probe_failed" => self.half_open.probe_failed as f64,
            "duration_ms" => self.duration_ms,
            "streamed" => self.streams.requests as f64,
            "continuation_rate" => self.streams.continuation_rate,
            "p50_ttft_ms" => self.streams.ttft_ms.p50,
            "p99_ttft_ms" => self.streams.ttft_ms.p99,
            "tokens_delivered" => self.streams.tokens_delivered as f64,
            "tokens_billed" => self.streams.tokens_billed as f64,
            "stream_breaks" => self.stream_breaks.values().sum::<u64>() as f64,
            _ => {
                let outcome = name
                    .strip_prefix("stream_")
                    .filter(|o| is_outcome_name(o))?;
                self.streams.outcomes.get(outcome).copied().unwrap_or(0) as f64
            }
        };
        Some(value)
    }
}

/// A short human summary for the terminal.
pub fn print_summary(summary: &Summary, out: &mut impl Write) -> io::Result<()> {
    let s = summary;
    writeln!(
        out,
        "{} (seed {}): {} requests in {:.3} s virtual",
        s.scenario,
        s.seed,
        s.requests,
        s.duration_ms / 1000.0
    )?;
    write!(out, "  ok {}, failed {}", s.ok, s.failed)?;
    if !s.failed_by_kind.is_empty() {
        let kinds: Vec<String> = s
            .failed_by_kind
            .iter()
            .map(|(kind, n)| format!("{kind} {n}"))
            .collect();
        write!(out, " ({})", kinds.join(", "))?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "  fallback rate {:.2}% ({} hops), retry rate {:.2}% ({} retries), {:.2} attempts/request (max {})",
        s.fallback_rate * 100.0,
        s.fallbacks,
        s.retry_rate * 100.0,
        s.retries,
        s.attempts_per_request.mean,
        s.attempts_per_request.max
    )?;
    writeln!(
        out,
        "  latency p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        s.latency_ms.p50, s.latency_ms.p99, s.latency_ms.max
    )?;
    write!(
        out,
        "  cooldowns {} ({:.3} ms cooled), all-cooled picks {}",
        s.cooldowns.total, s.cooldowns.cooled_ms_total, s.all_cooled
    )?;
    if !s.cooldowns.by_deployment.is_empty() {
        let parts: Vec<String> = s
            .cooldowns
            .by_deployment
            .iter()
            .map(|(id, d)| format!("{id} {}×/{:.3} ms", d.count, d.total_cooled_ms))
            .collect();
        write!(out, ": {}", parts.join(", "))?;
    }
    writeln!(out)?;
    print_streams(&s.streams, out)
}

/// The stream line, only when the run streamed anything; outcomes never seen are left out.
fn print_streams(st: &StreamSummary, out: &mut impl Write) -> io::Result<()> {
    if st.requests == 0 {
        return Ok(());
    }
    write!(out, "  streams {}", st.requests)?;
    let seen: Vec<String> = st
        .outcomes
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(name, n)| format!("{name} {n}"))
        .collect();
    if !seen.is_empty() {
        write!(out, " ({})", seen.join(", "))?;
    }
    writeln!(
        out,
        ", continuation rate {:.2}%, ttft p50 {:.3} ms, p99 {:.3} ms",
        st.continuation_rate * 100.0,
        st.ttft_ms.p50,
        st.ttft_ms.p99
    )
}
