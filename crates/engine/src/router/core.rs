//! The router's parts (its config, groups, policies and state) and the small helpers every
//! step of a request uses: emitting events, resolving a model name to its group, reading a
//! Retry-After against the clock.

use std::cell::{RefCell, RefMut};
use std::sync::Arc;
use std::time::Duration;

use rand_chacha::ChaCha8Rng;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::group::Group;
use super::run::RequestRun;
use crate::alternatives::{HedgeAfter, LatencyWindow, OutlierDetector};
use crate::backoff::Backoff;
use crate::classify::FailureClassifier;
use crate::clock::{Clock, TokioClock};
use crate::config::{RouterConfig, RouterSettings};
use crate::contract::RouteAdmission;
use crate::cooldown::CooldownTrigger;
use crate::event::{EventKind, EventSink, RoutingEvent};
use crate::failure::ProviderFailure;
use crate::fallback::FallbackPolicy;
use crate::pattern::ModelPattern;
use crate::profile::Walk;
use crate::provider::Provider;
use crate::recovery::Recovery;
use crate::retry::{RetryBudget, RetryPolicy};
use crate::retry_after;
use crate::state::StateStore;
use crate::stats::LoadTracker;
use crate::strategy::SelectionStrategy;
use crate::stream_rules::StreamRules;

/// The router's draws, borrowed for one call. A `RefCell`, not a `Mutex`: a router is driven from
/// one thread (it is not `Send`: its state store is a `Box<dyn StateStore>`).
pub(super) fn lock(rng: &RefCell<ChaCha8Rng>) -> RefMut<'_, ChaCha8Rng> {
    rng.borrow_mut()
}

/// The router engine. See the module docs for the shape of a request.
pub struct Router<P, C = TokioClock> {
    pub(super) config: RouterConfig,
    pub(super) groups: Vec<Group>,
    pub(super) provider: P,
    pub(super) clock: C,
    pub(super) rng: RefCell<ChaCha8Rng>,
    pub(super) sink: Arc<dyn EventSink>,
    pub(super) strategy: Box<dyn SelectionStrategy>,
    pub(super) retry: Box<dyn RetryPolicy>,
    pub(super) retry_budget: Box<dyn RetryBudget>,
    /// Outlier ejection and hedging, when the settings ask for them.
    pub(super) alternatives: Alternatives,
    pub(super) backoff: Box<dyn Backoff>,
    pub(super) cooldown: Box<dyn CooldownTrigger>,
    pub(super) fallback_policy: Box<dyn FallbackPolicy>,
    pub(super) admission: Box<dyn RouteAdmission>,
    pub(super) state: Box<dyn StateStore>,
    pub(super) load: LoadTracker,
    pub(super) classifier: Box<dyn FailureClassifier>,
    pub(super) recovery: Box<dyn Recovery>,
    pub(super) stream_rules: Box<dyn StreamRules>,
    /// How a request is walked (the profile's).
    pub(super) walk: Walk,
    pub(super) cooldown_changed: Notify,
}

/// The alternatives a router's settings turned on (see `alternatives.rs`).
#[derive(Debug)]
pub(super) struct Alternatives {
    pub(super) outlier: Option<OutlierDetector>,
    pub(super) hedge_after: Option<HedgeAfter>,
    /// Successful latencies by group, keyed by the group's first member (hedging only).
    pub(super) latency: Option<LatencyWindow>,
}

impl Alternatives {
    /// `start`: when the router starts (outlier detection's sweeps count from it).
    pub(super) fn new(settings: &RouterSettings, deployments: usize, start: Instant) -> Self {
        Self {
            outlier: settings
                .outlier_detection
                .map(|s| OutlierDetector::new(s, deployments, start)),
            hedge_after: settings.hedge_after,
            latency: settings
                .hedge_after
                .map(|_| LatencyWindow::new(deployments)),
        }
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

    pub(super) fn emit(&self, request_id: Option<u64>, kind: EventKind) {
        self.emit_at(self.clock.now(), request_id, kind);
    }

    /// Emits with a time the caller already read (reading the clock is not free: it is the
    /// hot path of every simulated request).
    pub(super) fn emit_at(&self, at: Instant, request_id: Option<u64>, kind: EventKind) {
        self.sink.emit(&RoutingEvent {
            at,
            request_id,
            kind,
        });
    }

    /// Resolves a model name (or alias, or a wildcard group such as `openai/*`) to a group.
    pub(super) fn resolve_group(&self, model: &str) -> Option<usize> {
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
    pub(super) fn last_deployment_id(&self, run: &RequestRun) -> Option<Arc<str>> {
        run.last_deployment_index
            .map(|i| self.config.deployments[i].id.clone())
    }

    /// A failure's `Retry-After`, resolved against the clock (an HTTP date needs the wall
    /// clock).
    pub(super) fn resolve_retry_after(&self, failure: &ProviderFailure) -> Option<Duration> {
        failure
            .retry_after
            .as_ref()
            .and_then(|ra| retry_after::resolve(ra, self.clock.unix_millis()))
    }
}
