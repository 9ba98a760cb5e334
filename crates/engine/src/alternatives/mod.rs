//! Alternatives planners ask for: mechanisms other gateways use instead of (or beside)
//! LiteLLM's retries and cooldowns, each off by default and each a `router_settings` key that
//! sweeps like any other (`--set router_settings.retry_budget.ratio=0.1,0.2`).
//!
//! - [`tps_budget`]: tower's retry budget (`retry_budget`), a share of recent requests plus a
//!   floor per second, over a sliding window; a retry it refuses gives up with
//!   `retry_budget_exhausted`.
//! - [`throttle`]: gRPC's retry throttling (`retry_throttling`), a token bucket drained by
//!   failures and refilled by successes; retries stop while it is at most half full
//!   (`retry_throttled`), and so do hedges.
//! - [`outlier`]: Envoy's consecutive-5xx outlier ejection (`outlier_detection`), as current
//!   Envoy does it (`max_ejection_percent` always respected unless `always_eject_one_host`,
//!   ejections returned by the `interval` sweep): an ejected deployment is not picked, like a
//!   cooling one.
//! - [`hedge`]: request hedging (`hedge_after`): a second attempt on another deployment when the
//!   first has not answered after a delay; the first answer wins.
//!
//! Each is a mechanism (a struct) behind a seam the router already has or that every profile
//! shares: the two budgets are [`RetryBudget`](crate::retry::RetryBudget)s consulted by every
//! retry loop, the ejections are part of "unavailable" for every pick, and hedging wraps the
//! one attempt. None is an `if profile == …`: they work under any profile.

pub mod hedge;
pub mod outlier;
pub mod throttle;
pub mod tps_budget;

use tokio::time::Instant;

pub use hedge::{HedgeAfter, LatencyWindow};
pub use outlier::{OutlierDetector, OutlierSettings, ejects_in_group_of};
pub use throttle::{RetryThrottle, RetryThrottlingSettings};
pub use tps_budget::{RetryBudgetSettings, TpsBudget};

use crate::retry::{RetryBudget, UnlimitedBudget};

pub use crate::event::AlternativeEvent;

/// The retry budget a router's settings ask for: none, tower's, gRPC's, or both (gRPC's
/// throttle is asked first, since asking it spends nothing; tower's budget then withdraws).
pub fn budget_for(
    budget: Option<&RetryBudgetSettings>,
    throttling: Option<&RetryThrottlingSettings>,
    start: Instant,
) -> Box<dyn RetryBudget> {
    match (budget, throttling) {
        (None, None) => Box::new(UnlimitedBudget),
        (Some(b), None) => Box::new(TpsBudget::new(b, start)),
        (None, Some(t)) => Box::new(RetryThrottle::new(t)),
        (Some(b), Some(t)) => Box::new(Layered(RetryThrottle::new(t), TpsBudget::new(b, start))),
    }
}

/// Two budgets: a retry must pass both (the first is asked first).
#[derive(Debug)]
pub struct Layered<A, B>(pub A, pub B);

impl<A: RetryBudget, B: RetryBudget> RetryBudget for Layered<A, B> {
    fn deposit(&self, now: Instant) {
        self.0.deposit(now);
        self.1.deposit(now);
    }

    fn withdraw(&self, now: Instant) -> bool {
        self.admit(now).is_none()
    }

    fn admit(&self, now: Instant) -> Option<crate::event::GiveUpReason> {
        self.0.admit(now).or_else(|| self.1.admit(now))
    }

    fn on_attempt_end(&self, failure: Option<&crate::failure::ProviderFailure>) {
        self.0.on_attempt_end(failure);
        self.1.on_attempt_end(failure);
    }

    fn admit_hedge(&self, now: Instant) -> bool {
        self.0.admit_hedge(now) && self.1.admit_hedge(now)
    }
}
