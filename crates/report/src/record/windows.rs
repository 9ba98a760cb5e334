//! Folding finished requests into the run's time windows (see [`crate::windows`]): one
//! accumulator (counters and a latency histogram) per fault window and phase and per scoped
//! window, fixed before the run, so memory does not grow with the requests.

use std::collections::BTreeSet;
use std::sync::Arc;

use hdrhistogram::Histogram;

use super::histogram::{new_histogram, percentile_ms, record_us};
use crate::error::ReportError;
use crate::units::{micros, ms_f64, round6};
use crate::windows::{FaultWindowSummary, ScopedWindowSummary, TimeWindow, WindowStats};

/// What the summary is told before the run: every deployment (so per-deployment maps list
/// them all) and the windows to aggregate.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SummaryContext {
    /// Every deployment id of the router config.
    pub deployments: Vec<String>,
    /// The scenario's fault windows, with their labels, in scenario order.
    pub fault_windows: Vec<(String, TimeWindow)>,
    /// The windows `expect` lines are scoped to (duplicates are aggregated once).
    pub scoped_windows: Vec<TimeWindow>,
}

/// One window's running totals.
#[derive(Debug)]
struct Acc {
    /// `[from, to)` in µs since the run start.
    from: u64,
    to: u64,
    requests: u64,
    ok: u64,
    retries: u64,
    fallbacks: u64,
    max_us: u64,
    latency: Histogram<u64>,
}

impl Acc {
    fn new(from: u64, to: u64) -> Result<Self, ReportError> {
        Ok(Self {
            from,
            to,
            requests: 0,
            ok: 0,
            retries: 0,
            fallbacks: 0,
            max_us: 0,
            latency: new_histogram()?,
        })
    }

    fn add(&mut self, done: &FinishedRequest) {
        if done.arrival < self.from || done.arrival >= self.to {
            return;
        }
        self.requests += 1;
        self.ok += u64::from(done.ok);
        self.retries += u64::from(done.retries);
        self.fallbacks += u64::from(done.fallbacks);
        self.max_us = self.max_us.max(done.latency_us);
        record_us(&mut self.latency, done.latency_us, 1);
    }

    fn stats(&self) -> WindowStats {
        let failed = self.requests - self.ok;
        let pct = |q| percentile_ms(&self.latency, q, self.max_us);
        WindowStats {
            requests: self.requests,
            ok: self.ok,
            failed,
            failed_rate: if self.requests == 0 {
                0.0
            } else {
                round6(failed as f64 / self.requests as f64)
            },
            retries: self.retries,
            fallbacks: self.fallbacks,
            p50_latency_ms: pct(0.5),
            p90_latency_ms: pct(0.9),
            p99_latency_ms: pct(0.99),
            max_latency_ms: ms_f64(self.max_us),
        }
    }
}

/// What the windows need of one finished request.
pub(super) struct FinishedRequest {
    pub(super) arrival: u64,
    pub(super) latency_us: u64,
    pub(super) ok: bool,
    pub(super) retries: u32,
    pub(super) fallbacks: u32,
}

/// A fault window's two phases.
#[derive(Debug)]
struct FaultAcc {
    label: String,
    window: TimeWindow,
    during: Acc,
    after: Acc,
}

/// Every window of the run, and the deployments the summary lists.
#[derive(Debug, Default)]
pub(super) struct Windows {
    pub(super) deployments: BTreeSet<Arc<str>>,
    faults: Vec<FaultAcc>,
    scoped: Vec<(TimeWindow, Acc)>,
}

/// A window's bounds in µs; an open end is `u64::MAX` (requests arrive before the run end).
fn bounds(w: TimeWindow) -> (u64, u64) {
    (micros(w.from), w.to.map_or(u64::MAX, micros))
}

impl Windows {
    pub(super) fn new(context: SummaryContext) -> Result<Self, ReportError> {
        let mut faults = Vec::with_capacity(context.fault_windows.len());
        for (label, window) in context.fault_windows {
            let (from, to) = bounds(window);
            faults.push(FaultAcc {
                label,
                window,
                during: Acc::new(from, to)?,
                after: Acc::new(to, u64::MAX)?,
            });
        }
        let mut scoped: Vec<(TimeWindow, Acc)> = Vec::new();
        for window in context.scoped_windows {
            if scoped.iter().any(|(w, _)| *w == window) {
                continue;
            }
            let (from, to) = bounds(window);
            scoped.push((window, Acc::new(from, to)?));
        }
        Ok(Self {
            deployments: context
                .deployments
                .into_iter()
                .map(|d| Arc::from(d.as_str()))
                .collect(),
            faults,
            scoped,
        })
    }

    pub(super) fn request_end(&mut self, done: &FinishedRequest) {
        for f in &mut self.faults {
            f.during.add(done);
            f.after.add(done);
        }
        for (_, acc) in &mut self.scoped {
            acc.add(done);
        }
    }

    pub(super) fn fault_summaries(&self) -> Vec<FaultWindowSummary> {
        self.faults
            .iter()
            .map(|f| {
                let (from_ms, to_ms) = crate::windows::window_ms(f.window);
                FaultWindowSummary {
                    label: f.label.clone(),
                    from_ms,
                    to_ms,
                    during: f.during.stats(),
                    after: f.after.stats(),
                }
            })
            .collect()
    }

    pub(super) fn scoped_summaries(&self) -> Vec<ScopedWindowSummary> {
        self.scoped
            .iter()
            .map(|(w, acc)| {
                let (from_ms, to_ms) = crate::windows::window_ms(*w);
                ScopedWindowSummary {
                    from_ms,
                    to_ms,
                    stats: acc.stats(),
                }
            })
            .collect()
    }
}
