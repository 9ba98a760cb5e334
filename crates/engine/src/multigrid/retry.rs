//! Multigrid's inner loop: how many tries one candidate gets, and which failures it retries.

use crate::event::GiveUpReason;
use crate::failure::ProviderFailure;
use crate::request::RouterFailure;
use crate::retry::{RetryContext, RetryDecision, RetryPolicy};

/// Retries a transient failure on the same candidate until it has had
/// `attempts_per_candidate` tries (the first included); anything else moves the walk on.
#[derive(Clone, Copy, Debug, Default)]
pub struct MultigridRetryPolicy;

impl MultigridRetryPolicy {
    /// The tries a candidate gets: the request's `num_retries + 1`, else the router's
    /// `attempts_per_candidate` (never fewer than one).
    pub fn attempts(ctx: &RetryContext<'_>) -> u32 {
        ctx.request
            .num_retries
            .map_or(ctx.settings.attempts_per_candidate, |n| n.saturating_add(1))
            .max(1)
    }

    /// Whether a retry on the same route could help (the seed leaves "What counts as
    /// transient" empty; these are the failures a caller's own retry could help).
    pub fn is_transient(failure: &ProviderFailure) -> bool {
        RouterFailure {
            kind: failure.kind,
            status: None,
            retry_after: None,
        }
        .is_retryable()
    }
}

impl RetryPolicy for MultigridRetryPolicy {
    fn decide(
        &self,
        failure: &ProviderFailure,
        ctx: &RetryContext<'_>,
        retries_done: u32,
    ) -> RetryDecision {
        if !Self::is_transient(failure) {
            return RetryDecision::GiveUp(GiveUpReason::NonRetryableStatus);
        }
        let max_retries = Self::attempts(ctx) - 1;
        if retries_done >= max_retries {
            return RetryDecision::GiveUp(GiveUpReason::RetriesExhausted);
        }
        RetryDecision::Retry { max_retries }
    }
}
