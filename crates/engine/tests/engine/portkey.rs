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

/// `portkey_use_retry_after_header`, with what `retryHandler.ts` (`retryRequest`) does under
/// `followProviderRetry`, re-derived here from its lines rather than from the rule: a 429 with
/// `Retry-After: R` waits `R` when `R < MAX_RETRY_LIMIT_MS` and `R <= remainingRetryTimeout`
/// (60 000 ms per target, less every `R` waited), inside the attempt, on the last attempt too;
/// a larger `R` sets `retrySkipped` and ends the target without a wait; once an `R` was waited
/// every later backoff is 0 (`rateLimiter._timeouts = [0, …]`). Returns the wait before each
/// attempt `1..=calls` and whether the target ended skipped, for `calls` answers of `r_ms`.
fn retry_handler_waits(retry_count: u32, r_ms: &[u128]) -> (Vec<u128>, bool) {
    const MAX_RETRY_LIMIT_MS: u128 = 60_000;
    let mut remaining = MAX_RETRY_LIMIT_MS;
    let mut waits = Vec::new();
    let mut zeroed = false;
    for (i, &r) in r_ms.iter().enumerate() {
        let attempt = i as u32 + 1;
        let wait = if r > 0 && (r >= MAX_RETRY_LIMIT_MS || r > remaining) {
            return (waits, true);
        } else if r > 0 {
            remaining -= r;
            zeroed = true;
            r
        } else if zeroed {
            0
        } else {
            (1000.0 * 2f64.powi(attempt as i32 - 1)).round() as u128
        };
        waits.push(wait);
        // The source's `attempt >= retryCount + 1`: async-retry `bail`s after the last one.
        if attempt > retry_count {
            break;
        }
    }
    (waits, false)
}

fn with_retry_after(num_retries: u32) -> RouterSettings {
    RouterSettings {
        portkey_use_retry_after_header: true,
        ..settings(num_retries)
    }
}

/// The incident with `use_retry_after_header: true`: a target always 429 with
/// Retry-After 5 s and `attempts: 3` waits 5 s before each retry instead of 1, 2, 4 s, and
/// 5 s more after its last 429 before the fallback target.
#[tokio::test(start_paused = true)]
async fn retry_after_replaces_the_backoff_and_is_waited_after_the_last_429() {
    let provider = Scripted::new()
        .always("a1", fail_after(K::RateLimit, ms(5_000)))
        .always("a2", Step::Ok);
    let (router, _) = make_router(
        config(vec![dep("A", "a1"), dep("A", "a2")], with_retry_after(3)),
        provider,
    );
    let result = router.completion(Request::new(1, "A")).await;
    let (derived, skipped) = retry_handler_waits(3, &[5_000; 4]);
    assert!(!skipped);
    assert_eq!(derived, [5_000; 4]);
    let mut expected = vec![0];
    expected.extend(derived);
    assert_eq!(waits_ms(&result), expected);
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
    assert_eq!(outcome(&result), "ok");
}

/// The 60 s per target: Retry-After 25 s is waited twice (35 s, then 10 s left), the third
/// 429's 25 s is more than is left, so the target ends there, without a wait; Retry-After
/// 60 s (`>= MAX_RETRY_LIMIT_MS`) ends it at its first 429.
#[tokio::test(start_paused = true)]
async fn retry_after_beyond_what_is_left_of_60_s_ends_the_target_at_once() {
    for (r, calls) in [(25_000u64, 3usize), (60_000, 1)] {
        let provider = Scripted::new()
            .always("a1", fail_after(K::RateLimit, ms(r)))
            .always("a2", Step::Ok);
        let (router, _) = make_router(
            config(vec![dep("A", "a1"), dep("A", "a2")], with_retry_after(3)),
            provider,
        );
        let result = router.completion(Request::new(1, "A")).await;
        let (derived, skipped) = retry_handler_waits(3, &[u128::from(r); 4]);
        assert!(skipped);
        assert_eq!(derived.len(), calls - 1, "R = {r} ms");
        let mut expected = vec![0];
        expected.extend(derived);
        expected.push(0);
        assert_eq!(waits_ms(&result), expected, "R = {r} ms");
        assert_eq!(attempts(&result).len(), calls + 1, "R = {r} ms");
        assert_eq!(attempts(&result).last().map(String::as_str), Some("a2:ok"));
    }
}

