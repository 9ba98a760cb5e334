//! The checker as the run sees it: an [`EventSink`] beside the recorder, and the end-of-run
//! checks when the run is over.
//!
//! Separate from the checks themselves (`verdict` and the families) because this is the only
//! part that holds the lock and meets the engine's sink.

use std::sync::{Mutex, PoisonError};

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
        let slots = bounds.deployments.len();
        Self {
            bounds,
            start,
            state: Mutex::new(State {
                cooling: vec![None; slots],
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

impl EventSink for Checker {
    fn emit(&self, event: &RoutingEvent) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let mut v = Verdict {
            state: &mut state,
            start: self.start,
        };
        v.on_event(&self.bounds, event);
    }
}
