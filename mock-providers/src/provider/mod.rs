//! [`FakeProviders`]: every deployment of a router config, faked in-process on tokio's clock.
//!
//! The simulator runs the real engine on a paused current-thread runtime; a fake provider's
//! latency is a `tokio::time::sleep`, so it costs no wall time and lands at an exact virtual
//! instant. One value serves all deployments (state is a `Vec` indexed by
//! [`ProviderCall::deployment_index`]); interior mutability is `Cell`/`RefCell` because the
//! simulation is single-threaded and no borrow is held across an `.await`.
//!
//! A call is counted, decided at once, then waited for:
//! - `decide`: the order in which one call's outcome is decided, step by step (script,
//!   context window, quota, errors, latency), and [`QUOTA_REJECT_LATENCY`];
//! - `answer`: what a success says (its length, its body, or its stream's plan), and
//!   [`DEFAULT_OUTPUT_TOKENS`];
//! - `deployment`: one deployment's fake: its spec, the fault windows that target it, and
//!   which random stream each draw comes from;
//! - `call_time`: the instant of a decision, in virtual time and on the wall clock;
//! - `stats`: [`DeploymentStats`], what each counter counts;
//! - `targets`: [`validate_targets`], the provider sections checked against the router config.

mod answer;
mod call_time;
mod decide;
mod deployment;
mod stats;
mod targets;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use routersim_engine::config::RouterConfig;
use routersim_engine::failure::{FailureKind, ProviderFailure};
use routersim_engine::provider::{Provider, ProviderCall, ProviderResponse};
use routersim_engine::request::Completion;
use tokio::time::Instant;

pub use self::answer::DEFAULT_OUTPUT_TOKENS;
use self::call_time::CallTime;
pub use self::decide::QUOTA_REJECT_LATENCY;
use self::decide::{Decision, decide};
use self::deployment::DeploymentState;
pub use self::stats::DeploymentStats;
pub use self::targets::{SpecError, validate_targets};
use crate::pacing::{Pacing, precise_sleep_until};
use crate::spec::{FaultSpec, ProviderSpec};
use crate::stream::FakeStream;

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
            .map(|d| DeploymentState::new(d, specs, faults, seed))
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
            state
                .stats
                .borrow_mut()
                .count_result(&result, quota_rejected);
            result.map(ProviderResponse::Complete)
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
    /// Counts the call and decides it (see `decide`).
    fn start_call(&self, call: &ProviderCall<'_>) -> Pending<'_> {
        // A deployment index outside the config this was built from is a wiring bug; answer
        // 404 rather than panic inside the simulation.
        let Some(state) = self.deployments.get(call.deployment_index) else {
            return Pending::Ready(Err(ProviderFailure::new(FailureKind::NotFound)));
        };
        state.stats.borrow_mut().calls += 1;
        let now = CallTime::now(self.start, self.epoch_unix_ms);
        match decide(state, call.request, now, self.span_cap) {
            Decision::Stream { plan } => {
                state.stats.borrow_mut().count_stream(plan.fault.is_some());
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
