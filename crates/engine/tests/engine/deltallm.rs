//! DeltaLLM's pipeline and recovery: tags, pre-call checks, half-open recovery, background
//! probes and failure classification, each asserted on a seeded run under paused time.
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
use routersim_engine::config::{Classification, Deployment, Recovery, RouterSettings};
use routersim_engine::event::{
    CooldownReason, EventKind, GiveUpReason, RecoveredVia, RoutingEvent,
};
use routersim_engine::failure::FailureKind as K;
use routersim_engine::request::Request;
use tokio::time::Instant;

fn weighted(id: &str, weight: f64) -> Deployment {
    let mut d = dep("A", id);
    d.weight = Some(weight);
    d
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn named<'a>(events: &'a [RoutingEvent], name: &str) -> Vec<&'a RoutingEvent> {
    events.iter().filter(|e| e.kind.name() == name).collect()
}

fn cooldown_reasons(events: &[RoutingEvent]) -> Vec<(String, CooldownReason)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::CooldownSet {
                deployment_id,
                reason,
                ..
            } => Some((deployment_id.to_string(), *reason)),
            _ => None,
        })
        .collect()
}

fn half_open_settings() -> RouterSettings {
    RouterSettings {
        recovery: Recovery::HalfOpen,
        num_retries: 0,
        ..RouterSettings::default()
    }
}

/// Three requests at once; the deployment ids their (single) attempts used.
async fn burst(router: &routersim_engine::Router<Scripted>, first_id: u64) -> Vec<String> {
    let (r1, r2, r3) = tokio::join!(
        router.completion(Request::new(first_id, "A")),
        router.completion(Request::new(first_id + 1, "A")),
        router.completion(Request::new(first_id + 2, "A")),
    );
    let mut ids: Vec<String> = [r1, r2, r3]
        .iter()
        .flat_map(|r| r.attempts.iter().map(|a| a.deployment_id.to_string()))
        .collect();
    ids.sort();
    ids
}

#[tokio::test(start_paused = true)]
async fn half_open_admits_one_trial_and_its_success_closes_it() {
    // a0 is everyone's first choice; one 429 cools it for 5 s.
    let provider = Scripted::new().script("a0", vec![fail(K::RateLimit)]);
    let (router, sink) = make_router(
        config(
            vec![weighted("a0", 1000.0), weighted("a1", 0.001)],
            half_open_settings(),
        ),
        provider,
    );
    let start = Instant::now();
    router.completion(Request::new(1, "A")).await;
    tokio::time::sleep_until(start + secs(6)).await;
    // The cooldown has expired: a0 is half-open and admits exactly one of three requests.
    assert_eq!(burst(&router, 10).await, ["a0", "a1", "a1"]);
    let events = sink.events();
    assert_eq!(named(&events, "half_open").len(), 1);
    assert!(matches!(
        &named(&events, "recovered")[..],
        [RoutingEvent {
            kind: EventKind::Recovered {
                via: RecoveredVia::Trial,
                ..
            },
            ..
        }]
    ));
    // Closed: a0 takes everything again.
    assert_eq!(burst(&router, 20).await, ["a0", "a0", "a0"]);
}

#[tokio::test(start_paused = true)]
async fn half_open_trial_failure_starts_a_new_cooldown_at_once() {
    let provider =
        Scripted::new().script("a0", vec![fail(K::RateLimit), fail(K::ServiceUnavailable)]);
    let (router, sink) = make_router(
        config(
            vec![weighted("a0", 1000.0), weighted("a1", 0.001)],
            half_open_settings(),
        ),
        provider,
    );
    let start = Instant::now();
    router.completion(Request::new(1, "A")).await;
    tokio::time::sleep_until(start + secs(6)).await;
    assert_eq!(burst(&router, 10).await, ["a0", "a1", "a1"]);
    // The 503 alone would not cool a0 under the error-rate rule; as a failed trial it does.
    assert_eq!(
        cooldown_reasons(&sink.events()),
        [
            ("a0".to_string(), CooldownReason::RateLimitInGroup),
            ("a0".to_string(), CooldownReason::HalfOpenTrialFailed)
        ]
    );
    assert_eq!(burst(&router, 20).await, ["a1", "a1", "a1"]);
}

