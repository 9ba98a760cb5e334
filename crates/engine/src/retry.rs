//! The retry decision: how many retries a failure gets, and whether it is worth retrying.
//!
//! Seed (LiteLLM): *"A failure is not worth retrying in these cases: a context window error
//! when `context_window_fallbacks` is set, or a content policy error when
//! `content_policy_fallbacks` is set; a 4xx status other than 401, 403, 408, 409 and 429; a not
//! found error; a rate limit when no healthy deployment is left and fallbacks exist; an auth or
//! permission error in a group with a single deployment; any failure when no healthy deployment
//! is left."* and *"A policy's count for the failure's kind wins over `num_retries`, unless the
//! request itself turned retries off with `num_retries=0`."*

use crate::config::{Deployment, RouterSettings};
use crate::event::GiveUpReason;
use crate::failure::{FailureKind, ProviderFailure};
use crate::request::Request;

/// 4xx statuses that are still worth retrying.
pub const RETRYABLE_4XX: [u16; 5] = [401, 403, 408, 409, 429];

/// What the retry decision knows about the failure's situation.
#[derive(Clone, Copy, Debug)]
pub struct RetryContext<'a> {
    /// The request.
    pub request: &'a Request,
    /// The deployment that failed (`None` when the pick itself failed).
    pub deployment: Option<&'a Deployment>,
    /// The model group being served.
    pub model_group: &'a str,
    /// Deployments in the group.
    pub group_size: usize,
    /// Deployments of the current candidate set still not cooling.
    pub healthy_left: usize,
    /// Whether general fallbacks exist for this request.
    pub fallbacks_configured: bool,
    /// Whether `context_window_fallbacks` is set.
    pub context_window_fallbacks_configured: bool,
    /// Whether `content_policy_fallbacks` is set.
    pub content_policy_fallbacks_configured: bool,
    /// The router's settings.
    pub settings: &'a RouterSettings,
}

/// Decides retry budgets and whether a failure is worth another attempt.
pub trait RetryPolicy {
    /// How many retries a failure of `kind` gets in this group visit.
    fn budget(&self, kind: FailureKind, ctx: &RetryContext<'_>) -> u32;
    /// `Some(reason)` when the failure is not worth retrying, whatever the budget.
    fn not_worth_retrying(
        &self,
        failure: &ProviderFailure,
        ctx: &RetryContext<'_>,
    ) -> Option<GiveUpReason>;
}

/// LiteLLM's retry rules.
#[derive(Clone, Copy, Debug, Default)]
pub struct LiteLlmRetryPolicy;

impl RetryPolicy for LiteLlmRetryPolicy {
    fn budget(&self, kind: FailureKind, ctx: &RetryContext<'_>) -> u32 {
        if ctx.request.num_retries == Some(0) {
            return 0;
        }
        let from_policy = ctx
            .settings
            .model_group_retry_policy
            .get(ctx.model_group)
            .and_then(|p| p.get(kind))
            .or_else(|| ctx.settings.retry_policy.as_ref().and_then(|p| p.get(kind)));
        from_policy
            .or(ctx.request.num_retries)
            .or(ctx.deployment.and_then(|d| d.num_retries))
            .unwrap_or(ctx.settings.num_retries)
    }

    fn not_worth_retrying(
        &self,
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
        if kind == FailureKind::NotFound {
            return Some(GiveUpReason::NotFound);
        }
        if let Some(status) = failure.effective_status()
            && (400..500).contains(&status)
            && !RETRYABLE_4XX.contains(&status)
        {
            return Some(GiveUpReason::NonRetryableStatus);
        }
        if kind.is_rate_limit() && ctx.healthy_left == 0 && ctx.fallbacks_configured {
            return Some(GiveUpReason::RateLimitNoHealthyWithFallbacks);
        }
        if matches!(
            kind,
            FailureKind::Authentication | FailureKind::PermissionDenied
        ) && ctx.group_size <= 1
        {
            return Some(GiveUpReason::AuthSingleDeployment);
        }
        if ctx.healthy_left == 0 {
            return Some(GiveUpReason::NoHealthyDeployment);
        }
        None
    }
}
