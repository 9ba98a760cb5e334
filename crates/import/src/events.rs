//! A request of the log as the engine's events, so the imported report comes out of the same
//! `Recorder` as a run's (`requests.csv`, `attempts.csv`, `summary.json`, the plots) and `diff`
//! compares it with a replay.
//!
//! - Every row that reached a provider is an `AttemptStart`/`AttemptEnd` pair; a stream cut
//!   after content also a `StreamBreak`. A row where the router found every deployment
//!   cooling is an `AllCooled` of the group asked for, not an attempt.
//! - Between two rows of a request: a `Retry` when they are in the same group, a `Fallback`
//!   when the group changed.
//! - `RequestEnd`: the last row's outcome; retries and fallbacks as the router's own counts say
//!   (LiteLLM's `x-litellm-attempted-*`, the spend logs' `attempted_*`) where the log has them,
//!   else as the rows show; attempts at least `1 + retries + fallbacks`, so attempts the log
//!   does not date are still counted as attempts.

use std::sync::Arc;
use std::time::Duration;

use routersim_engine::event::{EventKind, FallbackLevel, RoutingEvent};
use routersim_engine::failure::FailureKind;
use routersim_engine::stream::{BreakKind, StreamOutcome, StreamStats};
use tokio::time::Instant;

use crate::call::{Call, Outcome};
use crate::requests::Request;

/// The clock of the imported report: `base` stands for Unix second `t0`.
#[derive(Clone, Copy, Debug)]
pub struct Timeline {
    /// The report's start.
    pub base: Instant,
    /// The log's first start, Unix seconds.
    pub t0: f64,
}

impl Timeline {
    /// The instant of Unix second `t`.
    pub fn at(&self, t: f64) -> Instant {
        self.base + Duration::from_secs_f64((t - self.t0).max(0.0))
    }
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s.max(0.0))
}

/// Where a request's walk over its rows is.
#[derive(Default)]
struct Walk {
    /// The previous row's outcome, end and group.
    previous: Option<(Outcome, f64, Arc<str>)>,
    retries: u32,
    fallbacks: u32,
    depth: u32,
    attempt: u32,
}

impl Walk {
    /// The `Retry` or `Fallback` from the previous row to a row in `group`.
    fn hop(&mut self, group: &Arc<str>) -> Option<EventKind> {
        let (outcome, _, from) = self.previous.as_ref()?;
        let failure = outcome.failure().unwrap_or(FailureKind::ApiConnection);
        Some(if from == group {
            self.retries += 1;
            EventKind::Retry {
                model_group: group.clone(),
                failure,
                retry: self.retries,
                budget: 0,
            }
        } else {
            self.fallbacks += 1;
            self.depth += 1;
            EventKind::Fallback {
                source: from.clone(),
                target: group.clone(),
                order: 0,
                depth: self.depth,
                level: FallbackLevel::General,
                failure,
            }
        })
    }
}

