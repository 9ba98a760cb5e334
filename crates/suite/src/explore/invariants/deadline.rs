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
//! Separate from `request` (the long per-event match): it reads two event kinds and the end.

use routersim_engine::event::{EventKind, RoutingEvent};

use super::bounds::Bounds;
use super::invariant::{Invariant, TIMER_SLACK};
use super::state::RequestState;
use super::verdict::{Verdict, secs};

impl RequestState {
    /// Keeps what the deadline check needs from one event of the request.
    pub(super) fn track_walk(&mut self, event: &RoutingEvent) {
        match &event.kind {
            EventKind::AttemptStart { attempt, .. } => {
                self.last_attempt_start = Some((*attempt, event.at));
            }
            EventKind::Wait { duration, .. } => {
                let end = event.at + *duration;
                self.latest_wait_end = Some(self.latest_wait_end.map_or(end, |w| w.max(end)));
            }
            _ => {}
        }
    }
}

impl Verdict<'_> {
    /// At the request's `request_end`: the three checks of the module docs.
    pub(super) fn check_walk_deadline(
        &mut self,
        bounds: &Bounds,
        id: u64,
        event: &RoutingEvent,
        req: &RequestState,
    ) {
        let Some(limits) = bounds.walk_deadline else {
            return;
        };
        let EventKind::RequestEnd { start, stream, .. } = &event.kind else {
            return;
        };
        let limit = if stream.is_some() {
            limits.stream
        } else {
            limits.request
        };
        let deadline = *start + limit;
        let (id, at) = (Some(id), Some(event.at));
        if let Some((attempt, started)) = req.last_attempt_start
            && started >= deadline
        {
            let detail = format!(
                "attempt {attempt} starts {} after arrival: the deadline is {}",
                secs(started - *start),
                secs(limit)
            );
            self.fail(Invariant::WithinWalkDeadline, id, at, detail);
        }
        if let Some(end) = req.latest_wait_end
            && end >= deadline
        {
            let detail = format!(
                "a wait ends {} after arrival: it would consume what is left of the {} deadline",
                secs(end - *start),
                secs(limit)
            );
            self.fail(Invariant::WithinWalkDeadline, id, at, detail);
        }
        if stream.is_none() && event.at > deadline + TIMER_SLACK {
            let detail = format!(
                "the request ends {} after arrival: its deadline is {}",
                secs(event.at - *start),
                secs(limit)
            );
            self.fail(Invariant::WithinWalkDeadline, id, at, detail);
        }
    }
}
