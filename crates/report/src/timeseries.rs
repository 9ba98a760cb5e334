//! Per-second counters (`timeseries.csv`) and per-deployment cooldown intervals.
//!
//! Why rows are kept until `finish` instead of streamed: a `RequestEnd` attributes its arrival
//! to its `start`, which can lie arbitrarily far back (a request may wait through long timeouts
//! and backoffs), and a cooldown's extent is only known when it ends. No horizon after which a
//! second is final can be guaranteed, so every second keeps one fixed-size row (48 bytes) in
//! memory: 36,000 rows for a 10-hour run. Memory grows with virtual time, never with the
//! number of requests.
//!
//! A deployment counts as cooling in a second if any part of one of its cooldown intervals
//! `[set, end)` lies in that second. An interval starts at `CooldownSet`; a `CooldownSet` while
//! still cooling extends it (its `until` is the effective deadline); it ends at the earlier of
//! its deadline and the `CooldownEnd` (which a lazy sweeper may emit late), or at the run end.
//! Per-second counts are kept as a difference array, so closing an interval costs O(1).

use std::io::{self, Write};

use crate::units::second_of;

/// Counters of one virtual second.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SecondRow {
    arrivals: u64,
    ok: u64,
    failed: u64,
    retries: u64,
    fallbacks: u64,
}

/// What a second is counted for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Count {
    Arrival,
    Ok,
    Failed,
    Retry,
    Fallback,
}

/// One row per virtual second from 0 to the last second with any activity.
#[derive(Debug, Default)]
pub(crate) struct Timeseries {
    rows: Vec<SecondRow>,
    /// Difference array of cooling deployments: +1 at an interval's first second, −1 after its
    /// last. May be one longer than `rows`.
    cooling_delta: Vec<i64>,
    /// The same for half-open deployments.
    half_open_delta: Vec<i64>,
}

/// Which per-second lane an interval counts in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Lane {
    /// `deployments_cooling`.
    #[default]
    Cooling,
    /// `deployments_half_open`.
    HalfOpen,
}

impl Timeseries {
    /// Marks `second` as active (the series extends at least to it) and returns its row.
    pub(crate) fn touch(&mut self, second: u64) -> Option<&mut SecondRow> {
        let index = usize::try_from(second).ok()?;
        if index >= self.rows.len() {
            self.rows.resize(index + 1, SecondRow::default());
        }
        self.rows.get_mut(index)
    }

    /// Adds one to a counter of `second`.
    pub(crate) fn count(&mut self, second: u64, what: Count) {
        if let Some(row) = self.touch(second) {
            let field = match what {
                Count::Arrival => &mut row.arrivals,
                Count::Ok => &mut row.ok,
                Count::Failed => &mut row.failed,
                Count::Retry => &mut row.retries,
                Count::Fallback => &mut row.fallbacks,
            };
            *field = field.saturating_add(1);
        }
    }

    /// One deployment is in `lane` during seconds `first..=last`.
    fn add_interval(&mut self, lane: Lane, first: u64, last: u64) {
        if first > last || self.touch(last).is_none() {
            return;
        }
        let (Ok(first), Ok(after)) = (usize::try_from(first), usize::try_from(last + 1)) else {
            return;
        };
        let delta = match lane {
            Lane::Cooling => &mut self.cooling_delta,
            Lane::HalfOpen => &mut self.half_open_delta,
        };
        if delta.len() <= after {
            delta.resize(after + 1, 0);
        }
        delta[first] += 1;
        delta[after] -= 1;
    }

    /// Writes the CSV (header and every row).
    pub(crate) fn write_csv(&self, out: &mut impl Write) -> io::Result<()> {
        writeln!(
            out,
            "second,arrivals,ok,failed,retries,fallbacks,deployments_cooling,deployments_half_open"
        )?;
        let (mut cooling, mut half_open): (i64, i64) = (0, 0);
        for (second, row) in self.rows.iter().enumerate() {
            cooling += self.cooling_delta.get(second).copied().unwrap_or(0);
            half_open += self.half_open_delta.get(second).copied().unwrap_or(0);
            writeln!(
                out,
                "{second},{},{},{},{},{},{},{}",
                row.arrivals,
                row.ok,
                row.failed,
                row.retries,
                row.fallbacks,
                cooling.max(0),
                half_open.max(0)
            )?;
        }
        Ok(())
    }
}

/// The cooldown (or half-open) history of one deployment.
#[derive(Debug, Default)]
pub(crate) struct DeploymentCooldowns {
    /// The per-second lane its intervals count in.
    pub(crate) lane: Lane,
    /// `CooldownSet` events (a re-cool counts again).
    pub(crate) count: u64,
    /// Cooled time of the closed intervals, in µs.
    pub(crate) cooled_us: u64,
    /// The open interval: start and effective deadline, µs since the run start.
    open: Option<(u64, u64)>,
    /// The last second already counted for this deployment, so back-to-back intervals in one
    /// second count the deployment once.
    last_counted_second: Option<u64>,
}

impl DeploymentCooldowns {
    /// A `CooldownSet` at `at` with effective deadline `until`.
    pub(crate) fn set(&mut self, at: u64, until: u64, series: &mut Timeseries) {
        self.count = self.count.saturating_add(1);
        match self.open {
            Some((start, deadline)) if at < deadline => {
                self.open = Some((start, deadline.max(until)));
            }
            Some((start, deadline)) => {
                // The previous cooldown expired without a `CooldownEnd`: it ended at its deadline.
                self.close(start, deadline, series);
                self.open = Some((at, until));
            }
            None => self.open = Some((at, until)),
        }
    }

    /// An empty history whose intervals count in `lane`.
    pub(crate) fn in_lane(lane: Lane) -> Self {
        Self {
            lane,
            ..Self::default()
        }
    }

    /// Opens an interval at `at` with no deadline (half-open periods end by an event).
    pub(crate) fn open_until_closed(&mut self, at: u64) {
        if self.open.is_none() {
            self.count = self.count.saturating_add(1);
            self.open = Some((at, u64::MAX));
        }
    }

    /// A `CooldownEnd` at `at`.
    pub(crate) fn end(&mut self, at: u64, series: &mut Timeseries) {
        if let Some((start, deadline)) = self.open.take() {
            self.close(start, deadline.min(at), series);
        }
    }

    /// Closes an open interval at the run end.
    pub(crate) fn finish(&mut self, run_end: u64, series: &mut Timeseries) {
        if let Some((start, deadline)) = self.open.take() {
            self.close(start, deadline.min(run_end), series);
        }
    }

    fn close(&mut self, start: u64, end: u64, series: &mut Timeseries) {
        if end <= start {
            return;
        }
        self.cooled_us = self.cooled_us.saturating_add(end - start);
        let mut first = second_of(start);
        let last = second_of(end - 1);
        if let Some(counted) = self.last_counted_second {
            first = first.max(counted + 1);
        }
        if first <= last {
            series.add_interval(self.lane, first, last);
            self.last_counted_second = Some(last);
        }
    }
}