/// The events of request `id`, in time order.
pub fn request_events(time: Timeline, id: u64, request: &Request) -> Vec<RoutingEvent> {
    let mut events = Vec::new();
    let request_id = Some(id);
    let push = |events: &mut Vec<RoutingEvent>, at: Instant, kind: EventKind| {
        events.push(RoutingEvent {
            at,
            request_id,
            kind,
        });
    };
    let first = &request.calls[0];
    let model = first.requested_group().clone();
    let provider_rows = request
        .calls
        .iter()
        .filter(|c| c.outcome.reached_a_provider())
        .count();
    let last = request.calls.last().unwrap_or(first);
    let header_attempts = {
        let r = last.attempted_retries.unwrap_or(0);
        let f = last.attempted_fallbacks.unwrap_or(0);
        1 + r + f
    };
    let total = u32::try_from(provider_rows)
        .unwrap_or(u32::MAX)
        .max(header_attempts);
    let mut walk = Walk::default();
    for (n, call) in request.calls.iter().enumerate() {
        let group = if call.outcome.reached_a_provider() {
            call.model_group.clone()
        } else {
            call.requested_group().clone()
        };
        if let Some(kind) = walk.hop(&group) {
            push(&mut events, time.at(call.start), kind);
        }
        if !call.outcome.reached_a_provider() {
            let kind = EventKind::AllCooled {
                model_group: group.clone(),
                retry_after: Duration::ZERO,
            };
            push(&mut events, time.at(call.start), kind);
            walk.previous = Some((call.outcome, call.end, group));
            continue;
        }
        // The last row is the request's last attempt, however many the log does not date.
        walk.attempt = if n + 1 == request.calls.len() {
            total.max(walk.attempt + 1)
        } else {
            walk.attempt + 1
        };
        let wait = walk
            .previous
            .as_ref()
            .map_or(Duration::ZERO, |(_, end, _)| secs(call.start - end));
        attempt_events(
            &mut events,
            time,
            request_id,
            walk.attempt,
            call,
            walk.depth,
            wait,
        );
        walk.previous = Some((call.outcome, call.end, group));
    }
    let (retries, fallbacks) = (walk.retries, walk.fallbacks);
    let retries = last.attempted_retries.unwrap_or(retries);
    let fallbacks = last.attempted_fallbacks.unwrap_or(fallbacks);
    let attempts = if provider_rows == 0 {
        0
    } else {
        total.max(1 + retries + fallbacks)
    };
    let streamed = request.calls.iter().any(|c| c.stream == Some(true));
    let failure = last.outcome.failure();
    push(
        &mut events,
        time.at(last.end.max(request.arrival)),
        EventKind::RequestEnd {
            model,
            final_model_group: last.model_group.clone(),
            final_deployment_id: last
                .deployment
                .clone()
                .filter(|_| last.outcome.reached_a_provider()),
            failure,
            status: status_of(last),
            attempts,
            retries,
            fallbacks,
            attempted_fallbacks: fallbacks,
            start: time.at(request.arrival),
            stream: streamed.then(|| stream_stats(request, last)),
        },
    );
    events
}

/// The status of a row: 200 for a success, its error status, none for a connection failure.
fn status_of(call: &Call) -> Option<u16> {
    match call.outcome {
        Outcome::Ok | Outcome::StreamCut { .. } => Some(200),
        _ => call.status,
    }
}

fn stream_stats(request: &Request, last: &Call) -> StreamStats {
    let (outcome, delivered) = match last.outcome {
        Outcome::Ok => (StreamOutcome::Completed, last.output_tokens.unwrap_or(0)),
        Outcome::StreamCut { tokens, .. } => (StreamOutcome::BrokenAfterContent, tokens),
        _ => (StreamOutcome::BrokenBeforeContent, 0),
    };
    StreamStats {
        outcome: Some(outcome),
        ttft: last.first_token.map(|f| secs(f - request.arrival)),
        tokens_delivered: delivered,
        tokens_billed: delivered,
    }
}

fn attempt_events(
    events: &mut Vec<RoutingEvent>,
    time: Timeline,
    request_id: Option<u64>,
    attempt: u32,
    call: &Call,
    fallback_depth: u32,
    wait: Duration,
) {
    let deployment_id = call
        .deployment
        .clone()
        .unwrap_or_else(|| call.model_group.clone());
    let model_group = call.model_group.clone();
    let start = time.at(call.start);
    events.push(RoutingEvent {
        at: start,
        request_id,
        kind: EventKind::AttemptStart {
            attempt,
            model_group: model_group.clone(),
            deployment_id: deployment_id.clone(),
            fallback_depth,
            max_tokens: call.max_tokens,
        },
    });
    let end = time.at(call.end);
    if let Outcome::StreamCut { kind, tokens } = call.outcome {
        events.push(RoutingEvent {
            at: end,
            request_id,
            kind: EventKind::StreamBreak {
                model_group: model_group.clone(),
                deployment_id: deployment_id.clone(),
                failure: kind,
                how: BreakKind::Connection,
                tokens_so_far: tokens,
                after_content: tokens > 0,
            },
        });
    }
    events.push(RoutingEvent {
        at: end,
        request_id,
        kind: EventKind::AttemptEnd {
            attempt,
            start,
            model_group,
            deployment_id,
            failure: call.outcome.failure(),
            status: status_of(call),
            retry_after: call.retry_after.map(secs),
            wait,
            fallback_depth,
        },
    });
}
