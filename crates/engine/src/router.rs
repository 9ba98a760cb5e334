//! The router: the loop that ties picks, attempts, retries, cooldowns and fallbacks together.
//!
//! Seed (LiteLLM): *"A retry tries the same model group again, and the new pick can land on a
//! different deployment. A fallback moves the request to a different model group. A cooldown
//! takes one deployment out of every pick, for every request, for a few seconds."*
//!
//! The shape of one request:
//! - **fallback walk** ([`Router::completion`]): serve the group asked for; on failure, unless
//!   the request set `disable_fallbacks`, walk the fallback targets depth first, skipping
//!   groups already tried, until one succeeds or `max_fallbacks` levels are spent. The caller
//!   gets the original failure when every hop fails.
//! - **group visit** (`serve_group`): the retry loop on the lowest healthy `order` level, then
//!   the next order levels (each its own retry loop), then weighted failover; context-window
//!   and content-policy errors skip both.
//! - **retry loop** (`retry_loop`): pick, call, let the failure handler cool the deployment,
//!   decide whether the failure is worth retrying and how long to wait, pick again.
//!
//! Memory per request in flight: a caller may hold millions of these futures at once (the
//! simulator does), so what lives across an `.await` is kept small. The walk is boxed by
//! [`Router::completion_of`]; the rarely taken branches (a fallback walk, a mid-stream
//! continuation, reading a stream) are boxed again where they start, so a request pays for
//! them only when it takes them; picks and retry decisions happen in plain functions or
//! blocks that end before the next `.await`. The request's steps are written as functions
//! returning `async move` blocks rather than `async fn`: an `async fn` keeps each argument
//! twice in its state (once as passed, once moved into the body).

// Deliberate: see "Memory per request in flight" above.
#![allow(clippy::manual_async_fn)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::backoff::{Backoff, LiteLlmBackoff, WaitContext};
use crate::classify::{FailureClassifier, RecoveryScope};
use crate::clock::{Clock, TokioClock};
use crate::config::Recovery;
use crate::config::{Deployment, FallbackTarget, RouterConfig, RoutingStrategyName};
use crate::cooldown::cooldown_time;
use crate::cooldown::{CooldownTrigger, FailureContext, LiteLlmCooldown};
use crate::event::{CooldownReason, RecoveredVia};
use crate::event::{EventKind, EventSink, GiveUpReason, NullSink, RoutingEvent};
use crate::failure::{FailureKind, ProviderFailure};
use crate::fallback;
use crate::provider::{Provider, ProviderCall, ProviderResponse};
use crate::request::{
    AttemptRecord, Completion, CompletionResult, Request, ResponseFormat, RouterFailure,
};
use crate::retry::{LiteLlmRetryPolicy, RetryContext, RetryPolicy};
use crate::retry_after;
use crate::small::{Indices, Tried};
use crate::state::{InMemoryState, StateStore};
use crate::stats::LoadTracker;
use crate::strategy::{PickContext, SelectionStrategy};
use crate::stream::{
    BreakKind, ProviderStream, StreamItem, StreamOutcome, StreamRecovery, StreamStats,
};

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

/// Builds a [`Router`]. Defaults: tokio's clock with the wall clock at
/// [`DEFAULT_EPOCH_UNIX_MS`], seed 0, no event sink, the in-process state store, and
/// LiteLLM's retry policy, backoff and failure handler.
pub struct RouterBuilder<P, C = TokioClock> {
    config: RouterConfig,
    provider: P,
    clock: C,
    rng: ChaCha8Rng,
    sink: Arc<dyn EventSink>,
    retry: Box<dyn RetryPolicy>,
    backoff: Box<dyn Backoff>,
    cooldown: Box<dyn CooldownTrigger>,
    state: Option<Box<dyn StateStore>>,
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
            retry: Box::new(LiteLlmRetryPolicy),
            backoff: Box::new(LiteLlmBackoff),
            cooldown: Box::new(LiteLlmCooldown::default()),
            state: None,
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
            backoff: self.backoff,
            cooldown: self.cooldown,
            state: self.state,
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
        self.retry = Box::new(retry);
        self
    }

    /// Replaces the backoff.
    pub fn backoff(mut self, backoff: impl Backoff + 'static) -> Self {
        self.backoff = Box::new(backoff);
        self
    }

    /// Replaces the failure handler.
    pub fn cooldown_trigger(mut self, cooldown: impl CooldownTrigger + 'static) -> Self {
        self.cooldown = Box::new(cooldown);
        self
    }

    /// Replaces the state store.
    pub fn state_store(mut self, state: impl StateStore + 'static) -> Self {
        self.state = Some(Box::new(state));
        self
    }

    /// Builds the router.
    pub fn build(self) -> Router<P, C> {
        let config = self.config;
        let mut by_name: BTreeMap<Arc<str>, Vec<usize>> = BTreeMap::new();
        let mut names_in_order: Vec<Arc<str>> = Vec::new();
        for (i, d) in config.deployments.iter().enumerate() {
            let entry = by_name.entry(d.model_name.clone()).or_default();
            if entry.is_empty() {
                names_in_order.push(d.model_name.clone());
            }
            entry.push(i);
        }
        let groups = names_in_order
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
            .collect();
        let state = self
            .state
            .unwrap_or_else(|| Box::new(InMemoryState::new(config.deployments.len())));
        let strategy = crate::strategy::for_name(config.settings.routing_strategy);
        let config_classification = config.settings.classification;
        let deployments = config.deployments.len();
        let load = LoadTracker::new(config.deployments.len(), self.clock.now());
        Router {
            groups,
            config,
            provider: self.provider,
            clock: self.clock,
            rng: Mutex::new(self.rng),
            sink: self.sink,
            strategy,
            retry: self.retry,
            backoff: self.backoff,
            cooldown: self.cooldown,
            state,
            load,
            classifier: crate::classify::for_setting(config_classification),
            half_open: Mutex::new(vec![HalfOpen::default(); deployments]),
            cooldown_changed: Notify::new(),
        }
    }
}

/// The router engine. See the module docs for the shape of a request.
pub struct Router<P, C = TokioClock> {
    config: RouterConfig,
    groups: Vec<Group>,
    provider: P,
    clock: C,
    rng: Mutex<ChaCha8Rng>,
    sink: Arc<dyn EventSink>,
    strategy: Box<dyn SelectionStrategy>,
    retry: Box<dyn RetryPolicy>,
    backoff: Box<dyn Backoff>,
    cooldown: Box<dyn CooldownTrigger>,
    state: Box<dyn StateStore>,
    load: LoadTracker,
    classifier: Box<dyn FailureClassifier>,
    half_open: Mutex<Vec<HalfOpen>>,
    cooldown_changed: Notify,
}

