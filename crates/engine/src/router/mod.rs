//! The router: the loop that ties picks, attempts, retries, cooldowns and fallbacks together.
//!
//! Seed (LiteLLM): *"A retry tries the same model group again, and the new pick can land on a
//! different deployment. A fallback moves the request to a different model group. A cooldown
//! takes one deployment out of every pick, for every request, for a few seconds."*
//!
//! The shape of one request, one file each:
//! - **fallback walk** (`walk.rs`, [`Router::completion`]): serve the group asked for; on
//!   failure, unless the request set `disable_fallbacks`, walk the fallback targets depth
//!   first, skipping groups already tried, until one succeeds or `max_fallbacks` levels are
//!   spent. The caller gets the original failure when every hop fails.
//! - **group visit** (`visit.rs`): the retry loop on the lowest healthy `order` level, then the
//!   next order levels (each its own retry loop), then weighted failover; failures with a
//!   dedicated fallback list (context window, content policy) skip both.
//! - **retry loop** (`retry_loop.rs`): pick, call, let the failure handler cool the deployment,
//!   ask the retry policy (and the retry budget) whether to go on and the backoff how long to
//!   wait, pick again.
//! - **attempt** (`attempt.rs`): one provider call with its deadline, events and record.
//! - **stream** (`stream.rs`): reading a streamed answer, its deadlines, its continuation.
//! - **health** (`health.rs`): cooling, restoring, the cooldown sweeper and health probes.
//! - **candidate walk** (`candidates.rs`): `profile: multigrid`'s walk (and `profile:
//!   contract`'s, with its routes filtered and ranked through the `RouteAdmission` seam), in
//!   place of the fallback walk and group visits when the profile's fallback policy asks for it.
//!
//! The decisions are policies injected on the [`RouterBuilder`] (strategy, classifier, retry
//! policy and budget, backoff, cooldown trigger, recovery); this module only orders them.
//!
//! Memory per request in flight: a caller may hold millions of these futures at once (the
//! simulator does), so what lives across an `.await` is kept small. The common path (walk,
//! group visit, retry loop, attempt, provider call) is one state machine, which a caller
//! holding many of them boxes once (the simulator boxes each request's task); the rarely taken
//! branches (a fallback walk, a mid-stream continuation, reading a stream, a call with a
//! deadline) are boxed where they start, so a request pays for them only when it takes them;
//! picks, retry decisions and an attempt's bookkeeping happen in plain functions or blocks
//! that end before the next `.await`, and a step does not keep what it can look up again
//! after one (each nested future would hold its own copy). The request's steps are written
//! as functions returning `async move` blocks rather than `async fn`: an `async fn` keeps
//! each argument twice in its state (once as passed, once moved into the body).

// Deliberate: see "Memory per request in flight" above.
#![allow(clippy::manual_async_fn)]

mod alternatives;
mod attempt;
mod candidates;
mod health;
mod hedge;
mod retry_loop;
mod stream;
mod stream_cooldown;
mod visit;
mod walk;

use std::cell::{RefCell, RefMut};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::backoff::Backoff;
use crate::classify::FailureClassifier;
use crate::clock::{Clock, TokioClock};
use crate::config::RouterConfig;
use crate::cooldown::CooldownTrigger;
use crate::event::{EventKind, EventSink, NullSink, RoutingEvent};
use crate::failure::ProviderFailure;
use crate::pattern::ModelPattern;
use crate::provider::Provider;
use crate::recovery::Recovery;
use crate::request::{AttemptRecord, RouterFailure};
use crate::retry::{RetryBudget, RetryPolicy};
use crate::retry_after;
use crate::small::Tried;
use crate::state::{InMemoryState, StateStore};
use crate::stats::LoadTracker;
use crate::strategy::SelectionStrategy;
use crate::stream_rules::StreamRules;

pub use health::PROBE_REQUEST_ID_BASE;
use stream::StreamProgress;

