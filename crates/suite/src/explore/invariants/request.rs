//! One request's events, read by kind: [`RequestCheck`] is the [`EventVisitor`] the checker
//! hands each event of a request to. Each method says which checks that kind of event meets,
//! in the order they run (the first violation a run reports depends on it); the checks
//! themselves live with their invariant: `consistent` ([`Invariant::EventsConsistent`]),
//! `attempt_bound` ([`Invariant::AttemptBound`]), `commit`
//! ([`Invariant::NoRetryAfterCommit`]), `timeouts` ([`Invariant::NoWaitPastDeadline`]) and
//! `deadline` ([`Invariant::WithinWalkDeadline`]).
//!
//! Separate from the families so a kind of event the checks do not read costs nothing here
//! (the visitor's default), and a family's rule changes in one small method.

use std::sync::Arc;
use std::time::Duration;

use routersim_engine::event::{
    EventVisitor, FallbackLevel, GiveUpReason, RoutingEvent, WaitReason,
};
use routersim_engine::failure::FailureKind;
use routersim_engine::stream::{BreakKind, StreamStats};
use tokio::time::Instant;

use super::bounds::Bounds;
use super::invariant::Invariant;
use super::state::RequestState;
use super::verdict::Verdict;

/// One event of request `id`, checked: where to report, what the settings allow, the
/// request as its earlier events showed it, and the event's time and kind name.
pub(super) struct RequestCheck<'c, 'v> {
    /// Where violations go.
    pub(super) verdict: &'c mut Verdict<'v>,
    /// What the settings (and the profile) allow.
    pub(super) bounds: &'c Bounds,
    /// The request so far; the checks update it.
    pub(super) req: &'c mut RequestState,
    /// The request's id.
    pub(super) id: u64,
    /// When the event happened.
    pub(super) at: Instant,
    /// The event's kind, as events name it (`order_fallback`).
    pub(super) name: &'static str,
}

impl Verdict<'_> {
    /// Checks one event of request `id` (`req`: the request so far); true when it ended the
    /// request.
    pub(super) fn on_request(
        &mut self,
        bounds: &Bounds,
        id: u64,
        event: &RoutingEvent,
        req: &mut RequestState,
    ) -> bool {
        event.kind.visit(&mut RequestCheck {
            verdict: self,
            bounds,
            req,
            id,
            at: event.at,
            name: event.kind.name(),
        })
    }
}

impl RequestCheck<'_, '_> {
    /// Reports a violation by this request at this event.
    pub(super) fn fail(&mut self, invariant: Invariant, detail: String) {
        self.verdict
            .fail(invariant, Some(self.id), Some(self.at), detail);
    }
}

/// `what`, said of something that came after a stream delivered content.
pub(super) fn after_commit(what: &str) -> String {
    format!("{what} after the stream delivered content")
}

impl<'e> EventVisitor<'e> for RequestCheck<'_, '_> {
    /// Whether the event ended the request (`request_end`).
    type Output = bool;

    fn request_end(
        &mut self,
        _model: &'e Arc<str>,
        _final_model_group: &'e Arc<str>,
        _final_deployment_id: Option<&'e Arc<str>>,
        _failure: Option<FailureKind>,
        _status: Option<u16>,
        attempts: u32,
        retries: u32,
        fallbacks: u32,
        _attempted_fallbacks: u32,
        start: Instant,
        stream: Option<StreamStats>,
    ) -> bool {
        self.nothing_open_at_the_end();
        self.counts_match_the_events(attempts, retries, fallbacks);
        self.attempts_within_bound_at_the_end(attempts);
        self.no_unstreamed_attempt_over_timeout(stream.is_some());
        self.within_walk_deadline(start, stream.is_some());
        true
    }

    fn attempt_start(
        &mut self,
        attempt: u32,
        _model_group: &'e Arc<str>,
        deployment_id: &'e Arc<str>,
        _fallback_depth: u32,
        _max_tokens: Option<u32>,
    ) -> bool {
        self.note_walk_attempt(attempt);
        let hedge = self.starts_a_hedge();
        self.attempt_starts_in_turn(attempt, hedge);
        self.req.attempts += 1;
        self.attempt_within_bound(deployment_id);
        self.attempt_after_commit(attempt, deployment_id);
        self.attempt_after_its_wait(attempt);
        let open = Some((attempt, self.at, deployment_id.clone()));
        if hedge {
            self.req.hedge_attempt = open;
        } else {
            self.req.open_attempt = open;
        }
        self.req.last_chunk = None;
        false
    }

