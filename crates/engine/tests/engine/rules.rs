//! One test per rule of the LiteLLM seed (`litellm-router-reliability.md`), each driving the
//! engine with a scripted provider under tokio's paused clock and asserting the exact attempt
//! sequence, waits and cooldowns.
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
use routersim_engine::config::{FallbackTarget, KindPolicy, RouterSettings};
use routersim_engine::event::{CooldownReason, EventKind, FallbackLevel, GiveUpReason};
use routersim_engine::failure::{FailureKind as K, ProviderFailure, RetryAfter};
use routersim_engine::request::Request;
use routersim_engine::retry_after::format_http_date;
use routersim_engine::router::DEFAULT_EPOCH_UNIX_MS;

fn seed_settings() -> RouterSettings {
    RouterSettings {
        fallbacks: fallbacks(&[("A", &["B"])]),
        context_window_fallbacks: fallbacks(&[("A", &["A-long"])]),
        num_retries: 2,
        ..RouterSettings::default()
    }
}

fn seed_deployments() -> Vec<routersim_engine::config::Deployment> {
    vec![dep("A", "a0"), dep("B", "b0"), dep("A-long", "al0")]
}

fn give_up_reasons(sink: &routersim_engine::event::VecSink) -> Vec<GiveUpReason> {
    events_named(&sink.events(), "give_up")
        .into_iter()
        .filter_map(|e| match e {
            EventKind::GiveUp { reason, .. } => Some(reason),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------- the seed's example

#[tokio::test(start_paused = true)]
async fn fallbacks_seed_example_503_from_a_gives_a_a_a_b() {
    let provider = Scripted::new().always("a0", fail(K::ServiceUnavailable));
    let (router, sink) = make_router(config(seed_deployments(), seed_settings()), provider);
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(
        attempts(&result),
        [
            "a0:service_unavailable",
            "a0:service_unavailable",
            "a0:service_unavailable",
            "b0:ok"
        ]
    );
    assert_eq!(outcome(&result), "ok");
    assert_eq!((result.retries, result.fallbacks), (2, 1));
    let fallback = events_named(&sink.events(), "fallback");
    assert_eq!(
        fallback,
        vec![EventKind::Fallback {
            source: Arc::from("A"),
            target: Arc::from("B"),
            order: 0,
            depth: 1,
            level: FallbackLevel::General,
            failure: K::ServiceUnavailable,
        }]
    );
}

#[tokio::test(start_paused = true)]
async fn fallbacks_seed_example_b_runs_its_own_retries_and_caller_gets_the_original_failure() {
    let provider = Scripted::new()
        .always("a0", fail(K::ServiceUnavailable))
        .always("b0", fail(K::RateLimit));
    let (router, _) = make_router(config(seed_deployments(), seed_settings()), provider);
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(
        attempts(&result),
        [
            "a0:service_unavailable",
            "a0:service_unavailable",
            "a0:service_unavailable",
            "b0:rate_limit",
            "b0:rate_limit",
            "b0:rate_limit"
        ]
    );
    // The original failure, with every attempt attached.
    assert_eq!(outcome(&result), "service_unavailable");
    assert_eq!(result.attempts.len(), 6);
    assert_eq!(&*result.final_model_group, "B");
}

#[tokio::test(start_paused = true)]
async fn fallbacks_seed_example_context_window_goes_straight_to_a_long() {
    let provider = Scripted::new().always("a0", fail(K::ContextWindowExceeded));
    let (router, sink) = make_router(config(seed_deployments(), seed_settings()), provider);
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(attempts(&result), ["a0:context_window_exceeded", "al0:ok"]);
    assert_eq!(
        give_up_reasons(&sink),
        [GiveUpReason::ContextWindowFallbackExists]
    );
    match &events_named(&sink.events(), "fallback")[..] {
        [EventKind::Fallback { target, level, .. }] => {
            assert_eq!(&**target, "A-long");
            assert_eq!(*level, FallbackLevel::ContextWindow);
        }
        other => panic!("expected one fallback, got {other:?}"),
    }
}

// ---------------------------------------------------------------- retries

#[tokio::test(start_paused = true)]
async fn retries_num_retries_comes_from_request_then_deployment_then_router() {
    let run = |request_retries: Option<u32>,
               deployment_retries: Option<u32>,
               router_retries: u32| async move {
        let mut d = dep("A", "a0");
        d.num_retries = deployment_retries;
        let settings = RouterSettings {
            num_retries: router_retries,
            ..RouterSettings::default()
        };
        let (router, _) = make_router(
            config(vec![d], settings),
            Scripted::new().always("a0", fail(K::InternalServer)),
        );
        let mut request = Request::new(1, "A");
        request.num_retries = request_retries;
        router.completion(request).await.attempts.len()
    };
    assert_eq!(run(None, None, 2).await, 3, "router default");
    assert_eq!(run(None, None, 0).await, 1, "router 0");
    assert_eq!(
        run(None, Some(4), 2).await,
        5,
        "deployment wins over router"
    );
    assert_eq!(
        run(Some(1), Some(4), 2).await,
        2,
        "request wins over deployment"
    );
}

#[tokio::test(start_paused = true)]
async fn retries_policy_count_wins_over_num_retries_unless_request_sets_zero() {
    let run = |request_retries: Option<u32>, group_policy: bool| async move {
        let mut policy = KindPolicy::default();
        policy.per_kind.insert(K::RateLimit, 4);
        policy.per_kind.insert(K::Timeout, 0);
        let mut settings = RouterSettings {
            num_retries: 1,
            retry_policy: Some(policy),
            ..RouterSettings::default()
        };
        if group_policy {
            let mut per_group = KindPolicy::default();
            per_group.per_kind.insert(K::RateLimit, 1);
            settings
                .model_group_retry_policy
                .insert("A".into(), per_group);
        }
        let (router, _) = make_router(
            config(vec![dep("A", "a0")], settings),
            Scripted::new().always("a0", fail(K::RateLimit)),
        );
        let mut request = Request::new(1, "A");
        request.num_retries = request_retries;
        router.completion(request).await.attempts.len()
    };
    assert_eq!(
        run(None, false).await,
        5,
        "RateLimitErrorRetries: 4 beats num_retries: 1"
    );
    assert_eq!(
        run(Some(3), false).await,
        5,
        "the policy beats the request's own count too"
    );
    assert_eq!(
        run(Some(0), false).await,
        1,
        "num_retries: 0 on the request turns retries off"
    );
    assert_eq!(
        run(None, true).await,
        2,
        "model_group_retry_policy beats retry_policy"
    );
}

#[tokio::test(start_paused = true)]
async fn retries_each_retry_runs_the_pick_again() {
    // a0 fails and cools (allowed_fails 0); the retry's pick runs again and lands on a1.
    let settings = RouterSettings {
        allowed_fails: Some(0),
        ..RouterSettings::default()
    };
    let provider = Scripted::new().always("a0", fail(K::InternalServer));
    let mut a0 = dep("A", "a0");
    a0.weight = Some(1.0);
    let mut a1 = dep("A", "a1");
    a1.weight = Some(0.0);
    let (router, _) = make_router(config(vec![a0, a1], settings), provider);
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(attempts(&result), ["a0:internal_server", "a1:ok"]);
}

#[tokio::test(start_paused = true)]
async fn not_worth_retrying_content_policy_with_content_policy_fallbacks() {
    let settings = RouterSettings {
        content_policy_fallbacks: fallbacks(&[("A", &["B"])]),
        ..RouterSettings::default()
    };
    let provider = Scripted::new().always("a0", fail(K::ContentPolicyViolation));
    let (router, sink) = make_router(
        config(vec![dep("A", "a0"), dep("B", "b0")], settings),
        provider,
    );
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(attempts(&result), ["a0:content_policy_violation", "b0:ok"]);
    assert_eq!(
        give_up_reasons(&sink),
        [GiveUpReason::ContentPolicyFallbackExists]
    );
}

#[tokio::test(start_paused = true)]
async fn not_worth_retrying_4xx_other_than_401_403_408_409_429() {
    for (kind, expected_attempts) in [
        (K::BadRequest, 1),
        (K::UnprocessableEntity, 1),
        (K::ContextWindowExceeded, 1), // a 400 without context-window fallbacks
        (K::Conflict, 3),
        (K::Timeout, 3),
        (K::PermissionDenied, 3),
    ] {
        let (router, _) = make_router(
            config(
                vec![dep("A", "a0"), dep("A", "a1")],
                RouterSettings::default(),
            ),
            Scripted::new()
                .always("a0", fail(kind))
                .always("a1", fail(kind)),
        );
        let result = router.completion(Request::new(1, "A")).await;
        assert_eq!(result.attempts.len(), expected_attempts, "{kind}");
    }
}

#[tokio::test(start_paused = true)]
async fn not_worth_retrying_not_found() {
    let (router, sink) = make_router(
        config(
            vec![dep("A", "a0"), dep("A", "a1")],
            RouterSettings::default(),
        ),
        Scripted::new()
            .always("a0", fail(K::NotFound))
            .always("a1", fail(K::NotFound)),
    );
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(result.attempts.len(), 1);
    assert_eq!(give_up_reasons(&sink), [GiveUpReason::NotFound]);
}

#[tokio::test(start_paused = true)]
async fn not_worth_retrying_rate_limit_with_no_healthy_deployment_and_fallbacks() {
    // A 429 in a group of two cools at once; after both cool, the rate limit goes to B.
    let settings = RouterSettings {
        fallbacks: fallbacks(&[("A", &["B"])]),
        num_retries: 5,
        ..RouterSettings::default()
    };
    let provider = Scripted::new()
        .always("a0", fail(K::RateLimit))
        .always("a1", fail(K::RateLimit));
    let mut a0 = dep("A", "a0");
    a0.weight = Some(1.0);
    let mut a1 = dep("A", "a1");
    a1.weight = Some(0.0);
    let (router, sink) = make_router(config(vec![a0, a1, dep("B", "b0")], settings), provider);
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(
        attempts(&result),
        ["a0:rate_limit", "a1:rate_limit", "b0:ok"]
    );
    assert_eq!(
        give_up_reasons(&sink),
        [GiveUpReason::RateLimitNoHealthyWithFallbacks]
    );
    // Both retries went to a sibling, so no wait.
    assert_eq!(waits_ms(&result), [0, 0, 0]);
}

#[tokio::test(start_paused = true)]
async fn not_worth_retrying_auth_error_in_single_deployment_group() {
    let (router, sink) = make_router(
        config(vec![dep("A", "a0")], RouterSettings::default()),
        Scripted::new().always("a0", fail(K::Authentication)),
    );
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(attempts(&result), ["a0:authentication"]);
    assert_eq!(give_up_reasons(&sink), [GiveUpReason::AuthSingleDeployment]);

    // In a group of two, the same error is retried (on the sibling).
    let mut a0 = dep("A", "a0");
    a0.weight = Some(1.0);
    let mut a1 = dep("A", "a1");
    a1.weight = Some(0.0);
    let (router, _) = make_router(
        config(vec![a0, a1], RouterSettings::default()),
        Scripted::new().always("a0", fail(K::PermissionDenied)),
    );
    let result = router.completion(Request::new(2, "A")).await;
    assert_eq!(result.attempts.len(), 3);
}

#[tokio::test(start_paused = true)]
async fn not_worth_retrying_when_no_healthy_deployment_is_left() {
    let settings = RouterSettings {
        allowed_fails: Some(0),
        num_retries: 5,
        ..RouterSettings::default()
    };
    let provider = Scripted::new()
        .always("a0", fail(K::ServiceUnavailable))
        .always("a1", fail(K::ServiceUnavailable));
    let (router, sink) = make_router(
        config(vec![dep("A", "a0"), dep("A", "a1")], settings),
        provider,
    );
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(result.attempts.len(), 2);
    assert_eq!(give_up_reasons(&sink), [GiveUpReason::NoHealthyDeployment]);
    assert_eq!(events_named(&sink.events(), "cooldown_set").len(), 2);
}

// ---------------------------------------------------------------- waits

#[tokio::test(start_paused = true)]
async fn wait_is_zero_while_the_group_has_a_healthy_sibling() {
    let (router, _) = make_router(
        config(
            vec![dep("A", "a0"), dep("A", "a1")],
            RouterSettings::default(),
        ),
        Scripted::new()
            .always(
                "a0",
                fail_after(K::ServiceUnavailable, Duration::from_secs(30)),
            )
            .always(
                "a1",
                fail_after(K::ServiceUnavailable, Duration::from_secs(30)),
            ),
    );
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(waits_ms(&result), [0, 0, 0]);
    assert_eq!(starts_ms(&result), [0, 100, 200]);
}

#[tokio::test(start_paused = true)]
async fn wait_honours_retry_after_in_seconds() {
    let (router, sink) = make_router(
        config(vec![dep("A", "a0")], RouterSettings::default()),
        Scripted::new().script(
            "a0",
            vec![
                fail_after(K::RateLimit, Duration::from_secs(3)),
                fail_after(K::RateLimit, Duration::from_secs(60)),
            ],
        ),
    );
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(waits_ms(&result), [0, 3000, 60_000]);
    assert_eq!(starts_ms(&result), [0, 3100, 63_200]);
    assert_eq!(events_named(&sink.events(), "wait").len(), 2);
}

#[tokio::test(start_paused = true)]
async fn wait_honours_retry_after_as_an_http_date_read_against_the_clock() {
    // At t=0.1 s the provider says "retry at epoch + 7 s": the wait is the rest, 6.9 s
    // (the date has one-second resolution, so epoch + 7 s exactly).
    let date = format_http_date(DEFAULT_EPOCH_UNIX_MS + 7_000);
    let failure = ProviderFailure::new(K::RateLimit).with_retry_after(RetryAfter::HttpDate(date));
    let (router, _) = make_router(
        config(vec![dep("A", "a0")], RouterSettings::default()),
        Scripted::new().script("a0", vec![Step::Fail(failure)]),
    );
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(waits_ms(&result), [0, 6900]);
    assert_eq!(outcome(&result), "ok");
}

#[tokio::test(start_paused = true)]
async fn wait_ignores_retry_after_over_a_minute_and_backs_off() {
    let (router, _) = make_router(
        config(vec![dep("A", "a0")], RouterSettings::default()),
        Scripted::new().script(
            "a0",
            vec![fail_after(K::RateLimit, Duration::from_secs(61))],
        ),
    );
    let result = router.completion(Request::new(1, "A")).await;
    let wait = waits_ms(&result)[1];
    assert!((500..1250).contains(&wait), "backoff wait {wait}");
}

#[tokio::test(start_paused = true)]
async fn wait_backs_off_exponentially_with_jitter_never_below_retry_after() {
    let settings = RouterSettings {
        num_retries: 5,
        ..RouterSettings::default()
    };
    let (router, sink) = make_router(
        config(vec![dep("A", "a0")], settings),
        Scripted::new().always("a0", fail(K::ServiceUnavailable)),
    );
    let result = router.completion(Request::new(1, "A")).await;
    let waits = waits_ms(&result);
    for (wait, base) in waits[1..].iter().zip([500u128, 1000, 2000, 4000, 8000]) {
        assert!(
            (base..base + 750).contains(wait),
            "wait {wait} for base {base}"
        );
    }
    assert!(
        events_named(&sink.events(), "wait")
            .iter()
            .all(|e| matches!(
                e,
                EventKind::Wait {
                    reason: routersim_engine::event::WaitReason::Backoff,
                    ..
                }
            ))
    );

    let settings = RouterSettings {
        num_retries: 2,
        retry_after: Duration::from_secs(3),
        ..RouterSettings::default()
    };
    let (router, _) = make_router(
        config(vec![dep("A", "a0")], settings),
        Scripted::new().always("a0", fail(K::ServiceUnavailable)),
    );
    let result = router.completion(Request::new(2, "A")).await;
    for wait in &waits_ms(&result)[1..] {
        assert!((3000..3750).contains(wait), "floor of 3 s: {wait}");
    }
}

#[tokio::test(start_paused = true)]
async fn wait_jitter_is_drawn_from_the_seeded_rng() {
    let run = |seed: u64| async move {
        let (router, _) = {
            let sink = Arc::new(routersim_engine::event::VecSink::new());
            let r = routersim_engine::Router::builder(
                config(vec![dep("A", "a0")], RouterSettings::default()),
                Scripted::new().always("a0", fail(K::ServiceUnavailable)),
            )
            .seed(seed)
            .sink(sink.clone())
            .build();
            (r, sink)
        };
        let result = router.completion(Request::new(1, "A")).await;
        result.attempts.iter().map(|a| a.wait).collect::<Vec<_>>()
    };
    assert_eq!(run(1).await, run(1).await);
    assert_ne!(run(1).await, run(2).await);
}

// ---------------------------------------------------------------- fallbacks

#[tokio::test(start_paused = true)]
async fn fallbacks_default_fallbacks_are_the_star_entry() {
    let settings = RouterSettings {
        fallbacks: fallbacks(&[("*", &["Z"])]),
        num_retries: 0,
        ..RouterSettings::default()
    };
    let (router, sink) = make_router(
        config(vec![dep("A", "a0"), dep("Z", "z0")], settings),
        Scripted::new().always("a0", fail(K::InternalServer)),
    );
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(attempts(&result), ["a0:internal_server", "z0:ok"]);
    assert!(matches!(
        &events_named(&sink.events(), "fallback")[..],
        [EventKind::Fallback {
            level: FallbackLevel::Default,
            ..
        }]
    ));
}

#[tokio::test(start_paused = true)]
async fn fallbacks_request_fallbacks_replace_the_routers() {
    let settings = RouterSettings {
        fallbacks: fallbacks(&[("A", &["B"])]),
        num_retries: 0,
        ..RouterSettings::default()
    };
    let (router, _) = make_router(
        config(
            vec![dep("A", "a0"), dep("B", "b0"), dep("C", "c0")],
            settings,
        ),
        Scripted::new().always("a0", fail(K::InternalServer)),
    );
    let mut request = Request::new(1, "A");
    request.fallbacks = Some(vec![FallbackTarget::group("C")]);
    let result = router.completion(request).await;
    assert_eq!(attempts(&result), ["a0:internal_server", "c0:ok"]);
}

#[tokio::test(start_paused = true)]
async fn fallbacks_dict_target_overrides_request_params_for_that_hop() {
    let mut target = FallbackTarget::group("B");
    target
        .overrides
        .insert("temperature".into(), serde_json::json!(0));
    target
        .overrides
        .insert("num_retries".into(), serde_json::json!(0));
    target.num_retries = Some(0);
    let mut settings = RouterSettings {
        num_retries: 2,
        ..RouterSettings::default()
    };
    settings.fallbacks.entries.push(("A".into(), vec![target]));
    let provider = Scripted::new()
        .always("a0", fail(K::InternalServer))
        .always("b0", fail(K::InternalServer));
    let (router, _) = make_router(
        config(vec![dep("A", "a0"), dep("B", "b0")], settings),
        provider,
    );
    let result = router.completion(Request::new(1, "A")).await;
    // B's hop runs with num_retries 0 from the dict: a single attempt.
    assert_eq!(
        attempts(&result),
        [
            "a0:internal_server",
            "a0:internal_server",
            "a0:internal_server",
            "b0:internal_server"
        ]
    );
    let seen = router.provider().seen.borrow();
    assert_eq!(seen[0].1.params.get("temperature"), None);
    assert_eq!(
        seen[3].1.params.get("temperature"),
        Some(&serde_json::json!(0))
    );
}

/// A fallback target's `num_retries` is read at load like every other count: `"0"` (a
/// string, as YAML may quote it) is 0 for that hop, not dropped.
#[tokio::test(start_paused = true)]
async fn fallback_num_retries_written_as_a_string_applies_to_its_hop() {
    let config = routersim_config::load_router_config_str(
        "model_list:\n\
         - {model_name: A, litellm_params: {model: openai/a}, model_info: {id: a0}}\n\
         - {model_name: B, litellm_params: {model: openai/b}, model_info: {id: b0}}\n\
         router_settings:\n  num_retries: 1\n  fallbacks: [{A: [{model: B, num_retries: \"0\"}]}]\n",
    )
    .expect("loads");
    let provider = Scripted::new()
        .always("a0", fail(K::InternalServer))
        .always("b0", fail(K::InternalServer));
    let (router, _) = make_router(config, provider);
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(
        attempts(&result),
        [
            "a0:internal_server",
            "a0:internal_server",
            "b0:internal_server"
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn fallbacks_lookup_tries_the_serving_group_then_the_requested_group() {
    // A -> [B]; B -> [C]: when B fails, B's own entry applies (C).
    // A -> [B, D] with no entry for B: B's failure falls back on A's list, whose next is D.
    let settings = RouterSettings {
        fallbacks: fallbacks(&[("A", &["B"]), ("B", &["C"])]),
        num_retries: 0,
        ..RouterSettings::default()
    };
    let provider = Scripted::new()
        .always("a0", fail(K::InternalServer))
        .always("b0", fail(K::InternalServer));
    let (router, sink) = make_router(
        config(
            vec![dep("A", "a0"), dep("B", "b0"), dep("C", "c0")],
            settings,
        ),
        provider,
    );
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(
        attempts(&result),
        ["a0:internal_server", "b0:internal_server", "c0:ok"]
    );
    let depths: Vec<(String, u32)> = events_named(&sink.events(), "fallback")
        .into_iter()
        .filter_map(|e| match e {
            EventKind::Fallback {
                source,
                target,
                depth,
                ..
            } => Some((format!("{source}->{target}"), depth)),
            _ => None,
        })
        .collect();
    assert_eq!(depths, [("A->B".to_string(), 1), ("B->C".to_string(), 2)]);

    let settings = RouterSettings {
        fallbacks: fallbacks(&[("A", &["B", "D"])]),
        num_retries: 0,
        ..RouterSettings::default()
    };
    let provider = Scripted::new()
        .always("a0", fail(K::InternalServer))
        .always("b0", fail(K::InternalServer));
    let (router, _) = make_router(
        config(
            vec![dep("A", "a0"), dep("B", "b0"), dep("D", "d0")],
            settings,
        ),
        provider,
    );
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(
        attempts(&result),
        ["a0:internal_server", "b0:internal_server", "d0:ok"]
    );
}

#[tokio::test(start_paused = true)]
async fn fallbacks_skip_targets_already_tried() {
    let settings = RouterSettings {
        fallbacks: fallbacks(&[("A", &["B"]), ("B", &["A", "B", "C"])]),
        num_retries: 0,
        ..RouterSettings::default()
    };
    let provider = Scripted::new()
        .always("a0", fail(K::InternalServer))
        .always("b0", fail(K::InternalServer));
    let (router, _) = make_router(
        config(
            vec![dep("A", "a0"), dep("B", "b0"), dep("C", "c0")],
            settings,
        ),
        provider,
    );
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(
        attempts(&result),
        ["a0:internal_server", "b0:internal_server", "c0:ok"]
    );
}

#[tokio::test(start_paused = true)]
async fn fallbacks_depth_counter_stops_the_walk_at_max_fallbacks() {
    let chain = |max: u32| RouterSettings {
        fallbacks: fallbacks(&[("A", &["B"]), ("B", &["C"]), ("C", &["D"]), ("D", &["E"])]),
        num_retries: 0,
        max_fallbacks: max,
        ..RouterSettings::default()
    };
    let deployments = || {
        ["A", "B", "C", "D", "E"]
            .iter()
            .map(|g| dep(g, &g.to_lowercase()))
            .collect::<Vec<_>>()
    };
    let provider = || {
        Scripted::new()
            .always("a", fail(K::InternalServer))
            .always("b", fail(K::InternalServer))
            .always("c", fail(K::InternalServer))
            .always("d", fail(K::InternalServer))
    };
    let (router, _) = make_router(config(deployments(), chain(2)), provider());
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(
        attempts(&result),
        [
            "a:internal_server",
            "b:internal_server",
            "c:internal_server"
        ]
    );
    assert_eq!(result.fallbacks, 2);
    let (router, _) = make_router(config(deployments(), chain(5)), provider());
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(result.attempts.len(), 5);
    assert_eq!(outcome(&result), "ok");
}

#[tokio::test(start_paused = true)]
async fn fallbacks_disable_fallbacks_stops_after_retries() {
    let (router, sink) = make_router(
        config(seed_deployments(), seed_settings()),
        Scripted::new().always("a0", fail(K::ServiceUnavailable)),
    );
    let mut request = Request::new(1, "A");
    request.disable_fallbacks = true;
    let result = router.completion(request).await;
    assert_eq!(result.attempts.len(), 3);
    assert_eq!(outcome(&result), "service_unavailable");
    assert!(events_named(&sink.events(), "fallback").is_empty());
}

// ---------------------------------------------------------------- order fallbacks

fn ordered(group: &str, id: &str, order: u32) -> routersim_engine::config::Deployment {
    let mut d = dep(group, id);
    d.order = Some(order);
    d
}

#[tokio::test(start_paused = true)]
async fn order_fallbacks_walk_down_the_orders_before_group_fallbacks() {
    // Two PTU deployments (order 1) and pay-as-you-go (order 2); PTU 429s.
    let settings = RouterSettings {
        fallbacks: fallbacks(&[("A", &["B"])]),
        ..RouterSettings::default()
    };
    let provider = Scripted::new()
        .always("ptu1", fail(K::RateLimit))
        .always("ptu2", fail(K::RateLimit));
    let (router, sink) = make_router(
        config(
            vec![
                ordered("A", "ptu1", 1),
                ordered("A", "ptu2", 1),
                ordered("A", "paygo", 2),
                dep("B", "b0"),
            ],
            settings,
        ),
        provider,
    );
    let result = router.completion(Request::new(1, "A")).await;
    let seq = attempts(&result);
    assert_eq!(seq.len(), 3, "{seq:?}");
    assert!(seq[..2].contains(&"ptu1:rate_limit".to_string()));
    assert!(seq[..2].contains(&"ptu2:rate_limit".to_string()));
    assert_eq!(seq[2], "paygo:ok");
    assert_eq!(
        events_named(&sink.events(), "order_fallback"),
        vec![EventKind::OrderFallback {
            model_group: Arc::from("A"),
            from_order: Some(1),
            to_order: Some(2)
        }]
    );
    assert!(events_named(&sink.events(), "fallback").is_empty());

    // While both PTU deployments cool, picks use the lowest order among healthy ones.
    let result = router.completion(Request::new(2, "A")).await;
    assert_eq!(attempts(&result), ["paygo:ok"]);
}

#[tokio::test(start_paused = true)]
async fn order_fallbacks_each_level_runs_its_own_retry_loop() {
    let settings = RouterSettings {
        num_retries: 1,
        ..RouterSettings::default()
    };
    let provider = Scripted::new()
        .always("o1", fail(K::InternalServer))
        .always("o2", fail(K::InternalServer));
    let (router, _) = make_router(
        config(
            vec![
                ordered("A", "o1", 1),
                ordered("A", "o2", 2),
                ordered("A", "o3", 3),
            ],
            settings,
        ),
        provider,
    );
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(
        attempts(&result),
        [
            "o1:internal_server",
            "o1:internal_server",
            "o2:internal_server",
            "o2:internal_server",
            "o3:ok"
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn order_fallbacks_are_skipped_for_context_window_errors() {
    let provider = Scripted::new().always("o1", fail(K::ContextWindowExceeded));
    let (router, sink) = make_router(
        config(
            vec![ordered("A", "o1", 1), ordered("A", "o2", 2)],
            RouterSettings::default(),
        ),
        provider,
    );
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(attempts(&result), ["o1:context_window_exceeded"]);
    assert!(events_named(&sink.events(), "order_fallback").is_empty());
}

// ---------------------------------------------------------------- weighted failover

fn weighted(id: &str, weight: f64) -> routersim_engine::config::Deployment {
    let mut d = dep("A", id);
    d.weight = Some(weight);
    d
}

#[tokio::test(start_paused = true)]
async fn weighted_failover_excludes_the_failed_deployment_and_picks_again_by_weight() {
    let settings = RouterSettings {
        enable_weighted_failover: true,
        num_retries: 0,
        fallbacks: fallbacks(&[("A", &["B"])]),
        ..RouterSettings::default()
    };
    // w0 has all the weight at first; once excluded, w1 (weight 3) and w2 (weight 0) remain.
    let provider = Scripted::new().always("w0", fail(K::InternalServer));
    let (router, sink) = make_router(
        config(
            vec![
                weighted("w0", 1000.0),
                weighted("w1", 3.0),
                weighted("w2", 0.0),
                dep("B", "b0"),
            ],
            settings,
        ),
        provider,
    );
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(attempts(&result), ["w0:internal_server", "w1:ok"]);
    assert_eq!(
        events_named(&sink.events(), "weighted_failover"),
        vec![EventKind::WeightedFailover {
            model_group: Arc::from("A"),
            excluded: Arc::from("w0")
        }]
    );
    assert!(events_named(&sink.events(), "fallback").is_empty());
}

#[tokio::test(start_paused = true)]
async fn weighted_failover_is_skipped_for_context_window_and_content_policy() {
    for kind in [K::ContextWindowExceeded, K::ContentPolicyViolation] {
        let settings = RouterSettings {
            enable_weighted_failover: true,
            num_retries: 0,
            ..RouterSettings::default()
        };
        let (router, _) = make_router(
            config(vec![weighted("w0", 1000.0), weighted("w1", 1.0)], settings),
            Scripted::new().always("w0", fail(kind)),
        );
        let result = router.completion(Request::new(1, "A")).await;
        assert_eq!(result.attempts.len(), 1, "{kind}");
    }
}

// ---------------------------------------------------------------- cooldowns

#[tokio::test(start_paused = true)]
async fn cooldowns_are_a_ttl_then_the_deployment_is_simply_eligible_again() {
    let settings = RouterSettings {
        cooldown_time: Duration::from_secs(5),
        ..RouterSettings::default()
    };
    // a0 429s once, then is healthy; weight makes it the first choice whenever eligible.
    let provider = Scripted::new().script("a0", vec![fail(K::RateLimit)]);
    let (router, sink) = make_router(
        config(vec![weighted("a0", 1000.0), weighted("a1", 1.0)], settings),
        provider,
    );
    let first = router.completion(Request::new(1, "A")).await;
    assert_eq!(attempts(&first), ["a0:rate_limit", "a1:ok"]);
    match &events_named(&sink.events(), "cooldown_set")[..] {
        [
            EventKind::CooldownSet {
                deployment_id,
                reason,
                duration,
                ..
            },
        ] => {
            assert_eq!(&**deployment_id, "a0");
            assert_eq!(*reason, CooldownReason::RateLimitInGroup);
            assert_eq!(*duration, Duration::from_secs(5));
        }
        other => panic!("{other:?}"),
    }
    // During the cooldown every pick avoids a0, even after a1's successes (no early reset).
    for id in 2..5 {
        let r = router.completion(Request::new(id, "A")).await;
        assert_eq!(attempts(&r), ["a1:ok"]);
    }
    // The cooldown was set at t=0.1 s; at 5.1 s a0 is eligible again, with no probe.
    tokio::time::sleep_until(first.start + Duration::from_millis(5100)).await;
    let r = router.completion(Request::new(9, "A")).await;
    assert_eq!(attempts(&r), ["a0:ok"]);
    assert_eq!(events_named(&sink.events(), "cooldown_end").len(), 1);
}

#[tokio::test(start_paused = true)]
async fn cooldowns_recooling_keeps_the_later_deadline() {
    // Two requests in flight on a0 at once: the first 429 asks for 10 s, the second for 2 s.
    let provider = Scripted::new().script(
        "a0",
        vec![
            fail_after(K::RateLimit, Duration::from_secs(10)),
            fail_after(K::RateLimit, Duration::from_secs(2)),
        ],
    );
    let (router, sink) = make_router(
        config(
            vec![weighted("a0", 1000.0), weighted("a1", 0.0)],
            RouterSettings::default(),
        ),
        provider,
    );
    let start = tokio::time::Instant::now();
    let (r1, r2) = tokio::join!(router.completion(Request::new(1, "A")), async {
        tokio::time::sleep(Duration::from_millis(10)).await;
        router.completion(Request::new(2, "A")).await
    });
    assert_eq!(r1.attempts[0].outcome_name(), "rate_limit");
    assert_eq!(r2.attempts[0].outcome_name(), "rate_limit");
    let untils: Vec<(Duration, Duration)> = events_named(&sink.events(), "cooldown_set")
        .into_iter()
        .filter_map(|e| match e {
            EventKind::CooldownSet {
                duration, until, ..
            } => Some((duration, until - start)),
            _ => None,
        })
        .collect();
    assert_eq!(
        untils,
        [
            (Duration::from_secs(10), Duration::from_millis(10_100)),
            (Duration::from_secs(2), Duration::from_millis(10_100))
        ],
        "the second failure asked for 2.11 s; the deadline stays at 10.1 s"
    );
}

#[tokio::test(start_paused = true)]
async fn cooldowns_time_comes_from_deployment_then_retry_after_then_router() {
    let run = |deployment_cooldown: Option<u64>, retry_after: Option<u64>| async move {
        let mut a0 = weighted("a0", 1000.0);
        a0.cooldown_time = deployment_cooldown.map(Duration::from_secs);
        let settings = RouterSettings {
            cooldown_time: Duration::from_secs(9),
            ..RouterSettings::default()
        };
        let step = match retry_after {
            Some(s) => fail_after(K::RateLimit, Duration::from_secs(s)),
            None => fail(K::RateLimit),
        };
        let (router, sink) = make_router(
            config(vec![a0, weighted("a1", 1.0)], settings),
            Scripted::new().script("a0", vec![step]),
        );
        router.completion(Request::new(1, "A")).await;
        events_named(&sink.events(), "cooldown_set")
            .into_iter()
            .filter_map(|e| match e {
                EventKind::CooldownSet { duration, .. } => Some(duration.as_secs()),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(run(Some(2), Some(30)).await, [2]);
    assert_eq!(run(None, Some(30)).await, [30]);
    assert_eq!(run(None, None).await, [9]);
}

#[tokio::test(start_paused = true)]
async fn cooldowns_sweeper_reports_the_end_at_the_deadline() {
    let provider = Scripted::new().script("a0", vec![fail(K::RateLimit)]);
    let (router, sink) = make_router(
        config(
            vec![weighted("a0", 1000.0), weighted("a1", 1.0)],
            RouterSettings::default(),
        ),
        provider,
    );
    let start = tokio::time::Instant::now();
    let router = &router;
    tokio::select! {
        biased;
        () = router.run_cooldown_sweeper() => unreachable!("the sweeper never returns"),
        () = async {
            router.completion(Request::new(1, "A")).await;
            tokio::time::sleep(Duration::from_secs(30)).await;
        } => {}
    }
    let ends: Vec<Duration> = sink
        .events()
        .into_iter()
        .filter(|e| e.kind.name() == "cooldown_end")
        .map(|e| e.at - start)
        .collect();
    assert_eq!(ends, [Duration::from_millis(5100)]);
}

#[tokio::test(start_paused = true)]
async fn cooldowns_disable_cooldowns_turns_them_off() {
    let settings = RouterSettings {
        disable_cooldowns: true,
        ..RouterSettings::default()
    };
    let (router, sink) = make_router(
        config(vec![weighted("a0", 1000.0), weighted("a1", 1.0)], settings),
        Scripted::new().always("a0", fail(K::RateLimit)),
    );
    // a0 answers 429 to every call and is picked first (1000:1) every time: with cooldowns it
    // would be cooled after its allowed fails and skipped; without, it is called again and
    // again, and no cooldown is ever set.
    let mut calls_to_a0 = 0;
    for id in 1..=5 {
        let result = router.completion(Request::new(id, "A")).await;
        assert_eq!(
            result.attempts[0].deployment_id.as_ref(),
            "a0",
            "request {id}"
        );
        calls_to_a0 += attempts(&result)
            .iter()
            .filter(|a| a.as_str() == "a0:rate_limit")
            .count();
    }
    assert!(calls_to_a0 >= 5, "a0 called {calls_to_a0} times");
    assert!(events_named(&sink.events(), "cooldown_set").is_empty());
}

// ---------------------------------------------------------------- allowed fails

#[tokio::test(start_paused = true)]
async fn allowed_fails_cools_when_the_count_goes_over_the_limit() {
    let settings = RouterSettings {
        allowed_fails: Some(2),
        num_retries: 0,
        ..RouterSettings::default()
    };
    let (router, sink) = make_router(
        config(vec![weighted("a0", 1000.0), weighted("a1", 0.0)], settings),
        Scripted::new().always("a0", fail(K::RateLimit)),
    );
    let mut first_cool = None;
    for id in 1..=4 {
        let r = router.completion(Request::new(id, "A")).await;
        if first_cool.is_none() && !events_named(&sink.events(), "cooldown_set").is_empty() {
            first_cool = Some((id, attempts(&r)));
        }
    }
    // Failures 1 and 2 are allowed; the third cools a0 (reason: allowed fails, not the 429 rule).
    assert_eq!(first_cool, Some((3, vec!["a0:rate_limit".to_string()])));
    assert!(matches!(
        &events_named(&sink.events(), "cooldown_set")[..],
        [EventKind::CooldownSet {
            reason: CooldownReason::AllowedFailsExceeded,
            ..
        }]
    ));
}

#[tokio::test(start_paused = true)]
async fn allowed_fails_policy_sets_the_limit_per_kind_and_the_deployments_own_wins() {
    let mut policy = KindPolicy::default();
    policy.per_kind.insert(K::Timeout, 5);
    policy.per_kind.insert(K::Authentication, 0);
    let run = |kind: K, deployment_limit: Option<u32>| {
        let policy = policy.clone();
        async move {
            let settings = RouterSettings {
                allowed_fails_policy: Some(policy),
                num_retries: 0,
                ..RouterSettings::default()
            };
            let mut a0 = weighted("a0", 1000.0);
            a0.allowed_fails = deployment_limit;
            let (router, sink) = make_router(
                config(vec![a0, weighted("a1", 0.0)], settings),
                Scripted::new().always("a0", fail(kind)),
            );
            for id in 1..=10 {
                router.completion(Request::new(id, "A")).await;
                if !events_named(&sink.events(), "cooldown_set").is_empty() {
                    return Some(id);
                }
            }
            None
        }
    };
    assert_eq!(
        run(K::Authentication, None).await,
        Some(1),
        "AuthenticationErrorAllowedFails: 0"
    );
    assert_eq!(
        run(K::Timeout, None).await,
        Some(6),
        "TimeoutErrorAllowedFails: 5"
    );
    assert_eq!(
        run(K::Timeout, Some(1)).await,
        Some(2),
        "model_info.allowed_fails wins"
    );
}

#[tokio::test(start_paused = true)]
async fn allowed_fails_router_wide_takes_part_only_when_set() {
    // Without allowed_fails, a 503 in a group of two only cools via the error-rate rule:
    // more than half failing over at least five requests.
    let settings = RouterSettings {
        num_retries: 0,
        ..RouterSettings::default()
    };
    let (router, sink) = make_router(
        config(vec![weighted("a0", 1000.0), weighted("a1", 0.0)], settings),
        Scripted::new().always("a0", fail(K::ServiceUnavailable)),
    );
    let mut cooled_at = None;
    for id in 1..=10 {
        router.completion(Request::new(id, "A")).await;
        if cooled_at.is_none() && !events_named(&sink.events(), "cooldown_set").is_empty() {
            cooled_at = Some(id);
        }
    }
    assert_eq!(cooled_at, Some(5));
    assert!(matches!(
        &events_named(&sink.events(), "cooldown_set")[..],
        [EventKind::CooldownSet {
            reason: CooldownReason::ErrorRate,
            ..
        }]
    ));
}

// ---------------------------------------------------------------- error-rate rule

#[tokio::test(start_paused = true)]
async fn error_rate_rule_needs_more_than_half_failing() {
    // a0: ok, ok, fail, fail, fail -> 3/5 failing cools at the fifth; ok,ok,fail,fail -> not yet.
    let settings = RouterSettings {
        num_retries: 0,
        ..RouterSettings::default()
    };
    let provider = Scripted::new().script(
        "a0",
        vec![
            Step::Ok,
            Step::Ok,
            fail(K::InternalServer),
            fail(K::InternalServer),
            fail(K::InternalServer),
        ],
    );
    let (router, sink) = make_router(
        config(vec![weighted("a0", 1000.0), weighted("a1", 0.0)], settings),
        provider,
    );
    let mut cooled_at = None;
    for id in 1..=5 {
        router.completion(Request::new(id, "A")).await;
        if cooled_at.is_none() && !events_named(&sink.events(), "cooldown_set").is_empty() {
            cooled_at = Some(id);
        }
    }
    assert_eq!(cooled_at, Some(5));
}

#[tokio::test(start_paused = true)]
async fn error_rate_rule_protects_a_lone_deployment() {
    let settings = RouterSettings {
        num_retries: 0,
        ..RouterSettings::default()
    };
    let (router, sink) = make_router(
        config(vec![dep("A", "a0")], settings),
        Scripted::new().always("a0", fail(K::RateLimit)),
    );
    for id in 1..=50 {
        router.completion(Request::new(id, "A")).await;
    }
    assert!(events_named(&sink.events(), "cooldown_set").is_empty());
}

#[tokio::test(start_paused = true)]
async fn error_rate_rule_cools_a_lone_deployment_when_a_thousand_requests_all_failed() {
    let settings = RouterSettings {
        num_retries: 0,
        ..RouterSettings::default()
    };
    let (router, sink) = make_router(
        config(vec![dep("A", "a0")], settings),
        Scripted::new().always("a0", fail(K::InternalServer)),
    );
    let mut cooled_at = None;
    // 100 ms each: 1000 requests fit the 60 s window only if they overlap, so run them at once.
    let futures: Vec<_> = (1..=1000)
        .map(|id| router.completion(Request::new(id, "A")))
        .collect();
    let boxed: Vec<_> = futures.into_iter().map(Box::pin).collect();
    for r in join_all(boxed).await {
        assert_eq!(r.attempts.len(), 1);
    }
    if let [EventKind::CooldownSet { reason, .. }] =
        &events_named(&sink.events(), "cooldown_set")[..]
    {
        cooled_at = Some(*reason);
    }
    assert_eq!(cooled_at, Some(CooldownReason::LoneDeploymentAllFailed));
}

async fn join_all<F: std::future::Future + Unpin>(mut futures: Vec<F>) -> Vec<F::Output> {
    use std::task::Poll;
    let mut results: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (i, f) in futures.iter_mut().enumerate() {
            if results[i].is_none() {
                match std::pin::Pin::new(f).poll(cx) {
                    Poll::Ready(v) => results[i] = Some(v),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    results.into_iter().flatten().collect()
}

#[tokio::test(start_paused = true)]
async fn error_rate_rule_non_retryable_status_cools_even_a_lone_deployment() {
    for kind in [K::Authentication, K::NotFound] {
        let (router, sink) = make_router(
            config(vec![dep("A", "a0")], RouterSettings::default()),
            Scripted::new().always("a0", fail(kind)),
        );
        router.completion(Request::new(1, "A")).await;
        assert!(
            matches!(
                &events_named(&sink.events(), "cooldown_set")[..],
                [EventKind::CooldownSet {
                    reason: CooldownReason::NonRetryableStatus,
                    ..
                }]
            ),
            "{kind}"
        );
    }
}

// ---------------------------------------------------------------- all cooling

#[tokio::test(start_paused = true)]
async fn all_cooling_fails_the_pick_with_router_rate_limit_and_falls_back_as_a_rate_limit() {
    let settings = RouterSettings {
        allowed_fails: Some(0),
        cooldown_time: Duration::from_secs(30),
        num_retries: 0,
        ..RouterSettings::default()
    };
    let provider = Scripted::new()
        .script("a0", vec![fail(K::InternalServer)])
        .script("a1", vec![fail(K::InternalServer)]);
    let (router, sink) = make_router(
        config(
            vec![dep("A", "a0"), dep("A", "a1"), dep("B", "b0")],
            settings.clone(),
        ),
        provider,
    );
    router.completion(Request::new(1, "A")).await;
    router.completion(Request::new(2, "A")).await;
    assert_eq!(events_named(&sink.events(), "cooldown_set").len(), 2);
    tokio::time::sleep(Duration::from_secs(10)).await;
    let r = router.completion(Request::new(3, "A")).await;
    assert!(r.attempts.is_empty());
    assert_eq!(outcome(&r), "router_rate_limit");
    let err = r.outcome.as_ref().err().cloned();
    // Cooled at 0.1 s and 0.2 s for 30 s; now is 10.2 s: 19.9 s until the soonest ends.
    assert_eq!(
        err.and_then(|e| e.retry_after),
        Some(Duration::from_millis(19_900))
    );
    assert_eq!(events_named(&sink.events(), "all_cooled").len(), 1);

    // With a general fallback the walk treats it as a rate limit and goes to B.
    let provider = Scripted::new()
        .script("a0", vec![fail(K::InternalServer)])
        .script("a1", vec![fail(K::InternalServer)]);
    let with_fallback = RouterSettings {
        fallbacks: fallbacks(&[("A", &["B"])]),
        ..settings
    };
    let (router, sink) = make_router(
        config(
            vec![dep("A", "a0"), dep("A", "a1"), dep("B", "b0")],
            with_fallback,
        ),
        provider,
    );
    let mut r1 = Request::new(1, "A");
    r1.disable_fallbacks = true;
    let mut r2 = Request::new(2, "A");
    r2.disable_fallbacks = true;
    router.completion(r1).await;
    router.completion(r2).await;
    let r = router.completion(Request::new(3, "A")).await;
    assert_eq!(attempts(&r), ["b0:ok"]);
    assert!(matches!(
        &events_named(&sink.events(), "fallback")[..],
        [EventKind::Fallback {
            failure: K::RouterRateLimit,
            ..
        }]
    ));
    assert_eq!(
        give_up_reasons(&sink).last(),
        Some(&GiveUpReason::RateLimitNoHealthyWithFallbacks)
    );
}

#[tokio::test(start_paused = true)]
async fn all_cooling_with_health_check_routing_and_a_policy_picks_one_anyway() {
    let mut policy = KindPolicy::default();
    policy.per_kind.insert(K::InternalServer, 0);
    let settings = RouterSettings {
        allowed_fails_policy: Some(policy),
        enable_health_check_routing: true,
        cooldown_time: Duration::from_secs(30),
        num_retries: 0,
        ..RouterSettings::default()
    };
    let provider = Scripted::new()
        .script("a0", vec![fail(K::InternalServer)])
        .script("a1", vec![fail(K::InternalServer)]);
    let (router, sink) = make_router(
        config(vec![dep("A", "a0"), dep("A", "a1")], settings),
        provider,
    );
    router.completion(Request::new(1, "A")).await;
    router.completion(Request::new(2, "A")).await;
    assert_eq!(events_named(&sink.events(), "cooldown_set").len(), 2);
    let r = router.completion(Request::new(3, "A")).await;
    assert_eq!(r.attempts.len(), 1);
    assert_eq!(outcome(&r), "ok");
    assert!(events_named(&sink.events(), "all_cooled").is_empty());
}

// ---------------------------------------------------------------- selection

#[tokio::test(start_paused = true)]
async fn selection_simple_shuffle_splits_by_weight() {
    let (router, _) = make_router(
        config(
            vec![weighted("a0", 9.0), weighted("a1", 1.0)],
            RouterSettings::default(),
        ),
        Scripted::new(),
    );
    let mut a0 = 0;
    for id in 0..10_000 {
        let r = router.completion(Request::new(id, "A")).await;
        if &*r.attempts[0].deployment_id == "a0" {
            a0 += 1;
        }
    }
    let share = f64::from(a0) / 10_000.0;
    assert!((share - 0.9).abs() < 0.02, "a0 share {share}");
}

#[tokio::test(start_paused = true)]
async fn selection_simple_shuffle_falls_back_to_rpm_then_uniform() {
    let mut a0 = dep("A", "a0");
    a0.rpm = Some(100);
    let mut a1 = dep("A", "a1");
    a1.rpm = Some(300);
    let (router, _) = make_router(
        config(vec![a0, a1], RouterSettings::default()),
        Scripted::new(),
    );
    let mut a1_count = 0;
    for id in 0..4_000 {
        let r = router.completion(Request::new(id, "A")).await;
        if &*r.attempts[0].deployment_id == "a1" {
            a1_count += 1;
        }
    }
    let share = f64::from(a1_count) / 4_000.0;
    assert!((share - 0.75).abs() < 0.03, "rpm-weighted share {share}");

    let (router, _) = make_router(
        config(
            vec![dep("A", "a0"), dep("A", "a1")],
            RouterSettings::default(),
        ),
        Scripted::new(),
    );
    let mut a0_count = 0;
    for id in 0..4_000 {
        let r = router.completion(Request::new(id, "A")).await;
        if &*r.attempts[0].deployment_id == "a0" {
            a0_count += 1;
        }
    }
    let share = f64::from(a0_count) / 4_000.0;
    assert!((share - 0.5).abs() < 0.03, "uniform share {share}");
}

#[tokio::test(start_paused = true)]
async fn aliases_and_wildcard_groups_resolve() {
    let mut settings = RouterSettings::default();
    settings.model_group_alias.insert("gpt4".into(), "A".into());
    let (router, _) = make_router(
        config(vec![dep("A", "a0"), dep("openai/*", "w0")], settings),
        Scripted::new(),
    );
    assert_eq!(
        attempts(&router.completion(Request::new(1, "gpt4")).await),
        ["a0:ok"]
    );
    assert_eq!(
        attempts(&router.completion(Request::new(2, "openai/gpt-4o")).await),
        ["w0:ok"]
    );
    let unknown = router.completion(Request::new(3, "nope")).await;
    assert_eq!(outcome(&unknown), "bad_request");
    assert!(unknown.attempts.is_empty());
}

#[tokio::test(start_paused = true)]
async fn timeouts_cut_an_attempt_at_the_deadline() {
    let settings = RouterSettings {
        timeout: Some(Duration::from_millis(50)),
        num_retries: 1,
        ..RouterSettings::default()
    };
    let (router, _) = make_router(config(vec![dep("A", "a0")], settings), Scripted::new());
    let r = router.completion(Request::new(1, "A")).await;
    assert_eq!(attempts(&r), ["a0:timeout", "a0:timeout"]);
    assert_eq!(
        r.attempts[0].end - r.attempts[0].start,
        Duration::from_millis(50)
    );
}

#[tokio::test(start_paused = true)]
async fn events_describe_every_attempt_in_order() {
    let provider =
        Scripted::new().script("a0", vec![fail_after(K::RateLimit, Duration::from_secs(2))]);
    let (router, sink) = make_router(
        config(vec![dep("A", "a0")], RouterSettings::default()),
        provider,
    );
    router.completion(Request::new(5, "A")).await;
    let names: Vec<&str> = sink
        .events()
        .iter()
        .map(|e| e.kind.name())
        .collect::<Vec<_>>()
        .into_iter()
        .collect();
    assert_eq!(
        names,
        [
            "attempt_start",
            "attempt_end",
            "retry",
            "wait",
            "attempt_start",
            "attempt_end",
            "request_end"
        ]
    );
    let events = sink.events();
    assert!(events.iter().all(|e| e.request_id == Some(5)));
    match &events[1].kind {
        EventKind::AttemptEnd {
            failure,
            status,
            retry_after,
            ..
        } => {
            assert_eq!(*failure, Some(K::RateLimit));
            assert_eq!(*status, Some(429));
            assert_eq!(*retry_after, Some(Duration::from_secs(2)));
        }
        other => panic!("{other:?}"),
    }
}
