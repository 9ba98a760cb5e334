//! How long to wait before a retry.
//!
//! Seed (LiteLLM): *"The wait is zero while the group has more than one deployment and some are
//! still healthy, since the next attempt can go somewhere else. Otherwise the router honors the
//! provider's `Retry-After`, up to one minute. Without a `Retry-After`, it backs off
//! exponentially from 0.5 seconds up to 8 seconds, never less than the router's `retry_after`,
//! plus up to 0.75 seconds of jitter."*
//!
//! As in LiteLLM's `_calculate_retry_after`, a Retry-After over the minute is not honoured
//! (the backoff applies instead), and the jitter belongs to the backoff only.

use std::time::Duration;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::event::WaitReason;

/// Backoff starts here.
pub const INITIAL_BACKOFF: Duration = Duration::from_millis(500);
/// Backoff never exceeds this (before jitter).
pub const MAX_BACKOFF: Duration = Duration::from_secs(8);
/// Longest Retry-After honoured.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// Jitter is uniform in `[0, MAX_JITTER)`.
pub const MAX_JITTER: Duration = Duration::from_millis(750);

/// What the wait depends on.
#[derive(Clone, Copy, Debug)]
pub struct WaitContext {
    /// Deployments in the group.
    pub group_size: usize,
    /// Deployments still not cooling.
    pub healthy_left: usize,
    /// Deployments of the whole group (every order level) still not cooling.
    pub group_healthy_left: usize,
    /// The provider's Retry-After, resolved.
    pub retry_after: Option<Duration>,
    /// Whether that Retry-After was an HTTP-date (not a number of seconds).
    pub retry_after_is_date: bool,
    /// A Retry-After that was not integer seconds, read by JavaScript's `Number.parseInt`.
    pub retry_after_parse_int: Option<Duration>,
    /// 0 for the first retry.
    pub retry_index: u32,
    /// The router's `retry_after` floor.
    pub min_backoff: Duration,
    /// The failure's HTTP status (its kind's usual one when it had none).
    pub status: Option<u16>,
    /// What this retry loop has already waited on the provider's Retry-After.
    pub retry_after_waited: Duration,
    /// The router's `portkey_use_retry_after_header` (read by `profile: portkey` only).
    pub use_retry_after_header: bool,
}

/// Computes the wait before a retry.
pub trait Backoff {
    /// The wait and its reason (`None` reason for no wait).
    fn wait(&self, ctx: &WaitContext, rng: &mut ChaCha8Rng) -> (Duration, Option<WaitReason>);
}

/// LiteLLM's wait rule.
#[derive(Clone, Copy, Debug, Default)]
pub struct LiteLlmBackoff;

impl LiteLlmBackoff {
    /// The exponential part: 0.5 s · 2^k, capped at 8 s, at least `floor`.
    pub fn exponential(retry_index: u32, floor: Duration) -> Duration {
        let factor = 2u32.saturating_pow(retry_index.min(16));
        INITIAL_BACKOFF
            .saturating_mul(factor)
            .min(MAX_BACKOFF)
            .max(floor)
    }
}

impl Backoff for LiteLlmBackoff {
    fn wait(&self, ctx: &WaitContext, rng: &mut ChaCha8Rng) -> (Duration, Option<WaitReason>) {
        if ctx.group_size > 1 && ctx.healthy_left > 0 {
            return (Duration::ZERO, None);
        }
        if let Some(retry_after) = ctx.retry_after
            && retry_after > Duration::ZERO
            && retry_after <= MAX_RETRY_AFTER
        {
            return (retry_after, Some(WaitReason::RetryAfter));
        }
        let jitter_ns = rng.random_range(0..MAX_JITTER.as_nanos() as u64);
        (
            Self::exponential(ctx.retry_index, ctx.min_backoff) + Duration::from_nanos(jitter_ns),
            Some(WaitReason::Backoff),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponential_doubles_from_half_a_second_to_eight() {
        let floor = Duration::ZERO;
        let waits: Vec<u128> = (0..6)
            .map(|k| LiteLlmBackoff::exponential(k, floor).as_millis())
            .collect();
        assert_eq!(waits, vec![500, 1000, 2000, 4000, 8000, 8000]);
        assert_eq!(
            LiteLlmBackoff::exponential(0, Duration::from_secs(3)),
            Duration::from_secs(3)
        );
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;
        use rand::SeedableRng;

        fn ctx(
            group_size: usize,
            healthy_left: usize,
            retry_after_ms: Option<u64>,
            retry_index: u32,
            floor_ms: u64,
        ) -> WaitContext {
            WaitContext {
                group_size,
                healthy_left,
                group_healthy_left: healthy_left,
                retry_after: retry_after_ms.map(Duration::from_millis),
                retry_after_is_date: false,
                retry_after_parse_int: None,
                retry_index,
                min_backoff: Duration::from_millis(floor_ms),
                status: None,
                retry_after_waited: Duration::ZERO,
                use_retry_after_header: false,
            }
        }

        proptest! {
            /// The exponential part never drops below the floor, never exceeds the cap (or
            /// the floor, if higher), and never shrinks from one retry to the next.
            #[test]
            fn exponential_stays_between_floor_and_cap(k in 0u32..200, floor_ms in 0u64..20_000) {
                let floor = Duration::from_millis(floor_ms);
                let e = LiteLlmBackoff::exponential(k, floor);
                prop_assert!(e >= floor);
                prop_assert!(e >= INITIAL_BACKOFF.min(MAX_BACKOFF));
                prop_assert!(e <= MAX_BACKOFF.max(floor));
                prop_assert!(LiteLlmBackoff::exponential(k + 1, floor) >= e);
            }

            /// Every wait is one of the three rules: none while another healthy deployment
            /// can take the retry, the Retry-After when it is within the minute, otherwise the
            /// exponential backoff plus less than `MAX_JITTER`.
            #[test]
            fn waits_follow_one_of_the_three_rules(
                group_size in 1usize..5,
                healthy_left in 0usize..5,
                retry_after_ms in proptest::option::of(0u64..120_000),
                k in 0u32..40,
                floor_ms in 0u64..10_000,
                seed in any::<u64>(),
            ) {
                let c = ctx(group_size, healthy_left, retry_after_ms, k, floor_ms);
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let (wait, reason) = LiteLlmBackoff.wait(&c, &mut rng);
                let honoured = c.retry_after.filter(|r| !r.is_zero() && *r <= MAX_RETRY_AFTER);
                if group_size > 1 && healthy_left > 0 {
                    prop_assert_eq!((wait, reason), (Duration::ZERO, None));
                } else if let Some(retry_after) = honoured {
                    prop_assert_eq!((wait, reason), (retry_after, Some(WaitReason::RetryAfter)));
                } else {
                    let base = LiteLlmBackoff::exponential(k, c.min_backoff);
                    prop_assert_eq!(reason, Some(WaitReason::Backoff));
                    prop_assert!(wait >= base && wait < base + MAX_JITTER);
                    prop_assert!(wait >= c.min_backoff);
                }
            }
        }
    }
}
