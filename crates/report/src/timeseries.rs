//! Per-second counters (`timeseries.csv`) and per-deployment cooldown intervals.
//!
//! Why rows are kept until `finish` instead of streamed: a `RequestEnd` attributes its arrival
//! to its `start`, which can lie arbitrarily far back (a request may wait through long timeouts
//! and backoffs), and a cooldown's extent is only known when it ends. No horizon after which a
//! second is final can be guaranteed, so the rows stay in memory until the run ends.
//!
//! Memory follows the activity, never the virtual duration: only seconds with a count have a
//! row (a `BTreeMap` keyed by second), and the cooling and half-open levels are kept as their
//! changes, `+1` at an interval's first second and `−1` after its last (closing an interval
//! costs O(log n)). A year with one request an hour holds about 17,000 rows, not 31 million.
//!
//! What `timeseries.csv` holds, seconds `0..=last` (`last`: the last second with any event or
//! inside an interval):
//! - a series of at most [`DENSE_SECONDS`] seconds (one virtual day) has a row for every
//!   second, as always;
//! - a longer one has a row only where a counter is non-zero or a level changed, and for
//!   `last`: a second left out has zero counters and the levels of the row before it (zero
//!   before the first row). The plots and any reader fill the gaps that way.
//!
//! `continuations` (the last column): streams continued on another deployment after a break
//! (`StreamContinued` events), counted in the second the continuation began.
//!
//! `p50_ms,p90_ms,p99_ms` (appended after the level columns): the end-to-end latency
//! percentiles of the requests that *ended* in that second (HdrHistogram values, capped at the
//! second's maximum, three decimals); empty cells when none ended. See `record::intervals`.
//!
//! A deployment counts as cooling in a second if any part of one of its cooldown intervals
//! `[set, end)` lies in that second. An interval starts at `CooldownSet`; a `CooldownSet` while
//! still cooling extends it (its `until` is the effective deadline); it ends at the earlier of
//! its deadline and the `CooldownEnd` (which a lazy sweeper may emit late), or at the run end.

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::units::{Ms, second_of};

/// Series up to this many seconds (one virtual day: 86,400 rows, about 2 MB) are written with
/// a row for every second; longer ones only with the rows that say something (see the module
/// docs).
pub(crate) const DENSE_SECONDS: u64 = 86_400;

/// Seconds counted in a dense window before they move to the map: a request's arrival is
/// counted when it ends, nearly always within seconds of the latest second, and indexing a
/// window is a tenth of a map search (`count` was 1.7 % of the bench run's instructions).
const RECENT_SECONDS: usize = 64;

/// The header of `timeseries.csv`.
const HEADER: &str = "second,arrivals,ok,failed,retries,fallbacks,deployments_cooling,\
deployments_half_open,p50_ms,p90_ms,p99_ms,continuations";

/// Counters of one virtual second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SecondRow {
    arrivals: u64,
    ok: u64,
    failed: u64,
    retries: u64,
    fallbacks: u64,
    /// Streams continued on another deployment after a break (`StreamContinued`).
    continuations: u64,
}

impl SecondRow {
    fn is_zero(&self) -> bool {
        *self == Self::default()
    }
}

/// What a second is counted for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Count {
    Arrival,
    Ok,
    Failed,
    Retry,
    Fallback,
    /// A stream continued elsewhere after a break.
    Continuation,
}

/// The rows of the seconds with a count, and the level changes of both lanes.
#[derive(Debug, Default)]
pub(crate) struct Timeseries {
    /// The rows of seconds before `recent_first` (only seconds with a count).
    rows: BTreeMap<u64, SecondRow>,
    /// The rows of seconds `recent_first..recent_first + RECENT_SECONDS` (zero: no count).
    recent: Vec<SecondRow>,
    /// The first second of `recent`; it only moves forward, so `rows` holds none after it.
    recent_first: u64,
    /// The series' last second: the latest event or interval second seen.
    last: Option<u64>,
    /// Changes of the number of cooling deployments, by second (+1 at an interval's first
    /// second, −1 after its last).
    cooling_delta: BTreeMap<u64, i64>,
    /// The same for half-open deployments.
    half_open_delta: BTreeMap<u64, i64>,
    /// p50, p90 and p99 of the end-to-end latency (µs) of the requests that ended in a second
    /// (only seconds with a request end, which have a row anyway: memory follows the rows).
    latency: BTreeMap<u64, [u64; 3]>,
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
    /// Marks `second` as part of the series (it extends at least to it).
    pub(crate) fn touch(&mut self, second: u64) {
        self.last = Some(self.last.map_or(second, |last| last.max(second)));
    }

    /// Adds one to a counter of `second`.
    pub(crate) fn count(&mut self, second: u64, what: Count) {
        self.touch(second);
        let row = self.row_mut(second);
        let field = match what {
            Count::Arrival => &mut row.arrivals,
            Count::Ok => &mut row.ok,
            Count::Failed => &mut row.failed,
            Count::Retry => &mut row.retries,
            Count::Fallback => &mut row.fallbacks,
            Count::Continuation => &mut row.continuations,
        };
        *field = field.saturating_add(1);
    }