/// The wall-clock epoch a [`RouterBuilder`] gives its default clock: 2026-01-01T00:00:00Z.
pub const DEFAULT_EPOCH_UNIX_MS: i64 = 1_767_225_600_000;

/// A model group: its deployments sorted by `order` (unordered last), split into levels.
#[derive(Debug)]
struct Group {
    name: Arc<str>,
    /// Deployment indices sorted by (order, index).
    members: Vec<usize>,
    /// `(order, start, end)` ranges of `members`, lowest order first.
    levels: Vec<(Option<u32>, usize, usize)>,
}

impl Group {
    fn level_members(&self, level: usize) -> &[usize] {
        let (_, start, end) = self.levels[level];
        &self.members[start..end]
    }
}

/// The groups of a config, in the order their names first appear.
fn groups_of(config: &RouterConfig) -> Vec<Group> {
    let mut by_name: BTreeMap<Arc<str>, Vec<usize>> = BTreeMap::new();
    let mut names_in_order: Vec<Arc<str>> = Vec::new();
    for (i, d) in config.deployments.iter().enumerate() {
        let entry = by_name.entry(d.model_name.clone()).or_default();
        if entry.is_empty() {
            names_in_order.push(d.model_name.clone());
        }
        entry.push(i);
    }
    names_in_order
        .into_iter()
        .map(|name| {
            let mut members = by_name.remove(&name).unwrap_or_default();
            members.sort_by_key(|&i| (config.deployments[i].order.unwrap_or(u32::MAX), i));
            let mut levels = Vec::new();
            let mut start = 0;
            for pos in 1..=members.len() {
                let order_at = |p: usize| config.deployments[members[p]].order;
                if pos == members.len() || order_at(pos) != order_at(start) {
                    levels.push((order_at(start), start, pos));
                    start = pos;
                }
            }
            Group {
                name,
                members,
                levels,
            }
        })
        .collect()
}

/// Builds a [`Router`]. Defaults: tokio's clock with the wall clock at
/// [`DEFAULT_EPOCH_UNIX_MS`], seed 0, no event sink, the in-process state store, LiteLLM's
/// retry policy, backoff and failure handler, no retry budget, and the strategy, classifier
/// and recovery the config's settings name. Each policy can be replaced; a profile is one
/// bundle of them.
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
        // The profile's bundle, for each policy the caller did not replace.
        let bundle = crate::bundle::PolicyBundle::for_profile(settings.profile);
        let retry = self.retry.unwrap_or_else(|| bundle.retry());
        let backoff = self.backoff.unwrap_or_else(|| bundle.backoff());
        let cooldown = self.cooldown.unwrap_or_else(|| bundle.cooldown());
        let fallback_policy = bundle.fallbacks();
        let admission = bundle.admission();
        let stream_rules = self.stream_rules.unwrap_or_else(|| bundle.stream_rules());
        let load = LoadTracker::new(deployments, self.clock.now());
        let retry_budget = self.retry_budget.unwrap_or_else(|| {
            crate::alternatives::budget_for(
                settings.retry_budget.as_ref(),
                settings.retry_throttling.as_ref(),
                self.clock.now(),
            )
        });
        let alternatives = alternatives::Alternatives::new(settings, deployments);
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
            cooldown_changed: Notify::new(),
        }
    }
}

/// The router's draws, borrowed for one call. A `RefCell`, not a `Mutex`: a router is driven from
/// one thread (it is not `Send`: its state store is a `Box<dyn StateStore>`).
fn lock(rng: &RefCell<ChaCha8Rng>) -> RefMut<'_, ChaCha8Rng> {
    rng.borrow_mut()
}

