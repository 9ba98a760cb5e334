//! The router's side of [`crate::alternatives`]: outlier ejection as part of "unavailable",
//! what each attempt's outcome teaches the retry budget, the outlier detector and the hedging
//! latency window. Hedging itself wraps the attempt (`hedge.rs`).

use std::time::Duration;

use tokio::time::Instant;

use super::core::Router;
use super::group::Group;
use crate::alternatives::AlternativeEvent;
use crate::clock::Clock;
use crate::event::EventKind;
use crate::failure::ProviderFailure;
use crate::provider::Provider;

impl<P: Provider, C: Clock> Router<P, C> {
    /// Whether outlier detection has `deployment` ejected now, once the detector's sweeps due
    /// by `now` have run.
    pub(super) fn is_ejected(&self, deployment: usize, now: Instant) -> bool {
        let Some(outlier) = &self.alternatives.outlier else {
            return false;
        };
        self.sweep_outliers(now);
        outlier.is_ejected(deployment)
    }

    /// Runs the outlier detector's sweeps due by `now`: each deployment one returns to service
    /// is reported at that sweep's time (`unejected`).
    fn sweep_outliers(&self, now: Instant) {
        let Some(outlier) = &self.alternatives.outlier else {
            return;
        };
        for (deployment, at) in outlier.sweep(now) {
            let d = &self.config.deployments[deployment];
            self.emit_at(
                at,
                None,
                EventKind::Alternative(AlternativeEvent::Unejected {
                    model_group: d.model_name.clone(),
                    deployment_id: d.id.clone(),
                }),
            );
        }
    }

    /// An attempt on `deployment` of `g` ended (`failure`: `None` on success) after `took`.
    pub(super) fn learn_alternatives(
        &self,
        g: &Group,
        deployment: usize,
        failure: Option<&ProviderFailure>,
        (end, took): (Instant, Duration),
        request_id: u64,
    ) {
        self.retry_budget.on_attempt_end(failure);
        self.sweep_outliers(end);
        if let Some(outlier) = &self.alternatives.outlier
            && let Some(e) = outlier.on_attempt_end(deployment, &g.members, failure, end)
        {
            let d = &self.config.deployments[deployment];
            self.emit_at(
                end,
                Some(request_id),
                EventKind::Alternative(AlternativeEvent::Ejected {
                    model_group: d.model_name.clone(),
                    deployment_id: d.id.clone(),
                    duration: e.duration,
                    until: e.until,
                    ejections: e.ejections,
                    consecutive_5xx: e.consecutive_5xx,
                }),
            );
        }
        if failure.is_none()
            && let Some(window) = &self.alternatives.latency
        {
            window.record(g.members[0], took);
        }
    }

    /// The hedge delay for a request of `g` now (`None`: no hedging, or still warming up).
    pub(super) fn hedge_delay(&self, g: &Group) -> Option<Duration> {
        let after = self.alternatives.hedge_after?;
        self.alternatives
            .latency
            .as_ref()?
            .delay(g.members[0], after)
    }
}
