//! Building a router: the config, the provider, the clock and the seed, and each policy the
//! caller may replace; the rest come from the profile's entry in the table
//! ([`crate::profile::PROFILES`]) and from the settings that name a policy.

use std::cell::RefCell;
use std::sync::Arc;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio::sync::Notify;

use super::core::{Alternatives, Router};
use super::group::groups_of;
use crate::backoff::Backoff;
use crate::classify::FailureClassifier;
use crate::clock::{Clock, TokioClock};
use crate::config::RouterConfig;
use crate::contract::RouteAdmission;
use crate::cooldown::CooldownTrigger;
use crate::event::{EventSink, NullSink};
use crate::fallback::FallbackPolicy;
use crate::provider::Provider;
use crate::recovery::Recovery;
use crate::retry::{RetryBudget, RetryPolicy};
use crate::state::{InMemoryState, StateStore};
use crate::stats::LoadTracker;
use crate::strategy::SelectionStrategy;
use crate::stream_rules::StreamRules;

/// The wall-clock epoch a [`RouterBuilder`] gives its default clock: 2026-01-01T00:00:00Z.
pub const DEFAULT_EPOCH_UNIX_MS: i64 = 1_767_225_600_000;

/// Builds a [`Router`]. Defaults: tokio's clock with the wall clock at
/// [`DEFAULT_EPOCH_UNIX_MS`], seed 0, no event sink, the in-process state store,
/// the profile's policies (its entry in
/// [`PROFILES`](crate::profile::PROFILES); none: LiteLLM's documented rules), no retry budget
/// beyond the settings' own, and the strategy, classifier and recovery the settings name. Each
/// policy can be replaced.
pub struct RouterBuilder<P, C = TokioClock> {
    config: RouterConfig,
    provider: P,
    clock: C,
    rng: ChaCha8Rng,
    sink: Arc<dyn EventSink>,
    retry: Option<Box<dyn RetryPolicy>>,
    retry_budget: Option<Box<dyn RetryBudget>>,
    backoff: Option<Box<dyn Backoff>>,
    cooldown: Option<Box<dyn CooldownTrigger>>,
    state: Option<Box<dyn StateStore>>,
    strategy: Option<Box<dyn SelectionStrategy>>,
    classifier: Option<Box<dyn FailureClassifier>>,
    recovery: Option<Box<dyn Recovery>>,
    stream_rules: Option<Box<dyn StreamRules>>,
    fallback_policy: Option<Box<dyn FallbackPolicy>>,
    admission: Option<Box<dyn RouteAdmission>>,
}

impl<P: Provider> RouterBuilder<P, TokioClock> {
    /// Starts a builder.
    pub fn new(config: RouterConfig, provider: P) -> Self {
        Self {
            config,
            provider,
            clock: TokioClock::with_epoch(DEFAULT_EPOCH_UNIX_MS),
            rng: ChaCha8Rng::seed_from_u64(0),
            sink: Arc::new(NullSink),
            retry: None,
            retry_budget: None,
            backoff: None,
            cooldown: None,
            state: None,
            strategy: None,
            classifier: None,
            recovery: None,
            stream_rules: None,
            fallback_policy: None,
            admission: None,
        }
    }
}

impl<P: Provider, C: Clock> RouterBuilder<P, C> {
    /// Uses another clock.
    pub fn clock<C2: Clock>(self, clock: C2) -> RouterBuilder<P, C2> {
        RouterBuilder {
            config: self.config,
            provider: self.provider,
            clock,
            rng: self.rng,
            sink: self.sink,
            retry: self.retry,
            retry_budget: self.retry_budget,
            backoff: self.backoff,
            cooldown: self.cooldown,
            state: self.state,
            strategy: self.strategy,
            classifier: self.classifier,
            recovery: self.recovery,
            stream_rules: self.stream_rules,
            fallback_policy: self.fallback_policy,
            admission: self.admission,
        }
    }

    /// Seeds the router's RNG (picks, jitter).
    pub fn seed(mut self, seed: u64) -> Self {
        self.rng = ChaCha8Rng::seed_from_u64(seed);
        self
    }

    /// Uses this RNG (picks, jitter).
    pub fn rng(mut self, rng: ChaCha8Rng) -> Self {
        self.rng = rng;
        self
    }

    /// Sends events to `sink`.
    pub fn sink(mut self, sink: Arc<dyn EventSink>) -> Self {
        self.sink = sink;
        self
    }

    /// Replaces the retry policy.
    pub fn retry_policy(mut self, retry: impl RetryPolicy + 'static) -> Self {
        self.retry = Some(Box::new(retry));
        self
    }

