//! `profile: litellm-1.110`: what LiteLLM 1.110.2's code does where it departs from its
//! documentation, decision for decision, as a bundle of policy implementations (see
//! [`crate::profile`]). Each rule was measured against the real `litellm.Router` 1.110.2
//! (`tools/litellm-oracle/`) and is checked by `tests/litellm_oracle_calls.rs` against the
//! recorded traces.
//!
//! - [`LiteLlm110RetryPolicy`]: the budget, the 4xx a policy makes retryable, the wait after
//!   the last try.
//! - [`LiteLlm110Backoff`]: jitter on Retry-After waits too; the 8 s cap over `retry_after`.
//! - [`LiteLlm110Cooldown`]: a router `cooldown_time` of 0 means 5 s; a re-write of a live
//!   cooldown never extends it.

mod backoff;
mod cooldown;
mod retry;

pub use backoff::LiteLlm110Backoff;
pub use cooldown::LiteLlm110Cooldown;
pub use retry::LiteLlm110RetryPolicy;

use crate::config::RouterSettings;
use crate::failure::FailureKind;
use crate::fallback::{FallbackChoice, FallbackPolicy, choose_falling_through};
use crate::request::Request;

/// LiteLLM 1.110.2's choice of fallback list (oracle scenarios 09, 10, 34, 35): a
/// context-window error falls through to the general fallbacks when
/// `context_window_fallbacks` has no entry for the group; a content-policy error does not
/// (it is raised when `content_policy_fallbacks` is set for some other group only).
#[derive(Clone, Copy, Debug, Default)]
pub struct LiteLlm110Fallbacks;

impl FallbackPolicy for LiteLlm110Fallbacks {
    fn choose<'a>(
        &self,
        settings: &'a RouterSettings,
        request: &'a Request,
        kind: FailureKind,
        serving: &str,
        requested: &str,
    ) -> Option<FallbackChoice<'a>> {
        let falls_through = kind == FailureKind::ContextWindowExceeded;
        choose_falling_through(settings, request, kind, serving, requested, falls_through)
    }
}
