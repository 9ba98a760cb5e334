//! The failure handler: does this failure cool the deployment down, and for how long?
//!
//! Seed (LiteLLM): *"The failure handler decides whether a failure cools the deployment down.
//! It runs two checks: first on the failure itself, then on the deployment's recent history."*
//!
//! 1. **Counting check** ([`counts_against_deployment`]): from LiteLLM's
//!    `_is_cooldown_required`, 429, 401, 408 and 404 count, other 4xx (bad request, context
//!    window, content policy, 403, 409, 422) never do, and 5xx and connection failures do.
//! 2. **History check**: when an allowed-fails limit applies (the deployment's
//!    `allowed_fails_policy`, its `allowed_fails`, the router's `allowed_fails_policy`, the
//!    router's `allowed_fails` when set, in that order), *"each counted failure increments
//!    `deployment:{id}:allowed_fails`, which expires with the cooldown time, and the deployment
//!    cools down once the count goes over the limit"*. Otherwise the error-rate rule applies on
//!    per-process counts over a window ([`ERROR_RATE_WINDOW`]), see [`ErrorRateWindow`].
//!
//! *"The cooldown time comes from the first of these that is set: the deployment's own
//! `cooldown_time`, then the provider's `Retry-After`, then the router's `cooldown_time`, which
//! defaults to 5 seconds."*

use std::cell::RefCell;
use std::time::Duration;

use tokio::time::Instant;

use crate::config::{Deployment, RouterSettings};
use crate::event::{CooldownReason, CooldownSource};
use crate::failure::{FailureKind, ProviderFailure};
use crate::state::{Rewrite, StateStore};

/// The error-rate rule's window (LiteLLM keeps these counts in memory with a 60 s TTL).
pub const ERROR_RATE_WINDOW: Duration = Duration::from_secs(60);
/// More than this share of failures in the window cools a deployment...
pub const ERROR_RATE_THRESHOLD: f64 = 0.5;
/// ...once the window holds at least this many requests.
pub const ERROR_RATE_MIN_REQUESTS: u32 = 5;
/// A lone deployment cools only when at least this many requests in the window all failed.
pub const LONE_DEPLOYMENT_MIN_REQUESTS: u32 = 1000;
/// Statuses that cool even a lone deployment.
pub const NON_RETRYABLE_COOLDOWN_STATUSES: [u16; 2] = [401, 404];

/// LiteLLM's counting check: whether a failure says anything about the deployment's health.
pub fn counts_against_deployment(failure: &ProviderFailure) -> bool {
    if failure.kind == FailureKind::RouterRateLimit {
        return false;
    }
    match failure.effective_status() {
        None => true,
        Some(429 | 401 | 408 | 404) => true,
        Some(status) => !(400..500).contains(&status),
    }
}

/// Where a failure came from: the trigger may judge them differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureOrigin {
    /// An attempt of a user request.
    Traffic,
    /// A background health probe (DeltaLLM).
    Probe,
    /// The one trial request of a half-open deployment (DeltaLLM).
    Trial,
}

/// What the failure handler is told about one failure.
#[derive(Clone, Copy, Debug)]
pub struct FailureContext<'a> {
    /// The deployment that failed.
    pub deployment: &'a Deployment,
    /// Its index.
    pub deployment_index: usize,
    /// Deployments in its group.
    pub group_size: usize,
    /// The failure.
    pub failure: &'a ProviderFailure,
    /// Where it came from.
    pub origin: FailureOrigin,
    /// The classifier's verdict: does this failure say the deployment is unhealthy?
    pub counts_against_health: bool,
    /// The failure's Retry-After, resolved against the clock.
    pub retry_after: Option<Duration>,
    /// Now.
    pub now: Instant,
    /// The router's settings.
    pub settings: &'a RouterSettings,
}

/// A decision to cool a deployment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CooldownDecision {
    /// Why.
    pub reason: CooldownReason,
    /// For how long.
    pub duration: Duration,
    /// Where that length came from.
    pub source: CooldownSource,
}

/// Decides cooldowns from failures (and learns from successes).
pub trait CooldownTrigger {
    /// A call on `deployment_index` succeeded.
    fn on_success(&self, deployment_index: usize, now: Instant);
    /// A call failed: cool the deployment? The router does not ask while
    /// `router_settings.disable_cooldowns` is set.
    fn on_failure(
        &self,
        ctx: &FailureContext<'_>,
        store: &dyn StateStore,
    ) -> Option<CooldownDecision>;
    /// The deployment recovered: forget its failure history.
    fn reset(&self, _deployment_index: usize) {}
    /// How a cooldown written over a live one sets the deadline (default: the later one).
    fn rewrite(&self) -> Rewrite {
        Rewrite::KeepLater
    }
}

/// The cooldown time for a failure: deployment's own, else Retry-After, else the router's.
pub fn cooldown_time(
    deployment: &Deployment,
    retry_after: Option<Duration>,
    settings: &RouterSettings,
) -> Duration {
    cooldown_length(deployment, retry_after, settings).0
}

/// [`cooldown_time`], and which of the three it came from.
pub fn cooldown_length(
    deployment: &Deployment,
    retry_after: Option<Duration>,
    settings: &RouterSettings,
) -> (Duration, CooldownSource) {
    match (deployment.cooldown_time, retry_after) {
        (Some(own), _) => (own, CooldownSource::Deployment),
        (None, Some(retry_after)) => (retry_after, CooldownSource::RetryAfter),
        (None, None) => (settings.cooldown_time, CooldownSource::Router),
    }
}

