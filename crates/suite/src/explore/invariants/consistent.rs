//! [`Invariant::EventsConsistent`] over a request's attempts: they are numbered 1, 2, 3…, each
//! `attempt_start` is closed by its `attempt_end` before the next one starts (a hedge race
//! allows one overlap, and its cancelled loser never ends), no attempt starts before the wait
//! announced before it is over, a `stream_chunk` comes inside an attempt, and `request_end`
//! counts the attempts, retries and fallback hops its events showed, with no attempt open.
//!
//! The stream's own consistency (a break's `after_content`, a continuation after content) is
//! checked with the commit, in `commit`.

use std::sync::Arc;

use tokio::time::Instant;

use super::invariant::Invariant;
use super::request::RequestCheck;
use super::verdict::secs;

/// An attempt in flight: (number, start, deployment id).
pub(super) type OpenAttempt = (u32, Instant, Arc<str>);

impl RequestCheck<'_, '_> {
    /// Whether the attempt starting now is a hedge: racing the open attempt, the one overlap
    /// a race allows.
    pub(super) fn starts_a_hedge(&self) -> bool {
        self.req.racing && self.req.open_attempt.is_some() && self.req.hedge_attempt.is_none()
    }

    /// No attempt starts while another is open (but a hedge), and attempts count from 1.
    pub(super) fn attempt_starts_in_turn(&mut self, attempt: u32, hedge: bool) {
        if let Some((open, _, _)) = &self.req.open_attempt
            && !hedge
        {
            let detail = format!("attempt {attempt} starts before attempt {open} ended");
            self.fail(Invariant::EventsConsistent, detail);
        }
        if attempt != self.req.attempts + 1 {
            let detail = format!(
                "attempt {attempt} starts after {} attempt(s): attempts count from 1",
                self.req.attempts
            );
            self.fail(Invariant::EventsConsistent, detail);
        }
    }

    /// No attempt starts before the wait announced before it is over.
    pub(super) fn attempt_after_its_wait(&mut self, attempt: u32) {
        if let Some(until) = self.req.wait_until.take()
            && self.at < until
        {
            let detail = format!(
                "attempt {attempt} starts {} before the wait before it is over",
                secs(until - self.at)
            );
            self.fail(Invariant::EventsConsistent, detail);
        }
    }

    /// An `attempt_end` closes the open attempt (in a hedge race, either of the two).
    pub(super) fn attempt_ends_the_open_one(&mut self, attempt: u32, start: Instant) {
        let is = |open: &Option<OpenAttempt>| {
            open.as_ref()
                .is_some_and(|(n, s, _)| *n == attempt && *s == start)
        };
        if self.req.racing && is(&self.req.hedge_attempt) {
            self.req.hedge_attempt = None;
        } else if self.req.racing && is(&self.req.open_attempt) {
            // The hedge, if any, is the race's open attempt now.
            self.req.open_attempt = self.req.hedge_attempt.take();
        } else {
            match self.req.open_attempt.take() {
                Some((open, open_start, _)) if open == attempt && open_start == start => {}
                other => {
                    let detail = format!(
                        "attempt_end of attempt {attempt}, but the open attempt is {:?}",
                        other.map(|(n, _, d)| (n, d))
                    );
                    self.fail(Invariant::EventsConsistent, detail);
                }
            }
        }
    }

    /// Content comes inside an attempt: the open one, if there is one.
    pub(super) fn chunk_inside_an_attempt(&mut self) -> Option<OpenAttempt> {
        let open = self.req.open_attempt.clone();
        if open.is_none() {
            let detail = "stream_chunk outside any attempt".to_string();
            self.fail(Invariant::EventsConsistent, detail);
        }
        open
    }

    /// A request ends with no attempt open.
    pub(super) fn nothing_open_at_the_end(&mut self) {
        if let Some((open, _, _)) = &self.req.open_attempt {
            let detail = format!("request_end while attempt {open} is open");
            self.fail(Invariant::EventsConsistent, detail);
        }
    }

    /// `request_end` counts what the request's events showed (an attempt a hedge race
    /// cancelled is not counted).
    pub(super) fn counts_match_the_events(&mut self, attempts: u32, retries: u32, fallbacks: u32) {
        let req = &self.req;
        let seen = (req.attempts - req.cancelled, req.retries, req.fallbacks);
        if (attempts, retries, fallbacks) != seen {
            let detail = format!(
                "request_end counts {attempts} attempt(s), {retries} retry(ies), \
                 {fallbacks} fallback(s); the events showed {}, {}, {}",
                seen.0, seen.1, seen.2
            );
            self.fail(Invariant::EventsConsistent, detail);
        }
    }
}
