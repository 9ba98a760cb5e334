//! [`DeploymentState`]: one deployment's fake — its spec, the fault windows that target it
//! (sorted by what they do), its random streams, its quota and its counters.
//!
//! # Randomness
//! Per deployment `id`: latencies and times to first token draw from
//! `seeded_rng(seed, "provider/<id>/latency")`, fault `k` (its index in the file) draws its
//! probability from `seeded_rng(seed, "provider/<id>/fault/<k>")`, a ranged `inter_token`
//! from `provider/<id>/inter_token` (once per stream) and a ranged `output_tokens` from
//! `provider/<id>/output_tokens`, so no stream shifts another. Fixed values draw nothing.
//!
//! Separate because this is the state a decision reads and advances; the order of the
//! decision itself is in `decide`.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use routersim_engine::config::Deployment;
use routersim_engine::failure::{Ambiguity, ProviderFailure};

use super::stats::DeploymentStats;
use crate::quota::Quota;
use crate::rng::seeded_rng;
use crate::spec::{
    ErrorSpec, FaultEffect, FaultSpec, FaultTarget, LatencySpec, PreparedLatency, ProviderSpec,
};

/// One fault window as one deployment sees it.
#[derive(Debug)]
pub(super) struct Window {
    pub fault: FaultSpec,
    rng: RefCell<ChaCha8Rng>,
}

impl Window {
    /// Whether the window is open at `t` and, if so, its probability draw fires (a closed
    /// window draws nothing).
    pub(super) fn fires(&self, t: Duration) -> bool {
        self.fault.active_at(t) && self.rng.borrow_mut().random_bool(self.fault.probability)
    }

    /// The failure `spec` gives now; a connection lost after the send draws, from this
    /// window's generator, whether the provider executed the request.
    pub(super) fn failure(&self, spec: &ErrorSpec, now_unix_ms: i64) -> ProviderFailure {
        let failure = spec.failure(now_unix_ms);
        match spec.lost_after_send {
            Some(p) => failure.with_ambiguity(Ambiguity {
                executed: Some(self.rng.borrow_mut().random_bool(p)),
            }),
            None => failure,
        }
    }
}

/// One deployment's fake.
#[derive(Debug)]
pub(super) struct DeploymentState {
    pub id: Arc<str>,
    pub spec: ProviderSpec,
    pub next_script: Cell<usize>,
    /// Error windows, in file order.
    pub errors: Vec<Window>,
    /// Slowdown windows, in file order.
    pub slowdowns: Vec<Window>,
    /// Stream-fault windows, in file order.
    pub stream_faults: Vec<Window>,
    /// `invalid_response` windows, in file order.
    pub invalid: Vec<Window>,
    /// `spec.latency`, `spec.ttft` and `spec.inter_token`, ready to draw from: one of them is
    /// drawn on every call (a fault's own latency is drawn from its spec).
    pub latency: PreparedLatency,
    pub ttft: Option<PreparedLatency>,
    pub inter_token: PreparedLatency,
    pub latency_rng: RefCell<ChaCha8Rng>,
    pub inter_token_rng: RefCell<ChaCha8Rng>,
    pub output_tokens_rng: RefCell<ChaCha8Rng>,
    /// The provider's own `rpm_limit` / `tpm_limit` buckets.
    pub quota: RefCell<Option<Quota>>,
    pub stats: RefCell<DeploymentStats>,
}

impl DeploymentState {
    /// The fake of deployment `d`: its entry in `specs` (the default when it has none), and
    /// the `faults` that target it, each with its own random stream.
    pub(super) fn new(
        d: &Deployment,
        specs: &BTreeMap<String, ProviderSpec>,
        faults: &[FaultSpec],
        seed: u64,
    ) -> Self {
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
            latency: spec.latency.prepare(),
            ttft: spec.ttft.as_ref().map(LatencySpec::prepare),
            inter_token: spec.inter_token.prepare(),
            spec,
            next_script: Cell::new(0),
            errors,
            slowdowns,
            stream_faults,
            invalid,
            latency_rng: RefCell::new(seeded_rng(seed, &format!("provider/{id}/latency"))),
            inter_token_rng: RefCell::new(seeded_rng(seed, &format!("provider/{id}/inter_token"))),
            output_tokens_rng: RefCell::new(seeded_rng(
                seed,
                &format!("provider/{id}/output_tokens"),
            )),
            stats: RefCell::new(DeploymentStats::default()),
            id,
        }
    }
}