#[tokio::test(start_paused = true)]
async fn ttl_recovery_makes_the_deployment_fully_eligible_at_expiry() {
    let provider = Scripted::new().script("a0", vec![fail(K::RateLimit)]);
    let settings = RouterSettings {
        num_retries: 0,
        ..RouterSettings::default()
    };
    let (router, sink) = make_router(
        config(
            vec![weighted("a0", 1000.0), weighted("a1", 0.001)],
            settings,
        ),
        provider,
    );
    let start = Instant::now();
    router.completion(Request::new(1, "A")).await;
    tokio::time::sleep_until(start + secs(6)).await;
    assert_eq!(burst(&router, 10).await, ["a0", "a0", "a0"]);
    assert!(named(&sink.events(), "half_open").is_empty());
}

#[tokio::test(start_paused = true)]
async fn probes_restore_a_cooling_deployment_without_user_traffic() {
    let settings = RouterSettings {
        health_check_interval: Some(secs(10)),
        cooldown_time: secs(60),
        num_retries: 0,
        ..RouterSettings::default()
    };
    let provider = Scripted::new().script("a0", vec![fail(K::RateLimit)]);
    let (router, sink) = make_router(
        config(
            vec![weighted("a0", 1000.0), weighted("a1", 0.001)],
            settings,
        ),
        provider,
    );
    let start = Instant::now();
    let router = &router;
    tokio::select! {
        biased;
        () = router.run_health_checks() => unreachable!("probes run forever"),
        () = async {
            router.completion(Request::new(1, "A")).await;
            tokio::time::sleep_until(start + secs(15)).await;
        } => {}
    }
    let events = sink.events();
    // Probed at 10 s (100 ms each): a0 answered, so its 60 s cooldown ended early.
    let recovered: Vec<Duration> = named(&events, "recovered")
        .iter()
        .map(|e| e.at - start)
        .collect();
    assert_eq!(recovered, [secs(10) + ms(100)]);
    assert_eq!(named(&events, "probe_ok").len(), 2);
    assert!(
        named(&events, "recovered")
            .iter()
            .all(|e| e.request_id.is_none())
    );
    let r = router.completion(Request::new(2, "A")).await;
    assert_eq!(attempts(&r), ["a0:ok"]);
}

#[tokio::test(start_paused = true)]
async fn probes_cool_a_failing_deployment_without_user_traffic() {
    let settings = RouterSettings {
        health_check_interval: Some(secs(10)),
        ..RouterSettings::default()
    };
    let provider = Scripted::new().always("a1", fail(K::ServiceUnavailable));
    let (router, sink) = make_router(
        config(vec![weighted("a0", 1.0), weighted("a1", 1.0)], settings),
        provider,
    );
    let start = Instant::now();
    tokio::select! {
        biased;
        () = router.run_health_checks() => unreachable!("probes run forever"),
        () = tokio::time::sleep_until(start + secs(11)) => {}
    }
    let events = sink.events();
    assert_eq!(named(&events, "probe_failed").len(), 1);
    assert_eq!(
        cooldown_reasons(&events),
        [("a1".to_string(), CooldownReason::ProbeFailed)]
    );
    // No request was served, yet a1 is out of the picks.
    for id in 0..20 {
        assert_eq!(
            attempts(&router.completion(Request::new(id, "A")).await),
            ["a0:ok"]
        );
    }
}

fn deltallm(settings: RouterSettings) -> RouterSettings {
    RouterSettings {
        classification: Classification::DeltaLlm,
        ..settings
    }
}

