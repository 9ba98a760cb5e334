//! Failure classification: does a failure count against the deployment's health, and how far
//! may the router go to recover from it?
//!
//! LiteLLM (seed, "Cooldowns"): the failure handler's first check is on the failure itself;
//! from LiteLLM's `_is_cooldown_required`, 429, 401, 408, 404, 5xx and connection failures
//! count and other 4xx never do. Retries follow [`crate::retry`].
//!
//! DeltaLLM (`deltallm-routing-and-failover.md`), selected with
//! `router_settings.classification: deltallm`: *408 takes the timeout path; unclassified
//! 401/403/404 use the general fallback chain and count against health; an unclassified
//! 400/409/422 does not count against health, skips same-deployment retries and continues
//! through the remaining deployments and general fallbacks; a success with empty choices is a
//! `malformed_response` that counts against health; `finish_reason: content_filter` is a
//! content-policy failure; authentication, policy, budget and local-capacity failures never
//! penalise a provider.* ("Authentication, policy, budget and local capacity" are the
//! gateway's own checks — here the router's `router_rate_limit` — not a provider's 401.)

use crate::config::Classification;
use crate::failure::{FailureKind, ProviderFailure};
use crate::request::Completion;
use crate::stream::FinishReason;

/// How far recovery from a failure may go, beyond what the retry policy decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryScope {
    /// The retry policy decides (LiteLLM).
    RetryPolicy,
    /// No retry in the group: straight to the general fallback chain.
    GeneralFallbacks,
    /// No retry on the same deployment: the group's remaining deployments, then the general
    /// fallback chain.
    RemainingDeployments,
}

/// Classifies provider failures.
pub trait FailureClassifier {
    /// Whether the failure says the deployment is unhealthy (feeds cooldowns).
    fn counts_against_health(&self, failure: &ProviderFailure) -> bool;
    /// How far recovery may go.
    fn scope(&self, failure: &ProviderFailure) -> RecoveryScope;
    /// Whether a success is really a failure (empty choices, a content filter finish).
    fn judge_success(&self, _completion: &Completion) -> Option<ProviderFailure> {
        None
    }
}

/// LiteLLM's classification.
#[derive(Clone, Copy, Debug, Default)]
pub struct LiteLlmClassifier;

impl FailureClassifier for LiteLlmClassifier {
    fn counts_against_health(&self, failure: &ProviderFailure) -> bool {
        crate::cooldown::counts_against_deployment(failure)
    }

    fn scope(&self, _failure: &ProviderFailure) -> RecoveryScope {
        RecoveryScope::RetryPolicy
    }
}

/// DeltaLLM's classification.
#[derive(Clone, Copy, Debug, Default)]
pub struct DeltaLlmClassifier;

impl FailureClassifier for DeltaLlmClassifier {
    fn counts_against_health(&self, failure: &ProviderFailure) -> bool {
        match failure.kind {
            // The router's own capacity and content policy never penalise a provider.
            FailureKind::RouterRateLimit | FailureKind::ContentPolicyViolation => false,
            FailureKind::MalformedResponse => true,
            FailureKind::ContextWindowExceeded
            | FailureKind::BadRequest
            | FailureKind::Conflict
            | FailureKind::UnprocessableEntity => false,
            _ => !matches!(failure.effective_status(), Some(400 | 409 | 422)),
        }
    }

    fn scope(&self, failure: &ProviderFailure) -> RecoveryScope {
        match failure.kind {
            FailureKind::Authentication | FailureKind::PermissionDenied | FailureKind::NotFound => {
                RecoveryScope::GeneralFallbacks
            }
            FailureKind::BadRequest | FailureKind::Conflict | FailureKind::UnprocessableEntity => {
                RecoveryScope::RemainingDeployments
            }
            _ => RecoveryScope::RetryPolicy,
        }
    }

    fn judge_success(&self, completion: &Completion) -> Option<ProviderFailure> {
        if completion.empty_choices {
            Some(ProviderFailure::new(FailureKind::MalformedResponse))
        } else if completion.finish_reason == FinishReason::ContentFilter {
            Some(ProviderFailure::new(FailureKind::ContentPolicyViolation))
        } else {
            None
        }
    }
}

/// The classifier a setting selects.
pub fn for_setting(classification: Classification) -> Box<dyn FailureClassifier> {
    match classification {
        Classification::LiteLlm => Box::new(LiteLlmClassifier),
        Classification::DeltaLlm => Box::new(DeltaLlmClassifier),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltallm_rules() {
        let c = DeltaLlmClassifier;
        let f = ProviderFailure::new;
        assert!(c.counts_against_health(&f(FailureKind::Authentication)));
        assert!(c.counts_against_health(&f(FailureKind::PermissionDenied)));
        assert!(c.counts_against_health(&f(FailureKind::NotFound)));
        assert!(c.counts_against_health(&f(FailureKind::MalformedResponse)));
        assert!(c.counts_against_health(&f(FailureKind::Timeout)));
        assert!(!c.counts_against_health(&f(FailureKind::BadRequest)));
        assert!(!c.counts_against_health(&f(FailureKind::Conflict)));
        assert!(!c.counts_against_health(&f(FailureKind::UnprocessableEntity)));
        assert!(!c.counts_against_health(&f(FailureKind::ContentPolicyViolation)));
        assert!(!c.counts_against_health(&f(FailureKind::RouterRateLimit)));
        assert_eq!(
            c.scope(&f(FailureKind::NotFound)),
            RecoveryScope::GeneralFallbacks
        );
        assert_eq!(
            c.scope(&f(FailureKind::Conflict)),
            RecoveryScope::RemainingDeployments
        );
        assert_eq!(
            c.scope(&f(FailureKind::ServiceUnavailable)),
            RecoveryScope::RetryPolicy
        );
        // LiteLLM: 403 never counts, 401 does.
        let l = LiteLlmClassifier;
        assert!(!l.counts_against_health(&f(FailureKind::PermissionDenied)));
        assert!(l.counts_against_health(&f(FailureKind::Authentication)));
    }
}
