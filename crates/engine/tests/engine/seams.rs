//! The policy seams of the router builder: retry budget, strategy, classifier, recovery and
//! cooldown trigger are injected, and every failure that may cool a deployment (an attempt's,
//! a probe's, a half-open trial's) reaches the injected trigger.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "tests fail loudly, read as one story, and drive tokio's paused clock directly"
)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::*;
use rand_chacha::ChaCha8Rng;
use routersim_engine::Router;
use routersim_engine::classify::{FailureClassifier, RecoveryScope};
use routersim_engine::config::{Deployment, Recovery as RecoveryName, RouterSettings};
use routersim_engine::cooldown::{
    CooldownDecision, CooldownTrigger, FailureContext, FailureOrigin, LiteLlmCooldown,
};
use routersim_engine::event::{
    CooldownReason, CooldownSource, EventKind, GiveUpReason, RoutingEvent, VecSink,
};
use routersim_engine::failure::{FailureKind as K, ProviderFailure};
use routersim_engine::recovery::{Admission, Recovery};
use routersim_engine::request::Request;
use routersim_engine::retry::RetryBudget;
use routersim_engine::state::StateStore;
use routersim_engine::strategy::{PickContext, SelectionStrategy};
use tokio::time::Instant;

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn give_ups(events: &[RoutingEvent]) -> Vec<GiveUpReason> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::GiveUp { reason, .. } => Some(*reason),
            _ => None,
        })
        .collect()
}

fn weighted(id: &str, weight: f64) -> Deployment {
    let mut d = dep("A", id);
    d.weight = Some(weight);
    d
}

/// A budget of `left` retries for the whole router, counting deposits.
struct Fixed {
    left: Mutex<u32>,
    deposits: Arc<Mutex<u32>>,
}

impl RetryBudget for Fixed {
    fn deposit(&self, _now: Instant) {
        *self.deposits.lock().unwrap() += 1;
    }

    fn withdraw(&self, _now: Instant) -> bool {
        let mut left = self.left.lock().unwrap();
        let ok = *left > 0;
        *left = left.saturating_sub(1);
        ok
    }
}

#[tokio::test(start_paused = true)]
async fn a_spent_retry_budget_gives_up_with_its_own_reason() {
    let settings = RouterSettings {
        num_retries: 3,
        ..RouterSettings::default()
    };
    let provider = Scripted::new().always("a0", fail(K::ServiceUnavailable));
    let deposits = Arc::new(Mutex::new(0));
    let sink = Arc::new(VecSink::new());
    let router = Router::builder(config(vec![dep("A", "a0")], settings), provider)
        .seed(7)
        .sink(sink.clone())
        .retry_budget(Fixed {
            left: Mutex::new(1),
            deposits: deposits.clone(),
        })
        .build();
    let first = router.completion(Request::new(1, "A")).await;
    assert_eq!(attempts(&first), ["a0:service_unavailable"; 2]);
    let second = router.completion(Request::new(2, "A")).await;
    assert_eq!(attempts(&second), ["a0:service_unavailable"]);
    assert_eq!(
        give_ups(&sink.events()),
        [
            GiveUpReason::RetryBudgetExhausted,
            GiveUpReason::RetryBudgetExhausted
        ]
    );
    assert_eq!(
        GiveUpReason::RetryBudgetExhausted.as_str(),
        "retry_budget_exhausted"
    );
    assert_eq!(*deposits.lock().unwrap(), 2, "one deposit per request");
}

#[tokio::test(start_paused = true)]
async fn without_a_budget_every_retry_the_policy_allows_happens() {
    let settings = RouterSettings {
        num_retries: 3,
        ..RouterSettings::default()
    };
    let provider = Scripted::new().always("a0", fail(K::ServiceUnavailable));
    let (router, sink) = make_router(config(vec![dep("A", "a0")], settings), provider);
    let r = router.completion(Request::new(1, "A")).await;
    assert_eq!(r.attempts.len(), 4);
    assert_eq!(give_ups(&sink.events()), [GiveUpReason::RetriesExhausted]);
}

/// LiteLLM's trigger, recording where each failure it was shown came from.
struct Recording {
    inner: LiteLlmCooldown,
    seen: Arc<Mutex<Vec<FailureOrigin>>>,
    /// Cool for a minute on every failure, whatever LiteLLM would say.
    always: bool,
}

impl CooldownTrigger for Recording {
    fn on_success(&self, deployment_index: usize, now: Instant) {
        self.inner.on_success(deployment_index, now);
    }

    fn on_failure(
        &self,
        ctx: &FailureContext<'_>,
        store: &dyn StateStore,
    ) -> Option<CooldownDecision> {
        self.seen.lock().unwrap().push(ctx.origin);
        if self.always {
            return Some(CooldownDecision {
                reason: CooldownReason::ErrorRate,
                duration: secs(60),
                source: CooldownSource::Router,
            });
        }
        self.inner.on_failure(ctx, store)
    }
}

fn recording(always: bool) -> (Recording, Arc<Mutex<Vec<FailureOrigin>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let trigger = Recording {
        inner: LiteLlmCooldown::default(),
        seen: seen.clone(),
        always,
    };
    (trigger, seen)
}

