//! [`CallTime`]: when a call is decided, on the two clocks a fake reads.
//!
//! Fault windows and the quota buckets count virtual time from the run's start; an HTTP-date
//! `Retry-After` needs the (virtual) wall clock. Both are read once per call, before any
//! step, so every step of one decision sees the same instant.

use std::time::Duration;

use tokio::time::Instant;

/// The instant a call is decided.
#[derive(Clone, Copy, Debug)]
pub(super) struct CallTime {
    /// Virtual time since the start of the run.
    pub elapsed: Duration,
    /// The wall clock then, in ms since the Unix epoch.
    pub unix_ms: i64,
}

impl CallTime {
    /// Now, for a run that started at `start` when the wall clock read `epoch_unix_ms`.
    pub(super) fn now(start: Instant, epoch_unix_ms: i64) -> Self {
        let elapsed = routersim_runtime::time::now().saturating_duration_since(start);
        Self {
            elapsed,
            unix_ms: epoch_unix_ms
                .saturating_add(i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)),
        }
    }
}
