//! The alternatives to LiteLLM's retries and cooldowns (`crate::alternatives`), each turned on
//! by its `router_settings` key and asserted on a scripted run: tower's retry budget, gRPC's
//! retry throttling, Envoy's outlier ejection and request hedging.
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
use routersim_config::load::load_router_config_str;
use routersim_engine::alternatives::{
    AlternativeEvent, HedgeAfter, OutlierSettings, RetryBudgetSettings, RetryThrottlingSettings,
};
use routersim_engine::config::RouterSettings;
use routersim_engine::event::{EventKind, GiveUpReason, RoutingEvent};
use routersim_engine::failure::FailureKind as K;
use routersim_engine::request::Request;

fn give_ups(events: &[RoutingEvent]) -> Vec<GiveUpReason> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::GiveUp { reason, .. } => Some(*reason),
            _ => None,
        })
        .collect()
}

fn alternative_events(events: &[RoutingEvent]) -> Vec<(Duration, AlternativeEvent)> {
    let start = events.first().map(|e| e.at).unwrap();
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Alternative(a) => Some((e.at - start, a.clone())),
            _ => None,
        })
        .collect()
}

fn router_yaml(router_settings: &str) -> String {
    format!(
        "model_list:\n  - model_name: A\n    litellm_params: {{model: openai/a}}\n    model_info: {{id: a0}}\nrouter_settings:\n{router_settings}"
    )
}

#[test]
fn the_keys_load_with_the_sources_defaults_and_refuse_unknown_fields() {
    let on = load_router_config_str(&router_yaml(
        "  retry_budget: true\n  retry_throttling: {max_tokens: 4}\n  outlier_detection: {base_ejection_time: 10s}\n  hedge_after: p95\n",
    ))
    .unwrap();
    let s = &on.settings;
    assert_eq!(s.retry_budget, Some(RetryBudgetSettings::default()));
    assert_eq!(
        s.retry_budget.unwrap(),
        RetryBudgetSettings {
            ratio: 0.2,
            min_per_sec: 10,
            ttl: Duration::from_secs(10)
        }
    );
    assert_eq!(
        s.retry_throttling,
        Some(RetryThrottlingSettings {
            max_tokens: 4.0,
            token_ratio: 0.1
        })
    );
    assert_eq!(
        s.outlier_detection,
        Some(OutlierSettings {
            base_ejection_time: Duration::from_secs(10),
            ..OutlierSettings::default()
        })
    );
    assert_eq!(s.hedge_after, Some(HedgeAfter::Percentile(95)));
    assert!(on.unknown_keys.is_empty(), "{:?}", on.unknown_keys);
    assert!(on.ignored_keys.is_empty(), "{:?}", on.ignored_keys);

    let off = load_router_config_str(&router_yaml(
        "  retry_budget: false\n  hedge_after: 800ms\n",
    ))
    .unwrap();
    assert_eq!(off.settings.retry_budget, None);
    assert_eq!(
        off.settings.hedge_after,
        Some(HedgeAfter::Fixed(Duration::from_millis(800)))
    );
    let defaults = load_router_config_str(&router_yaml("  num_retries: 1\n")).unwrap();
    assert_eq!(defaults.settings.retry_budget, None, "off by default");
    assert_eq!(defaults.settings.outlier_detection, None);
    assert_eq!(defaults.settings.hedge_after, None);

    let typo = load_router_config_str(&router_yaml("  retry_budget: {ratoi: 0.1}\n")).unwrap_err();
    assert_eq!(typo.path, "router_settings.retry_budget.ratoi");
    assert!(
        typo.message.contains("did you mean ratio?"),
        "{}",
        typo.message
    );
    let ttl = load_router_config_str(&router_yaml("  retry_budget: {ttl: 90s}\n")).unwrap_err();
    assert_eq!(ttl.path, "router_settings.retry_budget.ttl");
    let hedge = load_router_config_str(&router_yaml("  hedge_after: p100\n")).unwrap_err();
    assert_eq!(hedge.path, "router_settings.hedge_after");
}

