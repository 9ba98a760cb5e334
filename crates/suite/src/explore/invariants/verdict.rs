//! Reporting a violation and the checker's event dispatch: each event to the cooldown checks
//! or to its request's checks, ended requests remembered, client sends, and the end-of-run
//! checks.
//!
//! Separate from the checks (`cooldowns`, and `request` with its families), which report
//! through [`Verdict::fail`].

use std::time::Duration;

use routersim_engine::event::{EventKind, RoutingEvent};
use routersim_report::summary::Summary;
use tokio::time::Instant;

use super::bounds::Bounds;
use super::invariant::{Invariant, Violation};
use super::state::State;

/// The checking logic over the state, one event at a time.
pub(super) struct Verdict<'a> {
    pub(super) state: &'a mut State,
    pub(super) start: Instant,
    /// The router replica whose event is checked (0 for a single router).
    pub(super) replica: usize,
}

pub(super) fn secs(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}

impl Verdict<'_> {
    pub(super) fn ms(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.start).as_secs_f64() * 1000.0
    }

    pub(super) fn fail(
        &mut self,
        invariant: Invariant,
        id: Option<u64>,
        at: Option<Instant>,
        detail: String,
    ) {
        self.state.violations += 1;
        if self.state.first.is_none() {
            let at_ms = at.map(|at| self.ms(at));
            self.state.first = Some(Violation {
                invariant,
                request_id: id,
                at_ms,
                detail,
            });
        }
    }

    fn has_ended(&self, id: u64) -> bool {
        let (word, bit) = ((id / 64) as usize, id % 64);
        self.state
            .ended
            .get(word)
            .is_some_and(|w| w & (1 << bit) != 0)
    }

    fn mark_ended(&mut self, id: u64) {
        let (word, bit) = ((id / 64) as usize, id % 64);
        if self.state.ended.len() <= word {
            self.state.ended.resize(word + 1, 0);
        }
        self.state.ended[word] |= 1 << bit;
        self.state.ended_count += 1;
    }

    pub(super) fn on_event(&mut self, bounds: &Bounds, event: &RoutingEvent) {
        self.check_cooldowns_ended(bounds, event.at, Some(event));
        match event.request_id {
            Some(id) => self.on_request_event(bounds, id, event),
            None => {
                self.on_cooldown_event(bounds, event);
            }
        }
    }

    fn on_request_event(&mut self, bounds: &Bounds, id: u64, event: &RoutingEvent) {
        let at = event.at;
        if id >= bounds.arrivals {
            self.fail(
                Invariant::EndsOnce,
                Some(id),
                Some(at),
                format!(
                    "{} for request {id}, but the run has {} arrivals (ids 0..{})",
                    event.kind.name(),
                    bounds.arrivals,
                    bounds.arrivals
                ),
            );
            return;
        }
        if let EventKind::ClientTry { try_number, .. } = event.kind
            && try_number > 0
        {
            self.client_send(bounds, id, try_number, at);
        }
        if self.has_ended(id) {
            self.fail(
                Invariant::EndsOnce,
                Some(id),
                Some(at),
                format!("{} after the request's request_end", event.kind.name()),
            );
            return;
        }
        // Cooldown events carry the request that caused them.
        if self.on_cooldown_event(bounds, event) {
            return;
        }
        let mut req = self.state.requests.remove(&id).unwrap_or_default();
        let ended = self.on_request(bounds, id, event, &mut req);
        if ended {
            self.mark_ended(id);
            self.state.last_request_end = Some(
                self.state
                    .last_request_end
                    .map_or(at, |last: Instant| last.max(at)),
            );
        } else {
            self.state.requests.insert(id, req);
        }
    }

    /// A client's send `try_number` of request `id` (`client_retries`): it starts the request
    /// again, so the earlier send's end no longer counts as its end.
    fn client_send(&mut self, bounds: &Bounds, id: u64, try_number: u32, at: Instant) {
        if try_number > bounds.client_retries || !self.has_ended(id) {
            let detail = format!(
                "client send {try_number} of request {id}: client_retries is {}{}",
                bounds.client_retries,
                if self.has_ended(id) {
                    ""
                } else {
                    ", and the earlier send has not ended"
                }
            );
            self.fail(Invariant::EndsOnce, Some(id), Some(at), detail);
            return;
        }
        let (word, bit) = ((id / 64) as usize, id % 64);
        self.state.ended[word] &= !(1 << bit);
        self.state.ended_count -= 1;
    }

    pub(super) fn finish(&mut self, bounds: &Bounds, summary: Option<&Summary>) {
        let end = self.state.last_request_end.unwrap_or(self.start);
        // A deadline at the end instant itself may not have been swept yet: clipped.
        self.check_cooldowns_ended(bounds, end, None);
        if self.state.ended_count != bounds.arrivals {
            let missing = (0..bounds.arrivals).find(|&id| !self.has_ended(id));
            let detail = format!(
                "{} arrivals, {} request_end(s){}",
                bounds.arrivals,
                self.state.ended_count,
                missing.map_or(String::new(), |m| format!("; request {m} never ended"))
            );
            self.fail(Invariant::EndsOnce, missing, None, detail);
        }
        // A client's sends are requests of their own; its user requests are the arrivals.
        let users = |s: &Summary| s.routing.as_ref().map_or(s.requests, |r| r.user_requests);
        if let Some(s) = summary
            && (s.ok + s.failed != s.requests || users(s) != bounds.arrivals)
        {
            let detail = format!(
                "summary: requests {}, ok {} + failed {} = {}, user requests {}; arrivals {}",
                s.requests,
                s.ok,
                s.failed,
                s.ok + s.failed,
                users(s),
                bounds.arrivals
            );
            self.fail(Invariant::EndsOnce, None, None, detail);
        }
    }
}