    fn attempt_end(
        &mut self,
        attempt: u32,
        start: Instant,
        _model_group: &'e Arc<str>,
        deployment_id: &'e Arc<str>,
        _failure: Option<FailureKind>,
        _status: Option<u16>,
        _retry_after: Option<Duration>,
        _wait: Duration,
        _fallback_depth: u32,
    ) -> bool {
        self.attempt_ends_the_open_one(attempt, start);
        self.note_attempt_over_timeout(attempt, start, deployment_id);
        self.attempt_ends_before_a_stall(attempt, deployment_id);
        self.req.last_chunk = None;
        false
    }

    fn wait(&mut self, duration: Duration, reason: WaitReason) -> bool {
        self.note_walk_wait(duration);
        self.wait_within_its_cap(duration, reason);
        self.req.wait_until = Some(self.at + duration);
        false
    }

    fn retry(
        &mut self,
        model_group: &'e Arc<str>,
        _failure: FailureKind,
        retry: u32,
        budget: u32,
    ) -> bool {
        self.req.retries += 1;
        self.no_failover_after_commit(|| format!("retry {retry} in {model_group}"));
        self.retry_within_budget(retry, budget, model_group);
        false
    }

    fn give_up(
        &mut self,
        _model_group: &'e Arc<str>,
        _failure: FailureKind,
        reason: GiveUpReason,
    ) -> bool {
        self.give_up_says_content_was_delivered(reason);
        false
    }

    fn order_fallback(
        &mut self,
        _model_group: &'e Arc<str>,
        _from_order: Option<u32>,
        _to_order: Option<u32>,
    ) -> bool {
        let name = self.name;
        self.no_failover_after_commit(|| name.to_string());
        false
    }

    fn weighted_failover(&mut self, _model_group: &'e Arc<str>, _excluded: &'e Arc<str>) -> bool {
        let name = self.name;
        self.no_failover_after_commit(|| name.to_string());
        false
    }

    fn fallback(
        &mut self,
        source: &'e Arc<str>,
        target: &'e Arc<str>,
        _order: u32,
        depth: u32,
        _level: FallbackLevel,
        _failure: FailureKind,
    ) -> bool {
        self.req.fallbacks += 1;
        self.no_failover_after_commit(|| format!("fallback {source} -> {target}"));
        self.fallback_within_bounds(source, target, depth);
        false
    }

    fn stream_chunk(
        &mut self,
        _tokens: u32,
        _gap_before: Option<Duration>,
        _inner_gap: Duration,
    ) -> bool {
        let Some(open) = self.chunk_inside_an_attempt() else {
            return false;
        };
        self.chunk_in_time(open);
        self.req.last_chunk = Some(self.at);
        self.req.content = true;
        false
    }

    fn stream_break(
        &mut self,
        _model_group: &'e Arc<str>,
        deployment_id: &'e Arc<str>,
        _failure: FailureKind,
        _how: BreakKind,
        _tokens_so_far: u32,
        after_content: bool,
    ) -> bool {
        self.break_says_what_the_caller_got(deployment_id, after_content);
        false
    }

    fn stream_continued(
        &mut self,
        _from_group: &'e Arc<str>,
        _from_deployment: &'e Arc<str>,
        _to_group: &'e Arc<str>,
        to_deployment: &'e Arc<str>,
        _prefill_tokens: u32,
    ) -> bool {
        self.continuation_allowed(to_deployment);
        self.req.continuations += 1;
        self.req.continuation_pending = Some(to_deployment.clone());
        false
    }

    fn hedged(
        &mut self,
        _model_group: &'e Arc<str>,
        _primary: &'e Arc<str>,
        _hedge: &'e Arc<str>,
        _delay: Duration,
        _extra_input_tokens: u32,
        _extra_cost_usd: f64,
    ) -> bool {
        self.req.racing = true;
        self.req.hedges += 1;
        false
    }

    fn hedge_end(
        &mut self,
        _model_group: &'e Arc<str>,
        _winner: &'e Arc<str>,
        _hedge_won: bool,
    ) -> bool {
        // The race's loser was cancelled: it never ends.
        self.req.cancelled += u32::from(self.req.open_attempt.take().is_some())
            + u32::from(self.req.hedge_attempt.take().is_some());
        self.req.racing = false;
        false
    }
}