#[tokio::test(start_paused = true)]
async fn probe_and_trial_failures_go_through_the_injected_trigger() {
    // a0 fails once (429: cooled 5 s), then fails its half-open trial, then a probe fails.
    let settings = RouterSettings {
        recovery: RecoveryName::HalfOpen,
        num_retries: 0,
        health_check_interval: Some(secs(30)),
        ..RouterSettings::default()
    };
    let provider = Scripted::new().always("a0", fail(K::RateLimit));
    let (trigger, seen) = recording(false);
    let sink = Arc::new(VecSink::new());
    let router = Router::builder(
        config(
            vec![weighted("a0", 1000.0), weighted("a1", 0.001)],
            settings,
        ),
        provider,
    )
    .seed(7)
    .sink(sink.clone())
    .cooldown_trigger(trigger)
    .build();
    let start = Instant::now();
    let router = &router;
    tokio::select! {
        biased;
        () = router.run_health_checks() => unreachable!("probes run forever"),
        () = async {
            router.completion(Request::new(1, "A")).await;
            tokio::time::sleep_until(start + secs(6)).await;
            router.completion(Request::new(2, "A")).await;
            tokio::time::sleep_until(start + secs(31)).await;
        } => {}
    }
    assert_eq!(
        *seen.lock().unwrap(),
        [
            FailureOrigin::Traffic,
            FailureOrigin::Trial,
            FailureOrigin::Probe
        ]
    );
    let reasons: Vec<CooldownReason> = sink
        .events()
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::CooldownSet { reason, .. } => Some(*reason),
            _ => None,
        })
        .collect();
    assert_eq!(
        reasons,
        [
            CooldownReason::RateLimitInGroup,
            CooldownReason::HalfOpenTrialFailed,
            CooldownReason::ProbeFailed
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn disable_cooldowns_holds_for_any_trigger_and_for_probes() {
    let settings = RouterSettings {
        disable_cooldowns: true,
        num_retries: 0,
        health_check_interval: Some(secs(10)),
        ..RouterSettings::default()
    };
    let provider = Scripted::new().always("a0", fail(K::ServiceUnavailable));
    let (trigger, seen) = recording(true);
    let sink = Arc::new(VecSink::new());
    let router = Router::builder(config(vec![dep("A", "a0")], settings), provider)
        .sink(sink.clone())
        .cooldown_trigger(trigger)
        .build();
    let start = Instant::now();
    let router = &router;
    tokio::select! {
        biased;
        () = router.run_health_checks() => unreachable!("probes run forever"),
        () = async {
            router.completion(Request::new(1, "A")).await;
            tokio::time::sleep_until(start + secs(11)).await;
        } => {}
    }
    let events = sink.events();
    assert_eq!(events_named(&events, "probe_failed").len(), 1);
    assert!(events_named(&events, "cooldown_set").is_empty());
    assert!(
        seen.lock().unwrap().is_empty(),
        "the trigger is never asked"
    );
}

/// Always the last candidate.
struct Last;

impl SelectionStrategy for Last {
    fn pick(&self, ctx: &PickContext<'_>, _rng: &mut ChaCha8Rng) -> usize {
        ctx.candidates.len() - 1
    }
}

/// Sends every failure straight to the general fallbacks.
struct StraightToFallbacks;

impl FailureClassifier for StraightToFallbacks {
    fn counts_against_health(&self, _failure: &ProviderFailure) -> bool {
        false
    }

    fn scope(&self, _failure: &ProviderFailure) -> RecoveryScope {
        RecoveryScope::GeneralFallbacks
    }
}

#[tokio::test(start_paused = true)]
async fn strategy_and_classifier_are_injected_on_the_builder() {
    let settings = RouterSettings {
        num_retries: 3,
        ..RouterSettings::default()
    };
    let provider = Scripted::new().always("a1", fail(K::ServiceUnavailable));
    let sink = Arc::new(VecSink::new());
    let router = Router::builder(
        config(
            vec![weighted("a0", 1000.0), weighted("a1", 0.001)],
            settings,
        ),
        provider,
    )
    .sink(sink.clone())
    .strategy(Last)
    .classifier(StraightToFallbacks)
    .build();
    let r = router.completion(Request::new(1, "A")).await;
    // The weighted default would pick a0; the classifier forbids the retries num_retries allows.
    assert_eq!(attempts(&r), ["a1:service_unavailable"]);
    assert_eq!(
        give_ups(&sink.events()),
        [GiveUpReason::ClassifiedGeneralFallbacks]
    );
}

/// Holds deployment 0 back for good.
struct NeverA0;

impl Recovery for NeverA0 {
    fn admit(&self, deployment: usize) -> Admission {
        if deployment == 0 {
            Admission::Skip
        } else {
            Admission::Normal
        }
    }

    fn claim_trial(&self, _deployment: usize) -> bool {
        false
    }

    fn on_cooldown_end(&self, _deployment: usize) -> bool {
        false
    }

    fn on_trial_result(&self, _deployment: usize, _ok: bool) {}

    fn reset(&self, _deployment: usize) -> bool {
        false
    }
}

#[tokio::test(start_paused = true)]
async fn recovery_is_injected_on_the_builder() {
    let settings = RouterSettings::default();
    let router = Router::builder(
        config(
            vec![weighted("a0", 1000.0), weighted("a1", 0.001)],
            settings,
        ),
        Scripted::new(),
    )
    .recovery(NeverA0)
    .build();
    for id in 0..5 {
        assert_eq!(
            attempts(&router.completion(Request::new(id, "A")).await),
            ["a1:ok"]
        );
    }
}
