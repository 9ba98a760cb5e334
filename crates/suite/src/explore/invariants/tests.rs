//! Each invariant fed a hand-built event sequence that breaks it (the checker must say so),
//! and a well-formed sequence it must accept.

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use routersim_engine::backoff::{MAX_BACKOFF, MAX_JITTER, MAX_RETRY_AFTER};
use routersim_engine::event::{
    CooldownReason, EventKind, EventSink, FallbackLevel, GiveUpReason, RoutingEvent, WaitReason,
};
use routersim_engine::failure::FailureKind;
use routersim_engine::stream::BreakKind;
use tokio::time::Instant;

use super::*;

fn bounds() -> Bounds {
    let mut deployments = BTreeMap::new();
    deployments.insert(
        Arc::from("a"),
        DeploymentLimits {
            index: 0,
            timeout: Some(Duration::from_secs(5)),
            stream_timeout: Some(Duration::from_secs(2)),
        },
    );
    deployments.insert(
        Arc::from("b"),
        DeploymentLimits {
            index: 1,
            timeout: None,
            stream_timeout: None,
        },
    );
    Bounds {
        arrivals: 2,
        max_attempts: 4,
        max_retry_budget: 2,
        max_fallback_depth: 1,
        max_fallback_hops: 1,
        continuation: true,
        max_continuations: 1,
        commits_at_content: true,
        backoff_cap: MAX_BACKOFF + MAX_JITTER,
        retry_after_cap: MAX_RETRY_AFTER,
        retry_after_zero: false,
        stall_timeout: Some(Duration::from_secs(1)),
        deployments,
        walk_deadline: None,
        client_retries: 0,
        replicas: 1,
        cooldown_rewrite: CooldownRewrite::KeepLater,
    }
}

/// Builds events at offsets from a fixed start.
struct Script {
    start: Instant,
    events: Vec<RoutingEvent>,
}

fn g() -> Arc<str> {
    Arc::from("g")
}

impl Script {
    fn new() -> Self {
        Self {
            start: Instant::now(),
            events: Vec::new(),
        }
    }

    fn t(&self, ms: u64) -> Instant {
        self.start + Duration::from_millis(ms)
    }

    fn push(&mut self, ms: u64, id: Option<u64>, kind: EventKind) -> &mut Self {
        self.events.push(RoutingEvent {
            at: self.t(ms),
            request_id: id,
            kind,
        });
        self
    }

    fn start_attempt(&mut self, ms: u64, id: u64, attempt: u32, dep: &str) -> &mut Self {
        self.push(
            ms,
            Some(id),
            EventKind::AttemptStart {
                attempt,
                model_group: g(),
                deployment_id: Arc::from(dep),
                fallback_depth: 0,
                max_tokens: None,
            },
        )
    }

    fn end_attempt(
        &mut self,
        ms: u64,
        id: u64,
        attempt: u32,
        started: u64,
        dep: &str,
        ok: bool,
    ) -> &mut Self {
        let start = self.t(started);
        self.push(
            ms,
            Some(id),
            EventKind::AttemptEnd {
                attempt,
                start,
                model_group: g(),
                deployment_id: Arc::from(dep),
                failure: (!ok).then_some(FailureKind::ServiceUnavailable),
                status: Some(if ok { 200 } else { 503 }),
                retry_after: None,
                wait: Duration::ZERO,
                fallback_depth: 0,
            },
        )
    }

    fn attempt(&mut self, from: u64, to: u64, id: u64, n: u32, dep: &str, ok: bool) -> &mut Self {
        self.start_attempt(from, id, n, dep)
            .end_attempt(to, id, n, from, dep, ok)
    }

    fn retry(&mut self, ms: u64, id: u64, retry: u32, budget: u32) -> &mut Self {
        self.push(
            ms,
            Some(id),
            EventKind::Retry {
                model_group: g(),
                failure: FailureKind::ServiceUnavailable,
                retry,
                budget,
            },
        )
    }

