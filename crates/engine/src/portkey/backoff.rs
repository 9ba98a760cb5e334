//! The gateway's wait before a retry: node-retry's `timeouts()` with `randomize: false` and its
//! defaults (`factor: 2`, `minTimeout: 1000`, no `maxTimeout`): `round(1000 · 2^k)` ms for
//! retry `k` from 0. A 429's Retry-After may replace it ([`super::retry_after`]).

use std::time::Duration;

use rand_chacha::ChaCha8Rng;

use super::retry_after::{RetryAfterVerdict, verdict};
use crate::backoff::{Backoff, WaitContext};
use crate::event::WaitReason;

/// async-retry's `minTimeout`: the first retry's wait.
pub const FIRST_WAIT: Duration = Duration::from_secs(1);

/// The gateway's wait rule.
#[derive(Clone, Copy, Debug, Default)]
pub struct PortkeyBackoff;

impl PortkeyBackoff {
    /// Retry `retry_index`'s wait: `1 s · 2^k` (no cap: node-retry's `maxTimeout` is
    /// `Infinity`; saturating far beyond any retry count a config can reach).
    pub fn wait_before(retry_index: u32) -> Duration {
        FIRST_WAIT.saturating_mul(2u32.saturating_pow(retry_index.min(31)))
    }
}

impl Backoff for PortkeyBackoff {
    fn wait(&self, ctx: &WaitContext, _rng: &mut ChaCha8Rng) -> (Duration, Option<WaitReason>) {
        // `Number.parseInt` of the header: `2.7` s is 2 s, an HTTP-date NaN (the backoff).
        let date = ctx.retry_after_is_date;
        let delay = if date {
            ctx.retry_after_parse_int
        } else {
            ctx.retry_after
        };
        let waited = ctx.retry_after_waited;
        match verdict(ctx.use_retry_after_header, ctx.status, delay, waited) {
            RetryAfterVerdict::Wait(r) => (r, Some(WaitReason::RetryAfter)),
            // `rateLimiter._timeouts` was zeroed by a Retry-After waited before.
            _ if !waited.is_zero() => (Duration::ZERO, None),
            _ => (
                Self::wait_before(ctx.retry_index),
                Some(WaitReason::Backoff),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// node-retry's `createTimeout(attempt, {factor: 2, minTimeout: 1000, randomize: false})`
    /// = `Math.round(1 * 1000 * 2 ** attempt)`, computed here independently of the rule.
    #[test]
    fn waits_are_node_retry_timeouts_without_jitter() {
        let from_source: Vec<u64> = (0..6)
            .map(|k| (1000.0 * 2f64.powi(k)).round() as u64)
            .collect();
        let ours: Vec<u64> = (0..6)
            .map(|k| PortkeyBackoff::wait_before(k).as_millis() as u64)
            .collect();
        assert_eq!(ours, from_source);
        assert_eq!(ours[..3], [1000, 2000, 4000]);
    }
}
