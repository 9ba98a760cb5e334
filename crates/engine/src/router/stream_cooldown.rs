//! A broken stream's failure whose cooldown lands late.
//!
//! LiteLLM 1.110.2 records the outcome of a stream that broke (even before its first chunk,
//! which is read inside the attempt) from a background task: the cooldown entry is written
//! after the instant retry has already picked again, so a stream 429 before the first chunk
//! re-picks the same deployment (a call that fails before its stream opens, and the
//! non-stream path, write it first and exclude it). Under rules that say so
//! ([`StreamRules::cooldown_timing`]) the failure handler hears of a broken stream at the
//! request's next pick, before the request waits (time moves on: the task has run), or at the
//! request's end, whichever comes first.
//!
//! [`StreamRules::cooldown_timing`]: crate::stream_rules::StreamRules::cooldown_timing

use super::core::Router;
use super::health::FailureReport;
use super::run::{DeferredFailure, RequestRun};
use crate::clock::Clock;
use crate::provider::Provider;
use crate::stream_rules::CooldownTiming;

impl<P: Provider, C: Clock> Router<P, C> {
    /// Hands `report` to the failure handler now, or keeps it for later when the rules defer
    /// the cooldown of a stream that broke (`broken`).
    pub(super) fn report_or_defer(
        &self,
        report: FailureReport<'_>,
        broken: bool,
        run: &mut RequestRun,
    ) {
        self.flush_deferred(run);
        if self.stream_rules.cooldown_timing(broken) == CooldownTiming::Now {
            self.report_failure(report);
            return;
        }
        run.deferred_failure = Some(Box::new(DeferredFailure {
            deployment: report.deployment,
            group_size: report.group_size,
            failure: report.failure.clone(),
            origin: report.origin,
            retry_after: report.retry_after,
            now: report.now,
            request_id: report.request_id,
        }));
    }

    /// The failure handler hears of a deferred failure, if one is kept.
    pub(super) fn flush_deferred(&self, run: &mut RequestRun) {
        let Some(d) = run.deferred_failure.take() else {
            return;
        };
        self.report_failure(FailureReport {
            deployment: d.deployment,
            group_size: d.group_size,
            failure: &d.failure,
            origin: d.origin,
            retry_after: d.retry_after,
            now: d.now,
            request_id: d.request_id,
        });
    }
}
