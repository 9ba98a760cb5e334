//! [`FakeProviders`]: every deployment of a router config, faked in-process on tokio's clock.
//!
//! The simulator runs the real engine on a paused current-thread runtime; a fake provider's
//! latency is a `tokio::time::sleep`, so it costs no wall time and lands at an exact virtual
//! instant. One value serves all deployments (state is a `Vec` indexed by
//! [`ProviderCall::deployment_index`]); interior mutability is `Cell`/`RefCell` because the
//! simulation is single-threaded and no borrow is held across an `.await`.
//!
//! # How one call's outcome is decided (in this order)
//! 1. The deployment's next `script` entry is consumed (one per call, always, even when step 2
//!    or 3 decides), else `then` (default `ok`).
//! 2. Context window: `input_tokens > context_window` → `context_window_exceeded` (400).
//! 3. Quota (`rpm_limit`, `tpm_limit`; see [`crate::quota`]): a call the buckets have no room
//!    for fails with `rate_limit` (429) after [`QUOTA_REJECT_LATENCY`], with a Retry-After of
//!    the time until they have room (in the spec's `quota_retry_after_format`, default whole
//!    seconds rounded up; none when the call is larger than a limit), and is charged nothing.
//!    A call that gets in is charged 1 request and `input_tokens` + its answer's output
//!    tokens, whatever happens next (the provider admitted it: a scripted or window error
//!    after this step still used the quota). A call over the context window is not charged.
//! 4. A scripted error wins.
//! 5. Otherwise each *error* fault window active now (`from <= t < to`, in file order) draws
//!    its probability; the first that fires gives the error.
//! 6. Otherwise the call succeeds. A streamed call (`request.stream`) gets a stream, which a
//!    scripted stream fault (`stream_break`, …) spoils; else each *stream* fault window active
//!    now, in file order, draws its probability and the first that fires spoils it. So an
//!    up-front error (script or window) beats any stream fault, and a scripted stream fault
//!    beats a window's. A non-streamed call ignores stream faults (a scripted one counts as
//!    `ok`; stream windows are not even drawn).
//!
//! The answer's length (drawn before step 3 when a `tpm_limit` needs it, else only for a
//! success): the request's `output_tokens` (a continuation's is already reduced
//! by the router); else the spec's `output_tokens` (drawn per call when a range), less the
//! request's `prefill_tokens`; else the request's `max_tokens`; else
//! [`DEFAULT_OUTPUT_TOKENS`] less `prefill_tokens`. It never exceeds `max_tokens` (a stream
//! then finishes with `length`).
//!
//! Latency, for whichever outcome except a quota rejection (always [`QUOTA_REJECT_LATENCY`],
//! drawing nothing): the outcome's own `latency` (script entry, or the error
//! fault's), else the *slowdown* windows active now from the last in file order to the first,
//! each drawing its probability, the first that fires wins; else the provider's base latency.
//! A non-streamed call, and any up-front error, sleeps that long, then returns. A streamed
//! success returns its [`FakeStream`] at once (0 ms: no connection latency is modelled) and
//! the latency rules above give the stream's time to first token instead, with the
//! provider's `ttft` (default: its `latency`) as the base; tokens then follow every
//! `inter_token` (see [`crate::stream`]).
//!
//! # Randomness
//! Per deployment `id`: latencies and times to first token draw from
//! `seeded_rng(seed, "provider/<id>/latency")`, fault `k` (its index in the file) draws its
//! probability from `seeded_rng(seed, "provider/<id>/fault/<k>")`, a ranged `inter_token`
//! from `provider/<id>/inter_token` (once per stream) and a ranged `output_tokens` from
//! `provider/<id>/output_tokens`, so no stream shifts another. Fixed values draw nothing.
//!
//! # Counters
//! [`DeploymentStats::calls`] counts calls as they start; `ok`/`failures` count outcomes as
//! they are returned (a call the router abandons on its deadline counts in `calls` only). An
//! opened stream counts in `ok` and `streams`, and in `stream_faults` when a stream fault
//! was planned for it (whether or not the reader got that far). A quota rejection counts in
//! `failures` (as `rate_limit`) and in `quota_rejections`.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use routersim_engine::config::{Deployment, RouterConfig};
use routersim_engine::failure::{Ambiguity, FailureKind, ProviderFailure};
use routersim_engine::provider::{Provider, ProviderCall, ProviderResponse};
use routersim_engine::request::{Completion, Request};

