//! One test per rule of `profile: litellm-1.110` (what LiteLLM 1.110.2's code does where it
//! departs from its docs, measured by `tools/litellm-oracle/`), each on the engine with a
//! scripted provider under tokio's paused clock. The same scenarios under the documented
//! rules (`profile: litellm`) behave as the seed says; each test names the oracle scenario
//! it reproduces.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "tests fail loudly, read as one story, and drive tokio's paused clock directly"
)]

use std::time::Duration;

use crate::common::*;
use routersim_engine::config::{Deployment, KindPolicy, Profile, RouterSettings};
use routersim_engine::event::{EventKind, VecSink};
use routersim_engine::failure::{FailureKind as K, ProviderFailure, RetryAfter};
use routersim_engine::request::Request;
use routersim_engine::state::{InMemoryState, Rewrite, StateStore};

fn settings() -> RouterSettings {
    RouterSettings {
        profile: Some(Profile::LiteLlm110),
        ..RouterSettings::default()
    }
}

fn ordered(group: &str, id: &str, order: u32) -> Deployment {
    Deployment {
        order: Some(order),
        ..dep(group, id)
    }
}

/// Every `wait` event's duration, in order.
fn waits(sink: &VecSink) -> Vec<Duration> {
    events_named(&sink.events(), "wait")
        .into_iter()
        .filter_map(|e| match e {
            EventKind::Wait { duration, .. } => Some(duration),
            _ => None,
        })
        .collect()
}

fn within_jitter(wait: Duration, base_ms: u64) -> bool {
    wait >= ms(base_ms) && wait < ms(base_ms + 750)
}

fn policy(entries: &[(K, u32)]) -> KindPolicy {
    KindPolicy {
        per_kind: entries.iter().copied().collect(),
        default: None,
    }
}

// Oracle 01/02/29: after the last failed try the router still waits its backoff.
#[tokio::test(start_paused = true)]
async fn the_last_failed_try_still_waits_its_backoff() {
    let provider = Scripted::new().always("a", fail(K::ServiceUnavailable));
    let (router, sink) = make_router(config(vec![dep("A", "a")], settings()), provider);
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(result.attempts.len(), 3);
    let w = waits(&sink);
    assert_eq!(w.len(), 3, "{w:?}");
    for (wait, base) in w.iter().zip([500, 1000, 2000]) {
        assert!(within_jitter(*wait, base), "{w:?}");
    }
    assert!(result.latency() >= ms(3500));
}

// Oracle 19/28: no wait when no deployment is left to retry.
#[tokio::test(start_paused = true)]
async fn no_wait_when_every_deployment_of_the_group_is_cooling() {
    let provider = Scripted::new()
        .always("a1", fail(K::RateLimit))
        .always("a2", fail(K::RateLimit));
    let (router, sink) = make_router(
        config(vec![dep("A", "a1"), dep("A", "a2")], settings()),
        provider,
    );
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(result.attempts.len(), 2);
    assert!(waits(&sink).is_empty());
    assert_eq!(outcome(&result), "rate_limit");
}

// Oracle 24: jitter is added to a Retry-After wait too; 0 and over 60 s fall to the backoff.
#[tokio::test(start_paused = true)]
async fn retry_after_waits_get_jitter_and_odd_values_fall_to_the_backoff() {
    for (retry_after, base) in [(3, 3000), (60, 60_000), (61, 500), (0, 500)] {
        let provider = Scripted::new().script(
            "w",
            vec![
                fail_after(K::RateLimit, Duration::from_secs(retry_after)),
                Step::Ok,
            ],
        );
        let (router, sink) = make_router(config(vec![dep("W", "w")], settings()), provider);
        router.completion(Request::new(1, "W")).await;
        let w = waits(&sink);
        assert_eq!(w.len(), 1, "{retry_after}: {w:?}");
        assert!(
            within_jitter(w[0], base) && w[0] > ms(base),
            "{retry_after}: {w:?}"
        );
    }
}

// Oracle 51/52: an HTTP-date Retry-After counts whole seconds from now, rounded down
// (`int(date - time.time())`), and gets jitter like any Retry-After.
#[tokio::test(start_paused = true)]
async fn an_http_date_retry_after_counts_whole_seconds() {
    let date = routersim_engine::retry_after::format_http_date(
        routersim_engine::router::DEFAULT_EPOCH_UNIX_MS + 5_000,
    );
    let failure = ProviderFailure::new(K::RateLimit).with_retry_after(RetryAfter::HttpDate(date));
    let provider = Scripted::new().script("w", vec![Step::Fail(failure), Step::Ok]);
    let (router, sink) = make_router(config(vec![dep("W", "w")], settings()), provider);
    router.completion(Request::new(1, "W")).await;
    // The failure comes back 100 ms in: the date is 4.9 s ahead, read as 4 s.
    let w = waits(&sink);
    assert!(w.len() == 1 && within_jitter(w[0], 4000), "{w:?}");
}

