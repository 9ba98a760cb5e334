//! A broken stream's failure whose cooldown lands late.
//!
//! LiteLLM 1.110.2 records the outcome of a stream that broke (even before its first chunk,
//! which is read inside the attempt) from a background task: the cooldown entry is written
//! after the instant retry has already picked again, so a stream 429 before the first chunk
//! re-picks the same deployment (a call that fails before its stream opens, and the
//! non-stream path, write it first and exclude it). Under rules that say so
//! ([`StreamRules::cooldown_timing`]) the failure handler hears of a broken stream at the
//! request's next pick, before the request waits (time moves on: the task has run), or at the
//! request's end, whichever comes first. A group whose streams all fail so spends one call
//! more than its non-streamed twin: a2, a2 (the first failure lands after this pick), a1, then
//! the fallback (stream oracle 98; 99 with Retry-After: the same calls).
//!
//! The source (LiteLLM 1.110.2, `site-packages/litellm/`):
//! - `router_rust/core.py` 5256-5343 (`_routed_attempt`): the provider call (`host.invoke`,
//!   5309) then `open_attempt_stream` (`router_rust/invoke/streaming.py` 1957-1967), which
//!   reads the first chunk inside the attempt. An error of the call itself goes back to the
//!   core unrecorded (5336-5340): the core writes its cooldown before it picks again (stream
//!   oracle 80). An error while the first chunk is read goes to
//!   `StreamAttempt.report_first_chunk_failure` (5342; `streaming.py` 238-242) and back to the
//!   core as `"recorded": True`: the core writes nothing;
//! - `report_first_chunk_failure` hands `report_stream_failure` (`router_rust/surface/health.py`
//!   426-436: counted, cooled by the rules) to `_record_in_background` (`streaming.py` 269-281),
//!   an asyncio task: it runs at the event loop's next turn. Unlike a failure after the stream
//!   opened (`failure_recorded`, `streaming.py` 1393 and 1823), nothing waits for it before the
//!   retry's pick.
//!
//! The recorded traces re-pick every time because the stream oracle records a backoff without
//! sleeping: nothing yields to the event loop between the failure and the retry's pick. In
//! LiteLLM itself the backoff is `PythonHost.sleep`, `asyncio.sleep(seconds)`
//! (`router_python_host.py` 116-117), a turn of the loop even for 0 s, and the task usually
//! lands before the pick (docs/streams.md gives the measured share); this rule follows the
//! recorded traces.
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