/// The router engine. See the module docs for the shape of a request.
pub struct Router<P, C = TokioClock> {
    config: RouterConfig,
    groups: Vec<Group>,
    provider: P,
    clock: C,
    rng: RefCell<ChaCha8Rng>,
    sink: Arc<dyn EventSink>,
    strategy: Box<dyn SelectionStrategy>,
    retry: Box<dyn RetryPolicy>,
    retry_budget: Box<dyn RetryBudget>,
    /// Outlier ejection and hedging, when the settings ask for them.
    alternatives: alternatives::Alternatives,
    backoff: Box<dyn Backoff>,
    cooldown: Box<dyn CooldownTrigger>,
    fallback_policy: Box<dyn crate::fallback::FallbackPolicy>,
    admission: Box<dyn crate::contract::RouteAdmission>,
    state: Box<dyn StateStore>,
    load: LoadTracker,
    classifier: Box<dyn FailureClassifier>,
    recovery: Box<dyn Recovery>,
    stream_rules: Box<dyn StreamRules>,
    cooldown_changed: Notify,
}

/// Per-request bookkeeping.
struct RequestRun {
    attempts: Vec<AttemptRecord>,
    tried_groups: Tried,
    retries: u32,
    fallbacks: u32,
    /// Hops as LiteLLM's `x-litellm-attempted-fallbacks` counts them (see [`RequestRun::hop`]).
    attempted_fallbacks: u32,
    /// Retries since the last hop (LiteLLM's `x-litellm-attempted-retries`).
    scope_retries: u32,
    /// Order and failover hops nested in the visit of the group asked for (each later hop
    /// of the request is nested inside them).
    outer_nesting: u32,
    /// Deployments a failover scope's retry loop may not pick (`None` outside one; boxed:
    /// only a request in a failover scope pays for it).
    failover_excluded: Option<Box<Tried>>,
    pending_wait: Duration,
    /// `profile: multigrid`: the request's end-to-end deadline, which cuts an attempt still
    /// running there (`None` under every other walk).
    walk_deadline: Option<Instant>,
    /// `profile: contract`: what the request's answers cost so far (rejected ones too).
    spent_usd: f64,
    last_group: Option<Arc<str>>,
    /// The deployment of the last attempt (its id is the request's final deployment).
    last_deployment_index: Option<usize>,
    start: Instant,
    stream: StreamProgress,
    /// A failure whose cooldown is written later (see [`StreamRules::defers_cooldown`]).
    deferred_failure: Option<Box<stream_cooldown::DeferredFailure>>,
    /// Provider calls started and cancelled (a hedge race's loser) or still running beside
    /// this run (a hedge's scratch run counts its first attempt): they have numbers but no
    /// record, so the next attempt's number counts them.
    uncounted_attempts: u32,
}

impl RequestRun {
    /// The number of the next attempt (from 1, across the request).
    fn next_attempt(&self) -> u32 {
        self.attempts.len() as u32 + self.uncounted_attempts + 1
    }

    /// A request's run, begun at `start`: nothing attempted yet.
    fn new(start: Instant) -> Self {
        RequestRun {
            attempts: Vec::new(),
            tried_groups: Tried::new(),
            retries: 0,
            fallbacks: 0,
            attempted_fallbacks: 0,
            scope_retries: 0,
            outer_nesting: 0,
            failover_excluded: None,
            pending_wait: Duration::ZERO,
            walk_deadline: None,
            spent_usd: 0.0,
            last_group: None,
            last_deployment_index: None,
            start,
            stream: StreamProgress::default(),
            deferred_failure: None,
            uncounted_attempts: 0,
        }
    }

    /// A run for a hedge racing this run's next attempt: same start and deadline, no records,
    /// numbered after that attempt.
    fn scratch(&self) -> Self {
        RequestRun {
            walk_deadline: self.walk_deadline,
            spent_usd: self.spent_usd,
            uncounted_attempts: self.next_attempt(),
            ..RequestRun::new(self.start)
        }
    }

    /// A fallback hop to `depth` (1 = from the group asked for): a new retry scope begins.
    /// LiteLLM nests a hop inside the level that failed, and its
    /// `x-litellm-attempted-fallbacks` header counts the hops of the outermost level only:
    /// those from the group asked for, unless an order or failover hop nested its visit.
    fn hop(&mut self, depth: u32) {
        if depth + self.outer_nesting <= 1 {
            self.attempted_fallbacks += 1;
        }
        self.scope_retries = 0;
    }

