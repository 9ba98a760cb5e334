//! The engine's [`Clock`] on the runtime of the current thread.

use std::future::Future;

use routersim_engine::clock::Clock;
use tokio::time::Instant;

/// The engine's clock for simulated runs: [`time::now`](crate::time::now) and
/// [`time::sleep_until`](crate::time::sleep_until), with a wall-clock epoch for HTTP-date
/// `Retry-After` that advances with virtual time.
#[derive(Clone, Copy, Debug)]
pub struct RuntimeClock {
    start: Instant,
    epoch_unix_ms: i64,
}

impl RuntimeClock {
    /// A clock whose wall time reads `epoch_unix_ms` now (call it on the runtime).
    pub fn with_epoch(epoch_unix_ms: i64) -> Self {
        Self {
            start: crate::time::now(),
            epoch_unix_ms,
        }
    }
}

impl Clock for RuntimeClock {
    fn now(&self) -> Instant {
        crate::time::now()
    }

    fn sleep_until(&self, deadline: Instant) -> impl Future<Output = ()> {
        crate::time::sleep_until(deadline)
    }

    fn unix_millis(&self) -> i64 {
        let elapsed = crate::time::now().saturating_duration_since(self.start);
        self.epoch_unix_ms
            .saturating_add(i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
    }
}
