//! [`Invariant::WithinWalkDeadline`]: Multigrid's *"A retried request never takes longer than
//! one that failed outright would have"*, stated as what the engine's walk promises (see
//! `crates/engine/src/router/candidates.rs`): under a profile that walks candidates with an
//! end-to-end deadline `D` from the request's arrival (`request_deadline`, or
//! `stream_deadline` when streamed),
//! - no attempt starts at or past `D`;
//! - no wait is taken that would reach `D` (*"If a wait would consume what is left of it, we
//!   fail over now instead"*): every `wait` ends before `D`;
//! - a non-streamed request ends by `D` (+ [`TIMER_SLACK`]): a call still running at `D` is
//!   cut there. A stream's body is bounded by the stream timeouts only, so a streamed
//!   request's end is not checked.
//!
//! A request's arrival is known only at its `request_end`, so the first two are kept as the
//! latest attempt start and the latest wait end, and all three are checked there.
//!
//! Separate from the other families: it notes two event kinds and checks at the end.

use std::time::Duration;

use tokio::time::Instant;

use super::invariant::{Invariant, TIMER_SLACK};
use super::request::RequestCheck;
use super::verdict::secs;

impl RequestCheck<'_, '_> {
    /// Keeps the latest attempt start, for the check at `request_end`.
    pub(super) fn note_walk_attempt(&mut self, attempt: u32) {
        self.req.last_attempt_start = Some((attempt, self.at));
    }

    /// Keeps the latest end of a wait of `duration` starting now, for the check at
    /// `request_end`.
    pub(super) fn note_walk_wait(&mut self, duration: Duration) {
        let end = self.at + duration;
        self.req.latest_wait_end = Some(self.req.latest_wait_end.map_or(end, |w| w.max(end)));
    }

    /// At the request's `request_end` (it arrived at `start`): the three checks of the
    /// module docs.
    pub(super) fn within_walk_deadline(&mut self, start: Instant, streamed: bool) {
        let Some(limits) = self.bounds.walk_deadline else {
            return;
        };
        let limit = if streamed {
            limits.stream
        } else {
            limits.request
        };
        let deadline = start + limit;
        if let Some((attempt, started)) = self.req.last_attempt_start
            && started >= deadline
        {
            let detail = format!(
                "attempt {attempt} starts {} after arrival: the deadline is {}",
                secs(started - start),
                secs(limit)
            );
            self.fail(Invariant::WithinWalkDeadline, detail);
        }
        if let Some(end) = self.req.latest_wait_end
            && end >= deadline
        {
            let detail = format!(
                "a wait ends {} after arrival: it would consume what is left of the {} deadline",
                secs(end - start),
                secs(limit)
            );
            self.fail(Invariant::WithinWalkDeadline, detail);
        }
        if !streamed && self.at > deadline + TIMER_SLACK {
            let detail = format!(
                "the request ends {} after arrival: its deadline is {}",
                secs(self.at - start),
                secs(limit)
            );
            self.fail(Invariant::WithinWalkDeadline, detail);
        }
    }
}