    fn chunk(&mut self, ms: u64, id: u64) -> &mut Self {
        self.push(
            ms,
            Some(id),
            EventKind::StreamChunk {
                tokens: 5,
                gap_before: None,
                inner_gap: Duration::from_millis(20),
            },
        )
    }

    fn end(&mut self, ms: u64, id: u64, attempts: u32, retries: u32, stream: bool) -> &mut Self {
        let start = self.t(0);
        self.push(
            ms,
            Some(id),
            EventKind::RequestEnd {
                model: g(),
                final_model_group: g(),
                final_deployment_id: None,
                failure: None,
                status: Some(200),
                attempts,
                retries,
                fallbacks: 0,
                attempted_fallbacks: 0,
                start,
                stream: stream.then(Default::default),
            },
        )
    }

    fn cool(&mut self, ms: u64, dep: &str, secs: u64) -> &mut Self {
        let until = self.t(ms + secs * 1000);
        self.push(
            ms,
            None,
            EventKind::CooldownSet {
                source: routersim_engine::event::CooldownSource::Router,
                model_group: g(),
                deployment_id: Arc::from(dep),
                reason: CooldownReason::RateLimitInGroup,
                failure: FailureKind::RateLimit,
                duration: Duration::from_secs(secs),
                until,
            },
        )
    }

    fn cool_end(&mut self, ms: u64, dep: &str) -> &mut Self {
        self.push(
            ms,
            None,
            EventKind::CooldownEnd {
                model_group: g(),
                deployment_id: Arc::from(dep),
            },
        )
    }

    /// Feeds the events and runs the end-of-run checks.
    fn check_with(&self, bounds: Bounds) -> Option<Violation> {
        let checker = Checker::new(bounds, self.start);
        for e in &self.events {
            checker.emit(e);
        }
        checker.finish(None).map(|(v, _)| v)
    }

    fn check(&self) -> Option<Violation> {
        self.check_with(bounds())
    }
}

/// Two requests served in one attempt each: no violation.
fn clean() -> Script {
    let mut s = Script::new();
    s.attempt(0, 100, 0, 1, "a", true)
        .end(100, 0, 1, 0, false)
        .attempt(10, 200, 1, 1, "b", true)
        .end(200, 1, 1, 0, false);
    s
}

fn broken(s: &Script) -> Invariant {
    s.check()
        .expect("the checker must find a violation")
        .invariant
}

#[test]
fn a_well_formed_run_passes() {
    assert_eq!(clean().check(), None);
    let mut s = Script::new();
    s.attempt(0, 100, 0, 1, "a", false)
        .retry(100, 0, 1, 2)
        .push(
            100,
            Some(0),
            EventKind::Wait {
                duration: Duration::from_secs(3),
                reason: WaitReason::RetryAfter,
            },
        )
        .attempt(3100, 3200, 0, 2, "a", true)
        .end(3200, 0, 2, 1, false)
        .cool(50, "b", 2)
        .cool_end(2050, "b")
        .start_attempt(10, 1, 1, "b")
        .chunk(500, 1)
        .chunk(900, 1)
        .end_attempt(1000, 1, 1, 10, "b", true)
        .end(3300, 1, 1, 0, true);
    assert_eq!(s.check(), None);
}

#[test]
fn ends_once_catches_a_missing_end() {
    let mut s = Script::new();
    s.attempt(0, 100, 0, 1, "a", true).end(100, 0, 1, 0, false);
    // Request 1 arrived but never ended.
    let v = s.check().expect("a missing request_end");
    assert_eq!(v.invariant, Invariant::EndsOnce);
    assert_eq!(v.request_id, Some(1));
}

#[test]
fn ends_once_catches_a_second_end_and_events_after_the_end() {
    let mut s = clean();
    s.end(300, 1, 1, 0, false);
    assert_eq!(broken(&s), Invariant::EndsOnce);
    let mut s = clean();
    s.retry(300, 0, 1, 2);
    assert_eq!(broken(&s), Invariant::EndsOnce);
}

#[test]
fn ends_once_catches_an_unknown_request_id() {
    let mut s = clean();
    s.attempt(0, 10, 7, 1, "a", true).end(10, 7, 1, 0, false);
    assert_eq!(broken(&s), Invariant::EndsOnce);
}

