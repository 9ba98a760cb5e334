//! One deployment's cooling (or half-open) periods as the plots keep them: closed intervals
//! up to a cap, the rest counted, and the one still open.
//!
//! The intervals follow the same rules as the per-second lanes of `timeseries.csv` (see
//! `timeseries`): a cooldown runs from `CooldownSet` to the earlier of its deadline and
//! `CooldownEnd`/`Recovered` (a `CooldownSet` while cooling extends it); a half-open period
//! runs from `HalfOpen` to `Recovered` or the next `CooldownSet`; whatever is open at the run
//! end is clipped there. Apart from the recorder's side (`collect`) because the lanes plot
//! reads them too.

/// Closed intervals kept per deployment and lane (cooling, half-open); later ones are
/// counted and the plot says how many it could not draw.
pub const MAX_INTERVALS_PER_DEPLOYMENT: usize = 100_000;

/// Intervals of one deployment in one state, µs since the run start.
#[derive(Debug, Default)]
pub(crate) struct Intervals {
    /// Closed intervals, in time order (at most [`MAX_INTERVALS_PER_DEPLOYMENT`]).
    pub(crate) closed: Vec<(u64, u64)>,
    /// Closed intervals past the cap, not kept.
    pub(crate) dropped: u64,
    /// `CooldownSet` events (a re-set that extends a live interval counts again; `summary.json`'s
    /// `cooldown_sets`); 0 for half-open intervals, which nothing sets.
    pub(crate) sets: u64,
    /// The open interval: start and deadline (`u64::MAX` when only an event ends it).
    open: Option<(u64, u64)>,
}

impl Intervals {
    /// Opens (or, when still open at `at`, extends to `until`) an interval.
    pub(crate) fn set(&mut self, at: u64, until: u64) {
        self.sets = self.sets.saturating_add(1);
        match self.open {
            Some((start, deadline)) if at < deadline => {
                self.open = Some((start, deadline.max(until)));
            }
            Some((start, deadline)) => {
                // Expired without an end event: it ended at its deadline.
                self.close(start, deadline);
                self.open = Some((at, until));
            }
            None => self.open = Some((at, until)),
        }
    }

    /// Adds `[at, until)` without counting a set: extends the open interval when it reaches
    /// `at` (adjacent seconds make one period), else closes it and opens this one.
    pub(crate) fn extend(&mut self, at: u64, until: u64) {
        match self.open {
            Some((start, end)) if at <= end => self.open = Some((start, end.max(until))),
            Some((start, end)) => {
                self.close(start, end);
                self.open = Some((at, until));
            }
            None => self.open = Some((at, until)),
        }
    }

    /// Opens an interval that only an event ends (half-open).
    pub(crate) fn open_until_closed(&mut self, at: u64) {
        if self.open.is_none() {
            self.open = Some((at, u64::MAX));
        }
    }

    /// Ends the open interval at `at` (or at its deadline, if earlier).
    pub(crate) fn end(&mut self, at: u64) {
        if let Some((start, deadline)) = self.open.take() {
            self.close(start, deadline.min(at));
        }
    }

    fn close(&mut self, start: u64, end: u64) {
        if end <= start {
            return;
        }
        if self.closed.len() < MAX_INTERVALS_PER_DEPLOYMENT {
            self.closed.push((start, end));
        } else {
            self.dropped = self.dropped.saturating_add(1);
        }
    }

    /// Closed intervals and a count of sets (plot tests).
    #[cfg(test)]
    pub(crate) fn with(closed: Vec<(u64, u64)>, sets: u64) -> Self {
        Self {
            closed,
            sets,
            ..Self::default()
        }
    }

    /// Periods: the closed intervals, kept or not (`summary.json`'s `cooldown_periods` for
    /// cooling).
    pub(crate) fn periods(&self) -> u64 {
        (self.closed.len() as u64).saturating_add(self.dropped)
    }

    /// Total length of the kept intervals, µs.
    pub(crate) fn total_us(&self) -> u64 {
        self.closed
            .iter()
            .fold(0_u64, |sum, (a, b)| sum.saturating_add(b - a))
    }
}
