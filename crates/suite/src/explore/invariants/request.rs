//! The invariants over one request's events: attempt numbering, waits, retry and fallback
//! bounds, commitment after streamed content, and deadlines.
//!
//! Separate because it is one long match over a request's event kinds, each arm an
//! invariant.

use routersim_engine::alternatives::AlternativeEvent;
use routersim_engine::event::{EventKind, GiveUpReason, RoutingEvent, WaitReason};

use super::bounds::Bounds;
use super::invariant::{Invariant, TIMER_SLACK};
use super::state::RequestState;
use super::verdict::{Verdict, secs};

impl Verdict<'_> {
    /// One event of request `id`; true when it ended the request.
    #[expect(
        clippy::too_many_lines,
        reason = "one match over a request's event kinds, each arm an invariant; next to split"
    )]
    pub(super) fn on_request(
        &mut self,
        bounds: &Bounds,
        id: u64,
        event: &RoutingEvent,
        req: &mut RequestState,
    ) -> bool {
        let at = event.at;
        let name = event.kind.name();
        let (id, at_opt) = (Some(id), Some(at));
        let after_commit = |what: &str| format!("{what} after the stream delivered content");
        match &event.kind {
            EventKind::AttemptStart {
                attempt,
                deployment_id,
                ..
            } => {
                // A hedge races the open attempt: the one overlap allowed.
                let hedge = req.racing && req.open_attempt.is_some() && req.hedge_attempt.is_none();
                if let Some((open, _, _)) = &req.open_attempt
                    && !hedge
                {
                    let detail = format!("attempt {attempt} starts before attempt {open} ended");
                    self.fail(Invariant::EventsConsistent, id, at_opt, detail);
                }
                if *attempt != req.attempts + 1 {
                    let detail = format!(
                        "attempt {attempt} starts after {} attempt(s): attempts count from 1",
                        req.attempts
                    );
                    self.fail(Invariant::EventsConsistent, id, at_opt, detail);
                }
                req.attempts += 1;
                if req.attempts > bounds.max_attempts + req.hedges {
                    let detail = format!(
                        "attempt {} on {deployment_id}: the settings allow at most {}",
                        req.attempts, bounds.max_attempts
                    );
                    self.fail(Invariant::AttemptBound, id, at_opt, detail);
                }
                if req.content {
                    if let Some(announced) = req.continuation_pending.take() {
                        if announced != *deployment_id {
                            let detail = format!(
                                "the continuation announced on {announced} starts on \
                                 {deployment_id}"
                            );
                            self.fail(Invariant::NoRetryAfterCommit, id, at_opt, detail);
                        }
                    } else {
                        let detail = after_commit(&format!(
                            "attempt {attempt} on {deployment_id}, not a continuation,"
                        ));
                        self.fail(Invariant::NoRetryAfterCommit, id, at_opt, detail);
                    }
                }
                if let Some(until) = req.wait_until.take()
                    && at < until
                {
                    let detail = format!(
                        "attempt {attempt} starts {} before the wait before it is over",
                        secs(until - at)
                    );
                    self.fail(Invariant::EventsConsistent, id, at_opt, detail);
                }
                if hedge {
                    req.hedge_attempt = Some((*attempt, at, deployment_id.clone()));
                } else {
                    req.open_attempt = Some((*attempt, at, deployment_id.clone()));
                }
                req.last_chunk = None;
            }
            EventKind::AttemptEnd {
                attempt,
                start,
                deployment_id,
                ..
            } => {
                let is = |open: &Option<(u32, tokio::time::Instant, std::sync::Arc<str>)>| {
                    open.as_ref()
                        .is_some_and(|(n, s, _)| n == attempt && s == start)
                };
                if req.racing && is(&req.hedge_attempt) {
                    req.hedge_attempt = None;
                } else if req.racing && is(&req.open_attempt) {
                    // The hedge, if any, is the race's open attempt now.
                    req.open_attempt = req.hedge_attempt.take();
                } else {
                    match req.open_attempt.take() {
                        Some((open, open_start, _)) if open == *attempt && open_start == *start => {
                        }
                        other => {
                            let detail = format!(
                                "attempt_end of attempt {attempt}, but the open attempt is {:?}",
                                other.map(|(n, _, d)| (n, d))
                            );
                            self.fail(Invariant::EventsConsistent, id, at_opt, detail);
                        }
                    }
                }
                let took = at.saturating_duration_since(*start);
                let limit = bounds
                    .deployments
                    .get(deployment_id)
                    .and_then(|d| d.timeout);
                if let Some(limit) = limit
                    && took > limit + TIMER_SLACK
                    && req.over_timeout.is_none()
                {
                    req.over_timeout = Some((*attempt, took, limit));
                }
                if let (Some(last), Some(stall)) = (req.last_chunk, bounds.stall_timeout)
                    && at.saturating_duration_since(last) > stall + TIMER_SLACK
                {
                    let detail = format!(
                        "attempt {attempt} on {deployment_id} ends {} after its last chunk: \
                         the stall timeout is {}",
                        secs(at - last),
                        secs(stall)
                    );
                    self.fail(Invariant::NoWaitPastDeadline, id, at_opt, detail);
                }
                req.last_chunk = None;
            }
            EventKind::StreamChunk { .. } => {
                let Some((attempt, start, deployment)) = req.open_attempt.clone() else {
                    let detail = "stream_chunk outside any attempt".to_string();
                    self.fail(Invariant::EventsConsistent, id, at_opt, detail);
                    return false;
                };
                match req.last_chunk {
                    None => {
                        let first_token = bounds
                            .deployments
                            .get(&deployment)
                            .and_then(|d| d.stream_timeout);
                        if let Some(limit) = first_token {
                            let slack = bounds.stall_timeout.unwrap_or_default();
                            let took = at.saturating_duration_since(start);
                            if took > limit + slack + TIMER_SLACK {
                                let detail = format!(
                                    "attempt {attempt} on {deployment}: first content after {}, \
                                     stream_timeout {} (+ stall slack {})",
                                    secs(took),
                                    secs(limit),
                                    secs(slack)
                                );
                                self.fail(Invariant::NoWaitPastDeadline, id, at_opt, detail);
                            }
                        }
                    }
                    Some(last) => {
                        if let Some(stall) = bounds.stall_timeout
                            && at.saturating_duration_since(last) > stall + TIMER_SLACK
                        {
                            let detail = format!(
                                "attempt {attempt} on {deployment}: {} between chunks, stall \
                                 timeout {}",
                                secs(at - last),
                                secs(stall)
                            );
                            self.fail(Invariant::NoWaitPastDeadline, id, at_opt, detail);
                        }
                    }
                }
                req.last_chunk = Some(at);
                req.content = true;
            }
            EventKind::Wait { duration, reason } => {
                let ok = match reason {
                    WaitReason::RetryAfter => {
                        !duration.is_zero() && *duration <= bounds.retry_after_cap
                    }
                    WaitReason::Backoff => *duration < bounds.backoff_cap,
                };
                if !ok {
                    let cap = match reason {
                        WaitReason::RetryAfter => {
                            format!("(0, {}]", secs(bounds.retry_after_cap))
                        }
                        WaitReason::Backoff => format!("below {}", secs(bounds.backoff_cap)),
                    };
                    let detail = format!(
                        "a {} wait of {}: it must be {cap}",
                        reason.as_str(),
                        secs(*duration)
                    );
                    self.fail(Invariant::NoWaitPastDeadline, id, at_opt, detail);
                }
                req.wait_until = Some(at + *duration);
            }
            EventKind::Retry {
                retry,
                budget,
                model_group,
                ..
            } => {
                req.retries += 1;
                if req.content {
                    let detail = after_commit(&format!("retry {retry} in {model_group}"));
                    self.fail(Invariant::NoRetryAfterCommit, id, at_opt, detail);
                }
                if retry > budget || *budget > bounds.max_retry_budget {
                    let detail = format!(
                        "retry {retry} of budget {budget} in {model_group} (the largest budget \
                         the settings give is {})",
                        bounds.max_retry_budget
                    );
                    self.fail(Invariant::AttemptBound, id, at_opt, detail);
                }
            }
            EventKind::GiveUp { reason, .. } => {
                if req.content
                    && !matches!(
                        reason,
                        GiveUpReason::StreamContentDelivered
                            | GiveUpReason::NoContinuationDeployment
                    )
                {
                    let detail = after_commit(&format!("give_up {}", reason.as_str()));
                    self.fail(Invariant::NoRetryAfterCommit, id, at_opt, detail);
                }
            }
            EventKind::Fallback {
                source,
                target,
                depth,
                ..
            } => {
                req.fallbacks += 1;
                if req.content {
                    let detail = after_commit(&format!("fallback {source} -> {target}"));
                    self.fail(Invariant::NoRetryAfterCommit, id, at_opt, detail);
                }
                if *depth > bounds.max_fallback_depth || req.fallbacks > bounds.max_fallback_hops {
                    let detail = format!(
                        "fallback hop {} ({source} -> {target}) at depth {depth}: max_fallbacks \
                         is {}, and there are {} other group(s)",
                        req.fallbacks, bounds.max_fallback_depth, bounds.max_fallback_hops
                    );
                    self.fail(Invariant::AttemptBound, id, at_opt, detail);
                }
            }
            EventKind::OrderFallback { .. } | EventKind::WeightedFailover { .. } => {
                if req.content {
                    let detail = after_commit(name);
                    self.fail(Invariant::NoRetryAfterCommit, id, at_opt, detail);
                }
            }
            EventKind::StreamBreak {
                after_content,
                deployment_id,
                ..
            } => {
                if req.content && !after_content {
                    let detail = format!(
                        "stream_break on {deployment_id} says after_content: false, but content \
                         reached the caller"
                    );
                    self.fail(Invariant::NoRetryAfterCommit, id, at_opt, detail);
                }
                if bounds.commits_at_content && *after_content && !req.content {
                    let detail = format!(
                        "stream_break on {deployment_id} says after_content: true, but no \
                         content reached the caller (a retry was still allowed)"
                    );
                    self.fail(Invariant::EventsConsistent, id, at_opt, detail);
                }
            }
            EventKind::StreamContinued { to_deployment, .. } => {
                if !req.content {
                    let detail = "stream_continued before any content".to_string();
                    self.fail(Invariant::EventsConsistent, id, at_opt, detail);
                }
                if !bounds.continuation || req.continued {
                    let detail = format!(
                        "stream_continued on {to_deployment}: {}",
                        if req.continued {
                            "a second continuation"
                        } else {
                            "continuation is off in the settings"
                        }
                    );
                    self.fail(Invariant::NoRetryAfterCommit, id, at_opt, detail);
                }
                req.continued = true;
                req.continuation_pending = Some(to_deployment.clone());
            }
            EventKind::RequestEnd {
                attempts,
                retries,
                fallbacks,
                stream,
                ..
            } => {
                if let Some((open, _, _)) = &req.open_attempt {
                    let detail = format!("request_end while attempt {open} is open");
                    self.fail(Invariant::EventsConsistent, id, at_opt, detail);
                }
                let seen = (req.attempts - req.cancelled, req.retries, req.fallbacks);
                if (*attempts, *retries, *fallbacks) != seen {
                    let detail = format!(
                        "request_end counts {attempts} attempt(s), {retries} retry(ies), \
                         {fallbacks} fallback(s); the events showed {}, {}, {}",
                        seen.0, seen.1, seen.2
                    );
                    self.fail(Invariant::EventsConsistent, id, at_opt, detail);
                }
                if *attempts > bounds.max_attempts + req.hedges {
                    let detail = format!(
                        "{attempts} attempts: the settings allow at most {}",
                        bounds.max_attempts
                    );
                    self.fail(Invariant::AttemptBound, id, at_opt, detail);
                }
                if let Some((attempt, took, limit)) = req.over_timeout
                    && stream.is_none()
                {
                    let detail = format!(
                        "attempt {attempt} (not streamed) took {}: its timeout is {}",
                        secs(took),
                        secs(limit)
                    );
                    self.fail(Invariant::NoWaitPastDeadline, id, at_opt, detail);
                }
                return true;
            }
            EventKind::AllCooled { .. }
            | EventKind::AmbiguousOutcome { .. }
            | EventKind::ClientTry { .. }
            | EventKind::ResponseCost { .. }
            | EventKind::CooldownSet { .. }
            | EventKind::CooldownEnd { .. }
            | EventKind::HalfOpen { .. }
            | EventKind::Recovered { .. }
            | EventKind::ProbeOk { .. }
            | EventKind::ProbeFailed { .. }
            | EventKind::RouteFiltered { .. }
            | EventKind::ValidationRejected { .. } => {}
            EventKind::Alternative(AlternativeEvent::Hedged { .. }) => {
                req.racing = true;
                req.hedges += 1;
            }
            EventKind::Alternative(AlternativeEvent::HedgeEnd { .. }) => {
                // The race's loser was cancelled: it never ends.
                req.cancelled += u32::from(req.open_attempt.take().is_some())
                    + u32::from(req.hedge_attempt.take().is_some());
                req.racing = false;
            }
            EventKind::Alternative(
                AlternativeEvent::Ejected { .. } | AlternativeEvent::Unejected { .. },
            ) => {}
        }
        false
    }
}