// Oracle 26: the 8 s cap beats the router's retry_after.
#[tokio::test(start_paused = true)]
async fn the_eight_second_cap_beats_the_router_retry_after() {
    let provider = Scripted::new().always("a", fail(K::ServiceUnavailable));
    let s = RouterSettings {
        retry_after: Duration::from_secs(20),
        ..settings()
    };
    let (router, sink) = make_router(config(vec![dep("A", "a")], s), provider);
    router.completion(Request::new(1, "A")).await;
    let w = waits(&sink);
    assert!(
        !w.is_empty() && w.iter().all(|w| within_jitter(*w, 8000)),
        "{w:?}"
    );
}

// Oracle 03 B: a retry_policy entry makes a 400 retryable.
#[tokio::test(start_paused = true)]
async fn a_retry_policy_entry_makes_a_4xx_retryable() {
    let provider = Scripted::new().always("b", fail(K::BadRequest));
    let s = RouterSettings {
        num_retries: 1,
        retry_policy: Some(policy(&[(K::BadRequest, 2)])),
        ..settings()
    };
    let (router, _) = make_router(config(vec![dep("B", "b")], s), provider);
    let result = router.completion(Request::new(1, "B")).await;
    assert_eq!(result.attempts.len(), 3);
}

// Oracle 04: a model_group_retry_policy replaces the router's retry_policy as a whole.
#[tokio::test(start_paused = true)]
async fn a_group_retry_policy_without_the_kind_falls_to_num_retries() {
    let provider = Scripted::new().always("g", fail(K::ServiceUnavailable));
    let s = RouterSettings {
        num_retries: 1,
        retry_policy: Some(policy(&[(K::ServiceUnavailable, 3)])),
        model_group_retry_policy: [("G".to_string(), policy(&[(K::RateLimit, 0)]))].into(),
        ..settings()
    };
    let (router, _) = make_router(config(vec![dep("G", "g")], s), provider);
    let result = router.completion(Request::new(1, "G")).await;
    assert_eq!(result.attempts.len(), 2);
}

// Oracle 03 N: a 404 under a retry policy cools the lone deployment; the retries fail to
// pick, with their backoff between, and end in router_rate_limit.
#[tokio::test(start_paused = true)]
async fn a_404_under_a_retry_policy_ends_in_router_rate_limit() {
    let provider = Scripted::new().always("n", fail(K::NotFound));
    let s = RouterSettings {
        num_retries: 1,
        retry_policy: Some(policy(&[(K::NotFound, 2)])),
        ..settings()
    };
    let (router, sink) = make_router(config(vec![dep("N", "n")], s), provider);
    let result = router.completion(Request::new(1, "N")).await;
    assert_eq!(attempts(&result), ["n:not_found"]);
    assert_eq!(outcome(&result), "router_rate_limit");
    assert_eq!(events_named(&sink.events(), "cooldown_set").len(), 1);
    let w = waits(&sink);
    assert_eq!(w.len(), 3, "{w:?}");
}

// Oracle 20: a request whose first pick fails (the lone deployment is cooling) is not retried.
#[tokio::test(start_paused = true)]
async fn a_first_failed_pick_is_not_retried() {
    let provider = Scripted::new().always("s", fail(K::Authentication));
    let (router, sink) = make_router(config(vec![dep("S", "s")], settings()), provider);
    router.completion(Request::new(1, "S")).await;
    let before = waits(&sink).len();
    let second = router.completion(Request::new(2, "S")).await;
    assert!(second.attempts.is_empty());
    assert_eq!(outcome(&second), "router_rate_limit");
    assert_eq!(waits(&sink).len(), before);
    assert_eq!(second.retries, 0);
}

// Oracle 35/09: a context-window error falls through to the general fallbacks when
// context_window_fallbacks has no entry for the group.
#[tokio::test(start_paused = true)]
async fn a_context_window_error_without_its_entry_takes_the_general_fallback() {
    let provider = Scripted::new().always("a", fail(K::ContextWindowExceeded));
    let s = RouterSettings {
        fallbacks: fallbacks(&[("A", &["B"])]),
        context_window_fallbacks: fallbacks(&[("X", &["X-long"])]),
        ..settings()
    };
    let deployments = vec![
        dep("A", "a"),
        dep("B", "b"),
        dep("X", "x"),
        dep("X-long", "xl"),
    ];
    let (router, _) = make_router(config(deployments, s), provider);
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(attempts(&result), ["a:context_window_exceeded", "b:ok"]);
}

