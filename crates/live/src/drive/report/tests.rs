//! Tests of `report`.

use super::*;

fn call(at_ms: u64, id: &str, outcome: &str, status: u16, request_id: Option<u64>) -> CallRow {
    CallRow {
        at: Duration::from_millis(at_ms),
        deployment_id: Arc::from(id),
        path: String::new(),
        stream: false,
        outcome: outcome.into(),
        status: Some(status),
        retry_after_ms: None,
        latency: Duration::from_millis(1),
        tokens: 0,
        request_id,
    }
}

fn record(id: u64, arrival_ms: u64, end_ms: u64) -> RequestRecord {
    RequestRecord {
        id,
        arrival: Duration::from_millis(arrival_ms),
        end: Duration::from_millis(end_ms),
        status: Some(200),
        ..RequestRecord::default()
    }
}

#[test]
fn calls_join_by_id_first_then_by_time() {
    let records = [record(0, 0, 50), record(1, 10, 60)];
    let calls = [
        call(12, "a", "ok", 200, Some(1)),
        call(5, "a", "rate_limit", 429, None),
        call(20, "b", "ok", 200, None),
        call(100, "b", "ok", 200, None),
    ];
    let mut stats = JoinStats::default();
    let joined = join(&records, &[], &calls, &mut stats);
    // The id wins; the call at 5 ms can only be request 0's; at 20 ms both are open and
    // request 1 has one call already, request 0 one too: the earliest wins; the call at
    // 100 ms is in no window.
    assert_eq!(joined, vec![Some(1), Some(0), Some(0), None]);
    assert_eq!(
        (stats.by_request_id, stats.by_time, stats.unjoined),
        (1, 2, 1)
    );
}

#[test]
fn calls_of_unfinished_requests_join_no_other_request() {
    // Request 0 answered (0–50 ms); request 1 sent at 10 ms and never answered.
    let records = [record(0, 0, 50)];
    let unfinished = [Unfinished {
        id: 1,
        arrival: Duration::from_millis(10),
    }];
    let calls = [
        // Names request 1: its own, unanswered: joins nothing (not request 0 by time).
        call(12, "a", "ok", 200, Some(1)),
        // No id: request 0 (no calls yet, the earliest) takes it.
        call(15, "a", "ok", 200, None),
        // No id: request 1 has fewer calls, and it is unanswered: nobody's.
        call(16, "a", "ok", 200, None),
    ];
    let mut stats = JoinStats::default();
    let joined = join(&records, &unfinished, &calls, &mut stats);
    assert_eq!(joined, vec![None, Some(0), None]);
    assert_eq!(
        (
            stats.by_request_id,
            stats.by_time,
            stats.unjoined,
            stats.of_unfinished
        ),
        (0, 1, 2, 2)
    );
}

#[test]
fn a_call_running_past_a_request_end_is_not_its_attempt() {
    let records = [record(0, 0, 50)];
    let mut late = call(40, "a", "ok", 200, None);
    late.latency = Duration::from_millis(20);
    let mut stats = JoinStats::default();
    assert_eq!(join(&records, &[], &[late], &mut stats), vec![None]);
    assert_eq!(stats.unjoined, 1);
}

const SCENARIO: &str = "
name: t
duration: 1s
router:
  model_list:
    - {model_name: g, litellm_params: {model: openai/x}, model_info: {id: a}}
    - {model_name: g, litellm_params: {model: openai/y}, model_info: {id: b}}
    - {model_name: h, litellm_params: {model: openai/z}, model_info: {id: c}}
traffic:
  - {at: 0s, model: g}
";

fn retries_and_fallbacks(events: &[RoutingEvent]) -> (usize, usize, u32, u32, u32) {
    let retries = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Retry { .. }))
        .count();
    let hops = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Fallback { .. }))
        .count();
    let end = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::RequestEnd {
                retries,
                fallbacks,
                attempts,
                ..
            } => Some((*retries, *fallbacks, *attempts)),
            _ => None,
        })
        .unwrap();
    (retries, hops, end.0, end.1, end.2)
}

#[test]
fn a_request_counts_the_retries_its_events_say_whatever_the_router_headers_say() {
    let scenario =
        routersim_sim::scenario::parse_scenario(SCENARIO, std::path::Path::new("t.yaml")).unwrap();
    // Two failures in group g, then a hop to h; LiteLLM's header says 0 retries (its count
    // restarts after a fallback) and 1 fallback.
    let mut r = record(0, 0, 100);
    r.attempted_retries = Some(0);
    r.attempted_fallbacks = Some(1);
    let calls = [
        call(1, "a", "rate_limit", 429, Some(0)),
        call(5, "b", "rate_limit", 429, Some(0)),
        call(9, "c", "ok", 200, Some(0)),
    ];
    let t = events(
        &scenario,
        Instant::now(),
        &[r],
        &[],
        &calls,
        Duration::from_secs(1),
    );
    // One retry event, one hop, and the request's counts are the same numbers.
    assert_eq!(retries_and_fallbacks(&t.events), (1, 1, 1, 1, 3));
    // A header claiming 2^32 - 1 hops (three deployments) is not believed.
    let mut liar = record(0, 0, 100);
    liar.attempted_fallbacks = Some(u32::MAX);
    let t = events(
        &scenario,
        Instant::now(),
        &[liar],
        &[],
        &calls,
        Duration::from_secs(1),
    );
    let attempted = t.events.iter().find_map(|e| match &e.kind {
        EventKind::RequestEnd {
            attempted_fallbacks,
            ..
        } => Some(*attempted_fallbacks),
        _ => None,
    });
    assert_eq!(attempted, Some(1));
}
#[test]
fn call_outcomes_map_to_failure_kinds() {
    assert_eq!(call_failure(&call(0, "a", "ok", 200, None)), None);
    assert_eq!(
        call_failure(&call(0, "a", "break:api_connection", 200, None)),
        Some(FailureKind::ApiConnection)
    );
    assert_eq!(
        call_failure(&call(0, "a", "service_unavailable", 503, None)),
        Some(FailureKind::ServiceUnavailable)
    );
    assert_eq!(
        call_failure(&call(0, "a", "truncated", 200, None)),
        Some(FailureKind::ApiConnection)
    );
}
