//! Invariant checks of hedge races, walk deadlines and client sends.

use super::*;

fn hedged(s: &mut Script, ms: u64, id: u64) -> &mut Script {
    s.push(
        ms,
        Some(id),
        EventKind::Alternative(routersim_engine::alternatives::AlternativeEvent::Hedged {
            model_group: g(),
            primary: Arc::from("a"),
            hedge: Arc::from("b"),
            delay: Duration::from_millis(ms),
            extra_input_tokens: 0,
            extra_cost_usd: 0.0,
        }),
    )
}

fn hedge_end<'s>(s: &'s mut Script, ms: u64, id: u64, winner: &str) -> &'s mut Script {
    s.push(
        ms,
        Some(id),
        EventKind::Alternative(routersim_engine::alternatives::AlternativeEvent::HedgeEnd {
            model_group: g(),
            winner: Arc::from(winner),
            hedge_won: winner == "b",
        }),
    )
}

#[test]
fn a_hedge_may_overlap_its_first_attempt_and_its_loser_never_ends() {
    // Request 0: attempt 1 on a, hedged at 300 ms on b (attempt 2), b wins at 400 ms, a is
    // cancelled: request_end counts 1 attempt (the one that ended). Request 1: both end.
    let mut s = Script::new();
    s.start_attempt(0, 0, 1, "a");
    hedged(&mut s, 300, 0)
        .start_attempt(300, 0, 2, "b")
        .end_attempt(400, 0, 2, 300, "b", true);
    hedge_end(&mut s, 400, 0, "b").end(400, 0, 1, 0, false);
    s.start_attempt(10, 1, 1, "a");
    hedged(&mut s, 310, 1)
        .start_attempt(310, 1, 2, "b")
        .end_attempt(350, 1, 1, 10, "a", false)
        .end_attempt(410, 1, 2, 310, "b", true);
    hedge_end(&mut s, 410, 1, "b").end(410, 1, 2, 0, false);
    assert_eq!(s.check(), None);
    // Without the `hedged` event the overlap is still a violation.
    let mut unannounced = Script::new();
    unannounced
        .start_attempt(0, 0, 1, "a")
        .start_attempt(300, 0, 2, "b")
        .end_attempt(400, 0, 2, 300, "b", true)
        .end_attempt(500, 0, 1, 0, "a", true)
        .end(500, 0, 2, 0, false)
        .attempt(10, 200, 1, 1, "b", true)
        .end(200, 1, 1, 0, false);
    assert_eq!(broken(&unannounced), Invariant::EventsConsistent);
}

/// Multigrid's deadline: 3 s non-streamed, 10 s streamed.
fn walking() -> Bounds {
    Bounds {
        walk_deadline: Some(WalkDeadline {
            request: Duration::from_secs(3),
            stream: Duration::from_secs(10),
        }),
        ..bounds()
    }
}

#[test]
fn within_walk_deadline_catches_a_late_attempt_a_long_wait_and_a_late_end() {
    // Request 0 (arrived at 0) fails on b, waits, and tries again; request 1 is quick.
    let retried = |wait_ms: u64, second: u64, stream: bool| {
        let mut s = Script::new();
        s.attempt(0, 1000, 0, 1, "b", false)
            .retry(1000, 0, 1, 2)
            .push(
                1000,
                Some(0),
                EventKind::Wait {
                    duration: Duration::from_millis(wait_ms),
                    reason: WaitReason::Backoff,
                },
            )
            .attempt(1000 + wait_ms, 1000 + wait_ms + second, 0, 2, "b", true)
            .end(1000 + wait_ms + second, 0, 2, 1, stream)
            .attempt(0, 10, 1, 1, "b", true)
            .end(10, 1, 1, 0, false);
        s
    };
    // Within the deadline: fine, and the same run without a walk deadline is fine too.
    assert_eq!(retried(500, 1000, false).check_with(walking()), None);
    // A wait that reaches the deadline (a broken policy that waits instead of failing over).
    let late_wait = retried(2000, 0, false);
    assert_eq!(
        late_wait.check_with(walking()).map(|v| v.invariant),
        Some(Invariant::WithinWalkDeadline)
    );
    assert_eq!(late_wait.check(), None, "no walk deadline, no check");
    // A non-streamed request that ends after its deadline (its call was not cut).
    let v = retried(500, 1600, false).check_with(walking()).unwrap();
    assert_eq!(v.invariant, Invariant::WithinWalkDeadline);
    assert!(
        v.detail.contains("ends 3.100 s after arrival"),
        "{}",
        v.detail
    );
    // The same, streamed: its body is bounded by the stream timeouts, and its deadline is 10 s.
    assert_eq!(retried(500, 1600, true).check_with(walking()), None);
    // An attempt that starts at the deadline.
    let mut s = Script::new();
    s.attempt(0, 3000, 0, 1, "b", false)
        .retry(3000, 0, 1, 2)
        .attempt(3000, 3000, 0, 2, "b", false)
        .end(3000, 0, 2, 1, false)
        .attempt(0, 10, 1, 1, "b", true)
        .end(10, 1, 1, 0, false);
    let v = s.check_with(walking()).unwrap();
    assert_eq!(v.invariant, Invariant::WithinWalkDeadline);
    assert!(
        v.detail.contains("attempt 2 starts 3.000 s"),
        "{}",
        v.detail
    );
}

#[test]
fn ends_once_lets_a_client_send_a_request_again_up_to_client_retries() {
    let send = |s: &mut Script, ms: u64, n: u32| {
        s.push(
            ms,
            Some(0),
            EventKind::ClientTry {
                try_number: n,
                retries: 1,
                provider_calls_before: n,
            },
        );
    };
    let mut s = Script::new();
    send(&mut s, 0, 0);
    s.attempt(0, 100, 0, 1, "b", false).end(100, 0, 1, 0, false);
    send(&mut s, 100, 1);
    s.attempt(100, 200, 0, 1, "b", true)
        .end(200, 0, 1, 0, false)
        .attempt(0, 10, 1, 1, "b", true)
        .end(10, 1, 1, 0, false);
    let client = Bounds {
        client_retries: 1,
        ..bounds()
    };
    assert_eq!(s.check_with(client.clone()), None);
    // Without client retries, the second send is a second end of request 0.
    assert_eq!(broken(&s), Invariant::EndsOnce);
    // A send beyond the client's retries.
    send(&mut s, 300, 2);
    s.attempt(300, 400, 0, 1, "b", true)
        .end(400, 0, 1, 0, false);
    let v = s.check_with(client).unwrap();
    assert_eq!(v.invariant, Invariant::EndsOnce);
    assert!(v.detail.contains("client send 2"), "{}", v.detail);
}