/// DeltaLLM's half-open state of one deployment.
#[derive(Clone, Copy, Debug, Default)]
struct HalfOpen {
    /// The cooldown expired and no trial has succeeded yet.
    active: bool,
    /// The one trial request is in flight: everyone else skips the deployment.
    trial_in_flight: bool,
}

/// Why a group level had no deployment to pick.
enum NoCandidate {
    /// Every deployment is cooling (or holding its half-open trial).
    AllCooling { retry_after: Duration },
    /// No deployment carries the request's tags (nor `default`).
    NoTagMatch,
    /// Pre-call checks: every deployment is over its RPM/TPM this minute.
    OverLimits { retry_after: Duration },
    /// Pre-call checks: the prompt overflows every deployment's `max_input_tokens`.
    ContextTooLarge,
}

/// Per-request bookkeeping.
struct RequestRun {
    attempts: Vec<AttemptRecord>,
    tried_groups: Tried,
    retries: u32,
    fallbacks: u32,
    pending_wait: Duration,
    last_group: Option<Arc<str>>,
    /// The deployment of the last attempt (its id is the request's final deployment).
    last_deployment_index: Option<usize>,
    start: Instant,
    request_id: u64,
    stream: StreamProgress,
}

/// What the caller's stream has received so far, across attempts.
#[derive(Debug, Default)]
struct StreamProgress {
    /// A stream was opened at least once.
    opened: bool,
    /// Some frame (even role-only) reached the caller: Multigrid's first byte.
    first_byte: bool,
    /// Content tokens delivered.
    delivered: u32,
    /// Content that forbids a continuation (tool calls, thinking, audio, images) was sent.
    non_text_content: bool,
    /// When the first content token reached the caller.
    first_token_at: Option<Instant>,
    /// When the last token reached the caller.
    last_token_at: Option<Instant>,
    /// How the last stream broke, if one did.
    last_break: Option<BreakKind>,
    /// A continuation carried the stream on.
    continued: bool,
}

impl StreamProgress {
    fn any_content(&self) -> bool {
        self.delivered > 0 || self.non_text_content
    }
}

/// How a streamed attempt broke.
struct StreamBroke {
    failure: ProviderFailure,
    how: BreakKind,
}

/// How a group visit, level or single attempt failed.
#[derive(Clone, Debug)]
struct Failed {
    failure: ProviderFailure,
    /// Time until the soonest cooldown ends, for `router_rate_limit`.
    retry_after: Option<Duration>,
    /// A stream broke after the point of no return (content, or Multigrid's first byte):
    /// nothing may retry or fall back; only a mid-stream continuation can go on.
    committed: bool,
}

impl Failed {
    fn into_router_failure(self) -> RouterFailure {
        RouterFailure {
            kind: self.failure.kind,
            status: self.failure.effective_status(),
            retry_after: self.retry_after,
        }
    }
}

