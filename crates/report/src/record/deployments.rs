//! `deployments.csv`: per virtual second and deployment, its attempts by outcome, whether it
//! was cooling or half-open, and its attempt latency — streamed as virtual time advances.
//!
//! Why streamed: events arrive in virtual-time order, so a second is final as soon as an event
//! of a later second arrives. Only the current second's counters are kept, one small record
//! (and its second's latency samples, see `quantiles.rs`) per deployment seen, so memory is flat
//! in requests and in time.
//!
//! Columns: `second,deployment_id,attempts,ok,errors,rate_limited,cooling,half_open,p50_ms,p99_ms`.
//! - `attempts`: attempts on the deployment that *ended* in the second; `ok + errors +
//!   rate_limited = attempts` (`rate_limited`: `rate_limit` and `router_rate_limit` failures;
//!   `errors`: every other failure).
//! - `cooling`, `half_open`: `1` if any part of a cooldown (half-open period) of the deployment
//!   lies in the second, else `0` (the intervals of `timeseries.csv`'s level columns).
//! - `p50_ms`, `p99_ms`: the attempts' own latency (attempt start to end), empty without
//!   attempts.
//!
//! Sparse: a row only for a (second, deployment) with an attempt, or cooling or half-open in
//! it. Rows are ordered by second, then `deployment_id`. A deployment half-open through a quiet
//! stretch (no traffic to try it) has a row for every second of it.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use hdrhistogram::Histogram;
use routersim_engine::failure::FailureKind;

use super::csv::{CsvOut, write_row};
use super::histogram::new_histogram;
use super::quantiles::SecondSamples;
use crate::error::ReportError;
use crate::plot::{FailingSeconds, ServedSeries};
use crate::units::{MICROS_PER_SECOND, Ms, second_of};

/// The columns of `deployments.csv`.
pub(super) const DEPLOYMENTS_COLUMNS: [&str; 10] = [
    "second",
    "deployment_id",
    "attempts",
    "ok",
    "errors",
    "rate_limited",
    "cooling",
    "half_open",
    "p50_ms",
    "p99_ms",
];

/// One deployment's current second, and its cooling and half-open state.
struct Deployment {
    attempts: u64,
    ok: u64,
    errors: u64,
    rate_limited: u64,
    /// The second's attempt latencies.
    samples: SecondSamples,
    /// The open cooldown: start and effective deadline, µs.
    cooldown: Option<(u64, u64)>,
    /// A cooldown lay in the current second (set, or ended, in it).
    cooled_now: bool,
    half_open: bool,
    /// A half-open period lay in the current second.
    half_open_now: bool,
}

impl Deployment {
    fn new() -> Self {
        Self {
            attempts: 0,
            ok: 0,
            errors: 0,
            rate_limited: 0,
            samples: SecondSamples::default(),
            cooldown: None,
            cooled_now: false,
            half_open: false,
            half_open_now: false,
        }
    }

    /// Whether the open cooldown reaches into `[from, to)` µs.
    fn cooling_in(&self, from: u64, to: u64) -> bool {
        self.cooldown
            .is_some_and(|(start, deadline)| start < to && deadline > from)
    }
}

/// The writer of `deployments.csv` and the state of the second being filled.
pub(super) struct DeploymentSeconds {
    out: Option<CsvOut>,
    /// The second being filled.
    second: u64,
    deployments: BTreeMap<Arc<str>, Deployment>,
    /// Attempts and ok attempts per deployment over time, for the served plot.
    pub(super) served: ServedSeries,
    /// The seconds each deployment failed most of its attempts, for the lanes.
    pub(super) failing: FailingSeconds,
    /// An empty histogram: which latencies are equivalent (see [`SecondSamples`]).
    shape: Histogram<u64>,
}

impl fmt::Debug for DeploymentSeconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeploymentSeconds")
            .field("second", &self.second)
            .field("deployments", &self.deployments.len())
            .finish_non_exhaustive()
    }
}

impl DeploymentSeconds {
    pub(super) fn new(out: CsvOut) -> Result<Self, ReportError> {
        Ok(Self {
            out: Some(out),
            second: 0,
            deployments: BTreeMap::new(),
            served: ServedSeries::default(),
            failing: FailingSeconds::default(),
            shape: new_histogram()?,
        })
    }

    fn deployment(&mut self, id: &Arc<str>) -> Option<&mut Deployment> {
        // One search (a known id, nearly always), not a `contains_key` and a `get_mut`.
        Some(
            self.deployments
                .entry(Arc::clone(id))
                .or_insert_with(Deployment::new),
        )
    }

    /// Time reached `at` µs: writes every second before its second. An earlier time (a sink
    /// fed out of order) counts in the current second.
    pub(super) fn advance(&mut self, at: u64, error: &mut Option<ReportError>) {
        let second = second_of(at);
        if second <= self.second {
            return;
        }
        self.flush_second(error);
        // The quiet seconds in between: rows only for what is cooling or half-open.
        let mut quiet = self.second + 1;
        while quiet < second {
            let from = quiet * MICROS_PER_SECOND;
            let active = self
                .deployments
                .values()
                .any(|d| d.half_open || d.cooling_in(from, from.saturating_add(MICROS_PER_SECOND)));
            if !active {
                // Nothing until a cooldown starts again: skip to the next event's second.
                break;
            }
            self.second = quiet;
            self.flush_second(error);
            quiet += 1;
        }
        self.second = second;
    }

