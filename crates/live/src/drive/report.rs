//! From what was observed to the engine's events: the report of a live run comes out of the
//! same [`Recorder`](routersim_report::Recorder) as a simulation's.
//!
//! - **Attempts.** Every provider call becomes an `AttemptStart`/`AttemptEnd` pair. A call is
//!   joined to its request by the `x-routersim-request-id` the provider saw (drive sends it; a
//!   router that forwards client headers passes it on: `routersim proxy` does, LiteLLM does with
//!   `general_settings.forward_client_headers_to_llm_api: true`). A call without it is joined
//!   by time order: to the request in flight at the call's start (arrived before it, not yet
//!   answered) that has the fewest calls so far, the earliest on a tie: exact for sequential
//!   traffic, an approximation under concurrency. A call that falls in no request's window
//!   keeps an empty `request_id`.
//! - **Retries, fallbacks.** A request's attempts in the same group as the one before are
//!   retries, a change of group is a fallback hop; the router's own headers
//!   (`x-litellm-attempted-retries`, `-fallbacks`) win when present.
//! - **Cooldowns** are inferred: a deployment whose call failed and which then received no call
//!   for longer than [`GAP_FACTOR`] times its usual (median) gap between calls, and at least
//!   [`MIN_GAP`], while its group still received traffic ([`MIN_GROUP_CALLS`] calls to its other
//!   deployments or requests for the group), is said to have cooled from that failure to its
//!   next call (or the run's end). The reason is `rate_limit_in_group` after a 429, else
//!   `allowed_fails_exceeded`; the source is `retry_after` when the failure carried one.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use routersim_engine::event::{
    CooldownReason, CooldownSource, EventKind, FallbackLevel, RoutingEvent,
};
use routersim_engine::failure::FailureKind;
use routersim_engine::stream::StreamStats;
use routersim_mock_providers::wire::CallRow;
use tokio::time::Instant;

use super::record::RequestRecord;
pub use super::record::Unfinished;
use routersim_sim::scenario::Scenario;

/// A silence longer than this many usual gaps is a cooldown.
pub const GAP_FACTOR: u32 = 3;
/// A silence shorter than this is never a cooldown.
pub const MIN_GAP: Duration = Duration::from_secs(1);
/// The group must see at least this much traffic during the silence.
pub const MIN_GROUP_CALLS: usize = 2;

/// How the provider calls were joined.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JoinStats {
    /// By `x-routersim-request-id`.
    pub by_request_id: u64,
    /// By time order.
    pub by_time: u64,
    /// Joined to no finished request (left out of the report's attempts, as their requests
    /// are): calls of requests still unanswered when the run ended, and calls no request can
    /// be found for.
    pub unjoined: u64,
    /// Of those, calls that name (by their id) or can only belong to (by time) a request still
    /// unanswered when the run ended.
    pub of_unfinished: u64,
    /// Cooldowns inferred.
    pub cooldowns: u64,
}

/// The outcome of a call row.
fn call_failure(call: &CallRow) -> Option<FailureKind> {
    let outcome = call.outcome.as_str();
    if outcome == "ok" {
        return None;
    }
    let kind = outcome.split_once(':').map_or(outcome, |(_, kind)| kind);
    Some(FailureKind::from_name(kind).unwrap_or_else(|| {
        call.status
            .filter(|s| *s >= 400)
            .map_or(FailureKind::ApiConnection, FailureKind::from_status)
    }))
}

/// A request a call may belong to: a finished one (its index in `records`) or an unfinished
/// one (in flight until the end).
#[derive(Clone, Copy)]
struct Candidate {
    arrival: Duration,
    id: u64,
    end: Option<Duration>,
    record: Option<usize>,
}

