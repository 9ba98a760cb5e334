//! [`Invariant::CooldownEnds`] and the cooldown events' consistency: a cooldown's `until` is
//! the later of the old deadline and `at + duration`, `cooldown_end` comes at exactly `until`
//! and only for a cooling deployment, `recovered` clears it, and no event comes later than an
//! open deadline + [`TIMER_SLACK`].
//!
//! Separate from the request checks: these events concern a deployment, whichever request
//! (if any) caused them.

use tokio::time::Instant;

use routersim_engine::event::{EventKind, RoutingEvent};

use super::bounds::Bounds;
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

    pub(super) fn on_background_event(&mut self, bounds: &Bounds, event: &RoutingEvent) {
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
}

fn deployment_at(bounds: &Bounds, slot: usize) -> &str {
    bounds
        .deployments
        .iter()
        .find(|(_, d)| d.index == slot)
        .map_or("?", |(id, _)| id)
}
