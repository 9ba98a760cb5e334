//! Deployment health: cooling, cooldown ends, restoring, and the two background tasks (the
//! cooldown sweeper and DeltaLLM's health probes).
//!
//! Every failure that may cool a deployment — an attempt's, a half-open trial's, a probe's —
//! comes through [`Router::report_failure`], so `disable_cooldowns` is read in one place and
//! the injected cooldown trigger sees them all. What a deployment may do once its cooldown
//! ends is the recovery policy's business ([`crate::recovery`]).

use std::time::Duration;

use tokio::time::Instant;

use super::core::Router;
use crate::clock::Clock;
use crate::cooldown::{FailureContext, FailureOrigin};
use crate::event::{CooldownReason, CooldownSource, EventKind, RecoveredVia, RoutingEvent};
use crate::failure::{FailureKind, ProviderFailure};
use crate::provider::{Provider, ProviderCall};
use crate::recovery::Admission;
use crate::request::Request;

/// Probe requests carry ids from here up (they are not traffic; their events carry no id).
pub const PROBE_REQUEST_ID_BASE: u64 = 1 << 62;

/// One failure for the cooldown trigger.
pub(super) struct FailureReport<'a> {
    pub deployment: usize,
    pub group_size: usize,
    pub failure: &'a ProviderFailure,
    pub origin: FailureOrigin,
    /// The failure's Retry-After, already resolved.
    pub retry_after: Option<Duration>,
    pub now: Instant,
    pub request_id: Option<u64>,
}

impl<P: Provider, C: Clock> Router<P, C> {
    /// Whether `deployment` is cooling now; an expired entry is removed and its end reported.
    pub(super) fn is_cooling(&self, deployment: usize, now: Instant) -> bool {
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
        self.emit_at(
            until,
            None,
            EventKind::CooldownEnd {
                model_group: d.model_name.clone(),
                deployment_id: d.id.clone(),
            },
        );
        if self.recovery.on_cooldown_end(deployment) {
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

    /// Whether `deployment` cannot take a request now: cooling, ejected by outlier detection
    /// (both apply: see [`crate::alternatives::outlier`]), or held back by the recovery
    /// policy (a half-open deployment with its one trial already in flight).
    pub(super) fn is_unavailable(&self, deployment: usize, now: Instant) -> bool {
        self.is_cooling(deployment, now)
            || self.is_ejected(deployment, now)
            || self.recovery.admit(deployment) == Admission::Skip
    }

    /// The deployment is healthy again: no cooldown, no recovery state, no failure history.
    pub(super) fn restore(&self, deployment: usize, via: RecoveredVia, request_id: Option<u64>) {
        let was_cooling = self.state.clear_cooldown(deployment);
        let was_half_open = self.recovery.reset(deployment);
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

    /// Hands a failure to the cooldown trigger and applies its decision. The one place that
    /// reads `disable_cooldowns`.
    pub(super) fn report_failure(&self, report: FailureReport<'_>) {
        let settings = &self.config.settings;
        if settings.disable_cooldowns {
            return;
        }
        let ctx = FailureContext {
            deployment: &self.config.deployments[report.deployment],
            deployment_index: report.deployment,
            group_size: report.group_size,
            failure: report.failure,
            origin: report.origin,
            counts_against_health: self.classifier.counts_against_health(report.failure),
            retry_after: report.retry_after,
            now: report.now,
            settings,
        };
        let Some(decision) = self.cooldown.on_failure(&ctx, self.state.as_ref()) else {
            return;
        };
        if report.origin == FailureOrigin::Probe {
            // A probe during a half-open period takes the trial's place.
            self.recovery.reset(report.deployment);
        }
        self.cool(
            report.deployment,
            (decision.duration, decision.source),
            decision.reason,
            report.failure.kind,
            report.request_id,
        );
    }

    /// Cools `deployment` for `duration` and reports it.
    fn cool(
        &self,
        deployment: usize,
        (duration, source): (Duration, CooldownSource),
        reason: CooldownReason,
        failure: FailureKind,
        request_id: Option<u64>,
    ) {
        if duration.is_zero() || !self.state.accepts_health_writes() {
            return;
        }
        let now = self.clock.now();
        let until =
            self.state
                .rewrite_cooldown(deployment, now, now + duration, self.cooldown.rewrite());
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
                source,
                until,
            },
        );
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
    /// deployment (`probe_ok`, `recovered`), a failure goes to the cooldown trigger, which
    /// cools the deployment if the failure counts against health (`probe_failed`,
    /// `cooldown_set`) without any user traffic.
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
        let result = self.call_with_deadline(call, self.clock.now(), None).await;
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
                let group_size = self
                    .groups
                    .iter()
                    .find(|g| g.name == deployment.model_name)
                    .map_or(1, |g| g.members.len());
                self.report_failure(FailureReport {
                    deployment: deployment_index,
                    group_size,
                    failure: &failure,
                    origin: FailureOrigin::Probe,
                    retry_after: self.resolve_retry_after(&failure),
                    now: self.clock.now(),
                    request_id: None,
                });
            }
        }
    }
}

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
