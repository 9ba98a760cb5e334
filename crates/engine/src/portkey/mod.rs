//! `profile: portkey`: what the Portkey AI gateway 1.15.2 does with the config `drive
//! --emit-portkey-config` writes, as policies (see [`crate::profile`]), each rule read from its
//! source at tag v1.15.2 and checked against the real gateway in CI (`tests/cli/portkey.rs`):
//!
//! - **The walk** ([`PortkeyAdmission`]): `fallback` is the candidate walk over the group's
//!   deployments in `order` then `model_list` order, the next after any answer that is not ok
//!   (LiteLLM's fallback lists are not read); `loadbalance` tries one target drawn by weight.
//! - **Retries** ([`PortkeyRetryPolicy`]); **waits** ([`PortkeyBackoff`]): `1 s · 2^k`.
//! - **No cooldowns** ([`PortkeyCooldown`]): no health state between requests (its circuit
//!   breaker needs a config `id` and Portkey's hosted control plane).
//! - **Streams**: retried on the status only; a 200 stream is piped through, so a cut reaches
//!   the caller (`stream_recovery: multigrid`, which the profile presets).

mod backoff;
mod retry;
mod retry_after;
mod strategy;

pub use backoff::{FIRST_WAIT, PortkeyBackoff};
pub use retry::{PortkeyRetryPolicy, RETRY_STATUS_CODES};
pub use retry_after::{MAX_RETRY_LIMIT, RetryAfterVerdict, verdict};
pub use strategy::{PortkeyAdmission, target_weight};

use tokio::time::Instant;

use crate::cooldown::{CooldownDecision, CooldownTrigger, FailureContext};
use crate::state::StateStore;

/// The gateway's health memory: none. No failure cools a deployment.
#[derive(Clone, Copy, Debug, Default)]
pub struct PortkeyCooldown;

impl CooldownTrigger for PortkeyCooldown {
    fn on_success(&self, _deployment_index: usize, _now: Instant) {}

    fn on_failure(
        &self,
        _ctx: &FailureContext<'_>,
        _store: &dyn StateStore,
    ) -> Option<CooldownDecision> {
        None
    }
}
