//! Whether Redis is answering, and how long it has not been: the store's fail-open switch.
//!
//! A command that fails or times out makes the store *degraded*: routing goes on the memory
//! tier alone (reads are skipped, so a request never waits on a Redis that is not there;
//! writes are skipped and counted), the reconnect task probes Redis with backoff, and the
//! first probe that answers makes it *healthy* again. Each change is reported once
//! ([`HealthEvent`]); the time spent degraded is summed ([`Health::degraded_time`]) for the
//! proxy's stop line (and for a metrics endpoint to read).

use std::time::Duration;

use tokio::time::Instant;

/// A change of Redis's health, as the store reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HealthEvent {
    /// A command failed: the store routes on its own state until Redis answers again.
    Degraded {
        /// The command and its error (`read: timed out after 50 ms`).
        why: String,
    },
    /// A probe answered after an outage of this long.
    Recovered {
        /// How long the store was degraded.
        after: Duration,
        /// Live cooldowns of this replica written back to Redis.
        resent: usize,
    },
}

/// Who hears [`HealthEvent`]s (the proxy prints them on stderr).
pub type HealthSink = std::sync::Arc<dyn Fn(&HealthEvent) + Send + Sync>;

/// The store's health.
#[derive(Clone, Copy, Debug, Default)]
pub struct Health {
    /// Since when the store is degraded, when it is.
    degraded_since: Option<Instant>,
    /// Time spent degraded in outages that ended.
    past: Duration,
    /// Outages begun.
    outages: u64,
}

impl Health {
    /// Whether the store is degraded.
    pub fn is_degraded(&self) -> bool {
        self.degraded_since.is_some()
    }

    /// Enters degraded at `now`; `true` when this begins an outage.
    pub fn degrade(&mut self, now: Instant) -> bool {
        if self.degraded_since.is_some() {
            return false;
        }
        self.degraded_since = Some(now);
        self.outages += 1;
        true
    }

    /// Leaves degraded at `now`: the outage's length, `None` when it was healthy.
    pub fn recover(&mut self, now: Instant) -> Option<Duration> {
        let since = self.degraded_since.take()?;
        let outage = now.saturating_duration_since(since);
        self.past += outage;
        Some(outage)
    }

    /// Time spent degraded up to `now` (the current outage included).
    pub fn degraded_time(&self, now: Instant) -> Duration {
        self.past
            + self
                .degraded_since
                .map_or(Duration::ZERO, |s| now.saturating_duration_since(s))
    }

    /// Outages begun.
    pub fn outages(&self) -> u64 {
        self.outages
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outages_and_their_time_add_up() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let mut h = Health::default();
        assert_eq!(h.recover(at(1)), None, "healthy: nothing to recover from");
        assert!(h.degrade(at(100)));
        assert!(!h.degrade(at(200)), "one outage, not two");
        assert_eq!(h.degraded_time(at(400)), Duration::from_millis(300));
        assert_eq!(h.recover(at(600)), Some(Duration::from_millis(500)));
        assert!(h.degrade(at(1000)));
        assert_eq!(h.degraded_time(at(1100)), Duration::from_millis(600));
        assert_eq!(h.outages(), 2);
        assert!(h.is_degraded());
    }
}
