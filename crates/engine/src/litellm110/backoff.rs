//! LiteLLM 1.110.2's wait (its Rust core, measured by the oracle: scenarios 24–27).
//!
//! - No wait while the group has more than one deployment and one is not cooling (the
//!   deployment that just failed counts), as documented.
//! - A Retry-After of `0 < ra <= 60` s is the base, whatever the router's `retry_after`; one
//!   of 0, over 60 or unparseable is ignored. An HTTP-date counts in whole seconds from now,
//!   rounded down (`int(date - time.time())`: scenarios 51, 52).
//! - Otherwise the base is `min(max(0.5 · 2^k, retry_after), 8)`: the 8 s cap wins over the
//!   router's `retry_after`.
//! - Jitter (`0.75 · random()`) is added to both.

use std::time::Duration;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::backoff::{
    Backoff, INITIAL_BACKOFF, MAX_BACKOFF, MAX_JITTER, MAX_RETRY_AFTER, WaitContext,
};
use crate::event::WaitReason;

/// LiteLLM 1.110.2's wait rule.
#[derive(Clone, Copy, Debug, Default)]
pub struct LiteLlm110Backoff;

impl LiteLlm110Backoff {
    /// The base before jitter, and its reason; `None` for no wait.
    pub fn base(ctx: &WaitContext) -> Option<(Duration, WaitReason)> {
        if ctx.group_size > 1 && ctx.group_healthy_left > 0 {
            return None;
        }
        let whole = |d: Duration| Duration::from_secs(d.as_secs());
        let retry_after = ctx
            .retry_after
            .map(|d| if ctx.retry_after_is_date { whole(d) } else { d });
        if let Some(retry_after) = retry_after
            && retry_after > Duration::ZERO
            && retry_after <= MAX_RETRY_AFTER
        {
            return Some((retry_after, WaitReason::RetryAfter));
        }
        let factor = 2u32.saturating_pow(ctx.retry_index.min(16));
        let exponential = INITIAL_BACKOFF
            .saturating_mul(factor)
            .max(ctx.min_backoff)
            .min(MAX_BACKOFF);
        Some((exponential, WaitReason::Backoff))
    }
}

impl Backoff for LiteLlm110Backoff {
    fn wait(&self, ctx: &WaitContext, rng: &mut ChaCha8Rng) -> (Duration, Option<WaitReason>) {
        let Some((base, reason)) = Self::base(ctx) else {
            return (Duration::ZERO, None);
        };
        let jitter_ns = rng.random_range(0..MAX_JITTER.as_nanos() as u64);
        (base + Duration::from_nanos(jitter_ns), Some(reason))
    }
}
