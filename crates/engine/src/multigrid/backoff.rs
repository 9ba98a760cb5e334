//! Multigrid's wait before the next try on the same candidate: the provider's Retry-After
//! when it sent one (seconds or an HTTP date, resolved against the router's wall clock),
//! else full jitter — uniform in `[0, min(4 s, 250 ms · 2^k)]` from the router's seeded RNG,
//! `k` counting the candidate's retries from 0. Fixed delays "make every client retry in the
//! same instant and re-create the overload that caused the 429" (the seed).

use std::time::Duration;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::backoff::{Backoff, WaitContext};
use crate::event::WaitReason;

/// The exponential's start (the cap of the first retry's draw).
pub const BACKOFF_START: Duration = Duration::from_millis(250);
/// The exponential's ceiling.
pub const BACKOFF_CAP: Duration = Duration::from_secs(4);

/// Multigrid's wait rule.
#[derive(Clone, Copy, Debug, Default)]
pub struct MultigridBackoff;

impl MultigridBackoff {
    /// The upper bound of retry `k`'s draw: `min(4 s, 250 ms · 2^k)`.
    pub fn cap(retry_index: u32) -> Duration {
        let factor = 2u32.saturating_pow(retry_index.min(16));
        BACKOFF_START.saturating_mul(factor).min(BACKOFF_CAP)
    }
}

impl Backoff for MultigridBackoff {
    fn wait(&self, ctx: &WaitContext, rng: &mut ChaCha8Rng) -> (Duration, Option<WaitReason>) {
        if let Some(retry_after) = ctx.retry_after {
            return (retry_after, Some(WaitReason::RetryAfter));
        }
        let cap_ns = Self::cap(ctx.retry_index).as_nanos() as u64;
        let drawn = rng.random_range(0..=cap_ns);
        (Duration::from_nanos(drawn), Some(WaitReason::Backoff))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_double_from_a_quarter_second_to_four() {
        let caps: Vec<u128> = (0..7)
            .map(|k| MultigridBackoff::cap(k).as_millis())
            .collect();
        assert_eq!(caps, [250, 500, 1000, 2000, 4000, 4000, 4000]);
        assert_eq!(MultigridBackoff::cap(u32::MAX), BACKOFF_CAP);
    }
}
