//! The gateway's `strategy` over the group's targets, as the candidate walk asks it
//! ([`RouteAdmission`]; `handlerUtils.ts`, `tryTargetsRecursively` at v1.15.2):
//!
//! - `fallback` with `portkey_fallback_on_status_codes` (the strategy's `on_status_codes`): the
//!   walk "skips the fallback" after a status not in it. A connection error is
//!   `retryRequest`'s 500 there.
//! - `loadbalance` (`portkey_strategy: loadbalance`): one target picked by weight
//!   ([`super::loadbalance`]) and no other.

use rand_chacha::ChaCha8Rng;

use super::loadbalance::{draw, target_weight};
use crate::config::{Deployment, PortkeyStrategy, RouterSettings};
use crate::contract::RouteAdmission;
use crate::failure::{FailureKind, ProviderFailure};

/// The strategy's rules: the fallback's stop (a failure whose status the list does not name
/// ends the walk) and the loadbalance's one weighted pick.
#[derive(Clone, Copy, Debug, Default)]
pub struct PortkeyAdmission;

impl RouteAdmission for PortkeyAdmission {
    fn ends_walk(&self, failure: &ProviderFailure, settings: &RouterSettings) -> bool {
        let connection = (failure.kind == FailureKind::ApiConnection).then_some(500);
        let status = failure
            .status
            .or(failure.kind.default_status())
            .or(connection);
        let codes = settings.portkey_fallback_on_status_codes.as_deref();
        codes.is_some_and(|codes| !status.is_some_and(|s| codes.contains(&s)))
    }

    fn picks_one_route(&self, settings: &RouterSettings) -> bool {
        settings.portkey_strategy == PortkeyStrategy::Loadbalance
    }

    fn pick_route(&self, routes: &[&Deployment], rng: &mut ChaCha8Rng) -> Option<usize> {
        let weights: Vec<f64> = routes.iter().map(|d| target_weight(d)).collect();
        draw(&weights, rng)
    }
}
