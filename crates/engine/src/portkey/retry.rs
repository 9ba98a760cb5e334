//! The gateway's retry decision for one target (`retryHandler.ts`, `retryRequest`):
//! `retry.attempts` retries while the status is in `on_status_codes` (else
//! [`RETRY_STATUS_CODES`]) or `fetch` threw (async-retry retries every throw); any other status
//! is `bail`ed. A Retry-After skip ([`super::retry_after`]) ends the target `retries_exhausted`.

use super::retry_after::{RetryAfterVerdict, verdict};
use crate::config::RouterSettings;
use crate::event::GiveUpReason;
use crate::failure::{FailureKind, ProviderFailure, RetryAfter};
use crate::retry::{RetryContext, RetryDecision, RetryPolicy};
use routersim_primitives::js::parse_int_seconds;

/// `RETRY_STATUS_CODES` (`src/globals.ts`): retried when the config names no `on_status_codes`.
pub const RETRY_STATUS_CODES: [u16; 5] = [429, 500, 502, 503, 504];

/// Retries a retryable status on the same target until it has had `num_retries` retries.
#[derive(Clone, Copy, Debug, Default)]
pub struct PortkeyRetryPolicy;

impl PortkeyRetryPolicy {
    /// Whether the gateway retries this failure: its status is on the retry list, or there was
    /// no HTTP answer at all (a connection error).
    pub fn retries(failure: &ProviderFailure, settings: &RouterSettings) -> bool {
        if failure.kind == FailureKind::ApiConnection {
            return true;
        }
        let codes = settings.portkey_retry_on_status_codes.as_deref();
        let codes = codes.unwrap_or(&RETRY_STATUS_CODES);
        failure
            .status
            .or(failure.kind.default_status())
            .is_some_and(|s| codes.contains(&s))
    }

    /// What the gateway does with `failure`'s Retry-After (`Number.parseInt` of the header).
    fn retry_after(failure: &ProviderFailure, ctx: &RetryContext<'_>) -> RetryAfterVerdict {
        let delay = match &failure.retry_after {
            Some(RetryAfter::Delay(d)) => Some(*d),
            Some(RetryAfter::HttpDate(text)) => parse_int_seconds(text),
            None => None,
        };
        let status = failure.status.or(failure.kind.default_status());
        let on = ctx.settings.portkey_use_retry_after_header;
        verdict(on, status, delay, ctx.retry_after_waited)
    }

    /// The target's `retry.attempts` (a deployment's `num_retries` is its target's own `retry`).
    fn max_retries(ctx: &RetryContext<'_>) -> u32 {
        let target = ctx.deployment.and_then(|d| d.num_retries);
        (ctx.request.num_retries.or(target)).unwrap_or(ctx.settings.num_retries)
    }
}

impl RetryPolicy for PortkeyRetryPolicy {
    fn decide(
        &self,
        failure: &ProviderFailure,
        ctx: &RetryContext<'_>,
        retries_done: u32,
    ) -> RetryDecision {
        if !Self::retries(failure, ctx.settings) {
            return RetryDecision::GiveUp(GiveUpReason::NonRetryableStatus);
        }
        let max_retries = Self::max_retries(ctx);
        let skipped = Self::retry_after(failure, ctx) == RetryAfterVerdict::Skip;
        if retries_done >= max_retries || skipped {
            return RetryDecision::GiveUp(GiveUpReason::RetriesExhausted);
        }
        RetryDecision::Retry { max_retries }
    }

    /// A 429's Retry-After is waited after the last attempt too (not with `attempts: 0`: no
    /// status is read then, `normalizeRetryConfig`).
    fn waits_before_giving_up(
        &self,
        reason: GiveUpReason,
        failure: &ProviderFailure,
        ctx: &RetryContext<'_>,
    ) -> bool {
        reason == GiveUpReason::RetriesExhausted
            && Self::max_retries(ctx) > 0
            && matches!(Self::retry_after(failure, ctx), RetryAfterVerdict::Wait(_))
    }
}
