//! The gateway's `strategy` (`handlerUtils.ts`, `tryTargetsRecursively` at v1.15.2): `fallback`
//! with `strategy.on_status_codes` "skips the fallback" after a status not in it (a connection
//! error is `retryRequest`'s 500); `loadbalance` draws one target by weight and `break`s.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use routersim_primitives::js::pick_by_draw;

use crate::config::{Deployment, PortkeyStrategy, RouterSettings};
use crate::contract::RouteAdmission;
use crate::failure::{FailureKind, ProviderFailure};

/// A target's `weight`: the deployment's, else 1 (`if (t.weight === undefined) t.weight = 1`).
pub fn target_weight(deployment: &Deployment) -> f64 {
    deployment.weight.unwrap_or(1.0)
}

/// The strategy's rules.
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
        pick_by_draw(&weights, rng.random::<f64>())
    }
}