/// One fallback list being walked.
struct Frame {
    source: Arc<str>,
    targets: Vec<FallbackTarget>,
    level: crate::event::FallbackLevel,
    failure: FailureKind,
    next: usize,
    depth: u32,
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

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
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
                self.groups
                    .iter()
                    .position(|g| g.name.contains('*') && wildcard_match(&g.name, name))
            })
    }

    /// Whether `deployment` is cooling now; an expired entry is removed and its end reported.
    fn is_cooling(&self, deployment: usize, now: Instant) -> bool {
        match self.state.cooldown_until(deployment) {
            Some(until) if until > now => true,
            Some(_) => {
                if let Some(until) = self.state.take_if_expired(deployment, now) {
                    self.emit_cooldown_end(deployment, until);
                }
                false
            }
            None => false,
        }
    }

    fn emit_cooldown_end(&self, deployment: usize, until: Instant) {
        let d = &self.config.deployments[deployment];
        self.sink.emit(&RoutingEvent {
            at: until,
            request_id: None,
            kind: EventKind::CooldownEnd {
                model_group: d.model_name.clone(),
                deployment_id: d.id.clone(),
            },
        });
        if self.config.settings.recovery == Recovery::HalfOpen {
            lock(&self.half_open)[deployment] = HalfOpen {
                active: true,
                trial_in_flight: false,
            };
            self.sink.emit(&RoutingEvent {
                at: until,
                request_id: None,
                kind: EventKind::HalfOpen {
                    model_group: d.model_name.clone(),
                    deployment_id: d.id.clone(),
                },
            });
        }
    }

    /// Whether `deployment` cannot take a request now: cooling, or half-open with its one
    /// trial already in flight.
    fn is_unavailable(&self, deployment: usize, now: Instant) -> bool {
        self.is_cooling(deployment, now)
            || (self.config.settings.recovery == Recovery::HalfOpen
                && lock(&self.half_open)[deployment].trial_in_flight)
    }

    /// Claims the half-open trial of `deployment`, if it is half-open: the attempt about to
    /// start is then the trial.
    fn claim_trial(&self, deployment: usize) -> bool {
        if self.config.settings.recovery != Recovery::HalfOpen {
            // Only half-open recovery has trials; probes never leave one behind.
            return false;
        }
        let mut states = lock(&self.half_open);
        let state = &mut states[deployment];
        if state.active && !state.trial_in_flight {
            state.trial_in_flight = true;
            true
        } else {
            false
        }
    }

    /// The deployment is healthy again: no cooldown, no half-open state, no failure history.
    fn restore(&self, deployment: usize, via: RecoveredVia, request_id: Option<u64>) {
        let was_cooling = self.state.clear_cooldown(deployment);
        let was_half_open = {
            let mut states = lock(&self.half_open);
            std::mem::take(&mut states[deployment]).active
        };
        if was_cooling || was_half_open {
            self.state.reset_allowed_fails(deployment);
            self.cooldown.reset(deployment);
            if was_cooling {
                self.cooldown_changed.notify_one();
            }
            let d = &self.config.deployments[deployment];
            self.emit(
                request_id,
                EventKind::Recovered {
                    model_group: d.model_name.clone(),
                    deployment_id: d.id.clone(),
                    via,
                },
            );
        }
    }

    /// Cools `deployment` for `duration` and reports it.
    fn cool(
        &self,
        deployment: usize,
        duration: Duration,
        reason: CooldownReason,
        failure: FailureKind,
        request_id: Option<u64>,
    ) {
        if duration.is_zero() {
            return;
        }
        let now = self.clock.now();
        let until = self.state.set_cooldown(deployment, now + duration);
        self.cooldown_changed.notify_one();
        let d = &self.config.deployments[deployment];
        self.emit(
            request_id,
            EventKind::CooldownSet {
                model_group: d.model_name.clone(),
                deployment_id: d.id.clone(),
                reason,
                failure,
                duration,
                until,
            },
        );
    }

    /// The deployments of a group level a request may be picked from, in DeltaLLM's order:
    /// drop cooling (and half-open-busy) deployments, filter by the request's tags, then the
    /// pre-call RPM/TPM and context checks.
    fn candidates(
        &self,
        members: &[usize],
        request: &Request,
        now: Instant,
        out: &mut Indices,
    ) -> Result<(), NoCandidate> {
        out.clear();
        let deployments = &self.config.deployments;
        let tagged = |d: usize| {
            request.tags.is_empty() || deployments[d].tags.iter().any(|t| request.tags.contains(t))
        };
        let default_tagged = |d: usize| deployments[d].tags.iter().any(|t| t == "default");
        let tag_filter: &dyn Fn(usize) -> bool = if members.iter().any(|&d| tagged(d)) {
            &tagged
        } else if !request.tags.is_empty() && members.iter().any(|&d| default_tagged(d)) {
            &default_tagged
        } else {
            return Err(NoCandidate::NoTagMatch);
        };
        out.extend(
            members
                .iter()
                .copied()
                .filter(|&d| tag_filter(d) && !self.is_unavailable(d, now)),
        );
        if out.is_empty() {
            if self.health_check_routing() {
                out.extend(members.iter().copied().filter(|&d| tag_filter(d)));
            } else {
                let retry_after = members
                    .iter()
                    .filter_map(|&d| self.state.cooldown_until(d))
                    .min()
                    .map_or(Duration::ZERO, |until| until.saturating_duration_since(now));
                return Err(NoCandidate::AllCooling { retry_after });
            }
        }
        if !self.config.settings.enable_pre_call_checks {
            return Ok(());
        }
        let minute = self.load.minute_of(now);
        let (mut over_limits, mut too_large) = (false, false);
        let mut kept = Indices::new();
        self.load.read(|load| {
            kept.extend(out.as_slice().iter().copied().filter(|&d| {
                let dep = &deployments[d];
                if dep
                    .max_input_tokens
                    .is_some_and(|m| request.input_tokens > m)
                {
                    too_large = true;
                    return false;
                }
                let (requests, tokens) = load[d].usage(minute);
                let over = dep.rpm.is_some_and(|rpm| requests >= rpm)
                    || dep
                        .tpm
                        .is_some_and(|tpm| tokens + u64::from(request.input_tokens) > tpm);
                over_limits |= over;
                !over
            }));
        });
        *out = kept;
        if out.is_empty() {
            if over_limits {
                let retry_after = self.load.until_next_minute(now);
                return Err(NoCandidate::OverLimits { retry_after });
            }
            if too_large {
                return Err(NoCandidate::ContextTooLarge);
            }
        }
        Ok(())
    }

    /// Ends every expired cooldown now. [`Router::run_cooldown_sweeper`] calls this at each
    /// deadline, so `cooldown_end` events come at the moment the deployment is eligible again.
    pub fn sweep_expired_cooldowns(&self) {
        for (deployment, until) in self.state.take_all_expired(self.clock.now()) {
            self.emit_cooldown_end(deployment, until);
        }
    }

    /// A background task that ends cooldowns at their deadlines (spawn it beside the traffic;
    /// it never returns). Without it, cooldowns still end on time for routing; their
    /// `cooldown_end` events are then reported when the deployment is next looked at, with
    /// the deadline as their time.
    pub async fn run_cooldown_sweeper(&self) {
        loop {
            let notified = self.cooldown_changed.notified();
            match self.state.next_cooldown_deadline() {
                Some(deadline) => {
                    tokio::select! {
                        biased;
                        () = notified => {}
                        () = self.clock.sleep_until(deadline) => self.sweep_expired_cooldowns(),
                    }
                }
                None => notified.await,
            }
        }
    }

    /// Background health probes (DeltaLLM), every `router_settings.health_check_interval`;
    /// returns at once when no interval is set. Each round probes every deployment at the
    /// same instant with a one-token request: a success restores a cooling or half-open
    /// deployment (`probe_ok`, `recovered`), a failure that counts against health cools it
    /// (`probe_failed`, `cooldown_set`) without any user traffic.
    pub async fn run_health_checks(&self) {
        let Some(interval) = self.config.settings.health_check_interval else {
            return;
        };
        if interval.is_zero() {
            return;
        }
        let mut round = 0u64;
        loop {
            self.clock.sleep_until(self.clock.now() + interval).await;
            round += 1;
            let probes: Vec<_> = (0..self.config.deployments.len())
                .map(|d| Box::pin(self.probe(d, round)))
                .collect();
            join_all(probes).await;
        }
    }

    async fn probe(&self, deployment_index: usize, round: u64) {
        let deployment = &self.config.deployments[deployment_index];
        let mut request = Request::new(
            PROBE_REQUEST_ID_BASE + round * 10_000 + deployment_index as u64,
            deployment.model_name.clone(),
        );
        request.input_tokens = 1;
        request.max_tokens = Some(1);
        request.output_tokens = Some(1);
        let call = ProviderCall {
            deployment,
            deployment_index,
            request: &request,
            attempt: 1,
        };
        let result = match deployment.timeout.or(self.config.settings.timeout) {
            None => self.provider.call(call).await,
            Some(limit) => {
                let deadline = self.clock.now() + limit;
                tokio::select! {
                    biased;
                    r = self.provider.call(call) => r,
                    () = self.clock.sleep_until(deadline) => {
                        Err(ProviderFailure::new(FailureKind::Timeout))
                    }
                }
            }
        };
        let (group, id) = (deployment.model_name.clone(), deployment.id.clone());
        match result {
            Ok(_) => {
                self.emit(
                    None,
                    EventKind::ProbeOk {
                        model_group: group,
                        deployment_id: id,
                    },
                );
                self.restore(deployment_index, RecoveredVia::Probe, None);
            }
            Err(failure) => {
                self.emit(
                    None,
                    EventKind::ProbeFailed {
                        model_group: group,
                        deployment_id: id,
                        failure: failure.kind,
                    },
                );
                if self.classifier.counts_against_health(&failure)
                    && !self.config.settings.disable_cooldowns
                {
                    let retry_after = failure
                        .retry_after
                        .as_ref()
                        .and_then(|ra| retry_after::resolve(ra, self.clock.unix_millis()));
                    let duration = cooldown_time(deployment, retry_after, &self.config.settings);
                    // A probe during a half-open period takes the trial's place.
                    lock(&self.half_open)[deployment_index] = HalfOpen::default();
                    self.cool(
                        deployment_index,
                        duration,
                        CooldownReason::ProbeFailed,
                        failure.kind,
                        None,
                    );
                }
            }
        }
    }

    /// Serves one request: the full retry, order, failover and fallback walk.
    pub fn completion(&self, request: Request) -> impl Future<Output = CompletionResult> {
        async move { self.completion_of(&request).await }
    }

    /// [`Router::completion`] of a request the caller keeps: the future holds a reference to
    /// it, so a caller with many requests in flight (the simulator) holds one copy of each.
    pub fn completion_of<'a>(
        &'a self,
        request: &'a Request,
    ) -> impl Future<Output = CompletionResult> + 'a {
        async move {
            let mut run = RequestRun {
                attempts: Vec::new(),
                tried_groups: Tried::new(),
                retries: 0,
                fallbacks: 0,
                pending_wait: Duration::ZERO,
                last_group: None,
                last_deployment_index: None,
                start: self.clock.now(),
                request_id: request.id,
                stream: StreamProgress::default(),
            };
            // Boxed: the walk's state machine is large, and a runtime copies a task's future
            // when it spawns and finishes it.
            let outcome = Box::pin(self.walk(request, &mut run)).await;
            let (start, end) = (run.start, self.clock.now());
            let final_model_group = run
                .last_group
                .clone()
                .unwrap_or_else(|| request.model.clone());
            let (failure, status) = match &outcome {
                Ok(_) => (None, Some(200)),
                Err(f) => (Some(f.kind), f.status),
            };
            let stream = request
                .stream
                .then(|| self.stream_stats(&run, outcome.is_ok()));
            let final_deployment_id = self.last_deployment_id(&run);
            self.emit_at(
                end,
                Some(request.id),
                EventKind::RequestEnd {
                    model: request.model.clone(),
                    final_model_group: final_model_group.clone(),
                    final_deployment_id: final_deployment_id.clone(),
                    failure,
                    status,
                    attempts: run.attempts.len() as u32,
                    retries: run.retries,
                    fallbacks: run.fallbacks,
                    start,
                    stream,
                },
            );
            CompletionResult {
                request_id: request.id,
                model: request.model.clone(),
                outcome,
                attempts: run.attempts,
                final_model_group,
                final_deployment_id,
                fallbacks: run.fallbacks,
                retries: run.retries,
                start,
                end,
                stream,
            }
        }
    }

    /// The id of the deployment the request's last attempt went to.
    fn last_deployment_id(&self, run: &RequestRun) -> Option<Arc<str>> {
        run.last_deployment_index
            .map(|i| self.config.deployments[i].id.clone())
    }

    /// The caller's view of a streamed request.
    fn stream_stats(&self, run: &RequestRun, ok: bool) -> StreamStats {
        let p = &run.stream;
        let committed_failure = !ok && self.past_point_of_no_return(p);
        let outcome = if ok {
            Some(if p.continued {
                StreamOutcome::Continued
            } else if p.any_content() {
                StreamOutcome::Completed
            } else {
                StreamOutcome::Empty
            })
        } else {
            match p.last_break {
                Some(BreakKind::Stall | BreakKind::FirstTokenTimeout) => {
                    Some(StreamOutcome::Stalled)
                }
                Some(_) if committed_failure => Some(StreamOutcome::BrokenAfterContent),
                Some(_) => Some(StreamOutcome::BrokenBeforeContent),
                None => None,
            }
        };
        let billed = match (ok, self.config.settings.stream_recovery) {
            (true, _) | (false, StreamRecovery::Multigrid) => p.delivered,
            (false, StreamRecovery::LiteLlm) => 0,
        };
        StreamStats {
            outcome,
            ttft: p
                .first_token_at
                .map(|t| t.saturating_duration_since(run.start)),
            tokens_delivered: p.delivered,
            tokens_billed: billed,
        }
    }

    /// Whether a broken stream can no longer be retried or failed over: after content
    /// (LiteLLM), or after the first byte (Multigrid).
    fn past_point_of_no_return(&self, p: &StreamProgress) -> bool {
        match self.config.settings.stream_recovery {
            StreamRecovery::LiteLlm => p.any_content(),
            StreamRecovery::Multigrid => p.first_byte,
        }
    }

    fn walk(
        &self,
        request: &Request,
        run: &mut RequestRun,
    ) -> impl Future<Output = Result<Completion, RouterFailure>> {
        async move {
            let Some(requested) = self.resolve_group(&request.model) else {
                return Err(RouterFailure {
                    kind: FailureKind::BadRequest,
                    status: Some(400),
                    retry_after: None,
                });
            };
            run.tried_groups.push(requested);
            let original = match self.serve_group(requested, request, 0, run).await {
                Ok(done) => return Ok(done),
                Err(failed) => failed,
            };
            // Both boxed: only a request whose stream broke, or that falls back, pays for that
            // state while it is in flight.
            if original.committed {
                return Box::pin(self.continue_stream(requested, request, original, 0, run)).await;
            }
            if request.disable_fallbacks {
                return Err(original.into_router_failure());
            }
            Box::pin(self.fall_back(requested, request, original, run)).await
        }
    }

    /// The fallback walk after the requested group failed with `original`: fallback lists
    /// depth-first, each target group served in turn.
    fn fall_back(
        &self,
        requested: usize,
        request: &Request,
        original: Failed,
        run: &mut RequestRun,
    ) -> impl Future<Output = Result<Completion, RouterFailure>> {
        async move {
            let requested_name = self.groups[requested].name.clone();
            let max_depth = self.config.settings.max_fallbacks;
            let mut stack: Vec<Frame> = Vec::new();
            if let Some(frame) =
                self.frame_for(request, &original, &requested_name, &requested_name, 0)
                && max_depth > 0
            {
                stack.push(frame);
            }
            while let Some(frame) = stack.last_mut() {
                let Some(target) = frame.targets.get(frame.next).cloned() else {
                    stack.pop();
                    continue;
                };
                let order = frame.next as u32;
                frame.next += 1;
                let Some(group) = self.resolve_group(&target.model) else {
                    continue;
                };
                if run.tried_groups.contains(&group) {
                    continue;
                }
                run.tried_groups.push(group);
                let depth = frame.depth + 1;
                let (source, level, failure) = (frame.source.clone(), frame.level, frame.failure);
                run.fallbacks += 1;
                self.emit(
                    Some(request.id),
                    EventKind::Fallback {
                        source,
                        target: self.groups[group].name.clone(),
                        order,
                        depth,
                        level,
                        failure,
                    },
                );
                let hop_request = apply_overrides(request, &target);
                match self.serve_group(group, &hop_request, depth, run).await {
                    Ok(done) => return Ok(done),
                    Err(failed) if failed.committed => {
                        return Box::pin(self.continue_stream(
                            group,
                            &hop_request,
                            failed,
                            depth,
                            run,
                        ))
                        .await;
                    }
                    Err(failed) => {
                        let serving = self.groups[group].name.clone();
                        if depth < max_depth
                            && let Some(next) =
                                self.frame_for(request, &failed, &serving, &requested_name, depth)
                        {
                            stack.push(next);
                        }
                    }
                }
            }
            Err(original.into_router_failure())
        }
    }

    fn frame_for(
        &self,
        request: &Request,
        failed: &Failed,
        serving: &Arc<str>,
        requested: &str,
        depth: u32,
    ) -> Option<Frame> {
        let choice = fallback::choose(
            &self.config.settings,
            request,
            failed.failure.kind,
            serving,
            requested,
        )?;
        Some(Frame {
            source: serving.clone(),
            targets: choice.targets.to_vec(),
            level: choice.level,
            failure: failed.failure.kind,
            next: 0,
            depth,
        })
    }

    /// One visit to a group: order levels, then weighted failover.
    fn serve_group(
        &self,
        group: usize,
        request: &Request,
        depth: u32,
        run: &mut RequestRun,
    ) -> impl Future<Output = Result<Completion, Failed>> {
        async move {
            let g = &self.groups[group];
            let mut level = {
                let now = self.clock.now();
                (0..g.levels.len())
                    .find(|&l| {
                        g.level_members(l)
                            .iter()
                            .any(|&d| !self.is_unavailable(d, now))
                    })
                    .unwrap_or(0)
            };
            let mut tried = Tried::new();
            let mut failed = loop {
                let failed = match self
                    .retry_loop(g, level, request, depth, run, &mut tried)
                    .await
                {
                    Ok(done) => return Ok(done),
                    Err(failed) => failed,
                };
                if failed.committed {
                    return Err(failed);
                }
                let skips_walk = matches!(
                    failed.failure.kind,
                    FailureKind::ContextWindowExceeded | FailureKind::ContentPolicyViolation
                ) || self.classifier.scope(&failed.failure)
                    != RecoveryScope::RetryPolicy;
                if request.disable_fallbacks || skips_walk || level + 1 >= g.levels.len() {
                    break failed;
                }
                self.emit(
                    Some(request.id),
                    EventKind::OrderFallback {
                        model_group: g.name.clone(),
                        from_order: g.levels[level].0,
                        to_order: g.levels[level + 1].0,
                    },
                );
                level += 1;
            };
            let scope = self.classifier.scope(&failed.failure);
            let weighted = self.config.settings.enable_weighted_failover
                && self.config.settings.routing_strategy == RoutingStrategyName::SimpleShuffle
                && scope == RecoveryScope::RetryPolicy
                && !matches!(
                    failed.failure.kind,
                    FailureKind::ContextWindowExceeded | FailureKind::ContentPolicyViolation
                );
            let failover = !request.disable_fallbacks
                && (weighted || scope == RecoveryScope::RemainingDeployments);
            if !failover {
                return Err(failed);
            }
            loop {
                // The candidates live only until the pick: they are not kept across the attempt.
                let deployment = {
                    let now = self.clock.now();
                    let mut candidates = Indices::new();
                    candidates.extend(
                        g.members
                            .iter()
                            .copied()
                            .filter(|d| !tried.contains(d) && !self.is_unavailable(*d, now)),
                    );
                    if candidates.is_empty() {
                        return Err(failed);
                    }
                    let candidates = candidates.as_slice();
                    candidates[self.pick_position(candidates, request, now)]
                };
                if let Some(excluded) = tried.last() {
                    self.emit(
                        Some(request.id),
                        EventKind::WeightedFailover {
                            model_group: g.name.clone(),
                            excluded: self.config.deployments[excluded].id.clone(),
                        },
                    );
                }
                tried.push(deployment);
                match self.attempt(g, deployment, request, depth, run).await {
                    Ok(done) => return Ok(done),
                    Err(f) if f.committed => return Err(f),
                    Err(f) => {
                        let stop =
                            self.classifier.scope(&f.failure) == RecoveryScope::GeneralFallbacks;
                        failed = f;
                        if stop {
                            return Err(failed);
                        }
                    }
                }
            }
        }
    }

    fn pick_position(&self, candidates: &[usize], request: &Request, now: Instant) -> usize {
        let minute = self.load.minute_of(now);
        let pos = self.load.read(|load| {
            let ctx = PickContext {
                deployments: &self.config.deployments,
                candidates,
                request,
                load,
                minute,
            };
            self.strategy.pick(&ctx, &mut lock(&self.rng))
        });
        pos.min(candidates.len().saturating_sub(1))
    }

    fn health_check_routing(&self) -> bool {
        let s = &self.config.settings;
        s.enable_health_check_routing
            && (s.allowed_fails_policy.is_some()
                || self
                    .config
                    .deployments
                    .iter()
                    .any(|d| d.allowed_fails_policy.is_some()))
    }

    /// The retry loop on one order level of a group.
    fn retry_loop(
        &self,
        g: &Group,
        level: usize,
        request: &Request,
        depth: u32,
        run: &mut RequestRun,
        tried: &mut Tried,
    ) -> impl Future<Output = Result<Completion, Failed>> {
        async move {
            let members = g.level_members(level);
            let mut retries_done = 0u32;
            loop {
                // The candidates live only until the pick: they are not kept across the attempt.
                let picked = {
                    let now = self.clock.now();
                    let mut candidates = Indices::new();
                    self.candidates(members, request, now, &mut candidates)
                        .map(|()| {
                            let slice = candidates.as_slice();
                            slice[self.pick_position(slice, request, now)]
                        })
                };
                let failed = match picked {
                    Err(none) => self.no_candidate(g, request, run, none),
                    Ok(deployment) => {
                        if !tried.contains(&deployment) {
                            tried.push(deployment);
                        }
                        match self.attempt(g, deployment, request, depth, run).await {
                            Ok(done) => return Ok(done),
                            Err(failed) => failed,
                        }
                    }
                };
                // Decided before the backoff: only the wait is kept while it runs.
                let (now, wait) =
                    self.retry_or_give_up(g, members, request, run, failed, &mut retries_done)?;
                if !wait.is_zero() {
                    self.clock.sleep_until(now + wait).await;
                }
                run.pending_wait = wait;
            }
        }
    }

    /// A level with no deployment to pick: the failure the pick gives (with `all_cooled` when
    /// every deployment is cooling).
    fn no_candidate(
        &self,
        g: &Group,
        request: &Request,
        run: &mut RequestRun,
        none: NoCandidate,
    ) -> Failed {
        run.last_group = Some(g.name.clone());
        let (kind, retry_after) = match none {
            NoCandidate::AllCooling { retry_after } => {
                self.emit(
                    Some(request.id),
                    EventKind::AllCooled {
                        model_group: g.name.clone(),
                        retry_after,
                    },
                );
                (FailureKind::RouterRateLimit, Some(retry_after))
            }
            NoCandidate::OverLimits { retry_after } => {
                (FailureKind::RouterRateLimit, Some(retry_after))
            }
            NoCandidate::NoTagMatch => (FailureKind::BadRequest, None),
            NoCandidate::ContextTooLarge => (FailureKind::ContextWindowExceeded, None),
        };
        Failed {
            failure: ProviderFailure::new(kind),
            retry_after,
            committed: false,
        }
    }

    /// After a failed attempt (or pick) on a level: give up with the failure (and a `give_up`
    /// event), or retry (`retry`, and `wait` when there is one). Returns when the wait starts
    /// and how long it is.
    fn retry_or_give_up(
        &self,
        g: &Group,
        members: &[usize],
        request: &Request,
        run: &mut RequestRun,
        failed: Failed,
        retries_done: &mut u32,
    ) -> Result<(Instant, Duration), Failed> {
        let settings = &self.config.settings;
        if failed.committed {
            self.emit(
                Some(request.id),
                EventKind::GiveUp {
                    model_group: g.name.clone(),
                    failure: failed.failure.kind,
                    reason: GiveUpReason::StreamContentDelivered,
                },
            );
            return Err(failed);
        }
        let now = self.clock.now();
        let healthy_left = members
            .iter()
            .filter(|&&d| !self.is_unavailable(d, now))
            .count();
        let deployment = run
            .last_deployment_index
            .filter(|_| failed.failure.kind != FailureKind::RouterRateLimit)
            .map(|i| &self.config.deployments[i]);
        let ctx = RetryContext {
            request,
            deployment,
            model_group: &g.name,
            group_size: g.members.len(),
            healthy_left,
            fallbacks_configured: fallback::general_fallbacks_configured(settings, request),
            context_window_fallbacks_configured: !settings.context_window_fallbacks.is_empty(),
            content_policy_fallbacks_configured: !settings.content_policy_fallbacks.is_empty(),
            settings,
        };
        let budget = self.retry.budget(failed.failure.kind, &ctx);
        let classified = match self.classifier.scope(&failed.failure) {
            RecoveryScope::RetryPolicy => None,
            RecoveryScope::GeneralFallbacks => Some(GiveUpReason::ClassifiedGeneralFallbacks),
            RecoveryScope::RemainingDeployments => {
                Some(GiveUpReason::ClassifiedRemainingDeployments)
            }
        };
        let give_up = classified
            .or_else(|| self.retry.not_worth_retrying(&failed.failure, &ctx))
            .or((*retries_done >= budget).then_some(GiveUpReason::RetriesExhausted));
        if let Some(reason) = give_up {
            self.emit_at(
                now,
                Some(request.id),
                EventKind::GiveUp {
                    model_group: g.name.clone(),
                    failure: failed.failure.kind,
                    reason,
                },
            );
            return Err(failed);
        }
        let retry_after = failed
            .failure
            .retry_after
            .as_ref()
            .and_then(|ra| retry_after::resolve(ra, self.clock.unix_millis()));
        let wait_ctx = WaitContext {
            group_size: g.members.len(),
            healthy_left,
            retry_after,
            retry_index: *retries_done,
            min_backoff: settings.retry_after,
        };
        let (wait, reason) = self.backoff.wait(&wait_ctx, &mut lock(&self.rng));
        *retries_done += 1;
        run.retries += 1;
        self.emit_at(
            now,
            Some(request.id),
            EventKind::Retry {
                model_group: g.name.clone(),
                failure: failed.failure.kind,
                retry: *retries_done,
                budget,
            },
        );
        if let Some(reason) = reason {
            self.emit_at(
                now,
                Some(request.id),
                EventKind::Wait {
                    duration: wait,
                    reason,
                },
            );
        }
        Ok((now, wait))
    }

    /// One provider call, with its events, its record and the failure handler.
    fn attempt(
        &self,
        g: &Group,
        deployment_index: usize,
        request: &Request,
        depth: u32,
        run: &mut RequestRun,
    ) -> impl Future<Output = Result<Completion, Failed>> {
        async move {
            let deployment: &Deployment = &self.config.deployments[deployment_index];
            let attempt = run.attempts.len() as u32 + 1;
            let wait = std::mem::take(&mut run.pending_wait);
            let start = self.clock.now();
            run.last_group = Some(g.name.clone());
            run.last_deployment_index = Some(deployment_index);
            self.emit_at(
                start,
                Some(request.id),
                EventKind::AttemptStart {
                    attempt,
                    model_group: g.name.clone(),
                    deployment_id: deployment.id.clone(),
                    fallback_depth: depth,
                },
            );
            self.load
                .on_start(deployment_index, start, request.input_tokens);
            let trial = self.claim_trial(deployment_index);
            let deadline = deployment
                .timeout
                .or(self.config.settings.timeout)
                .map(|limit| start + limit);
            let result = match deadline {
                None => {
                    self.provider
                        .call(ProviderCall {
                            deployment,
                            deployment_index,
                            request,
                            attempt,
                        })
                        .await
                }
                Some(deadline) => {
                    tokio::select! {
                        biased;
                        r = self.provider.call(ProviderCall {
                            deployment,
                            deployment_index,
                            request,
                            attempt,
                        }) => r,
                        () = self.clock.sleep_until(deadline) => {
                            Err(ProviderFailure::new(FailureKind::Timeout))
                        }
                    }
                }
            };
            let (result, broke) = match result {
                Ok(ProviderResponse::Complete(done)) => {
                    match self.classifier.judge_success(&done) {
                        None => (Ok(done), None),
                        Some(failure) => (Err(failure), None),
                    }
                }
                Ok(ProviderResponse::Stream(stream)) => {
                    run.stream.opened = true;
                    // Boxed: only a streamed attempt pays for the stream reader's state.
                    match Box::pin(self.drive_stream(stream, deployment, start, run)).await {
                        Ok(done) => (Ok(done), None),
                        Err(broke) => (Err(broke.failure.clone()), Some(broke)),
                    }
                }
                Err(failure) => (Err(failure), None),
            };
            let end = self.clock.now();
            // Latency-based routing learns from successes (a stream by its time to first token)
            // and from timeouts (as long as they took); other failures say nothing about speed,
            // but they do make the deployment "tried" (see `DeploymentLoad::was_tried`).
            let sample = match &result {
                Ok(_) => Some(match run.stream.first_token_at {
                    Some(first) if request.stream && first >= start => first - start,
                    _ => end - start,
                }),
                Err(f) if f.kind == FailureKind::Timeout => Some(end - start),
                Err(_) => None,
            };
            let output_tokens = result.as_ref().map_or(0, |done| done.output_tokens);
            self.load
                .on_end(deployment_index, end, sample, output_tokens);
            let mut committed = false;
            if let Some(broke) = &broke {
                run.stream.last_break = Some(broke.how);
                committed = self.past_point_of_no_return(&run.stream);
                self.emit(
                    Some(request.id),
                    EventKind::StreamBreak {
                        model_group: g.name.clone(),
                        deployment_id: deployment.id.clone(),
                        failure: broke.failure.kind,
                        how: broke.how,
                        tokens_so_far: run.stream.delivered,
                        after_content: committed,
                    },
                );
            }
            let retry_after = match &result {
                Err(f) => f
                    .retry_after
                    .as_ref()
                    .and_then(|ra| retry_after::resolve(ra, self.clock.unix_millis())),
                Ok(_) => None,
            };
            let (failure_kind, status) = match &result {
                Ok(_) => (None, Some(200)),
                Err(f) => (Some(f.kind), f.status),
            };
            self.emit_at(
                end,
                Some(request.id),
                EventKind::AttemptEnd {
                    attempt,
                    start,
                    model_group: g.name.clone(),
                    deployment_id: deployment.id.clone(),
                    failure: failure_kind,
                    status,
                    retry_after,
                    wait,
                    fallback_depth: depth,
                },
            );
            run.attempts.push(AttemptRecord {
                attempt,
                start,
                end,
                model_group: g.name.clone(),
                deployment_id: deployment.id.clone(),
                failure: result.as_ref().err().cloned(),
                wait,
                fallback_depth: depth,
            });
            match result {
                Ok(done) => {
                    self.cooldown.on_success(deployment_index, end);
                    if trial {
                        self.restore(deployment_index, RecoveredVia::Trial, Some(request.id));
                    }
                    Ok(done)
                }
                Err(failure) => {
                    let counts = self.classifier.counts_against_health(&failure);
                    if trial {
                        // The half-open trial failed: a new cooldown at once, if the failure says
                        // anything about the deployment; otherwise the next request is the trial.
                        lock(&self.half_open)[deployment_index].trial_in_flight = false;
                        if counts && !self.config.settings.disable_cooldowns {
                            let duration =
                                cooldown_time(deployment, retry_after, &self.config.settings);
                            self.cool(
                                deployment_index,
                                duration,
                                CooldownReason::HalfOpenTrialFailed,
                                failure.kind,
                                Some(request.id),
                            );
                        }
                    } else {
                        let ctx = FailureContext {
                            deployment,
                            deployment_index,
                            group_size: g.members.len(),
                            failure: &failure,
                            counts_against_health: counts,
                            retry_after,
                            now: end,
                            settings: &self.config.settings,
                        };
                        if let Some(decision) = self.cooldown.on_failure(&ctx, self.state.as_ref())
                        {
                            self.cool(
                                deployment_index,
                                decision.duration,
                                decision.reason,
                                failure.kind,
                                Some(request.id),
                            );
                        }
                    }
                    Err(Failed {
                        failure,
                        retry_after: None,
                        committed,
                    })
                }
            }
        }
    }

    /// Reads a provider's stream to its end on the caller's behalf, with the first-token and
    /// stall deadlines; a break comes back as the failure it broke with.
    fn drive_stream(
        &self,
        mut stream: P::Stream,
        deployment: &Deployment,
        attempt_start: Instant,
        run: &mut RequestRun,
    ) -> impl Future<Output = Result<Completion, StreamBroke>> {
        async move {
            let settings = &self.config.settings;
            let first_token_timeout = deployment.stream_timeout.or(settings.stream_timeout);
            let stall_timeout = settings.stream_stall_timeout;
            let mut tokens = 0u32;
            let mut last_item_at: Option<Instant> = None;
            loop {
                let deadline = match last_item_at {
                    None => first_token_timeout
                        .map(|t| (attempt_start + t, BreakKind::FirstTokenTimeout)),
                    Some(at) => stall_timeout.map(|t| (at + t, BreakKind::Stall)),
                };
                let item = match deadline {
                    None => stream.next_item().await,
                    Some((deadline, how)) => {
                        tokio::select! {
                            biased;
                            item = stream.next_item() => item,
                            () = self.clock.sleep_until(deadline) => {
                                return Err(StreamBroke { failure: ProviderFailure::new(FailureKind::Timeout), how });
                            }
                        }
                    }
                };
                let now = self.clock.now();
                last_item_at = Some(now);
                match item {
                    Some(Ok(StreamItem::Chunk(chunk))) => {
                        run.stream.first_byte = true;
                        if !chunk.kind.is_content() {
                            continue;
                        }
                        if !chunk.kind.allows_continuation() {
                            run.stream.non_text_content = true;
                        }
                        let first_at = now
                            .checked_sub(chunk.span)
                            .unwrap_or(now)
                            .max(attempt_start);
                        if run.stream.first_token_at.is_none() {
                            run.stream.first_token_at = Some(first_at);
                        }
                        let gap_before = run
                            .stream
                            .last_token_at
                            .map(|t| first_at.saturating_duration_since(t));
                        let inner_gap = if chunk.tokens > 1 {
                            chunk.span / (chunk.tokens - 1)
                        } else {
                            Duration::ZERO
                        };
                        run.stream.last_token_at = Some(now);
                        run.stream.delivered += chunk.tokens;
                        tokens += chunk.tokens;
                        self.emit(
                            Some(run_request_id(run)),
                            EventKind::StreamChunk {
                                tokens: chunk.tokens,
                                gap_before,
                                inner_gap,
                            },
                        );
                    }
                    Some(Ok(StreamItem::Done(finish_reason))) => {
                        let done = Completion {
                            output_tokens: tokens,
                            finish_reason,
                            empty_choices: !run.stream.any_content(),
                        };
                        return match self.classifier.judge_success(&done) {
                            None => Ok(done),
                            Some(failure) => {
                                let how = if done.empty_choices {
                                    BreakKind::EmptyResponse
                                } else {
                                    BreakKind::ContentFilter
                                };
                                Err(StreamBroke { failure, how })
                            }
                        };
                    }
                    Some(Ok(StreamItem::ErrorFrame(failure))) => {
                        run.stream.first_byte = true;
                        return Err(StreamBroke {
                            failure,
                            how: BreakKind::ErrorFrame,
                        });
                    }
                    Some(Err(failure)) => {
                        return Err(StreamBroke {
                            failure,
                            how: BreakKind::Connection,
                        });
                    }
                    None => {
                        return Err(StreamBroke {
                            failure: ProviderFailure::new(FailureKind::ApiConnection),
                            how: BreakKind::Truncated,
                        });
                    }
                }
            }
        }
    }

    /// A stream broke after content: continue it on a fallback deployment that supports
    /// assistant prefill when the setting allows and nothing disqualifies it; otherwise the
    /// caller gets the error the stream broke with.
    fn continue_stream(
        &self,
        group: usize,
        request: &Request,
        broken: Failed,
        depth: u32,
        run: &mut RequestRun,
    ) -> impl Future<Output = Result<Completion, RouterFailure>> {
        async move {
            let settings = &self.config.settings;
            let eligible = settings.stream_recovery == StreamRecovery::LiteLlm
                && settings.enable_mid_stream_fallback_continuation
                && run.stream.delivered > 0
                && !run.stream.non_text_content
                && request.response_format != ResponseFormat::Json
                && broken.failure.kind != FailureKind::ContentPolicyViolation
                && !run.stream.continued;
            if !eligible {
                return Err(broken.into_router_failure());
            }
            let serving = self.groups[group].name.clone();
            let requested = self
                .resolve_group(&request.model)
                .map_or_else(|| serving.clone(), |i| self.groups[i].name.clone());
            let Some(choice) =
                fallback::choose(settings, request, broken.failure.kind, &serving, &requested)
            else {
                return Err(broken.into_router_failure());
            };
            let now = self.clock.now();
            let target = choice.targets.iter().find_map(|target| {
                let g = self.resolve_group(&target.model)?;
                let prefill: Vec<usize> = self.groups[g]
                    .members
                    .iter()
                    .copied()
                    .filter(|&d| {
                        self.config.deployments[d].supports_assistant_prefill
                            && !self.is_cooling(d, now)
                    })
                    .collect();
                (!prefill.is_empty()).then_some((g, target, prefill))
            });
            let Some((g, target, candidates)) = target else {
                return Err(broken.into_router_failure());
            };
            let deployment = candidates[self.pick_position(&candidates, request, now)];
            let delivered = run.stream.delivered;
            let mut hop = apply_overrides(request, target);
            hop.prefill_tokens += delivered;
            hop.max_tokens = hop.max_tokens.map(|m| m.saturating_sub(delivered));
            hop.output_tokens = hop.output_tokens.map(|m| m.saturating_sub(delivered));
            let from_deployment = self
                .last_deployment_id(run)
                .unwrap_or_else(|| Arc::from(""));
            self.emit(
                Some(request.id),
                EventKind::StreamContinued {
                    from_group: serving,
                    from_deployment,
                    to_group: self.groups[g].name.clone(),
                    to_deployment: self.config.deployments[deployment].id.clone(),
                    prefill_tokens: delivered,
                },
            );
            // A continuation is reported as `stream_continued`, not as a fallback hop.
            run.stream.continued = true;
            match self
                .attempt(&self.groups[g], deployment, &hop, depth + 1, run)
                .await
            {
                Ok(done) => Ok(Completion {
                    output_tokens: run.stream.delivered.max(done.output_tokens),
                    ..done
                }),
                Err(_) => {
                    run.stream.continued = false;
                    Err(broken.into_router_failure())
                }
            }
        }
    }
}

