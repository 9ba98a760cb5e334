//! LiteLLM 1.110.2's retry decision (its Rust core, measured by the oracle: scenarios 02–07,
//! 28, 40).
//!
//! - The budget of a group visit is set by its **first** failure: the kind's count in the
//!   group's `model_group_retry_policy` when the group has one (it replaces the router's
//!   `retry_policy` as a whole: a kind it lacks falls to `num_retries`), else in the router's
//!   `retry_policy`, else `num_retries`. A failed pick (every deployment cooling) spends a
//!   retry of that budget.
//! - A policy entry for a kind makes it retryable even when its status is a 4xx
//!   (`BadRequestErrorRetries`, `NotFoundErrorRetries`).
//! - "No healthy deployment" counts the whole group (every order level), and stops the
//!   retries only in a group of more than one deployment: a lone deployment cooled by a 404
//!   or 401 is re-picked (and fails to pick) until the budget is spent, ending in
//!   `router_rate_limit`.
//! - After the last failed try the router still waits its backoff (when the budget was not
//!   zero): [`RetryPolicy::waits_before_giving_up`].

use crate::event::GiveUpReason;
use crate::failure::ProviderFailure;
use crate::retry::{LiteLlmRetryPolicy, RetryContext, RetryDecision, RetryPolicy, RetryReading};

/// LiteLLM 1.110.2's retry rules: the documented ones read as its code reads them
/// ([`RetryReading::LITELLM_110`]), and the three things its visit does besides.
#[derive(Clone, Copy, Debug)]
pub struct LiteLlm110RetryPolicy {
    rules: LiteLlmRetryPolicy,
}

impl Default for LiteLlm110RetryPolicy {
    fn default() -> Self {
        Self {
            rules: LiteLlmRetryPolicy::new(RetryReading::LITELLM_110),
        }
    }
}

impl RetryPolicy for LiteLlm110RetryPolicy {
    fn decide(
        &self,
        failure: &ProviderFailure,
        ctx: &RetryContext<'_>,
        retries_done: u32,
    ) -> RetryDecision {
        self.rules.decide(failure, ctx, retries_done)
    }

    fn waits_before_giving_up(
        &self,
        reason: GiveUpReason,
        _failure: &ProviderFailure,
        ctx: &RetryContext<'_>,
    ) -> bool {
        reason == GiveUpReason::RetriesExhausted
            && ctx.request.num_retries != Some(0)
            && ctx
                .first_failure
                .is_none_or(|kind| self.rules.max_retries(kind, ctx) > 0)
    }

    fn retry_reaches_later_orders(&self) -> bool {
        true
    }

    fn failover_hops_retry(&self) -> bool {
        true
    }
}
