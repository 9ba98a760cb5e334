//! The gateway's retry decision for one target (`src/handlers/retryHandler.ts`,
//! `retryRequest`): `retry.attempts` retries (the emitted config's `num_retries`; a request's
//! own `num_retries` wins, as `drive` sends none it is the router's) while the status is in
//! `on_status_codes` — by default [`RETRY_STATUS_CODES`] (`src/globals.ts`) — or `fetch`
//! threw (a connection error: async-retry retries every throw). Any other status is
//! `bail`ed: no retry, and the fallback strategy moves on.

use crate::event::GiveUpReason;
use crate::failure::{FailureKind, ProviderFailure};
use crate::retry::{RetryContext, RetryDecision, RetryPolicy};

/// `RETRY_STATUS_CODES` (`src/globals.ts`): what `retry.attempts` retries when the config
/// names no `on_status_codes`.
pub const RETRY_STATUS_CODES: [u16; 5] = [429, 500, 502, 503, 504];

/// Retries a retryable status on the same target until it has had `num_retries` retries.
#[derive(Clone, Copy, Debug, Default)]
pub struct PortkeyRetryPolicy;

impl PortkeyRetryPolicy {
    /// Whether the gateway retries this failure: its status is in [`RETRY_STATUS_CODES`], or
    /// there was no HTTP answer at all (a connection error).
    pub fn retries(failure: &ProviderFailure) -> bool {
        if failure.kind == FailureKind::ApiConnection {
            return true;
        }
        failure
            .status
            .or(failure.kind.default_status())
            .is_some_and(|s| RETRY_STATUS_CODES.contains(&s))
    }
}

impl RetryPolicy for PortkeyRetryPolicy {
    fn decide(
        &self,
        failure: &ProviderFailure,
        ctx: &RetryContext<'_>,
        retries_done: u32,
    ) -> RetryDecision {
        if !Self::retries(failure) {
            return RetryDecision::GiveUp(GiveUpReason::NonRetryableStatus);
        }
        let max_retries = ctx.request.num_retries.unwrap_or(ctx.settings.num_retries);
        if retries_done >= max_retries {
            return RetryDecision::GiveUp(GiveUpReason::RetriesExhausted);
        }
        RetryDecision::Retry { max_retries }
    }
}
