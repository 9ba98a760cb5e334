//! Time, injected.
//!
//! The engine never reads a system clock. It reads [`Clock`], whose [`TokioClock`] is tokio's
//! clock: under a paused current-thread runtime (tests, the simulator) every sleep and deadline
//! is virtual, and the wall clock used for HTTP-date `Retry-After` is `epoch + elapsed`.
#![allow(
    clippy::disallowed_methods,
    reason = "the one place the engine reads and sleeps on tokio's clock"
)]

use std::future::Future;
use tokio::time::Instant;

/// The router's source of time.
pub trait Clock {
    /// Now, on the monotonic clock that drives sleeps and cooldown deadlines.
    fn now(&self) -> Instant;
    /// Sleeps until `deadline`.
    fn sleep_until(&self, deadline: Instant) -> impl Future<Output = ()>;
    /// Wall-clock milliseconds since the Unix epoch, for reading HTTP-date `Retry-After`.
    fn unix_millis(&self) -> i64;
}

/// tokio's clock, with a wall-clock epoch fixed at construction.
///
/// Defaults: the wall clock reads `epoch_unix_ms` at the moment the clock is built and advances
/// with tokio's (possibly paused) time.
#[derive(Clone, Copy, Debug)]
pub struct TokioClock {
    start: Instant,
    epoch_unix_ms: i64,
}

impl TokioClock {
    /// A clock whose wall time reads `epoch_unix_ms` now.
    pub fn with_epoch(epoch_unix_ms: i64) -> Self {
        Self {
            start: Instant::now(),
            epoch_unix_ms,
        }
    }
}

impl Clock for TokioClock {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn sleep_until(&self, deadline: Instant) -> impl Future<Output = ()> {
        tokio::time::sleep_until(deadline)
    }

    fn unix_millis(&self) -> i64 {
        let elapsed = Instant::now().saturating_duration_since(self.start);
        self.epoch_unix_ms
            .saturating_add(i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
    }
}
