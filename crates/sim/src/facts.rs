//! What a run's events say about which router settings could have mattered.
//!
//! A sweep whose values of a key give byte-identical summaries says the key had no effect;
//! these counts let it say why, in terms the engine itself reported: every cooldown took its
//! length from the provider's Retry-After (so the router's `cooldown_time` was never used), no
//! call failed (so `allowed_fails` was never consulted), no failure was retryable (so
//! `num_retries` was never consulted). They are counted from the same typed events every
//! report derives from, by a sink beside the recorder ([`FactsSink`]).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use routersim_engine::sync::lock_unpoisoned;

use routersim_engine::event::{CooldownSource, EventKind, EventSink, GiveUpReason, RoutingEvent};
use serde::{Deserialize, Serialize};

/// Counts from one run's events.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunFacts {
    /// Provider calls that failed (`AttemptEnd` with a failure).
    pub failed_attempts: u64,
    /// Failures the retry policy was asked about and could have retried: `Retry` events plus
    /// `GiveUp` for `retries_exhausted` (every other give-up reason ignores the retry budget).
    pub retryable_failures: u64,
    /// `Retry` events.
    pub retries: u64,
    /// `GiveUp` events: a model group stopped trying; only then are fallbacks looked up.
    pub give_ups: u64,
    /// `CooldownSet` events whose length was the deployment's own `cooldown_time`.
    pub cooldowns_from_deployment: u64,
    /// `CooldownSet` events whose length was the provider's Retry-After.
    pub cooldowns_from_retry_after: u64,
    /// `CooldownSet` events whose length was the router's `cooldown_time`.
    pub cooldowns_from_router: u64,
    /// `Fallback` events (hops to another model group) by the group tried next; a sweep
    /// reports them per target group beside the fallback rate.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fallbacks_to: BTreeMap<String, u64>,
}

impl RunFacts {
    /// `CooldownSet` events.
    pub fn cooldowns(&self) -> u64 {
        self.cooldowns_from_deployment
            + self.cooldowns_from_retry_after
            + self.cooldowns_from_router
    }

    /// The sum of two runs' counts.
    pub fn add(&mut self, other: &RunFacts) {
        self.failed_attempts += other.failed_attempts;
        self.retryable_failures += other.retryable_failures;
        self.retries += other.retries;
        self.give_ups += other.give_ups;
        self.cooldowns_from_deployment += other.cooldowns_from_deployment;
        self.cooldowns_from_retry_after += other.cooldowns_from_retry_after;
        self.cooldowns_from_router += other.cooldowns_from_router;
        for (group, n) in &other.fallbacks_to {
            *self.fallbacks_to.entry(group.clone()).or_default() += n;
        }
    }
}

/// An event sink that counts [`RunFacts`] and passes every event on to `inner`.
#[derive(Debug)]
pub struct FactsSink<S> {
    inner: Arc<S>,
    counts: [AtomicU64; 7],
    fallbacks_to: Mutex<BTreeMap<String, u64>>,
}

const FAILED: usize = 0;
const RETRYABLE: usize = 1;
const RETRIES: usize = 2;
const GIVE_UPS: usize = 3;
const FROM_DEPLOYMENT: usize = 4;
const FROM_RETRY_AFTER: usize = 5;
const FROM_ROUTER: usize = 6;

impl<S> FactsSink<S> {
    /// Counts in front of `inner`.
    pub fn new(inner: Arc<S>) -> Self {
        Self {
            inner,
            counts: Default::default(),
            fallbacks_to: Mutex::default(),
        }
    }

    /// The counts so far.
    pub fn facts(&self) -> RunFacts {
        let get = |i: usize| self.counts[i].load(Ordering::Relaxed);
        RunFacts {
            failed_attempts: get(FAILED),
            retryable_failures: get(RETRYABLE),
            retries: get(RETRIES),
            give_ups: get(GIVE_UPS),
            cooldowns_from_deployment: get(FROM_DEPLOYMENT),
            cooldowns_from_retry_after: get(FROM_RETRY_AFTER),
            cooldowns_from_router: get(FROM_ROUTER),
            fallbacks_to: lock_unpoisoned(&self.fallbacks_to).clone(),
        }
    }

    fn count(&self, i: usize) {
        self.counts[i].fetch_add(1, Ordering::Relaxed);
    }
}

impl<S: EventSink> EventSink for FactsSink<S> {
    fn emit(&self, event: &RoutingEvent) {
        match &event.kind {
            EventKind::AttemptEnd {
                failure: Some(_), ..
            } => self.count(FAILED),
            EventKind::Retry { .. } => {
                self.count(RETRIES);
                self.count(RETRYABLE);
            }
            EventKind::GiveUp { reason, .. } => {
                self.count(GIVE_UPS);
                if *reason == GiveUpReason::RetriesExhausted {
                    self.count(RETRYABLE);
                }
            }
            EventKind::Fallback { target, .. } => {
                *lock_unpoisoned(&self.fallbacks_to)
                    .entry(target.to_string())
                    .or_default() += 1;
            }
            EventKind::CooldownSet { source, .. } => self.count(match source {
                CooldownSource::Deployment => FROM_DEPLOYMENT,
                CooldownSource::RetryAfter => FROM_RETRY_AFTER,
                CooldownSource::Router => FROM_ROUTER,
            }),
            _ => {}
        }
        self.inner.emit(event);
    }
}