use routersim_engine::event::ValidationReason;
use routersim_engine::stream::{ChunkKind, FinishReason};
use tokio::time::Instant;

use crate::pacing::{Pacing, precise_sleep_until};
use crate::quota::{Admission, Quota};
use crate::rng::seeded_rng;
use crate::spec::{
    Degenerate, EmptyStream, ErrorSpec, FaultEffect, FaultSpec, FaultTarget, OutcomeSpec,
    ProviderSpec, StreamFault,
};
use crate::stream::{FakeStream, PlannedFault, StreamPlan, Terminal};

/// Output tokens of a success when neither the request nor the spec sets a length and the
/// request sets no `max_tokens`.
pub const DEFAULT_OUTPUT_TOKENS: u32 = 200;

/// How long a quota rejection (step 3) takes to arrive: a provider's rate limiter answers
/// before any inference, so neither the provider's latency nor a slowdown window applies.
pub const QUOTA_REJECT_LATENCY: Duration = Duration::from_millis(20);

/// `then` when a spec sets none.
static DEFAULT_OUTCOME: OutcomeSpec = OutcomeSpec::Ok { latency: None };
/// What `{malformed: empty_choices}` does to a stream: no content, then the terminal marker.
static EMPTY_STREAM: StreamFault = StreamFault::Empty(EmptyStream::Nothing);

/// A provider section that does not fit the router config. `path` is from the scenario root
/// (`providers.gpt-x`, `faults[2].deployment`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct SpecError {
    /// YAML path from the scenario root.
    pub path: String,
    /// What was expected.
    pub message: String,
}

/// Per-deployment counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeploymentStats {
    /// Calls started.
    pub calls: u64,
    /// Successes returned.
    pub ok: u64,
    /// Failures returned, by kind.
    pub failures: BTreeMap<FailureKind, u64>,
    /// Streams opened (also counted in `ok`).
    pub streams: u64,
    /// Streams opened with a stream fault planned.
    pub stream_faults: u64,
    /// Calls the provider's own quota rejected (also counted in `failures` as `rate_limit`).
    pub quota_rejections: u64,
}

impl DeploymentStats {
    /// Failures of `kind` returned.
    pub fn failures_of(&self, kind: FailureKind) -> u64 {
        self.failures.get(&kind).copied().unwrap_or(0)
    }
}

/// Checks that every `providers` key is a deployment id and every fault targets a known
/// deployment or model group.
pub fn validate_targets(
    deployments: &[Deployment],
    specs: &BTreeMap<String, ProviderSpec>,
    faults: &[FaultSpec],
) -> Result<(), SpecError> {
    let list = |names: Vec<&str>| {
        let mut names: Vec<&str> = names;
        names.sort_unstable();
        names.dedup();
        names.join(", ")
    };
    let ids = || deployments.iter().map(|d| &*d.id).collect::<Vec<_>>();
    for id in specs.keys() {
        if !deployments.iter().any(|d| *d.id == **id) {
            return Err(SpecError {
                path: format!("providers.{id}"),
                message: format!(
                    "no deployment has id {id:?}; deployment ids: {}",
                    list(ids())
                ),
            });
        }
    }
    for (i, fault) in faults.iter().enumerate() {
        match &fault.target {
            FaultTarget::Deployment(id) if !deployments.iter().any(|d| *d.id == **id) => {
                return Err(SpecError {
                    path: format!("faults[{i}].deployment"),
                    message: format!(
                        "no deployment has id {id:?}; deployment ids: {}",
                        list(ids())
                    ),
                });
            }
            FaultTarget::ModelGroup(group)
                if !deployments.iter().any(|d| *d.model_name == **group) =>
            {
                return Err(SpecError {
                    path: format!("faults[{i}].model_group"),
                    message: format!(
                        "no model group {group:?}; model groups: {}",
                        list(deployments.iter().map(|d| &*d.model_name).collect())
                    ),
                });
            }
            _ => {}
        }
    }
    Ok(())
}

/// One fault window as one deployment sees it.
#[derive(Debug)]
struct Window {
    fault: FaultSpec,
    rng: RefCell<ChaCha8Rng>,
}