/// After a Retry-After was waited the gateway's remaining backoffs are 0: a 429 with
/// Retry-After 2 s, then two 503s, are retried after 2 s, 0 s, 0 s (not 2 s, 2 s, 4 s); and a
/// single target's last 429 still costs its Retry-After before the error is returned.
#[tokio::test(start_paused = true)]
async fn a_retry_after_waited_zeroes_the_later_backoffs_and_the_last_one_delays_the_error() {
    let provider = Scripted::new()
        .script(
            "a1",
            vec![
                fail_after(K::RateLimit, ms(2_000)),
                fail(K::ServiceUnavailable),
                fail(K::ServiceUnavailable),
            ],
        )
        .always("a1", fail_after(K::RateLimit, ms(3_000)));
    let (router, _) = make_router(config(vec![dep("A", "a1")], with_retry_after(3)), provider);
    let start = tokio::time::Instant::now();
    let result = router.completion(Request::new(1, "A")).await;
    let elapsed = start.elapsed().as_millis();
    let (derived, skipped) = retry_handler_waits(3, &[2_000, 0, 0, 3_000]);
    assert!(!skipped);
    assert_eq!(derived, [2_000, 0, 0, 3_000]);
    assert_eq!(waits_ms(&result), [0, 2_000, 0, 0]);
    assert_eq!(outcome(&result), "rate_limit");
    // Four calls, the three waits between them, and the last 429's 3 s after them.
    let calls = 4 * LATENCY.as_millis();
    assert_eq!(elapsed, calls + derived.iter().sum::<u128>());
}

fn on_status_codes(codes: &[u16]) -> RouterSettings {
    RouterSettings {
        portkey_fallback_on_status_codes: Some(codes.to_vec()),
        ..settings(1)
    }
}

/// `strategy.on_status_codes: [429]` (`handlerUtils.ts`: "If onStatusCodes is provided, and
/// the response status is not in the list … Skip the fallback"): a 400 is the answer, the
/// next target is never called; a 429 still moves on after its retry.
#[tokio::test(start_paused = true)]
async fn a_status_outside_on_status_codes_is_returned_without_a_fallback() {
    let provider = Scripted::new()
        .always("a1", fail(K::BadRequest))
        .always("a2", Step::Ok);
    let (router, _) = make_router(
        config(
            vec![dep("A", "a1"), dep("A", "a2")],
            on_status_codes(&[429]),
        ),
        provider,
    );
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(attempts(&result), ["a1:bad_request"]);
    assert_eq!(outcome(&result), "bad_request");

    let provider = Scripted::new()
        .always("a1", fail(K::RateLimit))
        .always("a2", Step::Ok);
    let (router, _) = make_router(
        config(
            vec![dep("A", "a1"), dep("A", "a2")],
            on_status_codes(&[429]),
        ),
        provider,
    );
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(
        attempts(&result),
        ["a1:rate_limit", "a1:rate_limit", "a2:ok"]
    );
}

/// A connection error reaches the strategy as `retryRequest`'s 500: listed, the walk moves
/// on; not listed, the error is the answer.
#[tokio::test(start_paused = true)]
async fn a_connection_error_is_a_500_to_the_status_list() {
    for (codes, expected) in [
        (
            &[500u16][..],
            vec!["a1:api_connection", "a1:api_connection", "a2:ok"],
        ),
        (
            &[503u16][..],
            vec!["a1:api_connection", "a1:api_connection"],
        ),
    ] {
        let provider = Scripted::new()
            .always("a1", fail(K::ApiConnection))
            .always("a2", Step::Ok);
        let (router, _) = make_router(
            config(vec![dep("A", "a1"), dep("A", "a2")], on_status_codes(codes)),
            provider,
        );
        let result = router.completion(Request::new(1, "A")).await;
        assert_eq!(attempts(&result), expected, "{codes:?}");
    }
}