#[tokio::test(start_paused = true)]
async fn deltallm_auth_and_not_found_use_the_general_fallbacks_and_count_against_health() {
    for kind in [K::Authentication, K::PermissionDenied, K::NotFound] {
        let settings = deltallm(RouterSettings {
            fallbacks: fallbacks(&[("A", &["B"])]),
            allowed_fails: Some(0),
            ..RouterSettings::default()
        });
        let (router, sink) = make_router(
            config(
                vec![weighted("a0", 1000.0), weighted("a1", 1.0), dep("B", "b0")],
                settings,
            ),
            Scripted::new().always("a0", fail(kind)),
        );
        let r = router.completion(Request::new(1, "A")).await;
        // No retry on a1, straight to B.
        assert_eq!(
            attempts(&r),
            [format!("a0:{kind}"), "b0:ok".to_string()],
            "{kind}"
        );
        assert!(matches!(
            &events_named(&sink.events(), "give_up")[..],
            [EventKind::GiveUp {
                reason: GiveUpReason::ClassifiedGeneralFallbacks,
                ..
            }]
        ));
        assert_eq!(
            cooldown_reasons(&sink.events()).len(),
            1,
            "{kind} counts against health"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn deltallm_unclassified_4xx_skips_same_deployment_retries_and_spares_health() {
    for kind in [K::BadRequest, K::Conflict, K::UnprocessableEntity] {
        let settings = deltallm(RouterSettings {
            fallbacks: fallbacks(&[("A", &["B"])]),
            allowed_fails: Some(0),
            num_retries: 5,
            ..RouterSettings::default()
        });
        let (router, sink) = make_router(
            config(
                vec![
                    weighted("a0", 1000.0),
                    weighted("a1", 10.0),
                    weighted("a2", 1.0),
                    dep("B", "b0"),
                ],
                settings,
            ),
            Scripted::new()
                .always("a0", fail(kind))
                .always("a1", fail(kind))
                .always("a2", fail(kind)),
        );
        let r = router.completion(Request::new(1, "A")).await;
        // Each remaining deployment once, then the general fallback.
        assert_eq!(
            attempts(&r),
            [
                format!("a0:{kind}"),
                format!("a1:{kind}"),
                format!("a2:{kind}"),
                "b0:ok".to_string()
            ],
            "{kind}"
        );
        assert!(
            cooldown_reasons(&sink.events()).is_empty(),
            "{kind} does not count against health"
        );
    }
    // Under LiteLLM's rules the same 400 is not retried anywhere.
    let (router, _) = make_router(
        config(
            vec![weighted("a0", 1000.0), weighted("a1", 1.0)],
            RouterSettings::default(),
        ),
        Scripted::new().always("a0", fail(K::BadRequest)),
    );
    assert_eq!(
        attempts(&router.completion(Request::new(1, "A")).await),
        ["a0:bad_request"]
    );
}

#[tokio::test(start_paused = true)]
async fn deltallm_malformed_counts_and_router_rate_limit_never_penalises() {
    let settings = deltallm(RouterSettings {
        allowed_fails: Some(0),
        ..RouterSettings::default()
    });
    let (router, sink) = make_router(
        config(vec![weighted("a0", 1000.0), weighted("a1", 1.0)], settings),
        Scripted::new().script("a0", vec![fail(K::MalformedResponse)]),
    );
    let r = router.completion(Request::new(1, "A")).await;
    assert_eq!(attempts(&r), ["a0:malformed_response", "a1:ok"]);
    assert_eq!(
        cooldown_reasons(&sink.events()),
        [("a0".to_string(), CooldownReason::AllowedFailsExceeded)]
    );
}

#[tokio::test(start_paused = true)]
async fn tags_filter_deployments_then_default_then_fail() {
    let tagged = |id: &str, tags: &[&str]| {
        let mut d = dep("A", id);
        d.tags = tags.iter().map(|t| t.to_string()).collect();
        d
    };
    let (router, _) = make_router(
        config(
            vec![
                tagged("eu", &["eu"]),
                tagged("us", &["us"]),
                tagged("any", &["default"]),
            ],
            RouterSettings::default(),
        ),
        Scripted::new(),
    );
    let with_tags = |id, tags: &[&str]| {
        let mut r = Request::new(id, "A");
        r.tags = tags.iter().map(|t| t.to_string()).collect();
        r
    };
    for id in 0..20 {
        assert_eq!(
            attempts(&router.completion(with_tags(id, &["eu"])).await),
            ["eu:ok"]
        );
    }
    assert_eq!(
        attempts(&router.completion(with_tags(30, &["apac"])).await),
        ["any:ok"]
    );
    let (router, _) = make_router(
        config(vec![tagged("eu", &["eu"])], RouterSettings::default()),
        Scripted::new(),
    );
    let r = router.completion(with_tags(31, &["apac"])).await;
    assert!(r.attempts.is_empty());
    assert_eq!(outcome(&r), "bad_request");
}

#[tokio::test(start_paused = true)]
async fn pre_call_checks_skip_deployments_over_their_limits() {
    let limited = |id: &str, rpm: u64| {
        let mut d = weighted(id, 1.0);
        d.rpm = Some(rpm);
        d
    };
    let settings = RouterSettings {
        enable_pre_call_checks: true,
        num_retries: 0,
        ..RouterSettings::default()
    };
    let (router, _) = make_router(
        config(vec![limited("small", 2), limited("large", 3)], settings),
        Scripted::new(),
    );
    let start = Instant::now();
    let mut served = Vec::new();
    for id in 0..6 {
        let r = router.completion(Request::new(id, "A")).await;
        served.push(r.attempts.first().map(|a| a.deployment_id.to_string()));
    }
    // Five fit this minute (2 + 3); the sixth finds both over their rpm.
    assert_eq!(
        served
            .iter()
            .filter(|s| s.as_deref() == Some("small"))
            .count(),
        2
    );
    assert_eq!(
        served
            .iter()
            .filter(|s| s.as_deref() == Some("large"))
            .count(),
        3
    );
    assert_eq!(served[5], None);
    let sixth = router.completion(Request::new(6, "A")).await;
    assert_eq!(outcome(&sixth), "router_rate_limit");
    let wait = sixth.outcome.as_ref().err().and_then(|e| e.retry_after);
    assert_eq!(wait, Some(secs(60) - (Instant::now() - start)));
    // The next minute has room again.
    tokio::time::sleep_until(start + secs(60)).await;
    assert_eq!(
        outcome(&router.completion(Request::new(7, "A")).await),
        "ok"
    );
}

#[tokio::test(start_paused = true)]
async fn pre_call_checks_send_an_oversized_prompt_to_the_context_window_fallbacks() {
    let mut small = dep("A", "a0");
    small.max_input_tokens = Some(8000);
    let settings = RouterSettings {
        enable_pre_call_checks: true,
        context_window_fallbacks: fallbacks(&[("A", &["A-long"])]),
        ..RouterSettings::default()
    };
    let (router, _) = make_router(
        config(vec![small, dep("A-long", "long")], settings),
        Scripted::new(),
    );
    let mut request = Request::new(1, "A");
    request.input_tokens = 20_000;
    let r = router.completion(request).await;
    // Filtered before any call: no attempt on a0, straight to the long-context group.
    assert_eq!(attempts(&r), ["long:ok"]);
}

#[tokio::test(start_paused = true)]
async fn deltallm_empty_choices_is_malformed_and_content_filter_is_a_content_policy_failure() {
    use routersim_engine::request::Completion;
    use routersim_engine::stream::{FinishReason, StreamItem};
    let empty = Step::Complete(Completion {
        empty_choices: true,
        ..Completion::default()
    });
    let filtered = Step::Complete(Completion {
        output_tokens: 12,
        finish_reason: FinishReason::ContentFilter,
        ..Completion::default()
    });
    let settings = || {
        deltallm(RouterSettings {
            content_policy_fallbacks: fallbacks(&[("A", &["B"])]),
            ..RouterSettings::default()
        })
    };
    let (router, _) = make_router(
        config(
            vec![
                weighted("a0", 1000.0),
                weighted("a1", 0.001),
                dep("B", "b0"),
            ],
            settings(),
        ),
        Scripted::new().script("a0", vec![empty.clone(), Step::Ok, filtered.clone()]),
    );
    // Empty choices: a malformed response, retried like any failure that counts.
    assert_eq!(
        attempts(&router.completion(Request::new(1, "A")).await),
        ["a0:malformed_response", "a0:ok"]
    );
    // A content-filter finish: a content-policy failure, straight to the content-policy fallback.
    assert_eq!(
        attempts(&router.completion(Request::new(2, "A")).await),
        ["a0:content_policy_violation", "b0:ok"]
    );

    // A stream that finishes with content_filter after content fails (never continued).
    let stream = Step::Stream(vec![
        (ms(100), text(5)),
        (
            ms(0),
            Play::Item(StreamItem::Done(FinishReason::ContentFilter)),
        ),
    ]);
    let (router, _) = make_router(
        config(vec![weighted("a0", 1000.0), dep("B", "b0")], settings()),
        Scripted::new().script("a0", vec![stream]),
    );
    let mut request = Request::new(3, "A");
    request.stream = true;
    let r = router.completion(request).await;
    assert_eq!(attempts(&r), ["a0:content_policy_violation"]);

    // LiteLLM's classification passes both through as successes.
    let (router, _) = make_router(
        config(vec![weighted("a0", 1000.0)], RouterSettings::default()),
        Scripted::new().script("a0", vec![empty, filtered]),
    );
    assert_eq!(
        attempts(&router.completion(Request::new(4, "A")).await),
        ["a0:ok"]
    );
    assert_eq!(
        attempts(&router.completion(Request::new(5, "A")).await),
        ["a0:ok"]
    );
}