// Oracle 10 C: the content-policy asymmetry stays: no entry while the list is set elsewhere
// means no fallback at all.
#[tokio::test(start_paused = true)]
async fn a_content_policy_error_without_its_entry_is_raised() {
    let provider = Scripted::new().always("c", fail(K::ContentPolicyViolation));
    let s = RouterSettings {
        fallbacks: fallbacks(&[("C", &["B"])]),
        content_policy_fallbacks: fallbacks(&[("X", &["X-safe"])]),
        ..settings()
    };
    let deployments = vec![
        dep("C", "c"),
        dep("B", "b"),
        dep("X", "x"),
        dep("X-safe", "xs"),
    ];
    let (router, _) = make_router(config(deployments, s), provider);
    let result = router.completion(Request::new(1, "C")).await;
    assert_eq!(attempts(&result), ["c:content_policy_violation"]);
}

// Oracle 40: an order fallback is a hop that opens a new retry budget (order-2 deployments
// already tried are tried again) and counts in x-litellm-attempted-fallbacks.
#[tokio::test(start_paused = true)]
async fn an_order_fallback_opens_a_new_retry_budget() {
    let provider = Scripted::new()
        .always("a1", fail(K::RateLimit))
        .always("a2", fail(K::ServiceUnavailable));
    let s = RouterSettings {
        num_retries: 3,
        cooldown_time: Duration::from_secs(60),
        ..settings()
    };
    let deployments = vec![ordered("A", "a1", 1), ordered("A", "a2", 2)];
    let (router, sink) = make_router(config(deployments, s), provider);
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(
        attempts(&result),
        [
            "a1:rate_limit",
            "a2:service_unavailable",
            "a2:service_unavailable",
            "a2:service_unavailable",
            "a2:service_unavailable",
            "a2:service_unavailable",
        ]
    );
    assert_eq!(events_named(&sink.events(), "order_fallback").len(), 1);
    assert!(waits(&sink).is_empty());
}

// Oracle 21: the order hop counts as a fallback in LiteLLM's header.
#[tokio::test(start_paused = true)]
async fn an_order_fallback_counts_in_attempted_fallbacks() {
    let provider = Scripted::new().always("a1", fail(K::ServiceUnavailable));
    let deployments = vec![ordered("A", "a1", 1), ordered("A", "a2", 2)];
    let (router, _) = make_router(config(deployments, settings()), provider);
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(attempts(&result).last().unwrap(), "a2:ok");
    assert_eq!((result.fallbacks, result.attempted_fallbacks), (0, 1));
    assert_eq!(result.attempted_retries, 0);
}

// Oracle 54: a retry that lands on order 2 because order 1 is cooling is a retry, not a hop.
#[tokio::test(start_paused = true)]
async fn a_retry_landing_on_order_two_counts_as_a_retry() {
    let provider = Scripted::new().always("a1", fail(K::RateLimit));
    let deployments = vec![ordered("A", "a1", 1), ordered("A", "a2", 2)];
    let (router, sink) = make_router(config(deployments, settings()), provider);
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(attempts(&result), ["a1:rate_limit", "a2:ok"]);
    assert_eq!((result.retries, result.attempted_retries), (1, 1));
    assert_eq!(result.attempted_fallbacks, 0);
    assert!(events_named(&sink.events(), "order_fallback").is_empty());
}

// Oracle 55: weighted failover hops are nested retry scopes over the deployments not yet
// failed, each with its own budget.
#[tokio::test(start_paused = true)]
async fn weighted_failover_hops_retry_on_the_deployments_left() {
    let provider = Scripted::new()
        .always("a1", fail(K::ServiceUnavailable))
        .always("a2", fail(K::ServiceUnavailable));
    let s = RouterSettings {
        num_retries: 1,
        enable_weighted_failover: true,
        fallbacks: fallbacks(&[("A", &["B"])]),
        ..settings()
    };
    let deployments = vec![dep("A", "a1"), dep("A", "a2"), dep("B", "b")];
    let (router, _) = make_router(config(deployments, s), provider);
    let result = router.completion(Request::new(1, "A")).await;
    let tried = attempts(&result);
    // Two tries (one retry) on the first deployment picked, two on the other, then B.
    assert_eq!(tried.len(), 5, "{tried:?}");
    assert_eq!(tried[0], tried[1]);
    assert_eq!(tried[2], tried[3]);
    assert_ne!(tried[0], tried[2]);
    assert_eq!(tried[4], "b:ok");
    // Every later hop is nested inside the first failover hop.
    assert_eq!(result.attempted_fallbacks, 1);
}