/// The allowed-fails limit for a failure kind, if one applies.
pub fn allowed_fails_limit(
    deployment: &Deployment,
    kind: FailureKind,
    settings: &RouterSettings,
) -> Option<u32> {
    deployment
        .allowed_fails_policy
        .as_ref()
        .and_then(|p| p.get(kind))
        .or(deployment.allowed_fails)
        .or_else(|| {
            settings
                .allowed_fails_policy
                .as_ref()
                .and_then(|p| p.get(kind))
        })
        .or(settings.allowed_fails)
}

#[derive(Clone, Copy, Debug, Default)]
struct WindowCounts {
    started: Option<Instant>,
    successes: u32,
    failures: u32,
}

/// Per-process success/failure counts per deployment. A window opens at the first outcome
/// recorded after the previous one expired and lasts [`ERROR_RATE_WINDOW`] (a TTL key, as in
/// LiteLLM, rather than a sliding window). A `RefCell`, not a `Mutex`: its router is driven
/// from one thread (a `Box<dyn CooldownTrigger>` is not `Send`), and the lock showed in the
/// harness's profile.
#[derive(Debug, Default)]
pub struct ErrorRateWindow {
    counts: RefCell<Vec<WindowCounts>>,
}

impl ErrorRateWindow {
    /// Forgets a deployment's counts.
    pub fn reset(&self, deployment: usize) {
        let mut counts = self.counts.borrow_mut();
        if let Some(entry) = counts.get_mut(deployment) {
            *entry = WindowCounts::default();
        }
    }

    /// Records an outcome; returns `(successes, failures)` in the current window.
    pub fn record(&self, deployment: usize, now: Instant, failed: bool) -> (u32, u32) {
        let mut counts = self.counts.borrow_mut();
        if counts.len() <= deployment {
            counts.resize(deployment + 1, WindowCounts::default());
        }
        let entry = &mut counts[deployment];
        if entry
            .started
            .is_none_or(|start| now >= start + ERROR_RATE_WINDOW)
        {
            *entry = WindowCounts {
                started: Some(now),
                successes: 0,
                failures: 0,
            };
        }
        if failed {
            entry.failures += 1;
        } else {
            entry.successes += 1;
        }
        (entry.successes, entry.failures)
    }
}

/// LiteLLM's failure handler: allowed fails, else the error-rate rule. A failed probe or
/// half-open trial that counts against health cools at once (DeltaLLM), without touching the
/// allowed-fails count or the error-rate window.
#[derive(Debug, Default)]
pub struct LiteLlmCooldown {
    window: ErrorRateWindow,
}

impl CooldownTrigger for LiteLlmCooldown {
    fn on_success(&self, deployment_index: usize, now: Instant) {
        self.window.record(deployment_index, now, false);
    }

    fn reset(&self, deployment_index: usize) {
        self.window.reset(deployment_index);
    }

    fn on_failure(
        &self,
        ctx: &FailureContext<'_>,
        store: &dyn StateStore,
    ) -> Option<CooldownDecision> {
        if !ctx.counts_against_health {
            return None;
        }
        let (duration, source) = cooldown_length(ctx.deployment, ctx.retry_after, ctx.settings);
        let at_once = match ctx.origin {
            FailureOrigin::Traffic => None,
            FailureOrigin::Probe => Some(CooldownReason::ProbeFailed),
            FailureOrigin::Trial => Some(CooldownReason::HalfOpenTrialFailed),
        };
        if let Some(reason) = at_once {
            return Some(CooldownDecision {
                reason,
                duration,
                source,
            });
        }
        if let Some(limit) = allowed_fails_limit(ctx.deployment, ctx.failure.kind, ctx.settings) {
            let count = store.increment_allowed_fails(ctx.deployment_index, ctx.now, duration);
            return (count > limit).then_some(CooldownDecision {
                reason: CooldownReason::AllowedFailsExceeded,
                duration,
                source,
            });
        }
        let (successes, failures) = self.window.record(ctx.deployment_index, ctx.now, true);
        let total = successes + failures;
        let reason = if ctx.failure.kind == FailureKind::RateLimit && ctx.group_size >= 2 {
            Some(CooldownReason::RateLimitInGroup)
        } else if ctx
            .failure
            .effective_status()
            .is_some_and(|s| NON_RETRYABLE_COOLDOWN_STATUSES.contains(&s))
        {
            Some(CooldownReason::NonRetryableStatus)
        } else if ctx.group_size <= 1 {
            (total >= LONE_DEPLOYMENT_MIN_REQUESTS && successes == 0)
                .then_some(CooldownReason::LoneDeploymentAllFailed)
        } else {
            (total >= ERROR_RATE_MIN_REQUESTS
                && f64::from(failures) / f64::from(total) > ERROR_RATE_THRESHOLD)
                .then_some(CooldownReason::ErrorRate)
        };
        reason.map(|reason| CooldownDecision {
            reason,
            duration,
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counting_check_skips_client_errors_but_not_auth_timeouts_or_rate_limits() {
        let counted = |kind| counts_against_deployment(&ProviderFailure::new(kind));
        assert!(counted(FailureKind::RateLimit));
        assert!(counted(FailureKind::Authentication));
        assert!(counted(FailureKind::Timeout));
        assert!(counted(FailureKind::NotFound));
        assert!(counted(FailureKind::ServiceUnavailable));
        assert!(counted(FailureKind::ApiConnection));
        assert!(!counted(FailureKind::ContextWindowExceeded));
        assert!(!counted(FailureKind::ContentPolicyViolation));
        assert!(!counted(FailureKind::BadRequest));
        assert!(!counted(FailureKind::PermissionDenied));
        assert!(!counted(FailureKind::RouterRateLimit));
    }
}
