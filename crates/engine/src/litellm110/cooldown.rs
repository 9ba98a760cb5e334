//! LiteLLM 1.110.2's failure handler (measured by the oracle: scenarios 18, 38, 44–48).
//!
//! The documented checks ([`LiteLlmCooldown`]) decide whether a failure cools, with two
//! differences:
//! - a router `cooldown_time` of 0 means the default 5 s (a deployment's own 0 still means
//!   never cool);
//! - a failure on a deployment that is already cooling writes the entry again, and the
//!   deadline becomes the earlier of the first write's expiry and this write's end
//!   ([`Rewrite::FirstOrLatest`]): a second failure never extends a live cooldown, a shorter
//!   one shortens it.

use std::time::Duration;

use crate::config::{DEFAULT_COOLDOWN_TIME, RouterSettings};
use crate::cooldown::{CooldownDecision, CooldownTrigger, FailureContext, LiteLlmCooldown};
use crate::state::{Rewrite, StateStore};

/// LiteLLM 1.110.2's failure handler.
#[derive(Debug, Default)]
pub struct LiteLlm110Cooldown {
    documented: LiteLlmCooldown,
}

impl CooldownTrigger for LiteLlm110Cooldown {
    fn on_success(&self, deployment_index: usize, now: tokio::time::Instant) {
        self.documented.on_success(deployment_index, now);
    }

    fn reset(&self, deployment_index: usize) {
        self.documented.reset(deployment_index);
    }

    fn on_failure(
        &self,
        ctx: &FailureContext<'_>,
        store: &dyn StateStore,
    ) -> Option<CooldownDecision> {
        if ctx.settings.cooldown_time != Duration::ZERO {
            return self.documented.on_failure(ctx, store);
        }
        let settings = RouterSettings {
            cooldown_time: DEFAULT_COOLDOWN_TIME,
            ..ctx.settings.clone()
        };
        let ctx = FailureContext {
            settings: &settings,
            ..*ctx
        };
        self.documented.on_failure(&ctx, store)
    }

    fn rewrite(&self) -> Rewrite {
        Rewrite::FirstOrLatest
    }
}
