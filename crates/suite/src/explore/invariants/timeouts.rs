//! [`Invariant::NoWaitPastDeadline`], with the deadlines the engine has today: a Retry-After
//! wait is in (0, 60 s] (as the profile allows: [`Bounds::retry_after_cap`] and
//! [`Bounds::retry_after_zero`]); a backoff wait is below `max(8 s, retry_after)` + 750 ms of jitter; a
//! non-streamed attempt lasts at most its `timeout`; a stream's first content arrives within
//! its first-token timeout (plus the stall timeout: one non-content frame may come first),
//! and no gap between content chunks, or from the last one to the attempt's end, exceeds
//! `stream_stall_timeout`. Each timer-enforced deadline gets [`TIMER_SLACK`].
//!
//! An attempt over its timeout is noted at its end and reported at `request_end` only if the
//! request was not streamed: a streamed attempt as a whole has no deadline in the engine.

use std::sync::Arc;
use std::time::Duration;

use routersim_engine::event::WaitReason;
use tokio::time::Instant;

use super::consistent::OpenAttempt;
use super::invariant::{Invariant, TIMER_SLACK};
use super::request::RequestCheck;
use super::verdict::secs;

impl RequestCheck<'_, '_> {
    /// A wait is within the cap of its kind.
    pub(super) fn wait_within_its_cap(&mut self, duration: Duration, reason: WaitReason) {
        let bounds = self.bounds;
        let ok = match reason {
            WaitReason::RetryAfter => {
                (bounds.retry_after_zero || !duration.is_zero())
                    && duration <= bounds.retry_after_cap
            }
            WaitReason::Backoff => duration < bounds.backoff_cap,
        };
        if ok {
            return;
        }
        let cap = match reason {
            WaitReason::RetryAfter => format!(
                "{}0, {}]",
                if bounds.retry_after_zero { "[" } else { "(" },
                secs(bounds.retry_after_cap)
            ),
            WaitReason::Backoff => format!("below {}", secs(bounds.backoff_cap)),
        };
        let detail = format!(
            "a {} wait of {}: it must be {cap}",
            reason.as_str(),
            secs(duration)
        );
        self.fail(Invariant::NoWaitPastDeadline, detail);
    }

    /// Notes the request's first attempt that outlived its deployment's timeout.
    pub(super) fn note_attempt_over_timeout(
        &mut self,
        attempt: u32,
        start: Instant,
        deployment_id: &Arc<str>,
    ) {
        let took = self.at.saturating_duration_since(start);
        let limit = self
            .bounds
            .deployments
            .get(deployment_id)
            .and_then(|d| d.timeout);
        if let Some(limit) = limit
            && took > limit + TIMER_SLACK
            && self.req.over_timeout.is_none()
        {
            self.req.over_timeout = Some((attempt, took, limit));
        }
    }

    /// An attempt ends within the stall timeout of its last content chunk.
    pub(super) fn attempt_ends_before_a_stall(&mut self, attempt: u32, deployment_id: &Arc<str>) {
        if let (Some(last), Some(stall)) = (self.req.last_chunk, self.bounds.stall_timeout)
            && self.at.saturating_duration_since(last) > stall + TIMER_SLACK
        {
            let detail = format!(
                "attempt {attempt} on {deployment_id} ends {} after its last chunk: \
                 the stall timeout is {}",
                secs(self.at - last),
                secs(stall)
            );
            self.fail(Invariant::NoWaitPastDeadline, detail);
        }
    }

    /// A chunk of the `open` attempt comes in time: the first within the first-token timeout
    /// (+ the stall timeout), the others within the stall timeout of the one before.
    pub(super) fn chunk_in_time(&mut self, open: OpenAttempt) {
        let (attempt, start, deployment) = open;
        let at = self.at;
        let stall = self.bounds.stall_timeout;
        let Some(last) = self.req.last_chunk else {
            let first_token = self
                .bounds
                .deployments
                .get(&deployment)
                .and_then(|d| d.stream_timeout);
            let Some(limit) = first_token else { return };
            let slack = stall.unwrap_or_default();
            let took = at.saturating_duration_since(start);
            if took > limit + slack + TIMER_SLACK {
                let detail = format!(
                    "attempt {attempt} on {deployment}: first content after {}, \
                     stream_timeout {} (+ stall slack {})",
                    secs(took),
                    secs(limit),
                    secs(slack)
                );
                self.fail(Invariant::NoWaitPastDeadline, detail);
            }
            return;
        };
        if let Some(stall) = stall
            && at.saturating_duration_since(last) > stall + TIMER_SLACK
        {
            let detail = format!(
                "attempt {attempt} on {deployment}: {} between chunks, stall timeout {}",
                secs(at - last),
                secs(stall)
            );
            self.fail(Invariant::NoWaitPastDeadline, detail);
        }
    }

    /// At `request_end`: a non-streamed request had no attempt over its timeout.
    pub(super) fn no_unstreamed_attempt_over_timeout(&mut self, streamed: bool) {
        if let Some((attempt, took, limit)) = self.req.over_timeout
            && !streamed
        {
            let detail = format!(
                "attempt {attempt} (not streamed) took {}: its timeout is {}",
                secs(took),
                secs(limit)
            );
            self.fail(Invariant::NoWaitPastDeadline, detail);
        }
    }
}