// Issue 13: a re-write of a live cooldown never extends it, and a shorter one shortens it.
#[tokio::test(start_paused = true)]
async fn a_cooldown_rewrite_keeps_the_earlier_of_first_expiry_and_latest_end() {
    let store = InMemoryState::new(1);
    let t0 = tokio::time::Instant::now();
    let rule = Rewrite::FirstOrLatest;
    assert_eq!(
        store.rewrite_cooldown(0, t0, t0 + ms(3000), rule),
        t0 + ms(3000)
    );
    let t1 = t0 + ms(300);
    assert_eq!(
        store.rewrite_cooldown(0, t1, t1 + ms(1000), rule),
        t1 + ms(1000)
    );
    let t2 = t0 + ms(500);
    assert_eq!(
        store.rewrite_cooldown(0, t2, t2 + ms(10_000), rule),
        t0 + ms(3000)
    );
    // Expired: a fresh write.
    let t3 = t0 + ms(4000);
    assert_eq!(
        store.rewrite_cooldown(0, t3, t3 + ms(5000), rule),
        t3 + ms(5000)
    );
}

// Issue 13, through the router: two requests in flight on the same deployment; the second
// failure (Retry-After 1 s, while the first one's 3 s cooldown is live) shortens it, and is
// still reported as its own cooldown_set.
#[tokio::test(start_paused = true)]
async fn a_second_failure_on_a_cooling_deployment_shortens_its_cooldown() {
    let provider = Scripted::new().script(
        "a1",
        vec![
            fail_after(K::RateLimit, Duration::from_secs(3)),
            fail_after(K::RateLimit, Duration::from_secs(1)),
        ],
    );
    let s = RouterSettings {
        num_retries: 0,
        ..settings()
    };
    let deployments = vec![ordered("A", "a1", 1), ordered("A", "a2", 2)];
    let (router, sink) = make_router(config(deployments, s), provider);
    let (r1, r2) = (Request::new(1, "A"), Request::new(2, "A"));
    let t0 = tokio::time::Instant::now();
    // The second request reaches a1 50 ms later, while the first one's call is in flight.
    tokio::join!(router.completion_of(&r1), async {
        tokio::time::sleep(ms(50)).await;
        router.completion_of(&r2).await
    });
    let until: Vec<_> = events_named(&sink.events(), "cooldown_set")
        .into_iter()
        .filter_map(|e| match e {
            EventKind::CooldownSet { until, .. } => Some(until),
            _ => None,
        })
        .collect();
    // The first failure (at 100 ms) cools a1 for 3 s; the second (at 150 ms, while a1 is
    // cooling) for 1 s, and that earlier end wins.
    assert_eq!(
        until,
        [t0 + ms(100) + ms(3000), t0 + ms(150) + ms(1000)],
        "{until:?}"
    );
}

// Oracle 48: a router cooldown_time of 0 means the default 5 s.
#[tokio::test(start_paused = true)]
async fn a_router_cooldown_time_of_zero_means_five_seconds() {
    let provider = Scripted::new().always("a1", fail(K::RateLimit));
    let s = RouterSettings {
        cooldown_time: Duration::ZERO,
        num_retries: 0,
        ..settings()
    };
    let (router, sink) = make_router(config(vec![dep("A", "a1"), dep("A", "a2")], s), provider);
    router.completion(Request::new(1, "A")).await;
    let durations: Vec<_> = events_named(&sink.events(), "cooldown_set")
        .into_iter()
        .filter_map(|e| match e {
            EventKind::CooldownSet { duration, .. } => Some(duration),
            _ => None,
        })
        .collect();
    assert_eq!(durations, [Duration::from_secs(5)]);
}

// Explicit policies still win over the bundle: a builder-supplied backoff replaces the
// profile's.
#[tokio::test(start_paused = true)]
async fn an_explicit_policy_wins_over_the_profile() {
    let provider = Scripted::new().always("a", fail(K::ServiceUnavailable));
    let sink = std::sync::Arc::new(VecSink::new());
    let router =
        routersim_engine::Router::builder(config(vec![dep("A", "a")], settings()), provider)
            .sink(sink.clone())
            .backoff(routersim_engine::backoff::LiteLlmBackoff)
            .build();
    router.completion(Request::new(1, "A")).await;
    // The profile's retry policy still waits after the last try, with the documented backoff.
    assert_eq!(waits(&sink).len(), 3);
}