#[tokio::test(start_paused = true)]
async fn a_retry_budget_lets_through_only_its_share_of_requests() {
    // ratio 0.5: a retry costs 2 deposits; no floor, so the share is all there is.
    let settings = RouterSettings {
        num_retries: 3,
        retry_budget: Some(RetryBudgetSettings {
            ratio: 0.5,
            min_per_sec: 0,
            ttl: Duration::from_secs(10),
        }),
        ..RouterSettings::default()
    };
    let provider = Scripted::new().always("a0", fail(K::ServiceUnavailable));
    let (router, sink) = make_router(config(vec![dep("A", "a0")], settings), provider);
    let mut counts = Vec::new();
    for id in 1..=4 {
        counts.push(
            router
                .completion(Request::new(id, "A"))
                .await
                .attempts
                .len(),
        );
    }
    // Deposits 1, 2 (one retry spends 2), 1, 2 (another retry): LiteLLM alone makes 4 each.
    assert_eq!(counts, [1, 2, 1, 2]);
    assert_eq!(
        give_ups(&sink.events()),
        [GiveUpReason::RetryBudgetExhausted; 4]
    );
    // Outside the 10 s window the deposits are forgotten.
    tokio::time::sleep(Duration::from_secs(11)).await;
    let later = router.completion(Request::new(5, "A")).await;
    assert_eq!(later.attempts.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn retry_throttling_stops_retries_at_half_the_tokens_and_successes_refill_them() {
    // 4 tokens, threshold 2: a failure takes 1, a success gives back 1.
    let settings = RouterSettings {
        num_retries: 3,
        retry_throttling: Some(RetryThrottlingSettings {
            max_tokens: 4.0,
            token_ratio: 1.0,
        }),
        ..RouterSettings::default()
    };
    let provider = Scripted::new().script(
        "a0",
        vec![
            fail(K::ServiceUnavailable),
            fail(K::ServiceUnavailable),
            fail(K::ServiceUnavailable),
            Step::Ok,
            Step::Ok,
            fail(K::ServiceUnavailable),
            fail(K::ServiceUnavailable),
        ],
    );
    let (router, sink) = make_router(config(vec![dep("A", "a0")], settings), provider);
    // 4 → 3 (retry) → 2 (throttled: 2 ≤ 2).
    let first = router.completion(Request::new(1, "A")).await;
    assert_eq!(attempts(&first), ["a0:service_unavailable"; 2]);
    // 2 → 1, throttled again.
    let second = router.completion(Request::new(2, "A")).await;
    assert_eq!(attempts(&second), ["a0:service_unavailable"]);
    // Two successes: 1 → 2 → 3.
    for id in 3..=4 {
        assert_eq!(
            outcome(&router.completion(Request::new(id, "A")).await),
            "ok"
        );
    }
    // 3 → 2 after the first failure: over the threshold before it, so... the retry is
    // asked after the failure, at 2: throttled.
    let fifth = router.completion(Request::new(5, "A")).await;
    assert_eq!(attempts(&fifth), ["a0:service_unavailable"]);
    assert_eq!(give_ups(&sink.events()), [GiveUpReason::RetryThrottled; 3]);
    assert_eq!(GiveUpReason::RetryThrottled.as_str(), "retry_throttled");
}

#[tokio::test(start_paused = true)]
async fn both_budgets_together_the_throttle_is_asked_first() {
    let settings = RouterSettings {
        num_retries: 3,
        retry_budget: Some(RetryBudgetSettings {
            ratio: 1.0,
            min_per_sec: 0,
            ttl: Duration::from_secs(10),
        }),
        retry_throttling: Some(RetryThrottlingSettings {
            max_tokens: 10.0,
            token_ratio: 0.1,
        }),
        ..RouterSettings::default()
    };
    let provider = Scripted::new().always("a0", fail(K::ServiceUnavailable));
    let (router, sink) = make_router(config(vec![dep("A", "a0")], settings), provider);
    // Each request's deposit pays one retry, then the budget refuses; the bucket goes
    // 10 → 9 → 8 (request 1), 8 → 7 → 6 (request 2), then 6 → 5: at half, it refuses first.
    let counts: Vec<usize> = {
        let mut v = Vec::new();
        for id in 1..=4 {
            v.push(
                router
                    .completion(Request::new(id, "A"))
                    .await
                    .attempts
                    .len(),
            );
        }
        v
    };
    assert_eq!(counts, [2, 2, 1, 1]);
    assert_eq!(
        give_ups(&sink.events()),
        [
            GiveUpReason::RetryBudgetExhausted,
            GiveUpReason::RetryBudgetExhausted,
            GiveUpReason::RetryThrottled,
            GiveUpReason::RetryThrottled,
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn five_5xx_in_a_row_eject_a_deployment_for_30s_then_60s() {
    // Cooldowns off: only the ejection keeps a0 out of the picks.
    // A group of two: current Envoy's 10 % never ejects one of them unless
    // `always_eject_one_host` lets the first through.
    let settings = RouterSettings {
        num_retries: 0,
        disable_cooldowns: true,
        outlier_detection: Some(OutlierSettings {
            always_eject_one_host: true,
            ..OutlierSettings::default()
        }),
        ..RouterSettings::default()
    };
    let provider = Scripted::new().always("a0", fail(K::ServiceUnavailable));
    let (router, sink) = make_router(
        config(vec![dep("A", "a0"), dep("A", "a1")], settings),
        provider,
    );
    let start = tokio::time::Instant::now();
    let mut a0_calls = Vec::new();
    for id in 0..300u64 {
        let r = router.completion(Request::new(id, "A")).await;
        if r.attempts[0].deployment_id.as_ref() == "a0" {
            a0_calls.push((r.attempts[0].start - start).as_millis());
        }
        tokio::time::sleep(Duration::from_millis(400)).await;
    }
    let events = alternative_events(&sink.events());
    let ejections: Vec<(u32, u64)> = events
        .iter()
        .filter_map(|(_, e)| match e {
            AlternativeEvent::Ejected {
                ejections,
                duration,
                consecutive_5xx,
                ..
            } => {
                assert_eq!(*consecutive_5xx, 5);
                Some((*ejections, duration.as_secs()))
            }
            _ => None,
        })
        .collect();
    // 300 requests, 0.5 s apart: 150 s. Ejected 30 s, then 60 s, then 90 s (a few seconds of
    // picks between them), the third still running at the end.
    assert_eq!(ejections, [(1, 30), (2, 60), (3, 90)]);
    assert_eq!(a0_calls.len(), 15, "five calls before each ejection");
    // No call lands on a0 while it is ejected.
    let ejected_at: Vec<(u128, u128)> = events
        .iter()
        .filter_map(|(at, e)| match e {
            AlternativeEvent::Ejected { duration, .. } => {
                Some((at.as_millis(), (*at + *duration).as_millis()))
            }
            _ => None,
        })
        .collect();
    for call in &a0_calls {
        assert!(
            !ejected_at
                .iter()
                .any(|(from, to)| call >= from && call < to),
            "a0 called at {call} ms while ejected: {ejected_at:?}"
        );
    }
    let unejected = events
        .iter()
        .filter(|(_, e)| matches!(e, AlternativeEvent::Unejected { .. }))
        .count();
    assert_eq!(
        unejected, 2,
        "the third ejection is still running at the end"
    );
}

#[tokio::test(start_paused = true)]
async fn an_ejection_and_a_cooldown_both_keep_a_deployment_out() {
    // LiteLLM's cooldown (allowed_fails 0: cooled on the first failure, 5 s) and the
    // ejection apply together: after the 5th failure a0 is out for the longer of the two.
    let settings = RouterSettings {
        num_retries: 0,
        allowed_fails: Some(0),
        outlier_detection: Some(OutlierSettings {
            consecutive_5xx: 2,
            always_eject_one_host: true,
            ..OutlierSettings::default()
        }),
        ..RouterSettings::default()
    };
    let provider = Scripted::new().always("a0", fail(K::ServiceUnavailable));
    let (router, sink) = make_router(
        config(vec![dep("A", "a0"), dep("A", "a1")], settings),
        provider,
    );
    let start = tokio::time::Instant::now();
    let mut a0_calls = Vec::new();
    for id in 0..200u64 {
        let r = router.completion(Request::new(id, "A")).await;
        if r.attempts[0].deployment_id.as_ref() == "a0" {
            a0_calls.push((r.attempts[0].start - start).as_secs());
        }
        tokio::time::sleep(Duration::from_millis(400)).await;
    }
    let events = sink.events();
    let cooldowns = events_named(&events, "cooldown_set").len();
    let ejections = alternative_events(&events)
        .iter()
        .filter(|(_, e)| matches!(e, AlternativeEvent::Ejected { .. }))
        .count();
    assert!(cooldowns >= 2, "cooldowns still happen: {cooldowns}");
    assert!(
        ejections >= 1,
        "the second failure (after a 5 s cooldown) ejects"
    );
    assert!(
        cooldowns >= 2 * ejections,
        "{cooldowns} cooldowns, {ejections} ejections"
    );
    // After an ejection (30 s) the next a0 call is 30 s later, not 5 s.
    let gaps: Vec<u64> = a0_calls.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.iter().any(|g| *g >= 30), "{a0_calls:?}");
}

/// Group A: a0 on `order` 1 (every first pick), a1 on `order` 2 (the hedge's).
fn hedging_router(
    after: HedgeAfter,
    provider: Scripted,
) -> (
    routersim_engine::Router<Scripted>,
    std::sync::Arc<routersim_engine::event::VecSink>,
) {
    let settings = RouterSettings {
        num_retries: 0,
        hedge_after: Some(after),
        ..RouterSettings::default()
    };
    let mut a0 = dep("A", "a0");
    a0.order = Some(1);
    let mut a1 = dep("A", "a1");
    a1.order = Some(2);
    a1.input_cost_per_token = Some(0.000_002);
    make_router(config(vec![a0, a1], settings), provider)
}

fn hedge_ends(events: &[RoutingEvent]) -> Vec<(String, bool)> {
    alternative_events(events)
        .into_iter()
        .filter_map(|(_, e)| match e {
            AlternativeEvent::HedgeEnd {
                winner, hedge_won, ..
            } => Some((winner.to_string(), hedge_won)),
            _ => None,
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_slow_first_attempt_is_hedged_and_the_hedge_wins() {
    let provider = Scripted::new().script("a0", vec![Step::SlowOk(Duration::from_secs(2))]);
    let (router, sink) = hedging_router(HedgeAfter::Fixed(Duration::from_millis(300)), provider);
    let start = tokio::time::Instant::now();
    let mut request = Request::new(1, "A");
    request.input_tokens = 1000;
    let r = router.completion(request).await;
    assert_eq!(outcome(&r), "ok");
    // The hedge started at 300 ms and answered 100 ms later; the first call was cancelled.
    assert_eq!((tokio::time::Instant::now() - start).as_millis(), 400);
    assert_eq!(attempts(&r), ["a1:ok"]);
    assert_eq!(
        r.attempts[0].attempt, 2,
        "the hedge is the request's 2nd call"
    );
    let seen: Vec<String> = router
        .provider()
        .seen
        .borrow()
        .iter()
        .map(|(id, _)| id.clone())
        .collect();
    assert_eq!(seen, ["a0", "a1"], "two provider calls");
    let events = sink.events();
    let hedged: Vec<_> = alternative_events(&events)
        .into_iter()
        .filter_map(|(at, e)| match e {
            AlternativeEvent::Hedged {
                primary,
                hedge,
                delay,
                extra_input_tokens,
                extra_cost_usd,
                ..
            } => Some((
                at.as_millis(),
                primary.to_string(),
                hedge.to_string(),
                delay.as_millis(),
                extra_input_tokens,
                extra_cost_usd,
            )),
            _ => None,
        })
        .collect();
    assert_eq!(hedged.len(), 1);
    let (at, primary, hedge, delay, tokens, cost) = hedged[0].clone();
    assert_eq!(
        (at, primary.as_str(), hedge.as_str(), delay, tokens),
        (300, "a0", "a1", 300, 1000)
    );
    assert!((cost - 0.002).abs() < 1e-12, "{cost}");
    assert_eq!(hedge_ends(&events), [("a1".to_string(), true)]);
}

#[tokio::test(start_paused = true)]
async fn a_first_attempt_that_answers_before_the_hedge_wins_and_cancels_it() {
    // a0 answers at 350 ms; the hedge (started at 300 ms) would answer at 400 ms.
    let provider = Scripted::new().script("a0", vec![Step::SlowOk(Duration::from_millis(350))]);
    let (router, sink) = hedging_router(HedgeAfter::Fixed(Duration::from_millis(300)), provider);
    let r = router.completion(Request::new(1, "A")).await;
    assert_eq!(attempts(&r), ["a0:ok"]);
    assert_eq!(hedge_ends(&sink.events()), [("a0".to_string(), false)]);
    // A fast answer is never hedged.
    let fast = router.completion(Request::new(2, "A")).await;
    assert_eq!(attempts(&fast), ["a0:ok"]);
    assert_eq!(hedge_ends(&sink.events()).len(), 1);
    // Three calls: a0, the cancelled hedge on a1, a0.
    let seen = router.provider().seen.borrow().len();
    assert_eq!(seen, 3);
}

#[tokio::test(start_paused = true)]
async fn a_failed_first_attempt_waits_for_the_hedge() {
    let provider = Scripted::new().script(
        "a0",
        vec![Step::SlowFail(
            Duration::from_millis(350),
            routersim_engine::failure::ProviderFailure::new(K::ServiceUnavailable),
        )],
    );
    let (router, sink) = hedging_router(HedgeAfter::Fixed(Duration::from_millis(300)), provider);
    let r = router.completion(Request::new(1, "A")).await;
    assert_eq!(outcome(&r), "ok");
    assert_eq!(attempts(&r), ["a0:service_unavailable", "a1:ok"]);
    assert_eq!(hedge_ends(&sink.events()), [("a1".to_string(), true)]);
}

#[tokio::test(start_paused = true)]
async fn p95_waits_for_twenty_samples_then_hedges_at_the_groups_p95() {
    let mut script = vec![Step::SlowOk(Duration::from_secs(2))];
    script.extend(std::iter::repeat_n(Step::Ok, 20));
    script.push(Step::SlowOk(Duration::from_secs(2)));
    let provider = Scripted::new().script("a0", script);
    let (router, sink) = hedging_router(HedgeAfter::Percentile(95), provider);
    // Warm-up: the first request has no estimate, so it is not hedged however slow.
    let first = router.completion(Request::new(0, "A")).await;
    assert_eq!(attempts(&first), ["a0:ok"]);
    for id in 1..=20 {
        router.completion(Request::new(id, "A")).await;
    }
    assert!(hedge_ends(&sink.events()).is_empty());
    // 21 samples: twenty of 100 ms and one of 2 s; the nearest-rank p95 is 100 ms.
    let start = tokio::time::Instant::now();
    let slow = router.completion(Request::new(21, "A")).await;
    assert_eq!(attempts(&slow), ["a1:ok"]);
    assert_eq!((tokio::time::Instant::now() - start).as_millis(), 200);
    // Streams are never hedged.
    let mut stream = Request::new(22, "A");
    stream.stream = true;
    let before = hedge_ends(&sink.events()).len();
    router.completion(stream).await;
    assert_eq!(hedge_ends(&sink.events()).len(), before);
}

#[tokio::test(start_paused = true)]
async fn the_budgets_and_ejections_work_under_multigrids_candidate_walk() {
    // Multigrid's walk gives each candidate 3 tries; the bucket (4 tokens, threshold 2)
    // lets one retry through, then refuses.
    let settings = RouterSettings {
        profile: Some(routersim_engine::config::Profile::Multigrid),
        retry_throttling: Some(RetryThrottlingSettings {
            max_tokens: 4.0,
            token_ratio: 1.0,
        }),
        outlier_detection: Some(OutlierSettings {
            consecutive_5xx: 2,
            always_eject_one_host: true,
            ..OutlierSettings::default()
        }),
        disable_cooldowns: true,
        ..RouterSettings::default()
    };
    let provider = Scripted::new().always("a0", fail(K::ServiceUnavailable));
    let (router, sink) = make_router(
        config(vec![dep("A", "a0"), dep("A", "a1")], settings),
        provider,
    );
    let r = router.completion(Request::new(1, "A")).await;
    // a0 twice (the retry, then throttled: 2 ≤ 2) and ejected after its 2nd 503; a1 answers.
    assert_eq!(
        attempts(&r),
        ["a0:service_unavailable", "a0:service_unavailable", "a1:ok"]
    );
    assert_eq!(give_ups(&sink.events()), [GiveUpReason::RetryThrottled]);
    let ejected = alternative_events(&sink.events())
        .iter()
        .filter(|(_, e)| matches!(e, AlternativeEvent::Ejected { .. }))
        .count();
    assert_eq!(ejected, 1);
    // The next request's walk skips the ejected a0.
    let next = router.completion(Request::new(2, "A")).await;
    assert_eq!(attempts(&next), ["a1:ok"]);
}

/// gRPC A6 (`grpc/proposal`, `A6-client-retries.md`, "Throttling Retry Attempts and Hedged
/// RPCs"): "Throttling also applies to hedged RPCs. The first outgoing RPC will always be
/// sent, but subsequent hedged RPCs will only be sent if `token_count` is greater than the
/// threshold."
#[tokio::test(start_paused = true)]
async fn a_hedge_is_sent_only_while_the_throttle_is_over_its_threshold() {
    // 4 tokens, threshold 2: a failure takes 1, a success gives back 1. `slow` is every first
    // pick (order 1), `fast` the hedge's (order 2).
    let settings = RouterSettings {
        num_retries: 0,
        disable_cooldowns: true,
        hedge_after: Some(HedgeAfter::Fixed(Duration::from_millis(500))),
        retry_throttling: Some(RetryThrottlingSettings {
            max_tokens: 4.0,
            token_ratio: 1.0,
        }),
        ..RouterSettings::default()
    };
    let mut slow = dep("A", "slow");
    slow.order = Some(1);
    let mut fast = dep("A", "fast");
    fast.order = Some(2);
    let provider = Scripted::new().script(
        "slow",
        vec![
            fail(K::ServiceUnavailable),
            fail(K::ServiceUnavailable),
            Step::SlowOk(Duration::from_secs(2)),
            Step::SlowOk(Duration::from_secs(2)),
        ],
    );
    let (router, sink) = make_router(config(vec![slow, fast], settings), provider);
    // Two failures (100 ms each, before any hedge is due; no order fallback to `fast`):
    // 4 → 3 → 2.
    for id in 1..=2 {
        let mut request = Request::new(id, "A");
        request.disable_fallbacks = true;
        let r = router.completion(request).await;
        assert_eq!(attempts(&r), ["slow:service_unavailable"]);
    }
    // At 500 ms the hedge is due with 2 tokens, not over the threshold: not sent; the first
    // call answers alone at 2 s (and gives a token back: 3).
    let start = tokio::time::Instant::now();
    let held = router.completion(Request::new(3, "A")).await;
    assert_eq!(attempts(&held), ["slow:ok"]);
    assert_eq!((tokio::time::Instant::now() - start).as_millis(), 2000);
    let hedged = |events: &[RoutingEvent]| {
        alternative_events(events)
            .into_iter()
            .filter_map(|(_, e)| match e {
                AlternativeEvent::Hedged { primary, hedge, .. } => {
                    Some(format!("{primary}->{hedge}"))
                }
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(hedged(&sink.events()), Vec::<String>::new());
    // 3 > 2: the next slow call is hedged, and the hedge wins at 600 ms.
    let raced = router.completion(Request::new(4, "A")).await;
    assert_eq!(attempts(&raced), ["fast:ok"]);
    assert_eq!(hedged(&sink.events()), ["slow->fast"]);
}

/// Envoy (`source/common/upstream/outlier_detection_impl.cc`, `DetectorImpl::ejectHost`,
/// since 1.28; `always_eject_one_host` since 1.31):
/// ```text
/// double ejected_percent = 100.0 * (ejections_active_helper_.value() + 1) / host_monitors_.size();
/// bool should_eject = (ejected_percent <= max_ejection_percent);
/// if (config_.alwaysEjectOneHost()) {
///   should_eject = (ejections_active_helper_.value() == 0) || should_eject;
/// }
/// ```
/// With the default 10 %, a group of 3 never ejects (100 × 1 / 3 > 10).
#[tokio::test(start_paused = true)]
async fn current_envoy_never_ejects_in_a_small_group_unless_one_host_is_always_allowed() {
    let ejections = |outlier: OutlierSettings| async move {
        let settings = RouterSettings {
            num_retries: 0,
            disable_cooldowns: true,
            outlier_detection: Some(outlier),
            ..RouterSettings::default()
        };
        let provider = Scripted::new().always("a0", fail(K::ServiceUnavailable));
        let (router, sink) = make_router(
            config(
                vec![dep("A", "a0"), dep("A", "a1"), dep("A", "a2")],
                settings,
            ),
            provider,
        );
        for id in 0..60u64 {
            router.completion(Request::new(id, "A")).await;
        }
        alternative_events(&sink.events())
            .iter()
            .filter(|(_, e)| matches!(e, AlternativeEvent::Ejected { .. }))
            .count()
    };
    assert_eq!(ejections(OutlierSettings::default()).await, 0);
    let one = OutlierSettings {
        always_eject_one_host: true,
        ..OutlierSettings::default()
    };
    assert_eq!(
        ejections(one).await,
        1,
        "the first; its 30 s outlast the run"
    );
    let third = OutlierSettings {
        max_ejection_percent: 34,
        ..OutlierSettings::default()
    };
    assert_eq!(ejections(third).await, 1, "100 × 1 / 3 ≤ 34");
}

/// Envoy's sweep (`DetectorImpl::onIntervalTimer`, every `interval`, 10 s by default): a host
/// returns on the first sweep at or after its time —
/// `if ((min(base_eject_time * monitor->ejectTimeBackoff(), max_eject_time) + jitter) <=
/// (now - monitor->lastEjectionTime().value())) { unejectHost(host); }` — and "Decrement time
/// backoff for all hosts which have not been ejected": a host unejected at least `interval`
/// before a sweep has its multiplier lowered by one (`monitor->ejectTimeBackoff()--`).
#[tokio::test(start_paused = true)]
async fn an_ejection_ends_on_a_sweep_and_a_healthy_interval_lowers_the_multiplier() {
    let settings = RouterSettings {
        num_retries: 0,
        disable_cooldowns: true,
        outlier_detection: Some(OutlierSettings {
            always_eject_one_host: true,
            ..OutlierSettings::default()
        }),
        ..RouterSettings::default()
    };
    let mut a0 = dep("A", "a0");
    a0.order = Some(1);
    let mut a1 = dep("A", "a1");
    a1.order = Some(2);
    // a0 (every pick while it is in): five 503s, twenty answers, five 503s, then answers.
    let mut script = vec![fail(K::ServiceUnavailable); 5];
    script.extend(std::iter::repeat_n(Step::Ok, 20));
    script.extend(vec![fail(K::ServiceUnavailable); 5]);
    let provider = Scripted::new().script("a0", script);
    let (router, sink) = make_router(config(vec![a0, a1], settings), provider);
    let start = tokio::time::Instant::now();
    let mut a0_calls = Vec::new();
    // One request a second for 120 s; each call takes 100 ms.
    for id in 0..120u64 {
        tokio::time::sleep_until(start + Duration::from_secs(id)).await;
        let r = router.completion(Request::new(id, "A")).await;
        if r.attempts[0].deployment_id.as_ref() == "a0" {
            a0_calls.push(id);
        }
    }
    let events = alternative_events(&sink.events());
    let ejected: Vec<(u128, u64, u128, u32)> = events
        .iter()
        .filter_map(|(at, e)| match e {
            AlternativeEvent::Ejected {
                duration,
                until,
                ejections,
                ..
            } => Some((
                at.as_millis(),
                duration.as_secs(),
                (*until - start).as_millis(),
                *ejections,
            )),
            _ => None,
        })
        .collect();
    // Ejected at 4.1 s for 30 s: time is up at 34.1 s, the sweep at 40 s returns it. It
    // answers through the sweep at 50 s (10 s after its return): multiplier 1 → 0. Its next
    // ejection (at 64.1 s, the 5th 503 of calls 60-64) is again 30 s, not 60 s: until the
    // sweep at 100 s.
    assert_eq!(ejected, [(4100, 30, 40_000, 1), (64_100, 30, 100_000, 2)]);
    let unejected: Vec<u128> = events
        .iter()
        .filter_map(|(at, e)| {
            matches!(e, AlternativeEvent::Unejected { .. }).then_some(at.as_millis())
        })
        .collect();
    assert_eq!(unejected, [40_000, 100_000]);
    let expected: Vec<u64> = (0..5).chain(40..65).chain(100..120).collect();
    assert_eq!(
        a0_calls, expected,
        "a0 is out from each ejection to its sweep"
    );
}

/// Envoy's `OutlierDetection` proto: `always_eject_one_host` "Defaults to false"; `interval`
/// "Defaults to 10000ms or 10s" (`duration = {gt {}}`); `max_ejection_time`: "If not
/// specified, the default value (300000ms or 300s) or base_ejection_time value is applied,
/// whatever is larger", and `DetectorImpl::create` refuses "outlier detector's
/// max_ejection_time cannot be smaller than base_ejection_time".
#[test]
fn the_outlier_keys_keep_envoys_defaults_and_bounds() {
    let load = |fields: &str| {
        load_router_config_str(&router_yaml(&format!("  outlier_detection: {fields}\n")))
            .map(|c| c.settings.outlier_detection.unwrap())
    };
    let defaults = load("true").unwrap();
    assert!(!defaults.always_eject_one_host);
    assert_eq!(defaults.interval, Duration::from_secs(10));
    assert_eq!(defaults.max_ejection_time, Duration::from_secs(300));
    let set = load("{always_eject_one_host: true, interval: 2s}").unwrap();
    assert!(set.always_eject_one_host);
    assert_eq!(set.interval, Duration::from_secs(2));
    assert_eq!(
        load("{base_ejection_time: 400s}")
            .unwrap()
            .max_ejection_time,
        Duration::from_secs(400),
        "the larger of 300 s and base_ejection_time"
    );
    let short = load("{base_ejection_time: 60s, max_ejection_time: 30s}").unwrap_err();
    assert_eq!(
        short.path,
        "router_settings.outlier_detection.max_ejection_time"
    );
    assert!(
        short.message.contains("at least base_ejection_time (1m)"),
        "{}",
        short.message
    );
    let zero = load("{interval: 0s}").unwrap_err();
    assert_eq!(zero.path, "router_settings.outlier_detection.interval");
    let typo = load("{always_eject_one: true}").unwrap_err();
    assert!(
        typo.message.contains("did you mean always_eject_one_host?"),
        "{}",
        typo.message
    );
}

/// The candidate walk (`profile: multigrid`, `profile: contract`) tries a route's attempts one
/// at a time and never hedges: `hedge_after` set there does nothing, and says so (an unread
/// key, which `--strict` refuses).
#[test]
fn hedge_after_under_the_candidate_walk_is_an_unread_key() {
    let load = |profile: &str, hedge: &str| {
        load_router_config_str(&router_yaml(&format!(
            "  profile: {profile}\n  hedge_after: {hedge}\n"
        )))
        .unwrap()
    };
    for profile in ["multigrid", "contract"] {
        let config = load(profile, "800ms");
        let paths: Vec<&str> = config.unread_keys.iter().map(|k| k.path.as_str()).collect();
        assert_eq!(paths, ["router_settings.hedge_after"], "{profile}");
        let warning = &config.warnings[0];
        assert!(
            warning.starts_with("router_settings.hedge_after: read by profile: litellm")
                && warning
                    .ends_with("only; it does nothing here (the candidate walk does not hedge)")
                && !warning.contains("multigrid"),
            "{warning}"
        );
        assert!(load(profile, "false").unread_keys.is_empty(), "{profile}");
    }
    for profile in ["litellm", "deltallm", "litellm-1.110"] {
        assert!(load(profile, "p95").unread_keys.is_empty(), "{profile}");
    }
}

/// `outlier_detection` where no group is large enough for Envoy's share check (at the default
/// 10 %, a group needs 10 deployments for its first ejection) does nothing, and says so.
#[test]
fn outlier_detection_that_can_never_eject_is_said() {
    let load = |members: usize, outlier: &str| {
        let list: String = (0..members)
            .map(|i| {
                format!(
                    "  - {{model_name: A, litellm_params: {{model: openai/a}}, model_info: {{id: a{i}}}}}\n"
                )
            })
            .collect();
        let yaml = format!("model_list:\n{list}router_settings:\n  outlier_detection: {outlier}\n");
        load_router_config_str(&yaml).unwrap().warnings
    };
    let never = load(3, "true");
    assert_eq!(never.len(), 1, "{never:?}");
    assert!(
        never[0].starts_with(
            "router_settings.outlier_detection: no group can have a deployment ejected, so it \
             does nothing here: Envoy ejects only if 100 × (ejected + 1) ÷ deployments ≤ \
             max_ejection_percent (10), and the largest group here has 3"
        ),
        "{}",
        never[0]
    );
    assert!(load(10, "true").is_empty(), "100 × 1 ÷ 10 ≤ 10");
    assert!(load(3, "{always_eject_one_host: true}").is_empty());
    assert!(load(3, "{max_ejection_percent: 34}").is_empty());
    let lone = load(1, "{always_eject_one_host: true}");
    assert!(
        lone[0].ends_with(
            "a lone deployment is never ejected (Envoy's panic threshold would route to it anyway)"
        ),
        "{lone:?}"
    );
}
