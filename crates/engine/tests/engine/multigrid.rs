//! One test per rule of `profile: multigrid` (`multigrid-failover-and-retries.md`), each on the
//! engine with a scripted provider under tokio's paused clock and a seeded router: the two
//! loops (attempts per candidate, the order of the walk, the `models` chain), `allow_fallbacks:
//! false`, full-jitter backoff and Retry-After's precedence, and the end-to-end deadline.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "tests fail loudly, read as one story, and drive tokio's paused clock directly"
)]

use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use routersim_engine::config::{Profile, RouterSettings};
use routersim_engine::event::{EventKind, GiveUpReason, VecSink, WaitReason};
use routersim_engine::failure::{FailureKind as K, ProviderFailure, RetryAfter};
use routersim_engine::request::Request;
use routersim_engine::retry_after::format_http_date;
use routersim_engine::router::DEFAULT_EPOCH_UNIX_MS;

fn settings() -> RouterSettings {
    RouterSettings {
        profile: Some(Profile::Multigrid),
        ..RouterSettings::default()
    }
}

fn with_models(id: u64, model: &str, models: &[&str]) -> Request {
    Request {
        models: models.iter().map(|m| Arc::from(*m)).collect(),
        ..Request::new(id, model)
    }
}

/// Every `wait` event, in order.
fn waits(sink: &VecSink) -> Vec<(Duration, WaitReason)> {
    events_named(&sink.events(), "wait")
        .into_iter()
        .filter_map(|e| match e {
            EventKind::Wait { duration, reason } => Some((duration, reason)),
            _ => None,
        })
        .collect()
}

