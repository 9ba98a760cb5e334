//! The fallback strategy's status list (`strategy.on_status_codes`, here the router's
//! `portkey_fallback_on_status_codes`), read from `src/handlers/handlerUtils.ts`
//! (`tryTargetsRecursively`, `StrategyModes.FALLBACK`) at tag v1.15.2: after a target's final
//! answer the walk breaks out — "Skip the fallback" — when a list is given and the status is
//! not in it, or when none is given and the answer is ok. So with a list, a failure whose
//! status is not listed is the request's answer; without one, every failure moves on.
//!
//! A connection error has no status of its own: `retryRequest` answers it with a 500
//! (`fetch` throws a `TypeError`), which is the status the list is checked against.

use crate::config::RouterSettings;
use crate::contract::RouteAdmission;
use crate::failure::{FailureKind, ProviderFailure};

/// The status the fallback strategy sees for `failure`.
pub fn gateway_status(failure: &ProviderFailure) -> Option<u16> {
    failure
        .status
        .or(failure.kind.default_status())
        .or((failure.kind == FailureKind::ApiConnection).then_some(500))
}

/// The gateway's fallback strategy, as what the candidate walk asks a profile: a failure
/// ends the walk when `portkey_fallback_on_status_codes` is set and does not list its status.
#[derive(Clone, Copy, Debug, Default)]
pub struct PortkeyFallbackStrategy;

impl RouteAdmission for PortkeyFallbackStrategy {
    fn ends_walk(&self, failure: &ProviderFailure, settings: &RouterSettings) -> bool {
        settings
            .portkey_fallback_on_status_codes
            .as_ref()
            .is_some_and(|codes| !gateway_status(failure).is_some_and(|s| codes.contains(&s)))
    }
}
