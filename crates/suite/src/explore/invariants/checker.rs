//! The checker as the run sees it: an [`EventSink`] beside the recorder (one
//! [`ReplicaChecker`] per router of a fleet, so each replica's cooldowns are checked apart), and
//! the end-of-run checks when the run is over.
//!
//! Separate from the checks themselves (`verdict` and the families) because this is the only
//! part that holds the lock and meets the engine's sink.

use std::sync::{Arc, Mutex, PoisonError};

use routersim_engine::event::{EventSink, RoutingEvent};
use routersim_report::summary::Summary;
use tokio::time::Instant;

use super::bounds::Bounds;
use super::invariant::Violation;
use super::state::State;
use super::verdict::Verdict;

/// The invariant checker: an [`EventSink`] that checks as events arrive, and
/// [`Checker::finish`] for the end-of-run checks.
#[derive(Debug)]
pub struct Checker {
    bounds: Bounds,
    start: Instant,
    pub(super) state: Mutex<State>,
}

impl Checker {
    /// A checker for a run that started at `start`.
    pub fn new(bounds: Bounds, start: Instant) -> Self {
        // One cooldown slot per deployment and replica: a fleet's replicas each keep their
        // own cooldowns (with `state: shared`, their own view of the store's).
        let slots = bounds.deployments.len() * bounds.replicas.max(1);
        Self {
            bounds,
            start,
            state: Mutex::new(State {
                cooling: vec![None; slots],
                first_until: vec![None; slots],
                ..State::default()
            }),
        }
    }

    /// The bounds it checks against.
    pub fn bounds(&self) -> &Bounds {
        &self.bounds
    }

    /// The end-of-run checks, given the run's summary (if it produced one); then the first
    /// violation seen, with how many there were in all.
    pub fn finish(&self, summary: Option<&Summary>) -> Option<(Violation, u64)> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let mut v = Verdict {
            state: &mut state,
            start: self.start,
            replica: 0,
        };
        v.finish(&self.bounds, summary);
        let count = v.state.violations;
        v.state.first.clone().map(|first| (first, count))
    }

    /// The first violation so far.
    pub fn first_violation(&self) -> Option<Violation> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.first.clone()
    }
}

impl Checker {
    /// Checks one event of router replica `replica` (0 for a single router).
    pub fn emit_from(&self, replica: usize, event: &RoutingEvent) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let mut v = Verdict {
            state: &mut state,
            start: self.start,
            replica: replica.min(self.bounds.replicas.saturating_sub(1)),
        };
        v.on_event(&self.bounds, event);
    }
}

/// A single router's events.
impl EventSink for Checker {
    fn emit(&self, event: &RoutingEvent) {
        self.emit_from(0, event);
    }
}

/// The sink of one replica of a fleet: its events go to the shared checker, tagged with it.
#[derive(Debug)]
pub struct ReplicaChecker {
    /// The replica (`0..replicas`).
    pub replica: usize,
    /// The run's checker.
    pub checker: Arc<Checker>,
}

impl EventSink for ReplicaChecker {
    fn emit(&self, event: &RoutingEvent) {
        self.checker.emit_from(self.replica, event);
    }
}
