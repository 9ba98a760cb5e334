//! Fleets: `router.replicas` engine routers in one simulation, behind a load balancer, each
//! with its own state (`router.state: per_process`) or sharing a simulated store (`shared`).
//!
//! Why: real LiteLLM and DeltaLLM deployments run several proxy replicas; with per-process
//! state each replica discovers a failing deployment on its own, which multiplies what an
//! outage costs. The replicas share the fake providers (and so their quotas and faults): the
//! providers are one value behind an `Rc` ([`SharedProvider`]). Each router's events go
//! through a [`ReplicaSink`] that tells the recorder which replica they come from, so the
//! per-replica reports derive from the events like every other report.
//!
//! `config` reads the keys, `balancer` picks a replica per request, `store` is the shared
//! store model. One replica (the default) builds exactly the router `run` always built: same
//! random stream, same in-memory state, same sink, so single-router reports are unchanged.

pub mod balancer;
pub mod config;
pub mod store;

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

use routersim_engine::Router;
use routersim_engine::config::RouterConfig;
use routersim_engine::event::{EventSink, RoutingEvent};
use routersim_engine::failure::ProviderFailure;
use routersim_engine::provider::{Provider, ProviderCall, ProviderResponse};
use routersim_mock_providers::rng::seeded_rng;
use routersim_report::record::Recorder;
use routersim_runtime::RuntimeClock;
use tokio::time::Instant;

use self::balancer::LoadBalancer;
pub use self::config::{Balancer, FleetConfig, StateMode};
use self::store::{ReplicaState, SharedStore};

/// One provider value shared by every replica's router.
#[derive(Debug)]
pub struct SharedProvider<P>(Rc<P>);

impl<P> Clone for SharedProvider<P> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<P: Provider> Provider for SharedProvider<P> {
    type Stream = P::Stream;

    fn call(
        &self,
        call: ProviderCall<'_>,
    ) -> impl Future<Output = Result<ProviderResponse<Self::Stream>, ProviderFailure>> {
        self.0.call(call)
    }
}

/// A replica's event sink: names the replica to the recorder, then passes the event on.
struct ReplicaSink {
    replica: u32,
    recorder: Arc<Recorder>,
    inner: Arc<dyn EventSink + Send + Sync>,
}

impl EventSink for ReplicaSink {
    fn emit(&self, event: &RoutingEvent) {
        // Events are emitted synchronously on one thread: the tag holds for exactly this one.
        self.recorder.set_replica(self.replica);
        self.inner.emit(event);
    }
}

/// A router of the fleet.
pub type FleetRouter<P> = Router<SharedProvider<P>, RuntimeClock>;

/// What building the fleet needs from the run.
pub struct FleetInputs<'a> {
    /// The router config every replica runs.
    pub config: &'a RouterConfig,
    /// The replicas, balancer and state.
    pub fleet: &'a FleetConfig,
    /// The run's seed.
    pub seed: u64,
    /// The run's epoch (the routers' wall clock).
    pub epoch_unix_ms: i64,
    /// The run's start (anchors store faults).
    pub start: Instant,
    /// The recorder (told each event's replica).
    pub recorder: &'a Arc<Recorder>,
    /// The sink replica `r`'s events go to (recorder, facts, extra sinks), asked once per
    /// replica in order.
    pub sink: &'a dyn Fn(usize) -> Arc<dyn EventSink + Send + Sync>,
}

/// The replicas and the balancer in front of them.
pub struct Fleet<P: Provider> {
    /// Each replica's router.
    pub routers: Vec<Rc<FleetRouter<P>>>,
    /// Each replica's requests in flight (for `least_connections`).
    in_flight: Vec<Rc<Cell<usize>>>,
    balancer: Box<dyn LoadBalancer>,
    counts: Vec<usize>,
}

impl<P: Provider + 'static> Fleet<P> {
    /// Builds every replica's router over `provider`.
    pub fn build(inputs: FleetInputs<'_>, provider: P) -> Self {
        let FleetInputs {
            config,
            fleet,
            seed,
            epoch_unix_ms,
            start,
            recorder,
            sink,
        } = inputs;
        let provider = SharedProvider(Rc::new(provider));
        let deployments = config.deployments.len();
        let store = (fleet.state == StateMode::Shared)
            .then(|| SharedStore::new(fleet.store.clone(), deployments, start));
        let routers = (0..fleet.replicas)
            .map(|i| {
                // Replica 0 draws from the stream a single router always drew from.
                let stream = if i == 0 {
                    "router".to_string()
                } else {
                    format!("router/{i}")
                };
                let sink: Arc<dyn EventSink + Send + Sync> = if fleet.is_single() {
                    sink(i)
                } else {
                    Arc::new(ReplicaSink {
                        replica: u32::try_from(i).unwrap_or(u32::MAX),
                        recorder: recorder.clone(),
                        inner: sink(i),
                    })
                };
                let builder = Router::builder(config.clone(), provider.clone())
                    .clock(RuntimeClock::with_epoch(epoch_unix_ms))
                    .rng(seeded_rng(seed, &stream))
                    .sink(sink);
                let builder = match &store {
                    Some(store) => {
                        builder.state_store(ReplicaState::new(store.clone(), deployments))
                    }
                    None => builder,
                };
                Rc::new(builder.build())
            })
            .collect();
        Self {
            routers,
            in_flight: (0..fleet.replicas).map(|_| Rc::new(Cell::new(0))).collect(),
            balancer: balancer::balancer(fleet.balancer, seeded_rng(seed, "balancer")),
            counts: vec![0; fleet.replicas],
        }
    }

    /// The replica for the next user request: its router and a guard that counts the
    /// request in flight there until dropped.
    pub fn pick(&mut self) -> (Rc<FleetRouter<P>>, Connection) {
        for (count, cell) in self.counts.iter_mut().zip(&self.in_flight) {
            *count = cell.get();
        }
        let i = self.balancer.pick(&self.counts).min(self.routers.len() - 1);
        let cell = self.in_flight[i].clone();
        cell.set(cell.get() + 1);
        (self.routers[i].clone(), Connection(cell))
    }
}

/// A request in flight at a replica (counted out when dropped).
pub struct Connection(Rc<Cell<usize>>);

impl Drop for Connection {
    fn drop(&mut self) {
        self.0.set(self.0.get().saturating_sub(1));
    }
}
