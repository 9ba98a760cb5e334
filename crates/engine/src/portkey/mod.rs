//! `profile: portkey`: what the Portkey AI gateway 1.15.2 (`@portkey-ai/gateway`) does with a
//! config of `strategy: {mode: fallback}` (or `loadbalance`) over the group's deployments and
//! `retry: {attempts: num_retries}` — the config `drive --emit-portkey-config` writes — as a
//! bundle of policy implementations (see [`crate::profile`]). Each rule is read from the
//! gateway's source at tag v1.15.2 and checked against the real gateway in CI
//! (`tests/cli/portkey.rs`).
//!
//! - **The walk** (`portkey_strategy: fallback`, the default): the fallback strategy tries its
//!   targets in order and moves on when a target's final answer is not ok
//!   (`src/handlers/handlerUtils.ts`, `tryTargetsRecursively`: without
//!   `strategy.on_status_codes`, "if the response is ok, skip the fallback"). That is the
//!   candidate walk over the group's deployments in `order` then `model_list` order, each
//!   deployment one target; the router's LiteLLM fallback lists are not read. With
//!   `portkey_fallback_on_status_codes` (the gateway's `strategy.on_status_codes`) the walk
//!   moves on only after a listed status ([`PortkeyAdmission`]); any other failure is the
//!   answer.
//! - **`portkey_strategy: loadbalance`** ([`loadbalance`]): one target per request, picked at
//!   random by `weight` (none: 1; 0: never picked) from the router's seeded generator; its
//!   answer after its retries is the request's — no other target, no fallback.
//! - **Retries** ([`PortkeyRetryPolicy`]): each target is retried `retry.attempts` times —
//!   the deployment's `num_retries` (the target's own `retry`), else the router's — when its
//!   status is in `on_status_codes`: `portkey_retry_on_status_codes`, by default
//!   `RETRY_STATUS_CODES` = 429, 500, 502, 503, 504 (`src/globals.ts`,
//!   `requestContext.ts: normalizeRetryConfig`); any other status ends the target at once
//!   (`retryHandler.ts`: "All error codes that aren't retried need to be propogated up",
//!   `bail`). A connection error has no status: `fetch` throws, and async-retry retries every
//!   throw.
//! - **Waits** ([`PortkeyBackoff`]): async-retry's defaults with `randomize: false` —
//!   `minTimeout` 1 s, `factor` 2, no `maxTimeout` — so retry `k` (from 0) waits exactly
//!   `1 s · 2^k`: 1 s, 2 s, 4 s; no jitter. A Retry-After is ignored unless
//!   `portkey_use_retry_after_header` (the gateway's `retry.use_retry_after_header`) is on:
//!   then a 429's Retry-After is waited instead, within 60 s per target, on the last
//!   attempt too ([`verdict`] has the rules); a `retry-after` in seconds is read by
//!   `Number.parseInt`, so `1.5` waits 1 s.
//! - **No cooldowns** ([`PortkeyCooldown`]): the open-source gateway keeps no health state
//!   between requests (its circuit breaker needs a config `id` and Portkey's hosted control
//!   plane); every request starts again at the first target.
//! - **Streams**: the gateway retries on the status only; once a stream has answered 200 its
//!   body is piped through, so a cut mid-stream reaches the caller as it is
//!   (`stream_recovery: multigrid` — recover before the first byte, an error on the stream
//!   after it — which the profile presets).

mod backoff;
pub mod loadbalance;
mod retry;
mod retry_after;
mod strategy;

pub use backoff::{FIRST_WAIT, PortkeyBackoff};
pub use loadbalance::{pick_by_weight, target_weight};
pub use retry::{PortkeyRetryPolicy, RETRY_STATUS_CODES};
pub use retry_after::{MAX_RETRY_LIMIT, RetryAfterVerdict, verdict};
pub use strategy::PortkeyAdmission;

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
