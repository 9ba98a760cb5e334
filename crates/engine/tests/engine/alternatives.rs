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
    let settings = RouterSettings {
        num_retries: 0,
        disable_cooldowns: true,
        outlier_detection: Some(OutlierSettings::default()),
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
