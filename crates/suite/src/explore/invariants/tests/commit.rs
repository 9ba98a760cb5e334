//! The no-retry-after-commit invariant: a stream that delivered content is never retried or
//! failed over, and is continued at most as its profile announces.

use super::*;

#[test]
fn no_retry_after_commit_catches_a_retry_after_content() {
    let mut s = committed();
    s.retry(600, 0, 1, 2)
        .attempt(600, 700, 0, 2, "a", true)
        .end(700, 0, 2, 1, true);
    assert_eq!(broken(&s), Invariant::NoRetryAfterCommit);
}

#[test]
fn no_retry_after_commit_catches_a_failover_or_an_unannounced_attempt() {
    let mut s = committed();
    s.push(
        600,
        Some(0),
        EventKind::WeightedFailover {
            model_group: g(),
            excluded: Arc::from("a"),
        },
    );
    assert_eq!(broken(&s), Invariant::NoRetryAfterCommit);
    let mut s = committed();
    s.attempt(600, 700, 0, 2, "b", true);
    assert_eq!(broken(&s), Invariant::NoRetryAfterCommit);
    let mut s = committed();
    s.push(
        600,
        Some(0),
        EventKind::GiveUp {
            model_group: g(),
            failure: FailureKind::ApiConnection,
            reason: GiveUpReason::RetriesExhausted,
        },
    );
    assert_eq!(broken(&s), Invariant::NoRetryAfterCommit);
}

#[test]
fn no_retry_after_commit_allows_one_announced_continuation_only() {
    let continued = |s: &mut Script| {
        s.push(
            600,
            Some(0),
            EventKind::StreamContinued {
                from_group: g(),
                from_deployment: Arc::from("a"),
                to_group: g(),
                to_deployment: Arc::from("b"),
                prefill_tokens: 5,
            },
        );
    };
    let mut s = committed();
    continued(&mut s);
    s.attempt(600, 700, 0, 2, "b", true)
        .end(700, 0, 2, 0, true)
        .attempt(0, 10, 1, 1, "a", true)
        .end(10, 1, 1, 0, false);
    assert_eq!(s.check(), None);
    // Continuation off in the settings.
    let off = Bounds {
        continuation: false,
        ..bounds()
    };
    assert_eq!(
        s.check_with(off).map(|v| v.invariant),
        Some(Invariant::NoRetryAfterCommit)
    );
    // A second attempt after the continuation.
    let mut s = committed();
    continued(&mut s);
    s.attempt(600, 700, 0, 2, "b", false)
        .attempt(700, 800, 0, 3, "b", true);
    assert_eq!(broken(&s), Invariant::NoRetryAfterCommit);
}

#[test]
fn no_retry_after_commit_catches_a_continuation_on_another_deployment() {
    let mut s = committed();
    s.push(
        600,
        Some(0),
        EventKind::StreamContinued {
            from_group: g(),
            from_deployment: Arc::from("a"),
            to_group: g(),
            to_deployment: Arc::from("b"),
            prefill_tokens: 5,
        },
    )
    .attempt(600, 700, 0, 2, "a", true);
    assert_eq!(broken(&s), Invariant::NoRetryAfterCommit);
}

#[test]
fn events_consistent_catches_a_break_after_content_with_no_content() {
    let mut s = Script::new();
    s.start_attempt(0, 0, 1, "a")
        .push(
            600,
            Some(0),
            EventKind::StreamBreak {
                model_group: g(),
                deployment_id: Arc::from("a"),
                failure: FailureKind::ApiConnection,
                how: BreakKind::Connection,
                tokens_so_far: 0,
                after_content: true,
            },
        )
        .end_attempt(600, 0, 1, 0, "a", false)
        .end(600, 0, 1, 0, true)
        .attempt(0, 10, 1, 1, "a", true)
        .end(10, 1, 1, 0, false);
    assert_eq!(broken(&s), Invariant::EventsConsistent);
    // Multigrid commits at the first byte: not a violation there.
    let multigrid = Bounds {
        commits_at_content: false,
        ..bounds()
    };
    assert_eq!(s.check_with(multigrid), None);
}
