//! [`Invariant::AttemptBound`]: attempts per request ≤ [`Bounds::max_attempts`] (one more
//! per hedge), every `retry` within its `budget` and every budget ≤ the largest retry count
//! the config and the traffic can produce, every fallback hop within `max_fallbacks` levels
//! and the group count.
//!
//! [`Bounds::max_attempts`]: super::Bounds::max_attempts

use std::sync::Arc;

use super::invariant::Invariant;
use super::request::RequestCheck;

impl RequestCheck<'_, '_> {
    /// The attempt just counted is within what the settings allow.
    pub(super) fn attempt_within_bound(&mut self, deployment_id: &Arc<str>) {
        if self.req.attempts > self.bounds.max_attempts + self.req.hedges {
            let detail = format!(
                "attempt {} on {deployment_id}: the settings allow at most {}",
                self.req.attempts, self.bounds.max_attempts
            );
            self.fail(Invariant::AttemptBound, detail);
        }
    }

    /// A retry is within its budget, and the budget within what the settings can give.
    pub(super) fn retry_within_budget(&mut self, retry: u32, budget: u32, model_group: &Arc<str>) {
        if retry > budget || budget > self.bounds.max_retry_budget {
            let detail = format!(
                "retry {retry} of budget {budget} in {model_group} (the largest budget \
                 the settings give is {})",
                self.bounds.max_retry_budget
            );
            self.fail(Invariant::AttemptBound, detail);
        }
    }

    /// The hop just counted is within `max_fallbacks` levels and the other groups.
    pub(super) fn fallback_within_bounds(
        &mut self,
        source: &Arc<str>,
        target: &Arc<str>,
        depth: u32,
    ) {
        let bounds = self.bounds;
        if depth > bounds.max_fallback_depth || self.req.fallbacks > bounds.max_fallback_hops {
            let detail = format!(
                "fallback hop {} ({source} -> {target}) at depth {depth}: max_fallbacks \
                 is {}, and there are {} other group(s)",
                self.req.fallbacks, bounds.max_fallback_depth, bounds.max_fallback_hops
            );
            self.fail(Invariant::AttemptBound, detail);
        }
    }

    /// The attempts `request_end` counts are within what the settings allow.
    pub(super) fn attempts_within_bound_at_the_end(&mut self, attempts: u32) {
        if attempts > self.bounds.max_attempts + self.req.hedges {
            let detail = format!(
                "{attempts} attempts: the settings allow at most {}",
                self.bounds.max_attempts
            );
            self.fail(Invariant::AttemptBound, detail);
        }
    }
}
