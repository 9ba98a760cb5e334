//! Time windows of a run: `summary.json`'s `windows` (each fault window, during and after) and
//! `expect_windows` (the windows `expect` lines are scoped to), and the metrics a window has.
//!
//! Why the windows are known before the run: the recorder folds each request into the windows
//! its arrival falls in as it goes (one small set of counters and one latency histogram per
//! window and phase), so memory stays flat in requests; nothing is kept per request to be cut
//! into windows afterwards.
//!
//! A request belongs to a window by its arrival (`RequestEnd.start`), like `timeseries.csv`'s
//! `arrivals`; its outcome, latency, retries and fallbacks count there even when it ends after
//! the window closes. "After" a fault window runs from the window's end to the run's end (not
//! to the next window: windows may overlap, and "did it recover by the end" is the question).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::units::micros;

/// A span of virtual time since the run start: `[from, to)`, or `[from, run end]` when `to`
/// is `None`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeWindow {
    /// Start, inclusive.
    pub from: Duration,
    /// End, exclusive; `None`: the run end.
    pub to: Option<Duration>,
}

/// What the summary knows about one window (and one phase of a fault window). The keys are
/// the metric names a windowed `expect` line may use ([`WINDOW_METRICS`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WindowStats {
    /// Requests that arrived in the window and finished.
    pub requests: u64,
    /// Of those, succeeded.
    pub ok: u64,
    /// Of those, failed.
    pub failed: u64,
    /// `failed ÷ requests` (0 without requests).
    pub failed_rate: f64,
    /// Same-group retries of those requests.
    pub retries: u64,
    /// Fallback hops of those requests.
    pub fallbacks: u64,
    /// End-to-end latency percentiles of those requests, ms (as `latency_ms`: HdrHistogram,
    /// capped at the exact maximum; 0 without requests).
    pub p50_latency_ms: f64,
    /// 90th percentile, ms.
    pub p90_latency_ms: f64,
    /// 99th percentile, ms.
    pub p99_latency_ms: f64,
    /// Maximum, ms (exact).
    pub max_latency_ms: f64,
}

/// One fault window of the scenario: its requests during it and after it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FaultWindowSummary {
    /// The fault, as the plots label it (`east: rate_limit 429`).
    pub label: String,
    /// Start, ms since the run start.
    pub from_ms: f64,
    /// End (exclusive), ms; `null` when the fault lasts to the run end.
    pub to_ms: Option<f64>,
    /// Requests that arrived in `[from, to)`.
    pub during: WindowStats,
    /// Requests that arrived from `to` to the run end (all zero when `to` is `null`).
    pub after: WindowStats,
}

/// One window an `expect` line is scoped to (`window: 5m..15m`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ScopedWindowSummary {
    /// Start, ms since the run start.
    pub from_ms: f64,
    /// End (exclusive), ms; `null`: the run end.
    pub to_ms: Option<f64>,
    /// Requests that arrived in the window.
    pub stats: WindowStats,
}

/// Metrics an `expect` line scoped to a `window` may name.
pub const WINDOW_METRICS: &[&str] = &[
    "requests",
    "ok",
    "failed",
    "ok_rate",
    "failed_rate",
    "retries",
    "fallbacks",
    "p50_latency_ms",
    "p90_latency_ms",
    "p99_latency_ms",
    "max_latency_ms",
];

/// Whether `metric` can be scoped to a window.
pub fn is_window_metric(metric: &str) -> bool {
    WINDOW_METRICS.contains(&metric)
}

impl WindowStats {
    /// The value of a [`WINDOW_METRICS`] metric; `None` for another name.
    pub fn metric(&self, name: &str) -> Option<f64> {
        let v = match name {
            "requests" => self.requests as f64,
            "ok" => self.ok as f64,
            "failed" => self.failed as f64,
            "ok_rate" => {
                if self.requests == 0 {
                    0.0
                } else {
                    crate::units::round6(self.ok as f64 / self.requests as f64)
                }
            }
            "failed_rate" => self.failed_rate,
            "retries" => self.retries as f64,
            "fallbacks" => self.fallbacks as f64,
            "p50_latency_ms" => self.p50_latency_ms,
            "p90_latency_ms" => self.p90_latency_ms,
            "p99_latency_ms" => self.p99_latency_ms,
            "max_latency_ms" => self.max_latency_ms,
            _ => return None,
        };
        Some(v)
    }
}

/// A window's bounds in ms, as `summary.json` writes them (to compare a window to an entry).
pub fn window_ms(window: TimeWindow) -> (f64, Option<f64>) {
    (
        crate::units::ms_f64(micros(window.from)),
        window.to.map(|to| crate::units::ms_f64(micros(to))),
    )
}
