//! [`DeploymentStats`]: what one deployment's fake counted.
//!
//! [`DeploymentStats::calls`] counts calls as they start; `ok`/`failures` count outcomes as
//! they are returned (a call the router abandons on its deadline counts in `calls` only). An
//! opened stream counts in `ok` and `streams`, and in `stream_faults` when a stream fault was
//! planned for it (whether or not the reader got that far). A quota rejection counts in
//! `failures` (as `rate_limit`) and in `quota_rejections`.
//!
//! Separate because the counting rules are the provider's side of a report, kept apart from
//! how an outcome is decided.

use std::collections::BTreeMap;

use routersim_engine::failure::{FailureKind, ProviderFailure};
use routersim_engine::request::Completion;

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

    /// A stream opened (a success), with a stream fault planned or not.
    pub(super) fn count_stream(&mut self, fault_planned: bool) {
        self.ok += 1;
        self.streams += 1;
        if fault_planned {
            self.stream_faults += 1;
        }
    }

    /// A call's result returned after its latency.
    pub(super) fn count_result(
        &mut self,
        result: &Result<Completion, ProviderFailure>,
        quota_rejected: bool,
    ) {
        if quota_rejected {
            self.quota_rejections += 1;
        }
        match result {
            Ok(_) => self.ok += 1,
            Err(failure) => *self.failures.entry(failure.kind).or_default() += 1,
        }
    }
}