#[test]
fn events_consistent_catches_skipped_and_overlapping_attempts() {
    let mut s = Script::new();
    s.attempt(0, 100, 0, 2, "a", true).end(100, 0, 1, 0, false);
    assert_eq!(broken(&s), Invariant::EventsConsistent);
    let mut s = Script::new();
    s.start_attempt(0, 0, 1, "a")
        .start_attempt(10, 0, 2, "a")
        .end_attempt(20, 0, 2, 10, "a", true)
        .end(20, 0, 2, 0, false);
    assert_eq!(broken(&s), Invariant::EventsConsistent);
}

#[test]
fn events_consistent_catches_counts_that_disagree() {
    let mut s = Script::new();
    // One attempt seen, two counted.
    s.attempt(0, 100, 0, 1, "a", true)
        .end(100, 0, 2, 0, false)
        .attempt(0, 10, 1, 1, "a", true)
        .end(10, 1, 1, 0, false);
    assert_eq!(broken(&s), Invariant::EventsConsistent);
}

#[test]
fn events_consistent_catches_an_attempt_before_its_wait_ends() {
    let mut s = Script::new();
    s.attempt(0, 100, 0, 1, "a", false)
        .retry(100, 0, 1, 2)
        .push(
            100,
            Some(0),
            EventKind::Wait {
                duration: Duration::from_secs(3),
                reason: WaitReason::Backoff,
            },
        )
        .attempt(1100, 1200, 0, 2, "a", true)
        .end(1200, 0, 2, 1, false)
        .attempt(0, 10, 1, 1, "a", true)
        .end(10, 1, 1, 0, false);
    assert_eq!(broken(&s), Invariant::EventsConsistent);
}

#[test]
fn attempt_bound_catches_too_many_attempts() {
    let mut s = Script::new();
    for n in 1..=5u32 {
        let at = u64::from(n) * 10;
        s.attempt(at, at + 5, 0, n, "b", n == 5);
    }
    s.end(60, 0, 5, 0, false)
        .attempt(0, 10, 1, 1, "a", true)
        .end(10, 1, 1, 0, false);
    assert_eq!(broken(&s), Invariant::AttemptBound);
}

#[test]
fn attempt_bound_catches_a_retry_over_its_budget() {
    let mut s = Script::new();
    s.attempt(0, 10, 0, 1, "b", false)
        .retry(10, 0, 3, 2)
        .attempt(10, 20, 0, 2, "b", true)
        .end(20, 0, 2, 1, false)
        .attempt(0, 10, 1, 1, "a", true)
        .end(10, 1, 1, 0, false);
    assert_eq!(broken(&s), Invariant::AttemptBound);
    // A budget above what the settings can give.
    let mut s = Script::new();
    s.attempt(0, 10, 0, 1, "b", false)
        .retry(10, 0, 1, 9)
        .attempt(10, 20, 0, 2, "b", true)
        .end(20, 0, 2, 1, false)
        .attempt(0, 10, 1, 1, "a", true)
        .end(10, 1, 1, 0, false);
    assert_eq!(broken(&s), Invariant::AttemptBound);
}

#[test]
fn attempt_bound_catches_a_fallback_past_max_fallbacks() {
    let mut s = Script::new();
    s.attempt(0, 10, 0, 1, "a", false).push(
        10,
        Some(0),
        EventKind::Fallback {
            source: g(),
            target: Arc::from("h"),
            order: 0,
            depth: 2,
            level: FallbackLevel::General,
            failure: FailureKind::ServiceUnavailable,
        },
    );
    assert_eq!(broken(&s), Invariant::AttemptBound);
}

/// Request 0 streams content from `a`, then breaks.
fn committed() -> Script {
    let mut s = Script::new();
    s.start_attempt(0, 0, 1, "a")
        .chunk(500, 0)
        .push(
            600,
            Some(0),
            EventKind::StreamBreak {
                model_group: g(),
                deployment_id: Arc::from("a"),
                failure: FailureKind::ApiConnection,
                how: BreakKind::Connection,
                tokens_so_far: 5,
                after_content: true,
            },
        )
        .end_attempt(600, 0, 1, 0, "a", false);
    s
}

