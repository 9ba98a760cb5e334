//! [`Invariant::CooldownEnds`] and the cooldown events' consistency: a cooldown's `until` is
//! `at + duration` over no live cooldown, and over a live one what the profile's re-write rule
//! says ([`Bounds::cooldown_rewrite`]: the later of the old deadline and `at + duration`, or
//! under `litellm-1.110` the earlier of the first write's deadline and `at + duration`), `cooldown_end` comes at exactly `until`
//! and only for a cooling deployment, `recovered` clears it, and no event comes later than an
//! open deadline + [`TIMER_SLACK`].
//!
//! Separate from the request checks: these events concern a deployment, whichever request
//! (if any) caused them.

use std::sync::Arc;
use std::time::Duration;

use routersim_engine::event::{
    CooldownReason, CooldownSource, EventVisitor, RecoveredVia, RoutingEvent,
};
use routersim_engine::failure::FailureKind;
use tokio::time::Instant;

use super::bounds::{Bounds, CooldownRewrite};
use super::invariant::{Invariant, TIMER_SLACK};
use super::verdict::{Verdict, secs};

impl Verdict<'_> {
    /// A cooldown whose deadline passed must have ended before time moved past it.
    pub(super) fn check_cooldowns_ended(
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

    /// Keeps the soonest open deadline (the per-event fast path) after the slots changed.
    fn recompute_soonest(&mut self) {
        self.state.soonest = self.state.cooling.iter().flatten().min().copied();
    }

    /// Checks a cooldown event (`cooldown_set`, `cooldown_end`, `recovered`); false for any
    /// other kind of event, which is not a deployment's cooldown.
    pub(super) fn on_cooldown_event(&mut self, bounds: &Bounds, event: &RoutingEvent) -> bool {
        event.kind.visit(&mut CooldownCheck {
            verdict: self,
            bounds,
            request_id: event.request_id,
            at: event.at,
            name: event.kind.name(),
        })
    }
}

/// One cooldown event, checked: where to report, the deployments' slots, and the event's
/// request (the one that caused it, if any), time and kind name.
struct CooldownCheck<'c, 'v> {
    verdict: &'c mut Verdict<'v>,
    bounds: &'c Bounds,
    request_id: Option<u64>,
    at: Instant,
    name: &'static str,
}

impl CooldownCheck<'_, '_> {
    /// The deployment's cooldown slot on the event's replica; a deployment not in the config
    /// is a violation.
    fn slot(&mut self, id: &str) -> Option<usize> {
        let per_replica = self.bounds.deployments.len();
        let replica = self.verdict.replica;
        let slot = self
            .bounds
            .deployments
            .get(id)
            .map(|d| replica * per_replica + d.index);
        if slot.is_none() {
            let detail = format!("{} names deployment {id:?}, not in the config", self.name);
            self.verdict.fail(
                Invariant::EventsConsistent,
                self.request_id,
                Some(self.at),
                detail,
            );
        }
        slot
    }

    /// Seconds from the run's start, for messages.
    fn secs_at(&self, at: Instant) -> f64 {
        self.verdict.ms(at) / 1000.0
    }
}

impl<'e> EventVisitor<'e> for CooldownCheck<'_, '_> {
    /// Whether the event is a cooldown's (checked here).
    type Output = bool;

    fn cooldown_set(
        &mut self,
        _model_group: &'e Arc<str>,
        deployment_id: &'e Arc<str>,
        _reason: CooldownReason,
        _failure: FailureKind,
        duration: Duration,
        _source: CooldownSource,
        until: Instant,
    ) -> bool {
        let Some(slot) = self.slot(deployment_id) else {
            return true;
        };
        let asked = self.at + duration;
        let state = &mut *self.verdict.state;
        let first = state.first_until[slot];
        // Live: a deadline still ahead (the engine's store: `until > now`). One that ends at
        // this very instant, its `cooldown_end` not yet emitted, is over: this write begins a
        // new cooldown.
        let live = state.cooling[slot].filter(|old| *old > self.at);
        let (expected, rule) = match (live, self.bounds.cooldown_rewrite) {
            (None, _) => (asked, "at + duration"),
            (Some(old), CooldownRewrite::KeepLater) => (
                old.max(asked),
                "the later of the old deadline and at + duration",
            ),
            (Some(old), CooldownRewrite::FirstOrLatest) => (
                first.unwrap_or(old).min(asked),
                "the earlier of the first write's deadline and at + duration",
            ),
        };
        if live.is_none() {
            state.first_until[slot] = Some(asked);
        }
        if until != expected {
            let detail = format!(
                "cooldown_set on {deployment_id} for {} says until {:.3} s; {rule} is {:.3} s",
                secs(duration),
                self.secs_at(until),
                self.secs_at(expected)
            );
            let (id, at) = (self.request_id, Some(self.at));
            self.verdict
                .fail(Invariant::EventsConsistent, id, at, detail);
        }
        self.verdict.state.cooling[slot] = Some(until);
        self.verdict.recompute_soonest();
        true
    }

    fn cooldown_end(&mut self, _model_group: &'e Arc<str>, deployment_id: &'e Arc<str>) -> bool {
        let Some(slot) = self.slot(deployment_id) else {
            return true;
        };
        let at = Some(self.at);
        match self.verdict.state.cooling[slot].take() {
            None => {
                let detail = format!("cooldown_end on {deployment_id}, which is not cooling");
                self.verdict
                    .fail(Invariant::EventsConsistent, None, at, detail);
            }
            Some(until) if until != self.at => {
                let detail = format!(
                    "the cooldown of {deployment_id} ends at {:.3} s, its deadline is {:.3} s",
                    self.secs_at(self.at),
                    self.secs_at(until)
                );
                self.verdict.fail(Invariant::CooldownEnds, None, at, detail);
            }
            Some(_) => {}
        }
        self.verdict.recompute_soonest();
        true
    }

    fn recovered(
        &mut self,
        _model_group: &'e Arc<str>,
        deployment_id: &'e Arc<str>,
        _via: RecoveredVia,
    ) -> bool {
        if let Some(slot) = self.slot(deployment_id) {
            self.verdict.state.cooling[slot] = None;
            self.verdict.recompute_soonest();
        }
        true
    }
}

/// The deployment in cooldown slot `slot`: its id, and its replica in a fleet.
fn deployment_at(bounds: &Bounds, slot: usize) -> String {
    let per_replica = bounds.deployments.len().max(1);
    let (replica, index) = (slot / per_replica, slot % per_replica);
    let id = bounds
        .deployments
        .iter()
        .find(|(_, d)| d.index == index)
        .map_or("?", |(id, _)| id);
    if bounds.replicas > 1 {
        format!("{id} (replica {replica})")
    } else {
        id.to_string()
    }
}
