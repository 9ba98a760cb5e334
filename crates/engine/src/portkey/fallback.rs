//! `portkey_fallback_on_status_codes` (the gateway's `strategy.on_status_codes`;
//! `handlerUtils.ts`, `tryTargetsRecursively` at v1.15.2): with a list, the walk "skips the
//! fallback" after a status not in it. A connection error is `retryRequest`'s 500 there.

use crate::config::RouterSettings;
use crate::contract::RouteAdmission;
use crate::failure::{FailureKind, ProviderFailure};

/// The fallback strategy's stop: a failure whose status the list does not name ends the walk.
#[derive(Clone, Copy, Debug, Default)]
pub struct PortkeyFallbackStrategy;

impl RouteAdmission for PortkeyFallbackStrategy {
    fn ends_walk(&self, failure: &ProviderFailure, settings: &RouterSettings) -> bool {
        let connection = (failure.kind == FailureKind::ApiConnection).then_some(500);
        let status = failure
            .status
            .or(failure.kind.default_status())
            .or(connection);
        let codes = settings.portkey_fallback_on_status_codes.as_deref();
        codes.is_some_and(|codes| !status.is_some_and(|s| codes.contains(&s)))
    }
}
