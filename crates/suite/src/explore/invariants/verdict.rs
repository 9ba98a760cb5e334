//! The checker's state and its event dispatch: requests in flight, ended ids, cooldown
//! slots; background events (cooldowns, probes) and the end-of-run checks.
//!
//! Separate from `request`, which holds the long per-request match.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use routersim_engine::event::{EventKind, RoutingEvent};
use routersim_report::summary::Summary;
use tokio::time::Instant;

use super::bounds::Bounds;
use super::{Invariant, TIMER_SLACK, Violation};

/// A request in flight, as its events have shown it so far.
#[derive(Debug, Default)]
pub(super) struct RequestState {
    pub(super) attempts: u32,
    pub(super) retries: u32,
    pub(super) fallbacks: u32,
    /// The attempt started and not yet ended: (number, start, deployment id).
    pub(super) open_attempt: Option<(u32, Instant, Arc<str>)>,
    /// A `stream_chunk` reached the caller.
    pub(super) content: bool,
    /// `stream_continued` was seen and its attempt (on this deployment) has not started yet.
    pub(super) continuation_pending: Option<Arc<str>>,
    /// A continuation happened.
    pub(super) continued: bool,
    /// The attempt after a `wait` may not start before this.
    pub(super) wait_until: Option<Instant>,
    /// The last content chunk of the open attempt.
    pub(super) last_chunk: Option<Instant>,
    /// The first attempt that outlived its timeout: (attempt, took, limit); a violation
    /// unless the request turns out to be streamed.
    pub(super) over_timeout: Option<(u32, Duration, Duration)>,
    /// A hedge race (`hedged` seen, `hedge_end` not yet): a second attempt may run beside the
    /// open one; this is it.
    pub(super) racing: bool,
    pub(super) hedge_attempt: Option<(u32, Instant, Arc<str>)>,
    /// Hedges started (each allows one attempt more than the settings' bound).
    pub(super) hedges: u32,
    /// Attempts a hedge race cancelled: started, never ended, not in `request_end`'s count.
    pub(super) cancelled: u32,
    /// The latest attempt to start: (number, when) (see `deadline`).
    pub(super) last_attempt_start: Option<(u32, Instant)>,
    /// When the latest wait ends (see `deadline`).
    pub(super) latest_wait_end: Option<Instant>,
}

/// Everything the checker keeps.
#[derive(Debug, Default)]
pub(super) struct State {
    pub(super) requests: HashMap<u64, RequestState>,
    /// One bit per ended request id.
    pub(super) ended: Vec<u64>,
    pub(super) ended_count: u64,
    /// Open cooldown deadline per deployment slot.
    pub(super) cooling: Vec<Option<Instant>>,
    /// The soonest open deadline (a fast path for the per-event check).
    pub(super) soonest: Option<Instant>,
    pub(super) last_request_end: Option<Instant>,
    pub(super) first: Option<Violation>,
    pub(super) violations: u64,
}

