//! The gateway's optional Retry-After (`retry.use_retry_after_header: true`, here the router's
//! `portkey_use_retry_after_header`), read from `src/handlers/retryHandler.ts` (`retryRequest`)
//! and `src/globals.ts` at tag v1.15.2:
//!
//! - Only a **429** is read, and only its first header of `retry-after-ms`,
//!   `x-ms-retry-after-ms`, `retry-after` (`POSSIBLE_RETRY_STATUS_HEADERS`); seconds for
//!   `retry-after`. A value that does not parse as a number (an HTTP-date) or is 0 leaves
//!   the backoff as it is.
//! - A wait `R` at or above `MAX_RETRY_LIMIT_MS` (60 s), or above what is left of the
//!   target's 60 s (`remainingRetryTimeout`, spent by every wait honoured before), ends the
//!   target at once: no wait, no more attempts (`retrySkipped`, `rateLimiter._timeouts = []`).
//! - Otherwise the gateway waits `R` *inside* the attempt, then sets every backoff still to
//!   come to 0 (`rateLimiter._timeouts = [0, …]`): the next retry starts right after `R`, and
//!   so does every later retry of that target, whatever its status.
//! - The wait happens on the last attempt too (async-retry `bail`s only after it): a 429 that
//!   ends the target still costs its `R` before the fallback or the answer. Not with
//!   `retry.attempts: 0`, whose status list is empty (`normalizeRetryConfig`): no 429 is
//!   read then.

use std::time::Duration;

/// `MAX_RETRY_LIMIT_MS` (`src/globals.ts`): the longest Retry-After honoured, and what one
/// target may wait on Retry-After in all.
pub const MAX_RETRY_LIMIT: Duration = Duration::from_secs(60);

/// What the gateway does with a failure's Retry-After.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryAfterVerdict {
    /// Not read (the setting is off, not a 429, no numeric value): the backoff applies.
    Backoff,
    /// Wait this long, then retry (or, after the last attempt, give up).
    Wait(Duration),
    /// Too long for what is left of the 60 s: the target ends now, without a wait.
    Skip,
}

/// The verdict on a failure with status `status` and a numeric Retry-After `delay` (an
/// HTTP-date is `None`), when the target has already waited `waited` on Retry-After.
pub fn verdict(
    use_retry_after_header: bool,
    status: Option<u16>,
    delay: Option<Duration>,
    waited: Duration,
) -> RetryAfterVerdict {
    if !use_retry_after_header || status != Some(429) {
        return RetryAfterVerdict::Backoff;
    }
    match delay {
        Some(r) if !r.is_zero() => {
            let left = MAX_RETRY_LIMIT.saturating_sub(waited);
            if r >= MAX_RETRY_LIMIT || r > left {
                RetryAfterVerdict::Skip
            } else {
                RetryAfterVerdict::Wait(r)
            }
        }
        _ => RetryAfterVerdict::Backoff,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn only_a_429_with_a_number_under_the_limit_is_waited() {
        assert_eq!(
            verdict(true, Some(429), Some(S(5)), S(0)),
            RetryAfterVerdict::Wait(S(5))
        );
        assert_eq!(
            verdict(false, Some(429), Some(S(5)), S(0)),
            RetryAfterVerdict::Backoff
        );
        assert_eq!(
            verdict(true, Some(503), Some(S(5)), S(0)),
            RetryAfterVerdict::Backoff
        );
        assert_eq!(
            verdict(true, Some(429), None, S(0)),
            RetryAfterVerdict::Backoff
        );
        assert_eq!(
            verdict(true, Some(429), Some(S(0)), S(0)),
            RetryAfterVerdict::Backoff
        );
        // `retryAfter >= MAX_RETRY_LIMIT_MS || retryAfter > remainingRetryTimeout`.
        assert_eq!(
            verdict(true, Some(429), Some(S(60)), S(0)),
            RetryAfterVerdict::Skip
        );
        assert_eq!(
            verdict(true, Some(429), Some(S(25)), S(50)),
            RetryAfterVerdict::Skip
        );
        assert_eq!(
            verdict(true, Some(429), Some(S(10)), S(50)),
            RetryAfterVerdict::Wait(S(10))
        );
    }
}
