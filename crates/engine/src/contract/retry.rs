//! The contract profile's same-route retries: *"Stop after a small number of attempts. A
//! common policy is one primary attempt plus one fallback, with an optional same-route retry
//! only for an early connection failure that could not have generated billable output."*
//! and *"Provider retry hints, such as a retry-after value, should take precedence when they
//! fit within the remaining deadline."* The total cap (`max_attempts`) is the walk's.

use crate::event::GiveUpReason;
use crate::failure::{FailureKind, ProviderFailure};
use crate::retry::{RetryContext, RetryDecision, RetryPolicy};

use super::class::{FailureClass, classify};

/// Retries on the same route a connection failure, or a capacity failure that sent a
/// Retry-After (the walk drops the retry when the hint does not fit the deadline), up to
/// `same_route_retries` times; every other failure moves the walk to the next compatible
/// route (a permanent one ends it).
#[derive(Clone, Copy, Debug, Default)]
pub struct ContractRetryPolicy;

impl RetryPolicy for ContractRetryPolicy {
    fn decide(
        &self,
        failure: &ProviderFailure,
        ctx: &RetryContext<'_>,
        retries_done: u32,
    ) -> RetryDecision {
        let max_retries = ctx.settings.same_route_retries;
        let same_route = match classify(failure.kind) {
            FailureClass::Permanent => {
                return RetryDecision::GiveUp(GiveUpReason::PermanentFailure);
            }
            FailureClass::RouteIncompatible => {
                return RetryDecision::GiveUp(GiveUpReason::RouteIncompatible);
            }
            FailureClass::InvalidResponse => {
                return RetryDecision::GiveUp(GiveUpReason::InvalidResponse);
            }
            FailureClass::Transient => failure.kind == FailureKind::ApiConnection,
            FailureClass::Capacity => failure.retry_after.is_some(),
        };
        if same_route && retries_done < max_retries {
            RetryDecision::Retry { max_retries }
        } else {
            RetryDecision::GiveUp(GiveUpReason::RetriesExhausted)
        }
    }
}
