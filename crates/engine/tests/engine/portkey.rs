//! `profile: portkey` on the engine, one test per rule read from the Portkey gateway's source
//! (tag v1.15.2): a target's retries and their waits (async-retry with `randomize: false`:
//! `round(minTimeout · factor^k)`, minTimeout 1000 ms, factor 2), Retry-After ignored, the
//! fallback strategy moving on after any non-ok answer, and no cooldowns between requests.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods,
    reason = "tests fail loudly and drive tokio's paused clock directly"
)]

use crate::common::*;
use routersim_engine::config::{Profile, RouterSettings};
use routersim_engine::failure::FailureKind as K;
use routersim_engine::request::Request;

fn settings(num_retries: u32) -> RouterSettings {
    RouterSettings {
        profile: Some(Profile::Portkey),
        num_retries,
        ..RouterSettings::default()
    }
}

/// node-retry's `timeouts()` for `{retries, factor: 2, minTimeout: 1000, maxTimeout: Infinity,
/// randomize: false}`: `Math.round(1 * 1000 * 2 ** k)` for k in 0..retries (ms).
fn node_retry_timeouts(retries: u32) -> Vec<u128> {
    (0..retries)
        .map(|k| (1000.0 * 2f64.powi(k as i32)).round() as u128)
        .collect()
}

/// The measured incident: a target always 429 with Retry-After 5 s, `retry.attempts: 3`:
/// 1 + 3 calls with waits of 1 s, 2 s, 4 s (the Retry-After ignored), then the fallback
/// target, at once.
#[tokio::test(start_paused = true)]
async fn a_429_target_gets_its_retries_with_exponential_waits_then_the_next_target() {
    let provider = Scripted::new()
        .always("a1", fail_after(K::RateLimit, ms(5_000)))
        .always("a2", Step::Ok);
    let (router, _) = make_router(
        config(vec![dep("A", "a1"), dep("A", "a2")], settings(3)),
        provider,
    );
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(
        attempts(&result),
        [
            "a1:rate_limit",
            "a1:rate_limit",
            "a1:rate_limit",
            "a1:rate_limit",
            "a2:ok"
        ]
    );
    let mut expected = vec![0];
    expected.extend(node_retry_timeouts(3));
    expected.push(0);
    assert_eq!(waits_ms(&result), expected);
    // Each scripted call takes the fake's latency; the waits come between them.
    let latency = LATENCY.as_millis();
    let starts: Vec<u128> = (0..expected.len())
        .map(|i| i as u128 * latency + expected[..=i].iter().sum::<u128>())
        .collect();
    assert_eq!(starts_ms(&result), starts);
    assert_eq!(outcome(&result), "ok");
}

/// A status outside `RETRY_STATUS_CODES` (429, 500, 502, 503, 504) is not retried, and the
/// fallback strategy (no `on_status_codes`) moves on after any answer that is not ok.
#[tokio::test(start_paused = true)]
async fn a_status_outside_the_retry_list_moves_on_without_a_retry() {
    let provider = Scripted::new()
        .always("a1", fail(K::BadRequest))
        .always("a2", fail(K::Overloaded))
        .always("a3", fail(K::ServiceUnavailable));
    let (router, _) = make_router(
        config(
            vec![dep("A", "a1"), dep("A", "a2"), dep("A", "a3")],
            settings(2),
        ),
        provider,
    );
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(
        attempts(&result),
        [
            "a1:bad_request",
            "a2:overloaded",
            "a3:service_unavailable",
            "a3:service_unavailable",
            "a3:service_unavailable"
        ]
    );
    assert_eq!(waits_ms(&result), [0, 0, 0, 1000, 2000]);
    assert_eq!(outcome(&result), "service_unavailable");
}

/// No health state between requests: every request starts again at the failing first target
/// and spends its retries there (the measurement: 20 sequential requests, 80 calls).
#[tokio::test(start_paused = true)]
async fn no_cooldown_every_request_pays_the_failing_target_again() {
    let provider = Scripted::new()
        .always("a1", fail(K::RateLimit))
        .always("a2", Step::Ok);
    let (router, _) = make_router(
        config(vec![dep("A", "a1"), dep("A", "a2")], settings(3)),
        provider,
    );
    let mut to_a1 = 0;
    for id in 0..20 {
        let result = router.completion(Request::new(id, "A")).await;
        assert_eq!(outcome(&result), "ok");
        to_a1 += result
            .attempts
            .iter()
            .filter(|a| &*a.deployment_id == "a1")
            .count();
    }
    assert_eq!(to_a1, 20 * (1 + 3));
}

/// The gateway has no end-to-end deadline: `request_deadline` (multigrid's and contract's)
/// does not cut a Portkey walk, whose retries take 1 + 2 + 4 s here.
#[tokio::test(start_paused = true)]
async fn no_walk_deadline_cuts_the_retries() {
    let provider = Scripted::new()
        .always("a1", fail(K::ServiceUnavailable))
        .always("a2", Step::Ok);
    let s = RouterSettings {
        request_deadline: std::time::Duration::from_secs(2),
        ..settings(3)
    };
    let (router, _) = make_router(config(vec![dep("A", "a1"), dep("A", "a2")], s), provider);
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(attempts(&result).len(), 5, "{:?}", attempts(&result));
    assert_eq!(outcome(&result), "ok");
    assert_eq!(starts_ms(&result)[4], 7000 + 4 * LATENCY.as_millis());
}