impl Window {
    fn fires(&self, t: Duration) -> bool {
        self.fault.active_at(t) && self.rng.borrow_mut().random_bool(self.fault.probability)
    }

    /// The failure `spec` gives now; a connection lost after the send draws, from this
    /// window's generator, whether the provider executed the request.
    fn failure(&self, spec: &ErrorSpec, now_unix_ms: i64) -> ProviderFailure {
        let failure = spec.failure(now_unix_ms);
        match spec.lost_after_send {
            Some(p) => failure.with_ambiguity(Ambiguity {
                executed: Some(self.rng.borrow_mut().random_bool(p)),
            }),
            None => failure,
        }
    }
}

#[derive(Debug)]
struct DeploymentState {
    id: Arc<str>,
    spec: ProviderSpec,
    next_script: Cell<usize>,
    /// Error windows, in file order.
    errors: Vec<Window>,
    /// Slowdown windows, in file order.
    slowdowns: Vec<Window>,
    /// Stream-fault windows, in file order.
    stream_faults: Vec<Window>,
    /// `invalid_response` windows, in file order.
    invalid: Vec<Window>,
    latency_rng: RefCell<ChaCha8Rng>,
    inter_token_rng: RefCell<ChaCha8Rng>,
    output_tokens_rng: RefCell<ChaCha8Rng>,
    /// The provider's own `rpm_limit` / `tpm_limit` buckets.
    quota: RefCell<Option<Quota>>,
    stats: RefCell<DeploymentStats>,
}

/// What a call will do.
#[derive(Debug)]
enum Decision {
    /// Return this after `latency`.
    Now {
        result: Result<Completion, ProviderFailure>,
        latency: Duration,
        /// The provider's quota rejected it.
        quota_rejected: bool,
    },
    /// Return this stream at once.
    Stream { plan: StreamPlan },
}

/// The fake providers of every deployment in a router config.
#[derive(Debug)]
pub struct FakeProviders {
    deployments: Vec<DeploymentState>,
    epoch_unix_ms: i64,
    start: Instant,
    /// Longest span of a coalesced chunk: half the router's `stream_stall_timeout`.
    span_cap: Option<Duration>,
    /// How a call's up-front latency is waited for (stream items always use tokio's timer).
    pacing: Pacing,
}

impl FakeProviders {
    /// Builds one fake per deployment of `config`, in its order. `specs` is keyed by
    /// deployment id (a deployment without one gets the default: 200 ms, always `ok`);
    /// `faults` apply in file order. Fault windows and HTTP-date `Retry-After` read virtual
    /// time from `start`; the wall clock is `epoch_unix_ms` at `start`. Streams read the
    /// router's `stream_stall_timeout` from `config` (see [`crate::stream`]).
    pub fn new(
        config: &RouterConfig,
        specs: &BTreeMap<String, ProviderSpec>,
        faults: &[FaultSpec],
        seed: u64,
        epoch_unix_ms: i64,
        start: Instant,
    ) -> Result<Self, SpecError> {
        validate_targets(&config.deployments, specs, faults)?;
        let deployments = config
            .deployments
            .iter()
            .map(|d| {
                let id = d.id.clone();
                let windows = faults.iter().enumerate().filter(|(_, f)| match &f.target {
                    FaultTarget::Deployment(target) => **target == *d.id,
                    FaultTarget::ModelGroup(group) => **group == *d.model_name,
                });
                let (mut errors, mut slowdowns, mut stream_faults, mut invalid) =
                    (Vec::new(), Vec::new(), Vec::new(), Vec::new());
                for (k, fault) in windows {
                    let window = Window {
                        fault: fault.clone(),
                        rng: RefCell::new(seeded_rng(seed, &format!("provider/{id}/fault/{k}"))),
                    };
                    match fault.effect {
                        FaultEffect::Error(_) => errors.push(window),
                        FaultEffect::Slowdown(_) => slowdowns.push(window),
                        FaultEffect::Stream(_) => stream_faults.push(window),
                        FaultEffect::InvalidResponse(_) => invalid.push(window),
                    }
                }
                let spec = specs.get(&*id).cloned().unwrap_or_default();
                DeploymentState {
                    quota: RefCell::new(Quota::new(spec.rpm_limit, spec.tpm_limit)),
                    spec,
                    next_script: Cell::new(0),
                    errors,
                    slowdowns,
                    stream_faults,
                    invalid,
                    latency_rng: RefCell::new(seeded_rng(seed, &format!("provider/{id}/latency"))),
                    inter_token_rng: RefCell::new(seeded_rng(
                        seed,
                        &format!("provider/{id}/inter_token"),
                    )),
                    output_tokens_rng: RefCell::new(seeded_rng(
                        seed,
                        &format!("provider/{id}/output_tokens"),
                    )),
                    stats: RefCell::new(DeploymentStats::default()),
                    id,
                }
            })
            .collect();
        Ok(Self {
            deployments,
            epoch_unix_ms,
            start,
            // Under half the shortest gap the router allows, so flowing tokens never look
            // like a stall.
            span_cap: routersim_engine::profile::shortest_gap_limit(config).map(|t| t / 2),
            pacing: Pacing::Tokio,
        })
    }