fn give_ups(sink: &VecSink) -> Vec<GiveUpReason> {
    events_named(&sink.events(), "give_up")
        .into_iter()
        .filter_map(|e| match e {
            EventKind::GiveUp { reason, .. } => Some(reason),
            _ => None,
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn each_candidate_gets_three_attempts_then_the_walk_moves_on() {
    let provider = Scripted::new()
        .always("a1", fail(K::ServiceUnavailable))
        .always("a2", Step::Ok);
    let (router, _) = make_router(
        config(vec![dep("A", "a1"), dep("A", "a2")], settings()),
        provider,
    );
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(
        attempts(&result),
        [
            "a1:service_unavailable",
            "a1:service_unavailable",
            "a1:service_unavailable",
            "a2:ok"
        ]
    );
    assert_eq!(outcome(&result), "ok");
}

#[tokio::test(start_paused = true)]
async fn attempts_per_candidate_sets_the_inner_loop() {
    let provider = Scripted::new()
        .always("a1", fail(K::ServiceUnavailable))
        .always("a2", fail(K::ServiceUnavailable));
    let s = RouterSettings {
        attempts_per_candidate: 2,
        ..settings()
    };
    let (router, _) = make_router(config(vec![dep("A", "a1"), dep("A", "a2")], s), provider);
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(
        attempts(&result),
        [
            "a1:service_unavailable",
            "a1:service_unavailable",
            "a2:service_unavailable",
            "a2:service_unavailable"
        ]
    );
    assert_eq!(outcome(&result), "service_unavailable");
}

#[tokio::test(start_paused = true)]
async fn a_failure_that_is_not_transient_moves_the_walk_on_at_once() {
    let provider = Scripted::new()
        .always("a1", fail(K::BadRequest))
        .always("a2", Step::Ok);
    let (router, _) = make_router(
        config(vec![dep("A", "a1"), dep("A", "a2")], settings()),
        provider,
    );
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(attempts(&result), ["a1:bad_request", "a2:ok"]);
}

#[tokio::test(start_paused = true)]
async fn the_walk_tries_every_deployment_of_the_group_then_each_model_of_the_chain() {
    let provider = Scripted::new()
        .always("a1", fail(K::ServiceUnavailable))
        .always("a2", fail(K::InternalServer))
        .always("b1", fail(K::BadGateway))
        .always("c1", Step::Ok);
    let s = RouterSettings {
        attempts_per_candidate: 1,
        // The router's own fallbacks are LiteLLM's: the walk follows the request's chain.
        fallbacks: fallbacks(&[("A", &["C"])]),
        ..settings()
    };
    let deployments = vec![
        dep("A", "a1"),
        dep("B", "b1"),
        dep("A", "a2"),
        dep("C", "c1"),
    ];
    let (router, sink) = make_router(config(deployments, s), provider);
    let result = router.completion(with_models(1, "A", &["B", "C"])).await;
    assert_eq!(
        attempts(&result),
        [
            "a1:service_unavailable",
            "a2:internal_server",
            "b1:bad_gateway",
            "c1:ok"
        ]
    );
    let depths: Vec<u32> = result.attempts.iter().map(|a| a.fallback_depth).collect();
    assert_eq!(depths, [0, 0, 1, 2]);
    assert_eq!(result.fallbacks, 2);
    assert_eq!(&*result.final_model_group, "C");
    assert_eq!(events_named(&sink.events(), "fallback").len(), 2);

    // Without a chain the walk ends with the group asked for: the last failure is returned.
    let result = router.completion(Request::new(2, "A")).await;
    assert_eq!(
        attempts(&result),
        ["a1:service_unavailable", "a2:internal_server"]
    );
    assert_eq!(outcome(&result), "internal_server");
}

#[tokio::test(start_paused = true)]
async fn allow_fallbacks_false_stops_after_the_first_usable_route() {
    // Per request.
    let provider = Scripted::new()
        .always("a1", fail(K::RateLimit))
        .always("a2", Step::Ok)
        .always("b1", Step::Ok);
    let deployments = vec![dep("A", "a1"), dep("A", "a2"), dep("B", "b1")];
    let (router, _) = make_router(config(deployments.clone(), settings()), provider);
    let mut request = with_models(1, "A", &["B"]);
    request.disable_fallbacks = true;
    let result = router.completion(request.clone()).await;
    assert_eq!(
        attempts(&result),
        ["a1:rate_limit", "a1:rate_limit", "a1:rate_limit"]
    );
    assert_eq!(outcome(&result), "rate_limit");
    // a1's 429 cooled it (a group of two): a2 is now the first usable route.
    request.id = 2;
    let result = router.completion(request).await;
    assert_eq!(attempts(&result), ["a2:ok"]);

    // Per router.
    let provider = Scripted::new()
        .always("a1", fail(K::ServiceUnavailable))
        .always("a2", Step::Ok);
    let s = RouterSettings {
        allow_fallbacks: false,
        ..settings()
    };
    let (router, _) = make_router(config(deployments, s), provider);
    let result = router.completion(with_models(1, "A", &["B"])).await;
    assert_eq!(result.attempts.len(), 3);
    assert!(result.attempts.iter().all(|a| &*a.deployment_id == "a1"));
    assert_eq!(outcome(&result), "service_unavailable");
}

#[tokio::test(start_paused = true)]
async fn backoff_is_full_jitter_under_a_capped_exponential() {
    // caps: 250 ms · 2^k, at most 4 s.
    let caps = [250u64, 500, 1000, 2000, 4000, 4000];
    let provider = Scripted::new().always("a", fail(K::ServiceUnavailable));
    let s = RouterSettings {
        attempts_per_candidate: 7,
        ..settings()
    };
    let (router, sink) = make_router(config(vec![dep("A", "a")], s), provider);
    let mut per_retry: Vec<Vec<Duration>> = vec![Vec::new(); caps.len()];
    for id in 1..=40 {
        let before = waits(&sink).len();
        let result = router.completion(Request::new(id, "A")).await;
        assert_eq!(result.attempts.len(), 7);
        let w = waits(&sink);
        assert_eq!(w.len() - before, 6);
        for (k, (wait, reason)) in w[before..].iter().enumerate() {
            assert_eq!(*reason, WaitReason::Backoff);
            assert!(*wait <= ms(caps[k]), "retry {k}: {wait:?}");
            per_retry[k].push(*wait);
            assert_eq!(result.attempts[k + 1].wait, *wait);
        }
    }
    // Full jitter: from zero, not from the base — the draws spread over the whole range.
    for (k, draws) in per_retry.iter().enumerate() {
        let low = draws.iter().filter(|w| **w < ms(caps[k] / 4)).count();
        let high = draws.iter().filter(|w| **w > ms(caps[k] * 3 / 4)).count();
        assert!(low > 0 && high > 0, "retry {k}: {draws:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn the_providers_retry_after_wins_in_seconds_or_as_an_http_date() {
    let provider = Scripted::new().script(
        "a",
        vec![
            fail_after(K::RateLimit, Duration::from_secs(7)),
            Step::Fail(
                ProviderFailure::new(K::RateLimit).with_retry_after(RetryAfter::HttpDate(
                    // 90 s after the epoch (over LiteLLM's minute); the failure is at 7.2 s.
                    format_http_date(DEFAULT_EPOCH_UNIX_MS + 90_000),
                )),
            ),
            Step::Ok,
        ],
    );
    let s = RouterSettings {
        request_deadline: Duration::from_secs(120),
        ..settings()
    };
    let (router, sink) = make_router(config(vec![dep("A", "a")], s), provider);
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(outcome(&result), "ok");
    let w = waits(&sink);
    assert_eq!(
        w,
        [
            (Duration::from_secs(7), WaitReason::RetryAfter),
            (ms(82_800), WaitReason::RetryAfter)
        ]
    );
    assert_eq!(starts_ms(&result), [0, 7_100, 90_000]);
}

#[tokio::test(start_paused = true)]
async fn a_wait_that_would_cross_the_deadline_fails_over_now() {
    let provider = Scripted::new()
        .always("a1", fail_after(K::RateLimit, Duration::from_secs(30)))
        .always("a2", Step::Ok);
    let (router, sink) = make_router(
        config(vec![dep("A", "a1"), dep("A", "a2")], settings()),
        provider,
    );
    let result = router.completion(Request::new(1, "A")).await;
    // 0.1 s: fail, wait 30 s; 30.2 s: fail, a 30 s wait would end past 60 s: a2 at once.
    assert_eq!(
        attempts(&result),
        ["a1:rate_limit", "a1:rate_limit", "a2:ok"]
    );
    assert_eq!(starts_ms(&result), [0, 30_100, 30_200]);
    assert!(give_ups(&sink).contains(&GiveUpReason::DeadlineExhausted));

    // A streamed request has 300 s: the same waits fit.
    let provider = Scripted::new()
        .script(
            "a1",
            vec![
                fail_after(K::RateLimit, Duration::from_secs(30)),
                fail_after(K::RateLimit, Duration::from_secs(30)),
                Step::Stream(vec![(ms(10), text(3)), (ms(10), done())]),
            ],
        )
        .always("a2", Step::Ok);
    let (router, _) = make_router(
        config(vec![dep("A", "a1"), dep("A", "a2")], settings()),
        provider,
    );
    let mut request = Request::new(1, "A");
    request.stream = true;
    let result = router.completion(request).await;
    assert_eq!(
        attempts(&result),
        ["a1:rate_limit", "a1:rate_limit", "a1:ok"]
    );
}

#[tokio::test(start_paused = true)]
async fn no_attempt_starts_past_the_deadline() {
    // A Retry-After of 0: no wait ever crosses the deadline, the attempts themselves reach it.
    let provider = Scripted::new()
        .always("a1", fail_after(K::ServiceUnavailable, Duration::ZERO))
        .always("a2", Step::Ok)
        .always("b1", Step::Ok);
    let s = RouterSettings {
        attempts_per_candidate: 1000,
        request_deadline: Duration::from_secs(2),
        ..settings()
    };
    let deployments = vec![dep("A", "a1"), dep("A", "a2"), dep("B", "b1")];
    let (router, sink) = make_router(config(deployments, s), provider);
    let result = router.completion(with_models(1, "A", &["B"])).await;
    // Tries at 0, 0.1, …, 1.9 s; the next would start at 2 s: none does, on any candidate.
    assert_eq!(result.attempts.len(), 20, "{:?}", attempts(&result));
    assert!(result.attempts.iter().all(|a| &*a.deployment_id == "a1"));
    assert_eq!(starts_ms(&result).last(), Some(&1_900));
    assert_eq!(outcome(&result), "service_unavailable");
    assert_eq!(result.latency(), Duration::from_secs(2));
    assert_eq!(give_ups(&sink), [GiveUpReason::DeadlineExhausted]);
}

#[tokio::test(start_paused = true)]
async fn a_wait_that_ends_just_before_the_deadline_starts_no_attempt_at_it() {
    // Found by `explore` (`within_walk_deadline`): a wait that ends 0.5 ms before the deadline
    // is allowed, but the timer wakes on the next millisecond tick, at the deadline itself.
    let provider = Scripted::new()
        .always(
            "a1",
            fail_after(K::ServiceUnavailable, Duration::from_micros(1_899_500)),
        )
        .always("b1", Step::Ok);
    let s = RouterSettings {
        request_deadline: Duration::from_secs(2),
        ..settings()
    };
    let (router, sink) = make_router(config(vec![dep("A", "a1"), dep("B", "b1")], s), provider);
    let result = router.completion(with_models(1, "A", &["B"])).await;
    // 0.1 s: fail, wait until 1.9995 s; the clock then reads 2 s: no attempt, on any candidate.
    assert_eq!(attempts(&result), ["a1:service_unavailable"]);
    assert_eq!(outcome(&result), "service_unavailable");
    assert_eq!(result.latency(), Duration::from_secs(2));
    assert_eq!(give_ups(&sink), [GiveUpReason::DeadlineExhausted]);
}

#[test]
fn the_profile_and_its_keys_load_and_say_when_they_do_nothing() {
    use routersim_config::load_router_config_str;
    use routersim_engine::stream::StreamRecovery;
    let model_list = "model_list:\n  - model_name: A\n    litellm_params: {model: openai/a}\n";
    let c = load_router_config_str(&format!(
        "{model_list}router_settings:\n  profile: multigrid\n  attempts_per_candidate: 5\n  \
         allow_fallbacks: false\n  request_deadline: 30s\n  stream_deadline: 2m\n"
    ))
    .unwrap();
    let s = &c.settings;
    assert_eq!(s.profile, Some(Profile::Multigrid));
    assert_eq!(s.stream_recovery, StreamRecovery::Multigrid);
    assert_eq!((s.attempts_per_candidate, s.allow_fallbacks), (5, false));
    assert_eq!(s.request_deadline, Duration::from_secs(30));
    assert_eq!(s.stream_deadline, Duration::from_secs(120));
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);

    let defaults = load_router_config_str(&format!(
        "{model_list}router_settings:\n  profile: multigrid\n"
    ))
    .unwrap()
    .settings;
    assert_eq!(defaults.attempts_per_candidate, 3);
    assert!(defaults.allow_fallbacks);
    assert_eq!(defaults.request_deadline, Duration::from_secs(60));
    assert_eq!(defaults.stream_deadline, Duration::from_secs(300));

    let litellm = load_router_config_str(&format!(
        "{model_list}router_settings:\n  request_deadline: 30s\n"
    ))
    .unwrap();
    assert_eq!(litellm.warnings.len(), 1, "{:?}", litellm.warnings);
    assert!(litellm.warnings[0].contains("router_settings.request_deadline"));

    let err = load_router_config_str(&format!(
        "{model_list}router_settings:\n  profile: multigrid\n  attempts_per_candidate: 0\n"
    ))
    .unwrap_err();
    assert!(err.to_string().contains("attempts_per_candidate"), "{err}");
}

#[tokio::test(start_paused = true)]
async fn an_attempt_running_at_the_deadline_is_cut_there() {
    let provider = Scripted::new()
        .always(
            "a1",
            Step::SlowFail(
                Duration::from_secs(5),
                ProviderFailure::new(K::ServiceUnavailable),
            ),
        )
        .always("a2", Step::Ok);
    let s = RouterSettings {
        request_deadline: Duration::from_secs(2),
        ..settings()
    };
    let (router, sink) = make_router(config(vec![dep("A", "a1"), dep("A", "a2")], s), provider);
    let result = router.completion(Request::new(1, "A")).await;
    // Cut at 2 s (a timeout): a retried request never takes longer than the deadline.
    assert_eq!(attempts(&result), ["a1:timeout"]);
    assert_eq!(result.latency(), Duration::from_secs(2));
    assert_eq!(outcome(&result), "timeout");
    assert_eq!(give_ups(&sink), [GiveUpReason::DeadlineExhausted]);
}
