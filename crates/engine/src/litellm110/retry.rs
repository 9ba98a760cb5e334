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

use crate::classify::RecoveryScope;
use crate::config::KindPolicy;
use crate::event::GiveUpReason;
use crate::failure::{FailureKind, ProviderFailure};
use crate::retry::{RETRYABLE_4XX, RetryContext, RetryDecision, RetryPolicy};

/// LiteLLM 1.110.2's retry rules.
#[derive(Clone, Copy, Debug, Default)]
pub struct LiteLlm110RetryPolicy;

impl RetryPolicy for LiteLlm110RetryPolicy {
    fn decide(
        &self,
        failure: &ProviderFailure,
        ctx: &RetryContext<'_>,
        retries_done: u32,
    ) -> RetryDecision {
        let classified = match ctx.scope {
            RecoveryScope::RetryPolicy => None,
            RecoveryScope::GeneralFallbacks => Some(GiveUpReason::ClassifiedGeneralFallbacks),
            RecoveryScope::RemainingDeployments => {
                Some(GiveUpReason::ClassifiedRemainingDeployments)
            }
        };
        if let Some(reason) = classified.or_else(|| Self::not_worth_retrying(failure, ctx)) {
            return RetryDecision::GiveUp(reason);
        }
        let max_retries = Self::max_retries(ctx.first_failure.unwrap_or(failure.kind), ctx);
        if retries_done >= max_retries {
            return RetryDecision::GiveUp(GiveUpReason::RetriesExhausted);
        }
        RetryDecision::Retry { max_retries }
    }

    fn waits_before_giving_up(&self, reason: GiveUpReason, ctx: &RetryContext<'_>) -> bool {
        reason == GiveUpReason::RetriesExhausted
            && ctx.request.num_retries != Some(0)
            && ctx
                .first_failure
                .is_none_or(|kind| Self::max_retries(kind, ctx) > 0)
    }

    fn retry_reaches_later_orders(&self) -> bool {
        true
    }

    fn failover_hops_retry(&self) -> bool {
        true
    }
}

impl LiteLlm110RetryPolicy {
    /// The policy that applies to the group: its own, else the router's.
    fn policy<'a>(ctx: &RetryContext<'a>) -> Option<&'a KindPolicy> {
        ctx.settings
            .model_group_retry_policy
            .get(ctx.model_group)
            .or(ctx.settings.retry_policy.as_ref())
    }

    /// The budget a group visit whose first failure is of `kind` gets.
    pub fn max_retries(kind: FailureKind, ctx: &RetryContext<'_>) -> u32 {
        if ctx.request.num_retries == Some(0) {
            return 0;
        }
        Self::policy(ctx)
            .and_then(|p| p.get(kind))
            .or(ctx.request.num_retries)
            .or(ctx.deployment.and_then(|d| d.num_retries))
            .unwrap_or(ctx.settings.num_retries)
    }

    /// `Some(reason)` when the failure is not worth retrying.
    pub fn not_worth_retrying(
        failure: &ProviderFailure,
        ctx: &RetryContext<'_>,
    ) -> Option<GiveUpReason> {
        let kind = failure.kind;
        if kind == FailureKind::ContextWindowExceeded && ctx.context_window_fallbacks_configured {
            return Some(GiveUpReason::ContextWindowFallbackExists);
        }
        if kind == FailureKind::ContentPolicyViolation && ctx.content_policy_fallbacks_configured {
            return Some(GiveUpReason::ContentPolicyFallbackExists);
        }
        let in_policy = Self::policy(ctx).is_some_and(|p| p.get(kind).is_some());
        if kind == FailureKind::NotFound && !in_policy {
            return Some(GiveUpReason::NotFound);
        }
        if let Some(status) = failure.effective_status()
            && (400..500).contains(&status)
            && !RETRYABLE_4XX.contains(&status)
            && !in_policy
        {
            return Some(GiveUpReason::NonRetryableStatus);
        }
        if ctx.deployment.is_none() && ctx.first_failure == Some(kind) {
            // The visit's first pick failed: nothing was tried, nothing is retried.
            return Some(GiveUpReason::NoHealthyDeployment);
        }
        let healthy = ctx.group_healthy_left;
        if kind == FailureKind::RateLimit && healthy == 0 && ctx.fallbacks_configured {
            return Some(GiveUpReason::RateLimitNoHealthyWithFallbacks);
        }
        if matches!(
            kind,
            FailureKind::Authentication | FailureKind::PermissionDenied
        ) && (ctx.group_size <= 1 || healthy == 0)
        {
            return Some(GiveUpReason::AuthSingleDeployment);
        }
        if healthy == 0 && ctx.group_size > 1 {
            return Some(GiveUpReason::NoHealthyDeployment);
        }
        None
    }
}