/// Which finished request each call belongs to (`None`: none), in `calls` order. A call that
/// carries a request id belongs to that request or to none; one without an id joins, by time,
/// the request in flight over the whole call (arrived before it started, answered after it
/// ended) with the fewest calls so far, the earliest on a tie — and none when that request is
/// one still unanswered at the end.
fn join(
    records: &[RequestRecord],
    unfinished: &[Unfinished],
    calls: &[CallRow],
    stats: &mut JoinStats,
) -> Vec<Option<usize>> {
    let by_id: BTreeMap<u64, usize> = records.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
    let pending: BTreeSet<u64> = unfinished.iter().map(|u| u.id).collect();
    let mut candidates: Vec<Candidate> = records
        .iter()
        .enumerate()
        .map(|(i, r)| Candidate {
            arrival: r.arrival,
            id: r.id,
            end: Some(r.end),
            record: Some(i),
        })
        .chain(unfinished.iter().map(|u| Candidate {
            arrival: u.arrival,
            id: u.id,
            end: None,
            record: None,
        }))
        .collect();
    candidates.sort_by_key(|c| (c.arrival, c.id));
    let mut candidate_of = vec![0; records.len()];
    for (k, c) in candidates.iter().enumerate() {
        if let Some(r) = c.record {
            candidate_of[r] = k;
        }
    }
    let mut counts = vec![0_u32; candidates.len()];
    let mut joined = vec![None; calls.len()];
    // Calls by their start, so the open window moves forward only.
    let mut by_start: Vec<usize> = (0..calls.len()).collect();
    by_start.sort_by_key(|&c| calls[c].at);
    let (mut next, mut open) = (0, Vec::<usize>::new());
    for c in by_start {
        let call = &calls[c];
        if let Some(id) = call.request_id {
            match by_id.get(&id) {
                Some(&r) => {
                    joined[c] = Some(r);
                    counts[candidate_of[r]] += 1;
                    stats.by_request_id += 1;
                }
                None => {
                    stats.unjoined += 1;
                    stats.of_unfinished += u64::from(pending.contains(&id));
                }
            }
            continue;
        }
        while next < candidates.len() && candidates[next].arrival <= call.at {
            open.push(next);
            next += 1;
        }
        open.retain(|&k| candidates[k].end.is_none_or(|end| end >= call.at));
        let call_end = call.at + call.latency;
        let pick = open
            .iter()
            .copied()
            .filter(|&k| candidates[k].end.is_none_or(|end| end >= call_end))
            .min_by_key(|&k| (counts[k], candidates[k].arrival, candidates[k].id));
        match pick {
            Some(k) => {
                counts[k] += 1;
                match candidates[k].record {
                    Some(r) => {
                        joined[c] = Some(r);
                        stats.by_time += 1;
                    }
                    None => {
                        stats.unjoined += 1;
                        stats.of_unfinished += 1;
                    }
                }
            }
            None => stats.unjoined += 1,
        }
    }
    joined
}

/// A live run's events, and what they were made of.
#[derive(Debug)]
pub struct Translated {
    /// The events, in time order.
    pub events: Vec<RoutingEvent>,
    /// How the calls were joined.
    pub stats: JoinStats,
    /// Each finished request's calls (indices into the calls), by their start.
    pub calls_of: Vec<Vec<usize>>,
}

/// The events of a live run, in time order. Calls joined to no finished request make no
/// event (their requests are left out too); the provider-side log keeps them.
pub fn events(
    scenario: &Scenario,
    start: Instant,
    records: &[RequestRecord],
    unfinished: &[Unfinished],
    calls: &[CallRow],
    run_end: Duration,
) -> Translated {
    let group_of: BTreeMap<&str, Arc<str>> = scenario
        .router
        .deployments
        .iter()
        .map(|d| (&*d.id, d.model_name.clone()))
        .collect();
    let group = |id: &str| group_of.get(id).cloned().unwrap_or_else(|| Arc::from(id));
    let mut stats = JoinStats::default();
    let joined = join(records, unfinished, calls, &mut stats);
    let mut calls_of: Vec<Vec<usize>> = vec![Vec::new(); records.len()];
    let mut by_start: Vec<usize> = (0..calls.len()).collect();
    by_start.sort_by_key(|&c| calls[c].at);
    let mut events = Vec::new();
    for &c in &by_start {
        if let Some(r) = joined[c] {
            calls_of[r].push(c);
        }
    }
    for (r, record) in records.iter().enumerate() {
        let request = RequestCalls {
            record,
            calls_of: &calls_of[r],
            deployments: scenario.router.deployments.len(),
        };
        request_events(&mut events, start, &request, calls, &group);
    }
    stats.cooldowns = infer_cooldowns(
        &mut events,
        start,
        records,
        calls,
        &by_start,
        &group,
        run_end,
    );
    // Stable: events of one instant keep the order they were made in (a request's attempt
    // before its end).
    events.sort_by_key(|e| e.at);
    Translated {
        events,
        stats,
        calls_of,
    }
}