    /// Sets a retry budget shared by every request (default: the one the settings'
    /// `retry_budget` and `retry_throttling` ask for, else unlimited).
    pub fn retry_budget(mut self, budget: impl RetryBudget + 'static) -> Self {
        self.retry_budget = Some(Box::new(budget));
        self
    }

    /// Replaces the backoff.
    pub fn backoff(mut self, backoff: impl Backoff + 'static) -> Self {
        self.backoff = Some(Box::new(backoff));
        self
    }

    /// Replaces the failure handler.
    pub fn cooldown_trigger(mut self, cooldown: impl CooldownTrigger + 'static) -> Self {
        self.cooldown = Some(Box::new(cooldown));
        self
    }

    /// Replaces the state store.
    pub fn state_store(mut self, state: impl StateStore + 'static) -> Self {
        self.state = Some(Box::new(state));
        self
    }

    /// Replaces the selection strategy `routing_strategy` names.
    pub fn strategy(mut self, strategy: impl SelectionStrategy + 'static) -> Self {
        self.strategy = Some(Box::new(strategy));
        self
    }

    /// Replaces the failure classifier `classification` names.
    pub fn classifier(mut self, classifier: impl FailureClassifier + 'static) -> Self {
        self.classifier = Some(Box::new(classifier));
        self
    }

    /// Replaces the recovery policy `recovery` names.
    pub fn recovery(mut self, recovery: impl Recovery + 'static) -> Self {
        self.recovery = Some(Box::new(recovery));
        self
    }

    /// Replaces the stream rules the config's `profile` selects.
    pub fn stream_rules(mut self, rules: impl StreamRules + 'static) -> Self {
        self.stream_rules = Some(Box::new(rules));
        self
    }

    /// Replaces the choice of fallback list the config's `profile` selects.
    pub fn fallback_policy(mut self, policy: impl FallbackPolicy + 'static) -> Self {
        self.fallback_policy = Some(Box::new(policy));
        self
    }

    /// Replaces what the candidate walk asks about contracts (the config's `profile`
    /// selects it).
    pub fn route_admission(mut self, admission: impl RouteAdmission + 'static) -> Self {
        self.admission = Some(Box::new(admission));
        self
    }

    /// Builds the router.
    pub fn build(self) -> Router<P, C> {
        let config = self.config;
        let settings = &config.settings;
        let deployments = config.deployments.len();
        let groups = groups_of(&config);
        let state = self
            .state
            .unwrap_or_else(|| Box::new(InMemoryState::new(deployments)));
        let strategy = self
            .strategy
            .unwrap_or_else(|| crate::strategy::for_name(settings.routing_strategy));
        let classifier = self
            .classifier
            .unwrap_or_else(|| crate::classify::for_setting(settings.classification));
        let recovery = self
            .recovery
            .unwrap_or_else(|| crate::recovery::for_setting(settings.recovery, deployments));
        // The profile's policies, for each one the caller did not replace.
        let profile = crate::profile::spec(settings.profile);
        let policies = profile.policies;
        let retry = self.retry.unwrap_or_else(policies.retry);
        let backoff = self.backoff.unwrap_or_else(policies.backoff);
        let cooldown = self.cooldown.unwrap_or_else(policies.cooldown);
        let fallback_policy = self.fallback_policy.unwrap_or_else(policies.fallbacks);
        let admission = self.admission.unwrap_or_else(policies.admission);
        let stream_rules = self.stream_rules.unwrap_or_else(policies.stream_rules);
        let load = LoadTracker::new(deployments, self.clock.now());
        let retry_budget = self.retry_budget.unwrap_or_else(|| {
            crate::alternatives::budget_for(
                settings.retry_budget.as_ref(),
                settings.retry_throttling.as_ref(),
                self.clock.now(),
            )
        });
        let alternatives = Alternatives::new(settings, deployments, self.clock.now());
        Router {
            groups,
            config,
            provider: self.provider,
            clock: self.clock,
            rng: RefCell::new(self.rng),
            sink: self.sink,
            strategy,
            retry,
            retry_budget,
            alternatives,
            backoff,
            cooldown,
            fallback_policy,
            admission,
            state,
            load,
            classifier,
            recovery,
            stream_rules,
            walk: profile.walk,
            cooldown_changed: Notify::new(),
        }
    }
}

impl<P: Provider> Router<P, TokioClock> {
    /// A router with the defaults of [`RouterBuilder`].
    pub fn from_config(config: RouterConfig, provider: P) -> Self {
        RouterBuilder::new(config, provider).build()
    }

    /// Starts a builder.
    pub fn builder(config: RouterConfig, provider: P) -> RouterBuilder<P, TokioClock> {
        RouterBuilder::new(config, provider)
    }
}
