//! The retry decision, in tower's shape: one [`RetryPolicy::decide`] per failure says
//! [`RetryDecision::Retry`] or [`RetryDecision::GiveUp`] with the reason, and a separate
//! [`RetryBudget`] (tower's `retry::budget`) may refuse a retry the policy allowed, so a retry
//! storm across requests can be capped without touching the per-request rules.
//!
//! Seed (LiteLLM): *"A failure is not worth retrying in these cases: a context window error
//! when `context_window_fallbacks` is set, or a content policy error when
//! `content_policy_fallbacks` is set; a 4xx status other than 401, 403, 408, 409 and 429; a not
//! found error; a rate limit when no healthy deployment is left and fallbacks exist; an auth or
//! permission error in a group with a single deployment; any failure when no healthy deployment
//! is left."* and *"A policy's count for the failure's kind wins over `num_retries`, unless the
//! request itself turned retries off with `num_retries=0`."*

use std::time::Duration;

use tokio::time::Instant;

use crate::classify::RecoveryScope;
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
    /// Deployments of the whole group (every order level) still not cooling.
    pub group_healthy_left: usize,
    /// The kind of the first failure of this retry loop (this one's, on the first).
    pub first_failure: Option<FailureKind>,
    /// Whether general fallbacks exist for this request.
    pub fallbacks_configured: bool,
    /// Whether `context_window_fallbacks` is set.
    pub context_window_fallbacks_configured: bool,
    /// Whether `content_policy_fallbacks` is set.
    pub content_policy_fallbacks_configured: bool,
    /// The classifier's verdict on how far recovery from this failure may go.
    pub scope: RecoveryScope,
    /// The router's settings.
    pub settings: &'a RouterSettings,
    /// What this retry loop has already waited on the provider's Retry-After.
    pub retry_after_waited: Duration,
}

/// What to do after a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryDecision {
    /// Retry in the same group; `max_retries` is the failure's maximum (reported with the
    /// `retry` event).
    Retry {
        /// The most retries a failure of this kind gets in this group visit.
        max_retries: u32,
    },
    /// Stop retrying in this group.
    GiveUp(GiveUpReason),
}

/// Decides whether a failure gets another attempt in the same group.
pub trait RetryPolicy {
    /// The decision for `failure` after `retries_done` retries in this group visit.
    fn decide(
        &self,
        failure: &ProviderFailure,
        ctx: &RetryContext<'_>,
        retries_done: u32,
    ) -> RetryDecision;

    /// Whether the router still waits the backoff after giving up on `failure` for `reason`,
    /// before it falls back or raises (default: no).
    fn waits_before_giving_up(
        &self,
        _reason: GiveUpReason,
        _failure: &ProviderFailure,
        _ctx: &RetryContext<'_>,
    ) -> bool {
        false
    }

    /// Whether a retry's pick may land on a later `order` level while every deployment of
    /// the level being retried is cooling (default: no; the order walk moves on instead).
    fn retry_reaches_later_orders(&self) -> bool {
        false
    }

    /// Whether each weighted-failover hop runs a retry loop (with its own budget) on the
    /// deployments not yet failed, nested one level deeper (default: no; one attempt on each
    /// deployment not yet tried).
    fn failover_hops_retry(&self) -> bool {
        false
    }
}

/// Where a reading of LiteLLM's retry rules departs from its documentation. The documented
/// reading ([`RetryReading::DOCUMENTED`]) has none of these; LiteLLM 1.110.2's code
/// ([`RetryReading::LITELLM_110`], measured by the oracle) has each. One set of rules, read two
/// ways: [`LiteLlmRetryPolicy`] takes the reading as a parameter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RetryReading {
    /// The budget of a group visit is set by its first failure's kind (else by each
    /// failure's own).
    pub budget_of_first_failure: bool,
    /// A group's `model_group_retry_policy` replaces the router's `retry_policy` as a whole (a
    /// kind it lacks falls to `num_retries`), instead of kind by kind.
    pub group_policy_replaces_router_policy: bool,
    /// A kind the applying policy names is retried whatever its status (a 404, a 400).
    pub policy_overrides_status: bool,
    /// Health is counted over the whole group (every order level): a failed first pick is not
    /// retried, only the provider's 429 counts as a rate limit, an auth error also stops when no
    /// deployment is healthy, and "no healthy deployment" stops only a group of more than one
    /// (a lone deployment is re-picked until the budget is spent).
    pub whole_group_health: bool,
}

impl RetryReading {
    /// The documented rules.
    pub const DOCUMENTED: RetryReading = RetryReading {
        budget_of_first_failure: false,
        group_policy_replaces_router_policy: false,
        policy_overrides_status: false,
        whole_group_health: false,
    };

    /// LiteLLM 1.110.2's code.
    pub const LITELLM_110: RetryReading = RetryReading {
        budget_of_first_failure: true,
        group_policy_replaces_router_policy: true,
        policy_overrides_status: true,
        whole_group_health: true,
    };
}

/// LiteLLM's retry rules (with DeltaLLM's classified scopes honoured first), in a
/// [`RetryReading`] (default: the documented one).
#[derive(Clone, Copy, Debug, Default)]
pub struct LiteLlmRetryPolicy {
    reading: RetryReading,
}

