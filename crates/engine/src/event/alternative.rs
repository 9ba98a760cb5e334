//! What an alternative mechanism did (outlier ejection, hedging; see
//! [`crate::alternatives`]): `EventKind::Alternative`'s events.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

/// What an alternative mechanism did (`EventKind::Alternative`).
#[derive(Clone, Debug, PartialEq)]
pub enum AlternativeEvent<S = Arc<str>> {
    /// Outlier detection ejected a deployment: no pick lands on it until `until`.
    Ejected {
        /// Model group.
        model_group: S,
        /// Deployment.
        deployment_id: S,
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
        model_group: S,
        /// Deployment.
        deployment_id: S,
    },
    /// The first attempt had not answered after `delay`: a second one started on `hedge`.
    Hedged {
        /// Model group.
        model_group: S,
        /// The deployment of the first attempt (still running).
        primary: S,
        /// The deployment of the hedge.
        hedge: S,
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
        model_group: S,
        /// The deployment whose result the request kept.
        winner: S,
        /// Whether the hedge (not the first attempt) is that deployment.
        hedge_won: bool,
    },
}

impl<S> AlternativeEvent<S> {
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