#[test]
fn cooldown_ends_catches_a_cooldown_that_never_ends() {
    let mut s = clean();
    // Cooling until 2.05 s; an event at 3 s comes with no cooldown_end.
    s.cool(50, "b", 2).attempt(3000, 3100, 0, 1, "a", true);
    let v = s.check().expect("a lapsed cooldown");
    assert_eq!(v.invariant, Invariant::CooldownEnds);
    // At the run's end: the last request ends at 5 s, the cooldown lapsed at 2.05 s.
    let mut s = Script::new();
    s.cool(50, "b", 2)
        .attempt(0, 100, 0, 1, "a", true)
        .end(5000, 0, 1, 0, false)
        .attempt(0, 100, 1, 1, "a", true)
        .end(100, 1, 1, 0, false);
    assert_eq!(broken(&s), Invariant::CooldownEnds);
}

#[test]
fn cooldown_ends_catches_an_end_off_its_deadline_and_allows_clipping() {
    let mut s = clean();
    s.cool(50, "b", 2).cool_end(1000, "b");
    assert_eq!(broken(&s), Invariant::CooldownEnds);
    // Still cooling when the run ends: clipped, not a violation.
    let mut s = clean();
    s.cool(50, "b", 60);
    assert_eq!(s.check(), None);
}

#[test]
fn events_consistent_catches_a_cooldown_end_without_a_cooldown_or_a_wrong_until() {
    let mut s = clean();
    s.cool_end(100, "b");
    assert_eq!(broken(&s), Invariant::EventsConsistent);
    let mut s = clean();
    let until = s.t(10);
    s.push(
        50,
        None,
        EventKind::CooldownSet {
            source: routersim_engine::event::CooldownSource::Router,
            model_group: g(),
            deployment_id: Arc::from("a"),
            reason: CooldownReason::ErrorRate,
            failure: FailureKind::InternalServer,
            duration: Duration::from_secs(5),
            until,
        },
    );
    assert_eq!(broken(&s), Invariant::EventsConsistent);
}

#[test]
fn the_checker_keeps_no_state_for_ended_requests() {
    let s = clean();
    let checker = Checker::new(bounds(), s.start);
    for e in &s.events {
        checker.emit(e);
    }
    let state = checker.state.lock().unwrap_or_else(PoisonError::into_inner);
    assert!(state.requests.is_empty());
    assert_eq!(state.ended_count, 2);
}

#[test]
fn cooldown_ends_allows_the_timer_tick_and_no_more() {
    // Cooling until 2.0505 s: the sweeper wakes on the 2.051 s tick, where another task's
    // event may come first; at 2.052 s the cooldown must have ended.
    let run = |probe_at: u64| {
        let mut s = clean();
        let duration = Duration::from_micros(2_000_500);
        let until = s.t(50) + duration;
        s.push(
            50,
            None,
            EventKind::CooldownSet {
                source: routersim_engine::event::CooldownSource::Router,
                model_group: g(),
                deployment_id: Arc::from("b"),
                reason: CooldownReason::RateLimitInGroup,
                failure: FailureKind::RateLimit,
                duration,
                until,
            },
        )
        .push(
            probe_at,
            None,
            EventKind::ProbeOk {
                model_group: g(),
                deployment_id: Arc::from("a"),
            },
        );
        s.events.push(RoutingEvent {
            at: until,
            request_id: None,
            kind: EventKind::CooldownEnd {
                model_group: g(),
                deployment_id: Arc::from("b"),
            },
        });
        s.check().map(|v| v.invariant)
    };
    assert_eq!(run(2051), None);
    assert_eq!(run(2052), Some(Invariant::CooldownEnds));
}

mod commit;
mod deadlines;
/// The walks of the later profiles: hedge races (`hedge_after`), Multigrid's deadline, a
/// client's sends (`client_retries`).
mod profiles;
mod walks;
