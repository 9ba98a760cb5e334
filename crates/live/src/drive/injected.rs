//! Which failures a live run's scenario can explain: a router answering with a failure its
//! providers never caused (LiteLLM's 500 when a provider it was configured for is gone, a
//! stale proxy, serve stopped early) is not what the scenario tests, and drive says so.
//!
//! A failed request is *not injected* when its kind is one the scenario cannot produce, or —
//! where drive sees the provider calls — when every call joined to it succeeded.

use std::collections::BTreeSet;

use routersim_engine::failure::FailureKind;
use routersim_mock_providers::spec::{FaultEffect, OutcomeSpec, ProviderSpec, StreamFault};
use routersim_sim::scenario::Scenario;

/// Kinds a router makes of the scenario's faults on its own: every deployment cooling
/// (LiteLLM's 429 "No deployments available", routersim's `router_rate_limit`) and its own
/// deadline.
const ROUTER_MADE: [FailureKind; 3] = [
    FailureKind::RateLimit,
    FailureKind::RouterRateLimit,
    FailureKind::Timeout,
];

/// Every failure kind `scenario`'s providers and faults can produce, and what a router makes of
/// them ([`ROUTER_MADE`]).
pub fn producible(scenario: &Scenario) -> BTreeSet<&'static str> {
    let mut kinds: BTreeSet<FailureKind> = ROUTER_MADE.into_iter().collect();
    for spec in scenario.providers.values() {
        provider_kinds(spec, &mut kinds);
    }
    for fault in &scenario.faults {
        match &fault.effect {
            FaultEffect::Error(error) => {
                kinds.insert(error.kind);
            }
            FaultEffect::Stream(stream) => stream_kinds(stream, &mut kinds),
            FaultEffect::InvalidResponse(_) => {
                kinds.insert(FailureKind::MalformedResponse);
            }
            FaultEffect::Slowdown(_) => {}
        }
    }
    kinds.into_iter().map(FailureKind::as_str).collect()
}

fn provider_kinds(spec: &ProviderSpec, kinds: &mut BTreeSet<FailureKind>) {
    if spec.context_window.is_some() {
        kinds.insert(FailureKind::ContextWindowExceeded);
    }
    for outcome in spec.script.iter().chain(&spec.then) {
        match outcome {
            OutcomeSpec::Ok { .. } => {}
            OutcomeSpec::Error(error) => {
                kinds.insert(error.kind);
            }
            OutcomeSpec::Stream(stream) => stream_kinds(stream, kinds),
            OutcomeSpec::Degenerate { .. } => {
                kinds.insert(FailureKind::MalformedResponse);
                kinds.insert(FailureKind::ContentPolicyViolation);
            }
        }
    }
}

fn stream_kinds(stream: &StreamFault, kinds: &mut BTreeSet<FailureKind>) {
    match stream {
        StreamFault::Break { error, .. } | StreamFault::ErrorFrame { error, .. } => {
            kinds.insert(error.kind);
            kinds.insert(FailureKind::ApiConnection);
        }
        StreamFault::Truncated { .. } | StreamFault::NoFinish(_) => {
            kinds.insert(FailureKind::ApiConnection);
        }
        StreamFault::Stall { .. } => {
            kinds.insert(FailureKind::Timeout);
        }
        StreamFault::Empty(_) => {
            kinds.insert(FailureKind::MalformedResponse);
        }
    }
}