impl RetryPolicy for LiteLlmRetryPolicy {
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
        if let Some(reason) = classified.or_else(|| self.not_worth_retrying(failure, ctx)) {
            return RetryDecision::GiveUp(reason);
        }
        let kind = if self.reading.budget_of_first_failure {
            ctx.first_failure.unwrap_or(failure.kind)
        } else {
            failure.kind
        };
        let max_retries = self.max_retries(kind, ctx);
        if retries_done >= max_retries {
            return RetryDecision::GiveUp(GiveUpReason::RetriesExhausted);
        }
        RetryDecision::Retry { max_retries }
    }
}

impl LiteLlmRetryPolicy {
    /// The rules in `reading`.
    pub const fn new(reading: RetryReading) -> Self {
        Self { reading }
    }

    /// The retry policy's count for `kind`: the group's policy, then the router's (kind by
    /// kind, or the group's replacing the router's as a whole).
    fn policy_count(&self, kind: FailureKind, ctx: &RetryContext<'_>) -> Option<u32> {
        let settings = ctx.settings;
        let group = settings.model_group_retry_policy.get(ctx.model_group);
        if self.reading.group_policy_replaces_router_policy {
            return group.or(settings.retry_policy.as_ref())?.get(kind);
        }
        group
            .and_then(|p| p.get(kind))
            .or_else(|| settings.retry_policy.as_ref().and_then(|p| p.get(kind)))
    }

    /// How many retries a failure of `kind` gets in this group visit: the retry policy's count
    /// for the kind, else the request's `num_retries`, else the deployment's, else the
    /// router's.
    pub fn max_retries(&self, kind: FailureKind, ctx: &RetryContext<'_>) -> u32 {
        if ctx.request.num_retries == Some(0) {
            return 0;
        }
        self.policy_count(kind, ctx)
            .or(ctx.request.num_retries)
            .or(ctx.deployment.and_then(|d| d.num_retries))
            .unwrap_or(ctx.settings.num_retries)
    }

    /// `Some(reason)` when the failure is not worth retrying, however many retries are left.
    pub fn not_worth_retrying(
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
        let in_policy =
            self.reading.policy_overrides_status && self.policy_count(kind, ctx).is_some();
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
        self.unhealthy(kind, ctx)
    }

    /// The seed's health rules: a rate limit with no healthy deployment left and fallbacks,
    /// an auth error in a group of one, no healthy deployment left.
    fn unhealthy(&self, kind: FailureKind, ctx: &RetryContext<'_>) -> Option<GiveUpReason> {
        let whole_group = self.reading.whole_group_health;
        if whole_group && ctx.deployment.is_none() && ctx.first_failure == Some(kind) {
            // The visit's first pick failed: nothing was tried, nothing is retried.
            return Some(GiveUpReason::NoHealthyDeployment);
        }
        let (healthy, rate_limited) = if whole_group {
            (ctx.group_healthy_left, kind == FailureKind::RateLimit)
        } else {
            (ctx.healthy_left, kind.is_rate_limit())
        };
        if rate_limited && healthy == 0 && ctx.fallbacks_configured {
            return Some(GiveUpReason::RateLimitNoHealthyWithFallbacks);
        }
        if matches!(
            kind,
            FailureKind::Authentication | FailureKind::PermissionDenied
        ) && (ctx.group_size <= 1 || (whole_group && healthy == 0))
        {
            return Some(GiveUpReason::AuthSingleDeployment);
        }
        if healthy == 0 && (!whole_group || ctx.group_size > 1) {
            return Some(GiveUpReason::NoHealthyDeployment);
        }
        None
    }
}

/// A budget of retries shared by every request of a router (tower's `retry::budget::Budget`):
/// each request deposits, each retry withdraws, and a retry the policy allowed is refused
/// (`retry_budget_exhausted`) when the budget is empty. `now` is the router's clock: a budget
/// that forgets old deposits must not read a clock of its own.
pub trait RetryBudget {
    /// A request arrived.
    fn deposit(&self, now: Instant);
    /// A retry is about to happen; `false` refuses it.
    fn withdraw(&self, now: Instant) -> bool;

    /// A retry is about to happen: `None` lets it, `Some(reason)` refuses it with the reason
    /// its `give_up` event reports (default: [`RetryBudget::withdraw`], refusing with
    /// `retry_budget_exhausted`). The router asks this, not `withdraw`.
    fn admit(&self, now: Instant) -> Option<GiveUpReason> {
        (!self.withdraw(now)).then_some(GiveUpReason::RetryBudgetExhausted)
    }

    /// An attempt ended (`None`: it succeeded); a budget that learns from outcomes (gRPC's
    /// throttling) counts it here (default: nothing).
    fn on_attempt_end(&self, _failure: Option<&ProviderFailure>) {}

    /// A hedge is about to be sent: `false` holds it back (gRPC's throttling applies to hedges
    /// too; default: every hedge goes, as a retry budget such as tower's does not see hedges).
    fn admit_hedge(&self, _now: Instant) -> bool {
        true
    }
}

/// No budget: every retry the policy allows happens (LiteLLM's and DeltaLLM's behaviour).
#[derive(Clone, Copy, Debug, Default)]
pub struct UnlimitedBudget;

impl RetryBudget for UnlimitedBudget {
    fn deposit(&self, _now: Instant) {}

    fn withdraw(&self, _now: Instant) -> bool {
        true
    }
}
