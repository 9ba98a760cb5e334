//! `portkey_use_retry_after_header` (`retry.use_retry_after_header`; `retryHandler.ts`): a
//! 429's Retry-After read by `Number.parseInt` (`2.7` s is 2 s; a date is NaN: the backoff). `R >= MAX_RETRY_LIMIT_MS` (60 s) or `R >` what is
//! left of the target's 60 s ends the target without a wait (`retrySkipped`). Otherwise `R` is
//! waited inside the attempt — so after the last attempt too, before async-retry `bail`s — and
//! every later backoff of the target becomes 0 (`rateLimiter._timeouts = [0, …]`).

use std::time::Duration;

/// `MAX_RETRY_LIMIT_MS`: the longest Retry-After, and all one target may wait on them.
pub const MAX_RETRY_LIMIT: Duration = Duration::from_secs(60);

/// What the gateway does with a failure's Retry-After.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryAfterVerdict {
    /// Not read: the backoff applies.
    Backoff,
    /// Wait this long (then retry, or give up after the last attempt).
    Wait(Duration),
    /// Too long for what is left of the 60 s: the target ends now, without a wait.
    Skip,
}

/// The verdict on status `status` with a numeric Retry-After `delay`, after `waited`.
pub fn verdict(
    use_retry_after_header: bool,
    status: Option<u16>,
    delay: Option<Duration>,
    waited: Duration,
) -> RetryAfterVerdict {
    match delay {
        Some(r) if use_retry_after_header && status == Some(429) && !r.is_zero() => {
            if r >= MAX_RETRY_LIMIT || r > MAX_RETRY_LIMIT.saturating_sub(waited) {
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
