//! A fleet's per-replica lanes in `deployments.svg`: each cooldown event of a replica also
//! draws on the lane `<deployment> @ r<replica>`.
//!
//! Apart from `replicas` (the per-replica counts), which knows nothing of the recorder's
//! state: only this drawing reaches into it.

use std::sync::Arc;

use routersim_engine::event::{EventKind, RoutingEvent};

use super::state::State;

impl State {
    /// A fleet's per-replica cooldown lanes in `deployments.svg`: each cooldown event also
    /// draws on the lane `<deployment> @ r<replica>` (after the deployments' own lanes, which
    /// show the union over the replicas).
    pub(super) fn replica_lanes(&mut self, event: &RoutingEvent) {
        let Some(replica) = self.fleet.as_ref().map(|f| f.current) else {
            return;
        };
        let lane = |id: &str| -> Arc<str> { format!("{id} @ r{replica}").into() };
        let at = self.us(event.at);
        match &event.kind {
            EventKind::CooldownSet {
                model_group,
                deployment_id,
                until,
                ..
            } => {
                let until = self.us(*until);
                self.plots
                    .cooldown_set(model_group, &lane(deployment_id), at, until);
            }
            EventKind::CooldownEnd { deployment_id, .. } => {
                self.plots.cooldown_end(&lane(deployment_id), at);
            }
            EventKind::HalfOpen {
                model_group,
                deployment_id,
            } => self.plots.half_open(model_group, &lane(deployment_id), at),
            EventKind::Recovered { deployment_id, .. } => {
                self.plots.recovered(&lane(deployment_id), at);
            }
            _ => {}
        }
    }
}