#[allow(clippy::too_many_arguments, reason = "one attempt's fields")]
fn attempt_events(
    events: &mut Vec<RoutingEvent>,
    start: Instant,
    request_id: Option<u64>,
    attempt: u32,
    call: &CallRow,
    group: &dyn Fn(&str) -> Arc<str>,
    fallback_depth: u32,
    wait: Duration,
) {
    let model_group = group(&call.deployment_id);
    let at = start + call.at;
    events.push(RoutingEvent {
        at,
        request_id,
        kind: EventKind::AttemptStart {
            attempt,
            model_group: model_group.clone(),
            deployment_id: call.deployment_id.clone(),
            fallback_depth,
            // The call log does not say what the router asked for.
            max_tokens: None,
        },
    });
    events.push(RoutingEvent {
        at: at + call.latency,
        request_id,
        kind: EventKind::AttemptEnd {
            attempt,
            start: at,
            model_group,
            deployment_id: call.deployment_id.clone(),
            failure: call_failure(call),
            status: call.status,
            retry_after: call.retry_after_ms.map(Duration::from_millis),
            wait,
            fallback_depth,
        },
    });
}

/// One answered request and its calls.
struct RequestCalls<'a> {
    record: &'a RequestRecord,
    calls_of: &'a [usize],
    /// The scenario's deployments: more fallback hops than this, a router's header is not
    /// believed.
    deployments: usize,
}

fn request_events(
    events: &mut Vec<RoutingEvent>,
    start: Instant,
    request: &RequestCalls<'_>,
    calls: &[CallRow],
    group: &dyn Fn(&str) -> Arc<str>,
) {
    let (record, calls_of) = (request.record, request.calls_of);
    let id = Some(record.id);
    let (mut retries, mut fallbacks, mut depth) = (0_u32, 0_u32, 0_u32);
    let mut previous: Option<&CallRow> = None;
    for (n, &c) in calls_of.iter().enumerate() {
        let call = &calls[c];
        let wait = previous.map_or(Duration::ZERO, |p| call.at.saturating_sub(p.at + p.latency));
        if let Some(p) = previous {
            let failure = call_failure(p).unwrap_or(FailureKind::ApiConnection);
            let (from, to) = (group(&p.deployment_id), group(&call.deployment_id));
            let at = start + call.at;
            if from == to {
                retries += 1;
                events.push(RoutingEvent {
                    at,
                    request_id: id,
                    kind: EventKind::Retry {
                        model_group: to,
                        failure,
                        retry: retries,
                        budget: 0,
                    },
                });
            } else {
                fallbacks += 1;
                depth += 1;
                events.push(RoutingEvent {
                    at,
                    request_id: id,
                    kind: EventKind::Fallback {
                        source: from,
                        target: to,
                        order: 0,
                        depth,
                        level: FallbackLevel::General,
                        failure,
                    },
                });
            }
        }
        let attempt = u32::try_from(n + 1).unwrap_or(u32::MAX);
        attempt_events(events, start, id, attempt, call, group, depth, wait);
        previous = Some(call);
    }
    let last = calls_of.last().map(|&c| &calls[c]);
    let final_deployment_id = record
        .model_id
        .as_deref()
        .map(Arc::from)
        .or_else(|| last.map(|c| c.deployment_id.clone()));
    let final_model_group = record
        .model_group
        .as_deref()
        .map(Arc::from)
        .or_else(|| last.map(|c| group(&c.deployment_id)))
        .unwrap_or_else(|| Arc::from(record.model.as_str()));
    // One definition with the simulation: a request's retries and fallbacks are the `retry`
    // and `fallback` events above, made from the calls seen. LiteLLM's own headers count
    // differently (`x-litellm-attempted-retries` only the final group's retries): they stay in
    // `live_requests.csv`, and the fallbacks header is `attempted_fallbacks`, which is what
    // that key means.
    // A count a peer supplies is capped by what could be: no more hops than deployments.
    let attempted_fallbacks = record
        .attempted_fallbacks
        .filter(|&n| usize::try_from(n).is_ok_and(|n| n <= request.deployments))
        .unwrap_or(fallbacks);
    let attempts = u32::try_from(calls_of.len()).unwrap_or(u32::MAX);
    let failure = record.failure();
    events.push(RoutingEvent {
        at: start + record.end,
        request_id: id,
        kind: EventKind::RequestEnd {
            model: Arc::from(record.model.as_str()),
            final_model_group,
            final_deployment_id,
            failure,
            status: record.status,
            attempts,
            retries,
            fallbacks,
            attempted_fallbacks,
            start: start + record.arrival,
            stream: record.stream.then_some(StreamStats {
                outcome: record.stream_outcome,
                ttft: record.ttft,
                tokens_delivered: record.tokens,
                tokens_billed: record.tokens,
            }),
        },
    });
}

