//! Alternatives planners ask for: mechanisms other gateways use instead of (or beside)
//! LiteLLM's retries and cooldowns, each off by default and each a `router_settings` key that
//! sweeps like any other (`--set router_settings.retry_budget.ratio=0.1,0.2`).
//!
//! - [`tps_budget`]: tower's retry budget (`retry_budget`), a share of recent requests plus a
//!   floor per second, over a sliding window; a retry it refuses gives up with
//!   `retry_budget_exhausted`.
//! - [`throttle`]: gRPC's retry throttling (`retry_throttling`), a token bucket drained by
//!   failures and refilled by successes; retries stop while it is at most half full
//!   (`retry_throttled`).
//! - [`outlier`]: Envoy's consecutive-5xx outlier ejection (`outlier_detection`): an ejected
//!   deployment is not picked, like a cooling one.
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

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

pub use hedge::{HedgeAfter, LatencyWindow};
pub use outlier::{OutlierDetector, OutlierSettings};
pub use throttle::{RetryThrottle, RetryThrottlingSettings};
pub use tps_budget::{RetryBudgetSettings, TpsBudget};

use crate::retry::{RetryBudget, UnlimitedBudget};

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
}

/// What an alternative mechanism did (`EventKind::Alternative`).
#[derive(Clone, Debug, PartialEq)]
pub enum AlternativeEvent {
    /// Outlier detection ejected a deployment: no pick lands on it until `until`.
    Ejected {
        /// Model group.
        model_group: Arc<str>,
        /// Deployment.
        deployment_id: Arc<str>,
        /// How long: `base_ejection_time` × `ejections`, at most `max_ejection_time`.
        duration: Duration,
        /// When it is eligible again.
        until: Instant,
        /// How many times it has been ejected, this one included.
        ejections: u32,
        /// The consecutive 5xx count that tripped it.
        consecutive_5xx: u32,
    },
    /// An ejection ended; the deployment is eligible again.
    Unejected {
        /// Model group.
        model_group: Arc<str>,
        /// Deployment.
        deployment_id: Arc<str>,
    },
    /// The first attempt had not answered after `delay`: a second one started on `hedge`.
    Hedged {
        /// Model group.
        model_group: Arc<str>,
        /// The deployment of the first attempt (still running).
        primary: Arc<str>,
        /// The deployment of the hedge.
        hedge: Arc<str>,
        /// The delay after which the hedge started.
        delay: Duration,
        /// Input tokens the hedge sends again (the extra call's prompt).
        extra_input_tokens: u32,
        /// What those tokens cost at the hedge deployment's `input_cost_per_token` (0 when
        /// it has no price).
        extra_cost_usd: f64,
    },
    /// A hedged request's race ended: `winner` answered first (or failed last) and the other
    /// call was cancelled.
    HedgeEnd {
        /// Model group.
        model_group: Arc<str>,
        /// The deployment whose result the request kept.
        winner: Arc<str>,
        /// Whether the hedge (not the first attempt) is that deployment.
        hedge_won: bool,
    },
}

impl AlternativeEvent {
    /// Its name in reports.
    pub fn name(&self) -> &'static str {
        match self {
            AlternativeEvent::Ejected { .. } => "ejected",
            AlternativeEvent::Unejected { .. } => "unejected",
            AlternativeEvent::Hedged { .. } => "hedged",
            AlternativeEvent::HedgeEnd { .. } => "hedge_end",
        }
    }
}
