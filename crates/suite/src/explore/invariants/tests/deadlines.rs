//! The no-wait-past-deadline invariant: waits, attempts and streams within their limits.

use super::*;

#[test]
fn no_wait_past_deadline_catches_long_waits() {
    // Request 0 fails on b, waits, and succeeds after the wait.
    let wait = |duration: Duration, reason: WaitReason| {
        let mut s = Script::new();
        let after = 100 + duration.as_millis() as u64;
        s.attempt(0, 100, 0, 1, "b", false)
            .retry(100, 0, 1, 2)
            .push(100, Some(0), EventKind::Wait { duration, reason })
            .attempt(after, after + 10, 0, 2, "b", true)
            .end(after + 10, 0, 2, 1, false)
            .attempt(0, 10, 1, 1, "a", true)
            .end(10, 1, 1, 0, false);
        s
    };
    let s = wait(Duration::from_secs(61), WaitReason::RetryAfter);
    assert_eq!(broken(&s), Invariant::NoWaitPastDeadline);
    let s = wait(Duration::ZERO, WaitReason::RetryAfter);
    assert_eq!(broken(&s), Invariant::NoWaitPastDeadline);
    let s = wait(Duration::from_millis(8750), WaitReason::Backoff);
    assert_eq!(broken(&s), Invariant::NoWaitPastDeadline);
    assert_eq!(
        wait(Duration::from_millis(8749), WaitReason::Backoff).check(),
        None
    );
    assert_eq!(
        wait(Duration::from_secs(60), WaitReason::RetryAfter).check(),
        None
    );
}

#[test]
fn no_wait_past_deadline_catches_an_attempt_over_its_timeout() {
    let mut s = Script::new();
    // Deployment a's timeout is 5 s; a non-streamed attempt took 6 s.
    s.attempt(0, 6000, 0, 1, "a", true)
        .end(6000, 0, 1, 0, false)
        .attempt(0, 10, 1, 1, "a", true)
        .end(10, 1, 1, 0, false);
    assert_eq!(broken(&s), Invariant::NoWaitPastDeadline);
    // The same attempt of a streamed request: a stream has no overall deadline.
    let mut s = Script::new();
    s.attempt(0, 6000, 0, 1, "a", true)
        .end(6000, 0, 1, 0, true)
        .attempt(0, 10, 1, 1, "a", true)
        .end(10, 1, 1, 0, false);
    assert_eq!(s.check(), None);
}

#[test]
fn no_wait_past_deadline_catches_stream_stalls_and_a_late_first_token() {
    // Chunks 1.5 s apart under a 1 s stall timeout.
    let mut s = Script::new();
    s.start_attempt(0, 0, 1, "b")
        .chunk(100, 0)
        .chunk(1600, 0)
        .end_attempt(1600, 0, 1, 0, "b", true)
        .end(1600, 0, 1, 0, true);
    assert_eq!(broken(&s), Invariant::NoWaitPastDeadline);
    // The attempt ends 1.5 s after its last chunk.
    let mut s = Script::new();
    s.start_attempt(0, 0, 1, "b")
        .chunk(100, 0)
        .end_attempt(1600, 0, 1, 0, "b", false)
        .end(1600, 0, 1, 0, true);
    assert_eq!(broken(&s), Invariant::NoWaitPastDeadline);
    // First content 3.5 s after the start; stream_timeout 2 s + stall slack 1 s.
    let mut s = Script::new();
    s.start_attempt(0, 0, 1, "a")
        .chunk(3500, 0)
        .end_attempt(3500, 0, 1, 0, "a", true)
        .end(3500, 0, 1, 0, true);
    assert_eq!(broken(&s), Invariant::NoWaitPastDeadline);
}