/// See the module doc.
fn infer_cooldowns(
    events: &mut Vec<RoutingEvent>,
    start: Instant,
    records: &[RequestRecord],
    calls: &[CallRow],
    by_start: &[usize],
    group: &dyn Fn(&str) -> Arc<str>,
    run_end: Duration,
) -> u64 {
    let mut per_deployment: BTreeMap<Arc<str>, Vec<usize>> = BTreeMap::new();
    for &c in by_start {
        per_deployment
            .entry(calls[c].deployment_id.clone())
            .or_default()
            .push(c);
    }
    let mut found = 0;
    for (deployment, list) in &per_deployment {
        let model_group = group(deployment);
        let mut gaps: Vec<Duration> = list
            .windows(2)
            .map(|w| calls[w[1]].at.saturating_sub(calls[w[0]].at))
            .collect();
        gaps.sort();
        let usual = gaps.get(gaps.len() / 2).copied().unwrap_or(Duration::ZERO);
        let threshold = (usual * GAP_FACTOR).max(MIN_GAP);
        for (i, &c) in list.iter().enumerate() {
            let call = &calls[c];
            let Some(failure) = call_failure(call) else {
                continue;
            };
            let from = call.at + call.latency;
            let until = list.get(i + 1).map(|&n| calls[n].at);
            let silence_end = until.unwrap_or(run_end);
            if silence_end.saturating_sub(from) <= threshold {
                continue;
            }
            let others = by_start
                .iter()
                .filter(|&&o| {
                    let other = &calls[o];
                    other.deployment_id != *deployment
                        && group(&other.deployment_id) == model_group
                        && other.at > from
                        && other.at < silence_end
                })
                .count();
            let asked = records
                .iter()
                .filter(|r| *r.model == *model_group && r.arrival > from && r.arrival < silence_end)
                .count();
            if others.max(asked) < MIN_GROUP_CALLS {
                continue;
            }
            found += 1;
            let reason = if failure == FailureKind::RateLimit {
                CooldownReason::RateLimitInGroup
            } else {
                CooldownReason::AllowedFailsExceeded
            };
            let source = if call.retry_after_ms.is_some() {
                CooldownSource::RetryAfter
            } else {
                CooldownSource::Router
            };
            events.push(RoutingEvent {
                at: start + from,
                request_id: None,
                kind: EventKind::CooldownSet {
                    model_group: model_group.clone(),
                    deployment_id: deployment.clone(),
                    reason,
                    failure,
                    duration: silence_end.saturating_sub(from),
                    source,
                    until: start + silence_end,
                },
            });
            if until.is_some() {
                events.push(RoutingEvent {
                    at: start + silence_end,
                    request_id: None,
                    kind: EventKind::CooldownEnd {
                        model_group: model_group.clone(),
                        deployment_id: deployment.clone(),
                    },
                });
            }
        }
    }
    found
}

#[cfg(test)]
mod tests;