    /// Waits with `pacing` instead of tokio's timer: [`Pacing::Precise`] for a server on the
    /// wall clock (`routersim serve`), never for a simulation (it ignores paused time).
    #[must_use]
    pub fn with_pacing(mut self, pacing: Pacing) -> Self {
        self.pacing = pacing;
        self
    }

    /// The counts of the deployment at `index` (config order).
    pub fn stats(&self, index: usize) -> Option<DeploymentStats> {
        self.deployments
            .get(index)
            .map(|d| d.stats.borrow().clone())
    }

    /// The counts of the deployment with `id`.
    pub fn stats_by_id(&self, id: &str) -> Option<DeploymentStats> {
        self.deployments
            .iter()
            .find(|d| &*d.id == id)
            .map(|d| d.stats.borrow().clone())
    }

    /// Every deployment's counts, in config order.
    pub fn all_stats(&self) -> Vec<(Arc<str>, DeploymentStats)> {
        self.deployments
            .iter()
            .map(|d| (d.id.clone(), d.stats.borrow().clone()))
            .collect()
    }

    /// Virtual time since the start of the run.
    fn elapsed(&self) -> Duration {
        routersim_runtime::time::now().saturating_duration_since(self.start)
    }

    fn decide(&self, state: &DeploymentState, call: &ProviderCall<'_>) -> Decision {
        let t = self.elapsed();
        let now_unix_ms = self
            .epoch_unix_ms
            .saturating_add(i64::try_from(t.as_millis()).unwrap_or(i64::MAX));

        // 1. One script entry per call, always.
        let pos = state.next_script.get();
        let scripted = match state.spec.script.get(pos) {
            Some(outcome) => {
                state.next_script.set(pos + 1);
                outcome
            }
            None => state.spec.then.as_ref().unwrap_or(&DEFAULT_OUTCOME),
        };

        // 2–6. The outcome, and its own latency if it has one.
        let request = call.request;
        let over_window = state
            .spec
            .context_window
            .is_some_and(|window| request.input_tokens > window);

        // 3. The provider's quota. The answer's length is drawn now only when tokens count.
        let mut length = None;
        if !over_window && let Some(quota) = state.quota.borrow_mut().as_mut() {
            let mut tokens = u64::from(request.input_tokens);
            if quota.counts_tokens() {
                let drawn = self.answer_length(state, request);
                tokens += u64::from(drawn.0);
                length = Some(drawn);
            }
            if let Admission::Rejected { retry_after } = quota.admit(t, tokens) {
                let spec = ErrorSpec {
                    retry_after,
                    retry_after_format: state.spec.quota_retry_after_format,
                    ..ErrorSpec::new(FailureKind::RateLimit)
                };
                return Decision::Now {
                    result: Err(spec.failure(now_unix_ms)),
                    latency: QUOTA_REJECT_LATENCY,
                    quota_rejected: true,
                };
            }
        }
        let up_front_error = if over_window {
            Some((
                ErrorSpec::new(FailureKind::ContextWindowExceeded).failure(now_unix_ms),
                None,
            ))
        } else if let OutcomeSpec::Error(spec) = scripted {
            Some((spec.failure(now_unix_ms), spec.latency.as_ref()))
        } else {
            state
                .errors
                .iter()
                .find_map(|w| match &w.fault.effect {
                    FaultEffect::Error(spec) if w.fires(t) => Some((w, spec)),
                    _ => None,
                })
                .map(|(w, spec)| (w.failure(spec, now_unix_ms), spec.latency.as_ref()))
        };
        let own_latency = match (&up_front_error, scripted) {
            (Some((_, own)), _) => *own,
            (None, OutcomeSpec::Ok { latency })
            | (None, OutcomeSpec::Degenerate { latency, .. }) => latency.as_ref(),
            (None, _) => None,
        };
        let streamed = up_front_error.is_none() && request.stream;
        let base_latency = match &state.spec.ttft {
            Some(ttft) if streamed => ttft,
            _ => &state.spec.latency,
        };
        let latency_spec = own_latency.unwrap_or_else(|| {
            state
                .slowdowns
                .iter()
                .rev()
                .find_map(|w| match &w.fault.effect {
                    FaultEffect::Slowdown(latency) if w.fires(t) => Some(latency),
                    _ => None,
                })
                .unwrap_or(base_latency)
        });
        let latency = latency_spec.sample(&mut *state.latency_rng.borrow_mut());
        if let Some((failure, _)) = up_front_error {
            return Decision::Now {
                result: Err(failure),
                latency,
                quota_rejected: false,
            };
        }

        let (tokens, capped) = length.unwrap_or_else(|| self.answer_length(state, request));
        if !streamed {
            return Decision::Now {
                result: Ok(match scripted {
                    OutcomeSpec::Degenerate {
                        kind: Degenerate::EmptyChoices,
                        ..
                    } => Completion {
                        empty_choices: true,
                        ..Completion::default()
                    },
                    OutcomeSpec::Degenerate {
                        kind: Degenerate::ContentFilter,
                        ..
                    } => Completion {
                        output_tokens: tokens,
                        finish_reason: FinishReason::ContentFilter,
                        ..Completion::default()
                    },
                    _ => self.answer(state, request, tokens, t),
                }),
                latency,
                quota_rejected: false,
            };
        }
        let fault = match scripted {
            OutcomeSpec::Stream(fault) => Some(fault),
            OutcomeSpec::Degenerate {
                kind: Degenerate::EmptyChoices,
                ..
            } => Some(&EMPTY_STREAM),
            _ => state
                .stream_faults
                .iter()
                .find_map(|w| match &w.fault.effect {
                    FaultEffect::Stream(fault) if w.fires(t) => Some(fault),
                    _ => None,
                }),
        };
        let fault = fault.map(|fault| match fault {
            StreamFault::Break { at, error } => {
                PlannedFault::Terminal(*at, Terminal::Break(error.failure(now_unix_ms)))
            }
            StreamFault::ErrorFrame { at, error } => {
                PlannedFault::Terminal(*at, Terminal::ErrorFrame(error.failure(now_unix_ms)))
            }
            StreamFault::Truncated { at } => PlannedFault::Terminal(*at, Terminal::Truncated),
            StreamFault::Stall { at, pause } => PlannedFault::Stall(*at, *pause),
            StreamFault::Empty(kind) => PlannedFault::Empty(*kind, FinishReason::Stop),
            StreamFault::NoFinish(kind) => PlannedFault::Empty(*kind, FinishReason::Missing),
        });
        let emits: Vec<ChunkKind> = state
            .spec
            .emits
            .iter()
            .map(|e| e.chunk_kind())
            .filter(|&kind| kind != ChunkKind::ToolCall || request.tools)
            .collect();
        let sent = &emits[..emits.len().min(tokens as usize)];
        let finish = if matches!(
            scripted,
            OutcomeSpec::Degenerate {
                kind: Degenerate::ContentFilter,
                ..
            }
        ) {
            FinishReason::ContentFilter
        } else if capped {
            FinishReason::Length
        } else if sent.contains(&ChunkKind::ToolCall) {
            FinishReason::ToolCalls
        } else {
            FinishReason::Stop
        };
        let inter_token = state
            .spec
            .inter_token
            .sample(&mut *state.inter_token_rng.borrow_mut());
        Decision::Stream {
            plan: StreamPlan {
                ttft: latency,
                inter_token,
                tokens,
                emits,
                finish,
                span_cap: self.span_cap,
                fault,
            },
        }
    }