    /// An attempt on `id` ended at `at` after `latency_us`.
    pub(super) fn attempt(&mut self, id: &Arc<str>, latency_us: u64, failure: Option<FailureKind>) {
        let Some(d) = self.deployment(id) else { return };
        d.attempts += 1;
        match failure {
            None => d.ok += 1,
            Some(FailureKind::RateLimit | FailureKind::RouterRateLimit) => d.rate_limited += 1,
            Some(_) => d.errors += 1,
        }
        d.samples.push(latency_us);
    }

    /// `CooldownSet` at `at` with effective deadline `until` (it also ends a half-open period).
    pub(super) fn cooldown_set(&mut self, id: &Arc<str>, at: u64, until: u64) {
        let Some(d) = self.deployment(id) else { return };
        d.cooldown = match d.cooldown {
            Some((start, deadline)) if at < deadline => Some((start, deadline.max(until))),
            _ => Some((at, until)),
        };
        d.cooled_now |= until > at;
        if d.half_open {
            d.half_open = false;
            d.half_open_now = true;
        }
    }

    /// `CooldownEnd` (or `Recovered`) at `at`: the cooldown ends at the earlier of `at` and
    /// its deadline.
    pub(super) fn cooldown_end(&mut self, id: &Arc<str>, at: u64) {
        let Some(d) = self.deployment(id) else { return };
        if let Some((start, deadline)) = d.cooldown.take() {
            let end = deadline.min(at);
            let second_start = second_of(at) * MICROS_PER_SECOND;
            d.cooled_now |= end > start && end > second_start;
        }
    }

    /// `HalfOpen` at `at`.
    pub(super) fn half_open(&mut self, id: &Arc<str>) {
        let Some(d) = self.deployment(id) else { return };
        d.half_open = true;
        d.half_open_now = true;
    }

    /// `Recovered`: ends the half-open period and any cooldown.
    pub(super) fn recovered(&mut self, id: &Arc<str>, at: u64) {
        self.cooldown_end(id, at);
        if let Some(d) = self.deployments.get_mut(id)
            && d.half_open
        {
            d.half_open = false;
            d.half_open_now = true;
        }
    }

    /// The run ended at `run_end` µs: writes the last seconds (what is still cooling or
    /// half-open is clipped there) and flushes the file.
    pub(super) fn finish(&mut self, run_end: u64, error: &mut Option<ReportError>) {
        // Through the second holding the run's last microsecond.
        let last = second_of(run_end.saturating_sub(1)).max(self.second);
        self.advance(
            last.saturating_add(1).saturating_mul(MICROS_PER_SECOND),
            error,
        );
        // The second `advance` moved to lies past the run end: never written.
        for d in self.deployments.values_mut() {
            reset(d);
        }
        self.failing.finish(run_end);
        if let Some(out) = self.out.as_mut()
            && let Err(e) = std::io::Write::flush(&mut out.out)
        {
            error.get_or_insert(ReportError::io(&out.path, e));
            self.out = None;
        }
    }

    /// Writes the current second's rows and resets its counters.
    fn flush_second(&mut self, error: &mut Option<ReportError>) {
        let second = self.second;
        let from = second * MICROS_PER_SECOND;
        let to = from.saturating_add(MICROS_PER_SECOND);
        for (id, d) in &mut self.deployments {
            let cooling = d.cooled_now || d.cooling_in(from, to);
            let half_open = d.half_open_now || d.half_open;
            if d.attempts > 0 {
                self.served.add(second, id, d.attempts, d.ok);
                self.failing.second(second, id, d.attempts, d.ok);
            }
            if d.attempts > 0 || cooling || half_open {
                let (p50, p99) = if d.samples.is_empty() {
                    (None, None)
                } else {
                    let [p50, p99] = d.samples.quantiles(&self.shape, [0.5, 0.99]);
                    (Some(Ms(p50)), Some(Ms(p99)))
                };
                write_row(&mut self.out, error, |w| {
                    w.fmt(second)?;
                    w.str(id)?;
                    w.fmt(d.attempts)?;
                    w.fmt(d.ok)?;
                    w.fmt(d.errors)?;
                    w.fmt(d.rate_limited)?;
                    w.fmt(u64::from(cooling))?;
                    w.fmt(u64::from(half_open))?;
                    w.opt(p50)?;
                    w.opt(p99)?;
                    w.end()
                });
            }
            reset(d);
        }
    }
}

/// Clears a deployment's per-second counters (its cooldown and half-open state stay).
fn reset(d: &mut Deployment) {
    d.samples.clear();
    d.attempts = 0;
    d.ok = 0;
    d.errors = 0;
    d.rate_limited = 0;
    d.cooled_now = false;
    d.half_open_now = false;
}