fn run_request_id(run: &RequestRun) -> u64 {
    run.request_id
}

/// The request as a fallback hop sees it: the target dict's other keys override its params
/// (`num_retries` and `max_tokens` also set the fields the router reads).
fn apply_overrides(request: &Request, target: &FallbackTarget) -> Request {
    let mut hop = request.clone();
    for (key, value) in &target.overrides {
        match key.as_str() {
            "num_retries" => hop.num_retries = value.as_u64().map(|v| v as u32),
            "max_tokens" => hop.max_tokens = value.as_u64().map(|v| v as u32),
            _ => {}
        }
        hop.params.insert(key.clone(), value.clone());
    }
    hop
}

/// Probe requests carry ids from here up (they are not traffic; their events carry no id).
pub const PROBE_REQUEST_ID_BASE: u64 = 1 << 62;

/// Polls every future until all are done (the probes of one round run concurrently).
async fn join_all<F: std::future::Future<Output = ()> + Unpin>(mut futures: Vec<F>) {
    let mut done = vec![false; futures.len()];
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, done) in futures.iter_mut().zip(done.iter_mut()) {
            if !*done {
                match std::pin::Pin::new(future).poll(cx) {
                    std::task::Poll::Ready(()) => *done = true,
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
}

/// Glob matching with `*` only (LiteLLM's wildcard model names: `openai/*`, `claude-*`, `*`).
pub fn wildcard_match(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let Some(first) = parts.next() else {
        return pattern == name;
    };
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (i, part) in parts.iter().enumerate() {
        if i + 1 == parts.len() {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(pos) => rest = &rest[pos + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

#[cfg(test)]
mod tests {
    use super::wildcard_match;

    #[test]
    fn wildcards_match_like_litellm_model_names() {
        assert!(wildcard_match("*", "gpt-4o"));
        assert!(wildcard_match("openai/*", "openai/gpt-4o"));
        assert!(!wildcard_match("openai/*", "anthropic/claude"));
        assert!(wildcard_match("claude-*", "claude-3-opus"));
        assert!(wildcard_match("a*c*e", "abcde"));
        assert!(!wildcard_match("a*c*e", "abcd"));
        assert!(wildcard_match("exact", "exact"));
        assert!(!wildcard_match("exact", "exact2"));
    }
}