    /// A plain successful answer: its body when the request's contract validates, with the
    /// defect of the first `invalid_response` window that fires.
    fn answer(
        &self,
        state: &DeploymentState,
        request: &Request,
        tokens: u32,
        t: Duration,
    ) -> Completion {
        let defect = state.invalid.iter().find_map(|w| match &w.fault.effect {
            FaultEffect::InvalidResponse(defect) if w.fires(t) => Some(*defect),
            _ => None,
        });
        let finish_reason = if defect == Some(ValidationReason::Truncated) {
            FinishReason::Length
        } else {
            FinishReason::Stop
        };
        Completion {
            output_tokens: tokens,
            finish_reason,
            body: request
                .contract
                .as_deref()
                .and_then(|contract| crate::body::body(contract, defect)),
            ..Completion::default()
        }
    }

    /// The answer's length (see the module doc), and whether `max_tokens` cut it.
    fn answer_length(&self, state: &DeploymentState, request: &Request) -> (u32, bool) {
        let wanted = match (request.output_tokens, &state.spec.output_tokens) {
            (Some(n), _) => n,
            (None, Some(range)) => range
                .sample(&mut *state.output_tokens_rng.borrow_mut())
                .saturating_sub(request.prefill_tokens),
            (None, None) => match request.max_tokens {
                Some(max) => max,
                None => DEFAULT_OUTPUT_TOKENS.saturating_sub(request.prefill_tokens),
            },
        };
        match request.max_tokens {
            Some(max) if wanted > max => (max, true),
            _ => (wanted, false),
        }
    }
}