    /// The row of `second`: in the recent window (moved forward to it if it lies after), or
    /// in the map for a second before the window.
    fn row_mut(&mut self, second: u64) -> &mut SecondRow {
        if self.recent.is_empty() {
            self.recent = vec![SecondRow::default(); RECENT_SECONDS];
        }
        let Some(offset) = second.checked_sub(self.recent_first) else {
            return self.rows.entry(second).or_default();
        };
        let width = RECENT_SECONDS as u64;
        if offset >= width {
            // Slide so that `second` is the window's last: the seconds leaving it move to the
            // map (only those with a count), the rest shift down.
            let shift = offset - width + 1;
            let leaving = shift.min(width) as usize;
            for (at, row) in self.recent.drain(..leaving).enumerate() {
                if !row.is_zero() {
                    self.rows.insert(self.recent_first + at as u64, row);
                }
            }
            self.recent.resize(RECENT_SECONDS, SecondRow::default());
            self.recent_first += shift;
        }
        let index = (second - self.recent_first) as usize;
        &mut self.recent[index]
    }

    /// Every row with a count, by second: the map's and the window's.
    fn all_rows(&self) -> BTreeMap<u64, SecondRow> {
        let mut rows = self.rows.clone();
        rows.extend(
            (self.recent_first..)
                .zip(&self.recent)
                .filter(|(_, row)| !row.is_zero())
                .map(|(second, row)| (second, *row)),
        );
        rows
    }

    /// The latency percentiles (p50, p90, p99, µs) of the requests that ended in `second`.
    pub(crate) fn set_latency(&mut self, second: u64, percentiles: [u64; 3]) {
        self.touch(second);
        self.latency.insert(second, percentiles);
    }

    /// One deployment is in `lane` during seconds `first..=last`.
    fn add_interval(&mut self, lane: Lane, first: u64, last: u64) {
        if first > last {
            return;
        }
        self.touch(last);
        let delta = match lane {
            Lane::Cooling => &mut self.cooling_delta,
            Lane::HalfOpen => &mut self.half_open_delta,
        };
        *delta.entry(first).or_default() += 1;
        if let Some(after) = last.checked_add(1) {
            *delta.entry(after).or_default() -= 1;
        }
    }

    /// Writes the CSV: the header and the rows the module docs describe.
    pub(crate) fn write_csv(&self, out: &mut impl Write) -> io::Result<()> {
        writeln!(out, "{HEADER}")?;
        let Some(last) = self.last else {
            return Ok(());
        };
        let dense = last < DENSE_SECONDS;
        let rows = self.all_rows();
        // Every second that may need a row, in order: counted seconds, level changes, the last.
        let mut seconds: Vec<u64> = rows
            .keys()
            .chain(self.cooling_delta.keys())
            .chain(self.half_open_delta.keys())
            .copied()
            .filter(|&s| s <= last)
            .chain(std::iter::once(last))
            .collect();
        seconds.sort_unstable();
        seconds.dedup();
        let (mut cooling, mut half_open): (i64, i64) = (0, 0);
        let mut next = 0_u64;
        for second in seconds {
            if dense {
                // The quiet seconds before this one: zero counters, the current levels.
                for quiet in next..second {
                    write_row(out, quiet, &SecondRow::default(), cooling, half_open, None)?;
                }
            }
            let changed = [
                (&self.cooling_delta, &mut cooling),
                (&self.half_open_delta, &mut half_open),
            ]
            .into_iter()
            .fold(false, |changed, (deltas, level)| {
                let delta = deltas.get(&second).copied().unwrap_or(0);
                *level += delta;
                changed || delta != 0
            });
            let row = rows.get(&second).copied().unwrap_or_default();
            if dense || changed || !row.is_zero() || second == last {
                let latency = self.latency.get(&second);
                write_row(out, second, &row, cooling, half_open, latency)?;
            }
            next = second + 1;
        }
        Ok(())
    }
}

fn write_row(
    out: &mut impl Write,
    second: u64,
    row: &SecondRow,
    cooling: i64,
    half_open: i64,
    latency: Option<&[u64; 3]>,
) -> io::Result<()> {
    write!(
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
    match latency {
        Some([p50, p90, p99]) => write!(out, ",{},{},{}", Ms(*p50), Ms(*p90), Ms(*p99))?,
        // No request ended in this second: empty cells, not zeros.
        None => write!(out, ",,,")?,
    }
    writeln!(out, ",{}", row.continuations)
}

/// The cooldown (or half-open) history of one deployment.
#[derive(Debug, Default)]
pub(crate) struct DeploymentCooldowns {
    /// The per-second lane its intervals count in.
    pub(crate) lane: Lane,
    /// `CooldownSet` events (a re-cool counts again).
    pub(crate) count: u64,
    /// Closed intervals of positive length: the periods the plots draw (a re-cool that
    /// extends a live interval is not a new period).
    pub(crate) periods: u64,
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
        self.periods = self.periods.saturating_add(1);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The window changes where a count is kept, never the CSV: counts far behind the window,
    /// inside it, across its slide and after a jump longer than it give the rows a plain
    /// per-second tally gives.
    #[test]
    fn counts_outside_the_recent_window_land_in_their_own_seconds() {
        let seconds = [
            0, 5, 63, 64, 2, 70, 1, 200, 130, 137, 136, 5_000, 199, 4_990, 3,
        ];
        let mut series = Timeseries::default();
        let mut tally: BTreeMap<u64, u64> = BTreeMap::new();
        for &second in &seconds {
            series.count(second, Count::Arrival);
            *tally.entry(second).or_default() += 1;
        }
        let rows = series.all_rows();
        assert_eq!(
            rows.iter()
                .map(|(&s, row)| (s, row.arrivals))
                .collect::<Vec<_>>(),
            tally.into_iter().collect::<Vec<_>>()
        );
        // Seconds left behind by the window are in the map, the rest in the window.
        assert!(series.rows.contains_key(&0) && series.rows.contains_key(&200));
        assert_eq!(series.recent_first, 5_000 - RECENT_SECONDS as u64 + 1);
    }
}