    /// An order fallback or failover hop inside the visit of a group at `depth`: a nested
    /// level of its own.
    fn nested_hop(&mut self, depth: u32) {
        self.hop(depth + 1);
        if depth == 0 {
            self.outer_nesting += 1;
        }
    }
}

/// How a group visit, level or single attempt failed.
#[derive(Clone, Debug)]
struct Failed {
    failure: ProviderFailure,
    /// The deployment whose attempt failed; `None` when the pick itself failed (every
    /// deployment cooling, over its limits, or no tag match).
    deployment: Option<usize>,
    /// Time until the soonest cooldown ends, for `router_rate_limit`.
    retry_after: Option<Duration>,
    /// A stream broke after the point of no return (content, or Multigrid's first byte):
    /// nothing may retry or fall back; only a mid-stream continuation can go on.
    committed: bool,
    /// A stream broke after its first chunk under rules where that ends the group's retries
    /// ([`StreamRules::first_chunk_ends_retries`]): only the fallbacks may go on.
    retries_closed: bool,
    /// An ambiguous attempt under `replay: never`: nothing may send the operation again (no
    /// retry, no fallback); the request fails with it.
    no_replay: bool,
}

impl Failed {
    /// Why a failure ends the group's retries whatever the retry policy says: an ambiguous
    /// attempt that may not be replayed, content reached the caller, or (LiteLLM 1.110.2) the
    /// first chunk was read inside the attempt.
    fn forced_give_up_reason(&self) -> Option<crate::event::GiveUpReason> {
        if self.no_replay {
            Some(crate::event::GiveUpReason::AmbiguousNotReplayed)
        } else if self.committed {
            Some(crate::event::GiveUpReason::StreamContentDelivered)
        } else if self.retries_closed {
            Some(crate::event::GiveUpReason::StreamFirstChunkRead)
        } else {
            None
        }
    }

    fn into_router_failure(self) -> RouterFailure {
        RouterFailure {
            kind: self.failure.kind,
            status: self.failure.effective_status(),
            retry_after: self.retry_after,
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

impl<P: Provider, C: Clock> Router<P, C> {
    /// The configuration.
    pub fn config(&self) -> &RouterConfig {
        &self.config
    }

    /// The provider.
    pub fn provider(&self) -> &P {
        &self.provider
    }

    /// The clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    fn emit(&self, request_id: Option<u64>, kind: EventKind) {
        self.emit_at(self.clock.now(), request_id, kind);
    }

    /// Emits with a time the caller already read (reading the clock is not free: it is the
    /// hot path of every simulated request).
    fn emit_at(&self, at: Instant, request_id: Option<u64>, kind: EventKind) {
        self.sink.emit(&RoutingEvent {
            at,
            request_id,
            kind,
        });
    }

    /// Resolves a model name (or alias, or a wildcard group such as `openai/*`) to a group.
    fn resolve_group(&self, model: &str) -> Option<usize> {
        let name = self
            .config
            .settings
            .model_group_alias
            .get(model)
            .map_or(model, String::as_str);
        self.groups
            .iter()
            .position(|g| &*g.name == name)
            .or_else(|| {
                self.groups.iter().position(|g| {
                    let pattern = ModelPattern::new(&g.name);
                    pattern.is_wildcard() && pattern.matches(name)
                })
            })
    }

    /// The id of the deployment the request's last attempt went to.
    fn last_deployment_id(&self, run: &RequestRun) -> Option<Arc<str>> {
        run.last_deployment_index
            .map(|i| self.config.deployments[i].id.clone())
    }

    /// A failure's `Retry-After`, resolved against the clock (an HTTP date needs the wall
    /// clock).
    fn resolve_retry_after(&self, failure: &ProviderFailure) -> Option<Duration> {
        failure
            .retry_after
            .as_ref()
            .and_then(|ra| retry_after::resolve(ra, self.clock.unix_millis()))
    }
}
