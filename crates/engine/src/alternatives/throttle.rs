//! gRPC's retry throttling (`retry_throttling`): one token bucket per router, drained by
//! failed calls and refilled by successful ones; while it is at most half full no retry is
//! taken, so a backend that fails most calls stops receiving retries at all.
//!
//! Source: gRPC proposal A6, "Client Retries" (`grpc/proposal`, `A6-client-retries.md`,
//! "Throttling Retry Attempts and Hedged RPCs"): `retryThrottling: {maxTokens, tokenRatio}`;
//! `token_count` starts at `max_tokens`; each failed RPC decrements it by 1, each successful
//! RPC increments it by `token_ratio`, and it stays within `[0, max_tokens]`; "if
//! `token_count` is less than or equal to the threshold (`max_tokens / 2`), then RPCs will not
//! be retried until `token_count` rises over the threshold". Hedges too: "Throttling also
//! applies to hedged RPCs. The first outgoing RPC will always be sent, but subsequent hedged
//! RPCs will only be sent if `token_count` is greater than the threshold." — a hedge due while
//! the bucket is at or under half is not sent (the first attempt goes on alone; nothing
//! blocks: "Neither retry attempts or hedged RPCs block when `token_count` is less than or
//! equal to the threshold"). `max_tokens` is in (0, 1000] and
//! `token_ratio` keeps three decimal places: gRPC's implementations count in thousandths of a
//! token, and so does this one (no float drift across a long run).
//!
//! What counts as a failure: A6 counts an RPC that failed with a status in the policy's
//! `retryableStatusCodes` (or was pushed back). routersim's counterpart is a failure the
//! router could retry: any failure except a 4xx other than 401, 403, 408, 409 and 429
//! ([`crate::retry::RETRYABLE_4XX`]), which no retry policy retries. Each provider call is
//! one RPC (a retry's too); the router's own `router_rate_limit` (no deployment to pick) is
//! no call and does not count.

use std::sync::Mutex;

use tokio::time::Instant;

use crate::event::GiveUpReason;
use crate::failure::ProviderFailure;
use crate::retry::{RETRYABLE_4XX, RetryBudget};

pub use crate::config::RetryThrottlingSettings;

/// Thousandths of a token.
const MILLI: f64 = 1000.0;

/// gRPC's retry throttle, in thousandths of a token.
#[derive(Debug)]
pub struct RetryThrottle {
    tokens: Mutex<i64>,
    max: i64,
    ratio: i64,
}

impl RetryThrottle {
    /// A full bucket.
    pub fn new(settings: &RetryThrottlingSettings) -> Self {
        let max = (settings.max_tokens * MILLI).round() as i64;
        Self {
            tokens: Mutex::new(max),
            max,
            ratio: (settings.token_ratio * MILLI).round() as i64,
        }
    }

    /// The tokens now, in thousandths.
    pub fn milli_tokens(&self) -> i64 {
        *crate::sync::lock_unpoisoned(&self.tokens)
    }

    fn allows_retries(&self) -> bool {
        // `max / 2` in thousandths: A6's threshold, compared strictly.
        self.milli_tokens() * 2 > self.max
    }
}

/// Whether a failure counts against the bucket (one the router could retry).
fn counts(failure: &ProviderFailure) -> bool {
    !failure
        .effective_status()
        .is_some_and(|s| (400..500).contains(&s) && !RETRYABLE_4XX.contains(&s))
}

impl RetryBudget for RetryThrottle {
    fn deposit(&self, _now: Instant) {}

    fn withdraw(&self, _now: Instant) -> bool {
        self.allows_retries()
    }

    fn admit(&self, _now: Instant) -> Option<GiveUpReason> {
        (!self.allows_retries()).then_some(GiveUpReason::RetryThrottled)
    }

    fn admit_hedge(&self, _now: Instant) -> bool {
        self.allows_retries()
    }

    fn on_attempt_end(&self, failure: Option<&ProviderFailure>) {
        let mut tokens = crate::sync::lock_unpoisoned(&self.tokens);
        *tokens = match failure {
            None => (*tokens + self.ratio).min(self.max),
            Some(f) if counts(f) => (*tokens - 1000).max(0),
            Some(_) => *tokens,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::failure::FailureKind;

    #[test]
    fn retries_stop_at_half_and_resume_above_it() {
        let t = RetryThrottle::new(&RetryThrottlingSettings::default());
        let now = Instant::now();
        let unavailable = ProviderFailure::new(FailureKind::ServiceUnavailable);
        for _ in 0..4 {
            t.on_attempt_end(Some(&unavailable));
        }
        assert_eq!(t.milli_tokens(), 6000);
        assert_eq!(t.admit(now), None, "6 > 5");
        t.on_attempt_end(Some(&unavailable));
        assert_eq!(t.admit(now), Some(GiveUpReason::RetryThrottled), "5 ≤ 5");
        t.on_attempt_end(None);
        assert_eq!(t.milli_tokens(), 5100);
        assert_eq!(t.admit(now), None, "5.1 > 5");
        // A 400 is no retryable failure: it does not drain the bucket.
        t.on_attempt_end(Some(&ProviderFailure::new(FailureKind::BadRequest)));
        assert_eq!(t.milli_tokens(), 5100);
        for _ in 0..100 {
            t.on_attempt_end(None);
        }
        assert_eq!(t.milli_tokens(), 10_000, "capped at max_tokens");
    }
}