impl Provider for FakeProviders {
    type Stream = FakeStream;

    /// Decides the outcome when called (the router awaits the call at once, so this is the
    /// same instant as its first poll); the future then holds only the outcome and its timer,
    /// which every in-flight request pays for while it waits.
    fn call(
        &self,
        call: ProviderCall<'_>,
    ) -> impl Future<Output = Result<ProviderResponse<FakeStream>, ProviderFailure>> {
        let pending = self.start_call(&call);
        async move {
            // Only the decided call (by reference) and the timer are kept while it waits.
            if let Pending::After {
                latency, pacing, ..
            } = &pending
                && !latency.is_zero()
            {
                match pacing {
                    Pacing::Tokio => routersim_runtime::time::sleep(*latency).await,
                    Pacing::Precise => {
                        precise_sleep_until(routersim_runtime::time::now() + *latency).await;
                    }
                }
            }
            let (state, result, quota_rejected) = match pending {
                Pending::Ready(ready) => return ready,
                Pending::After {
                    state,
                    result,
                    quota_rejected,
                    ..
                } => (state, result, quota_rejected),
            };
            let mut stats = state.stats.borrow_mut();
            if quota_rejected {
                stats.quota_rejections += 1;
            }
            match result {
                Ok(completion) => {
                    stats.ok += 1;
                    Ok(ProviderResponse::Complete(completion))
                }
                Err(failure) => {
                    *stats.failures.entry(failure.kind).or_default() += 1;
                    Err(failure)
                }
            }
        }
    }
}

/// A call decided: returned at once, or after a latency.
enum Pending<'a> {
    Ready(Result<ProviderResponse<FakeStream>, ProviderFailure>),
    After {
        state: &'a DeploymentState,
        result: Result<Completion, ProviderFailure>,
        latency: Duration,
        quota_rejected: bool,
        /// How to wait (a byte beside `quota_rejected`: the future does not grow).
        pacing: Pacing,
    },
}

impl FakeProviders {
    /// Counts the call and decides it (see the module docs).
    fn start_call(&self, call: &ProviderCall<'_>) -> Pending<'_> {
        // A deployment index outside the config this was built from is a wiring bug; answer
        // 404 rather than panic inside the simulation.
        let Some(state) = self.deployments.get(call.deployment_index) else {
            return Pending::Ready(Err(ProviderFailure::new(FailureKind::NotFound)));
        };
        state.stats.borrow_mut().calls += 1;
        match self.decide(state, call) {
            Decision::Stream { plan } => {
                let mut stats = state.stats.borrow_mut();
                stats.ok += 1;
                stats.streams += 1;
                if plan.fault.is_some() {
                    stats.stream_faults += 1;
                }
                Pending::Ready(Ok(ProviderResponse::Stream(FakeStream::new(
                    routersim_runtime::time::now(),
                    plan,
                ))))
            }
            Decision::Now {
                result,
                latency,
                quota_rejected,
            } => Pending::After {
                state,
                result,
                latency,
                quota_rejected,
                pacing: self.pacing,
            },
        }
    }
}
