//! Per-replica counts of a fleet run (`router.replicas` above 1): `summary.json`'s
//! `by_replica` and the `replica` column of the traces.
//!
//! Separate because only fleet runs pay for it: a single-router run has no fold at all, so its
//! files stay byte-identical. The events themselves carry no replica (the engine knows nothing
//! of fleets); the simulation tags each router's sink, and the recorder is told the replica
//! just before each of that router's events ([`super::Recorder::set_replica`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use routersim_engine::event::{EventKind, RoutingEvent};
use tokio::time::Instant;

use crate::summary::ReplicaSummary;

/// Every replica's counts, and which replica the event being recorded came from.
#[derive(Debug)]
pub(super) struct ReplicaFold {
    /// The replica of the event being recorded.
    pub(super) current: u32,
    replicas: Vec<Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    summary: ReplicaSummary,
    /// Each deployment this replica holds cooled, with its deadline (for `cooldown_periods`).
    cooled_until: BTreeMap<Arc<str>, Instant>,
}

impl ReplicaFold {
    /// A fold for `replicas` replicas.
    pub(super) fn new(replicas: u32) -> Self {
        Self {
            current: 0,
            replicas: (0..replicas)
                .map(|replica| Counts {
                    summary: ReplicaSummary {
                        replica,
                        ..ReplicaSummary::default()
                    },
                    cooled_until: BTreeMap::new(),
                })
                .collect(),
        }
    }

    /// Counts one event against the current replica.
    pub(super) fn fold(&mut self, event: &RoutingEvent) {
        let Some(counts) = self.replicas.get_mut(self.current as usize) else {
            return;
        };
        let s = &mut counts.summary;
        match &event.kind {
            EventKind::RequestEnd {
                failure, attempts, ..
            } => {
                s.requests += 1;
                s.attempts += u64::from(*attempts);
                if failure.is_none() {
                    s.ok += 1;
                } else {
                    s.failed += 1;
                }
            }
            EventKind::CooldownSet {
                deployment_id,
                until,
                ..
            } => {
                s.cooldown_sets += 1;
                match counts.cooled_until.get_mut(deployment_id) {
                    Some(deadline) if event.at < *deadline => {
                        *deadline = (*deadline).max(*until);
                    }
                    _ => {
                        s.cooldown_periods += 1;
                        counts.cooled_until.insert(deployment_id.clone(), *until);
                    }
                }
            }
            EventKind::CooldownEnd { deployment_id, .. }
            | EventKind::Recovered { deployment_id, .. } => {
                counts.cooled_until.remove(deployment_id);
            }
            _ => {}
        }
    }

    /// Whether a replica other than the current one holds `deployment` cooled past `at`.
    pub(super) fn cooled_elsewhere(&self, deployment: &str, at: Instant) -> bool {
        self.replicas.iter().enumerate().any(|(i, c)| {
            i != self.current as usize && c.cooled_until.get(deployment).is_some_and(|&u| u > at)
        })
    }

    /// `by_replica`, in replica order.
    pub(super) fn summary(&self) -> Vec<ReplicaSummary> {
        self.replicas.iter().map(|c| c.summary.clone()).collect()
    }
}