/// The checking logic over the state, one event at a time.
pub(super) struct Verdict<'a> {
    pub(super) state: &'a mut State,
    pub(super) start: Instant,
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
            None => self.on_background_event(bounds, event),
        }
    }

    /// A cooldown whose deadline passed must have ended before time moved past it.
    fn check_cooldowns_ended(
        &mut self,
        bounds: &Bounds,
        now: Instant,
        event: Option<&RoutingEvent>,
    ) {
        let lapsed = |until: Instant| until + TIMER_SLACK < now;
        if self.state.soonest.is_none_or(|soonest| !lapsed(soonest)) {
            return;
        }
        let late: Vec<(usize, Instant)> = self
            .state
            .cooling
            .iter()
            .enumerate()
            .filter_map(|(i, until)| until.filter(|u| lapsed(*u)).map(|u| (i, u)))
            .collect();
        for (slot, until) in late {
            let id = deployment_at(bounds, slot);
            let when = match event {
                Some(e) => format!(
                    "a {} event at {:.3} s",
                    e.kind.name(),
                    self.ms(now) / 1000.0
                ),
                None => format!("the run's end at {:.3} s", self.ms(now) / 1000.0),
            };
            self.fail(
                Invariant::CooldownEnds,
                None,
                Some(until),
                format!(
                    "deployment {id} cooling until {:.3} s has no cooldown_end or recovered \
                     by {when}",
                    self.ms(until) / 1000.0
                ),
            );
            // Report each lapse once.
            self.state.cooling[slot] = None;
        }
        self.recompute_soonest();
    }

    fn recompute_soonest(&mut self) {
        self.state.soonest = self.state.cooling.iter().flatten().min().copied();
    }

    pub(super) fn slot(
        &mut self,
        bounds: &Bounds,
        id: &str,
        event: &RoutingEvent,
    ) -> Option<usize> {
        let slot = bounds.deployments.get(id).map(|d| d.index);
        if slot.is_none() {
            self.fail(
                Invariant::EventsConsistent,
                event.request_id,
                Some(event.at),
                format!(
                    "{} names deployment {id:?}, not in the config",
                    event.kind.name()
                ),
            );
        }
        slot
    }

    fn on_background_event(&mut self, bounds: &Bounds, event: &RoutingEvent) {
        match &event.kind {
            EventKind::CooldownSet {
                deployment_id,
                duration,
                until,
                ..
            } => {
                let Some(slot) = self.slot(bounds, deployment_id, event) else {
                    return;
                };
                let asked = event.at + *duration;
                let expected = self.state.cooling[slot].map_or(asked, |old| old.max(asked));
                if *until != expected {
                    self.fail(
                        Invariant::EventsConsistent,
                        event.request_id,
                        Some(event.at),
                        format!(
                            "cooldown_set on {deployment_id} for {} says until {:.3} s; the \
                             later of the old deadline and at + duration is {:.3} s",
                            secs(*duration),
                            self.ms(*until) / 1000.0,
                            self.ms(expected) / 1000.0
                        ),
                    );
                }
                self.state.cooling[slot] = Some(*until);
                self.recompute_soonest();
            }
            EventKind::CooldownEnd { deployment_id, .. } => {
                let Some(slot) = self.slot(bounds, deployment_id, event) else {
                    return;
                };
                match self.state.cooling[slot].take() {
                    None => self.fail(
                        Invariant::EventsConsistent,
                        None,
                        Some(event.at),
                        format!("cooldown_end on {deployment_id}, which is not cooling"),
                    ),
                    Some(until) if until != event.at => self.fail(
                        Invariant::CooldownEnds,
                        None,
                        Some(event.at),
                        format!(
                            "the cooldown of {deployment_id} ends at {:.3} s, its deadline \
                             is {:.3} s",
                            self.ms(event.at) / 1000.0,
                            self.ms(until) / 1000.0
                        ),
                    ),
                    Some(_) => {}
                }
                self.recompute_soonest();
            }
            EventKind::Recovered { deployment_id, .. } => {
                if let Some(slot) = self.slot(bounds, deployment_id, event) {
                    self.state.cooling[slot] = None;
                    self.recompute_soonest();
                }
            }
            _ => {}
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
        if matches!(
            event.kind,
            EventKind::CooldownSet { .. }
                | EventKind::CooldownEnd { .. }
                | EventKind::Recovered { .. }
        ) {
            self.on_background_event(bounds, event);
            return;
        }
        let mut req = self.state.requests.remove(&id).unwrap_or_default();
        req.track_walk(event);
        let ended = self.on_request(bounds, id, event, &mut req);
        if ended {
            self.check_walk_deadline(bounds, id, event, &req);
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

fn deployment_at(bounds: &Bounds, slot: usize) -> &str {
    bounds
        .deployments
        .iter()
        .find(|(_, d)| d.index == slot)
        .map_or("?", |(id, _)| id)
}
