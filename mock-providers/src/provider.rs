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
//!    decides), else `then` (default `ok`).
//! 2. Context window: `input_tokens > context_window` → `context_window_exceeded` (400).
//! 3. A scripted error wins.
//! 4. Otherwise each *error* fault window active now (`from <= t < to`, in file order) draws
//!    its probability; the first that fires gives the error.
//! 5. Otherwise the call succeeds with `max_tokens` output tokens (default
//!    [`DEFAULT_OUTPUT_TOKENS`]).
//!
//! Latency, for whichever outcome: the outcome's own `latency` (script entry, or the error
//! fault's), else the *slowdown* windows active now from the last in file order to the first,
//! each drawing its probability, the first that fires wins; else the provider's base latency.
//! The call sleeps that long, then returns.
//!
//! # Randomness
//! Per deployment `id`: latencies draw from `seeded_rng(seed, "provider/<id>/latency")`, and
//! fault `k` (its index in the file) draws its probability from
//! `seeded_rng(seed, "provider/<id>/fault/<k>")`, so no stream shifts another.
//!
//! # Counters
//! [`DeploymentStats::calls`] counts calls as they start; `ok`/`failures` count outcomes as
//! they are returned (a call the router abandons on its deadline counts in `calls` only).

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use routersim_engine::config::{Deployment, RouterConfig};
use routersim_engine::failure::{FailureKind, ProviderFailure};
use routersim_engine::provider::{NoStream, Provider, ProviderCall, ProviderResponse};
use routersim_engine::request::Completion;
use tokio::time::Instant;

use crate::rng::seeded_rng;
use crate::spec::{
    ErrorSpec, FaultEffect, FaultSpec, FaultTarget, LatencySpec, OutcomeSpec, ProviderSpec,
};

/// Output tokens of a success when the request sets no `max_tokens`.
pub const DEFAULT_OUTPUT_TOKENS: u32 = 200;

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
    latency_rng: RefCell<ChaCha8Rng>,
    stats: RefCell<DeploymentStats>,
}

/// What a call will do: its result, after how long.
#[derive(Debug)]
struct Decision {
    result: Result<Completion, ProviderFailure>,
    latency: Duration,
}

/// The fake providers of every deployment in a router config.
#[derive(Debug)]
pub struct FakeProviders {
    deployments: Vec<DeploymentState>,
    epoch_unix_ms: i64,
    start: Instant,
}

impl FakeProviders {
    /// Builds one fake per deployment of `config`, in its order. `specs` is keyed by
    /// deployment id (a deployment without one gets the default: 200 ms, always `ok`);
    /// `faults` apply in file order. Fault windows and HTTP-date `Retry-After` read virtual
    /// time from `start`; the wall clock is `epoch_unix_ms` at `start`.
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
                let (mut errors, mut slowdowns) = (Vec::new(), Vec::new());
                for (k, fault) in windows {
                    let window = Window {
                        fault: fault.clone(),
                        rng: RefCell::new(seeded_rng(seed, &format!("provider/{id}/fault/{k}"))),
                    };
                    match fault.effect {
                        FaultEffect::Error(_) => errors.push(window),
                        FaultEffect::Slowdown(_) => slowdowns.push(window),
                    }
                }
                DeploymentState {
                    spec: specs.get(&*id).cloned().unwrap_or_default(),
                    next_script: Cell::new(0),
                    errors,
                    slowdowns,
                    latency_rng: RefCell::new(seeded_rng(seed, &format!("provider/{id}/latency"))),
                    stats: RefCell::new(DeploymentStats::default()),
                    id,
                }
            })
            .collect();
        Ok(Self {
            deployments,
            epoch_unix_ms,
            start,
        })
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
        Instant::now().saturating_duration_since(self.start)
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
                outcome.clone()
            }
            None => state.spec.then.clone().unwrap_or_default(),
        };

        // 2–5. The outcome, and its own latency if it has one.
        let request = call.request;
        let over_window = state
            .spec
            .context_window
            .is_some_and(|window| request.input_tokens > window);
        let (result, own_latency): (Result<Completion, ProviderFailure>, Option<LatencySpec>) =
            if over_window {
                (
                    Err(ErrorSpec::new(FailureKind::ContextWindowExceeded).failure(now_unix_ms)),
                    None,
                )
            } else if let OutcomeSpec::Error(spec) = &scripted {
                (Err(spec.failure(now_unix_ms)), spec.latency.clone())
            } else if let Some(spec) = state.errors.iter().find_map(|w| match &w.fault.effect {
                FaultEffect::Error(spec) if w.fires(t) => Some(spec),
                _ => None,
            }) {
                (Err(spec.failure(now_unix_ms)), spec.latency.clone())
            } else {
                let latency = match scripted {
                    OutcomeSpec::Ok { latency } => latency,
                    OutcomeSpec::Error(_) => None,
                };
                let output_tokens = request.max_tokens.unwrap_or(DEFAULT_OUTPUT_TOKENS);
                (Ok(Completion { output_tokens }), latency)
            };

        let latency_spec = own_latency.as_ref().unwrap_or_else(|| {
            state
                .slowdowns
                .iter()
                .rev()
                .find_map(|w| match &w.fault.effect {
                    FaultEffect::Slowdown(latency) if w.fires(t) => Some(latency),
                    _ => None,
                })
                .unwrap_or(&state.spec.latency)
        });
        let latency = latency_spec.sample(&mut *state.latency_rng.borrow_mut());
        Decision { result, latency }
    }
}

impl Provider for FakeProviders {
    type Stream = NoStream;

    async fn call(
        &self,
        call: ProviderCall<'_>,
    ) -> Result<ProviderResponse<NoStream>, ProviderFailure> {
        // A deployment index outside the config this was built from is a wiring bug; answer
        // 404 rather than panic inside the simulation.
        let Some(state) = self.deployments.get(call.deployment_index) else {
            return Err(ProviderFailure::new(FailureKind::NotFound));
        };
        state.stats.borrow_mut().calls += 1;
        let decision = self.decide(state, &call);
        if !decision.latency.is_zero() {
            tokio::time::sleep(decision.latency).await;
        }
        let mut stats = state.stats.borrow_mut();
        match decision.result {
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
