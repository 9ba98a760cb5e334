//! Streams under `profile: litellm-1.110`: what LiteLLM 1.110.2's code does with a streamed
//! request where it departs from the documented rules (measured with the stream oracle,
//! `tools/litellm-oracle/stream/`). Each test also runs the default profile where the two
//! differ, so the test shows the difference the profile makes.
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
use routersim_engine::config::{Deployment, Profile, RouterSettings};
use routersim_engine::event::{EventKind, GiveUpReason};
use routersim_engine::failure::{FailureKind as K, ProviderFailure};
use routersim_engine::request::{CompletionResult, Request};
use routersim_engine::stream::{ChunkKind, FinishReason, StreamItem, StreamOutcome};

fn streamed(id: u64, model: &str) -> Request {
    let mut r = Request::new(id, model);
    r.stream = true;
    r.max_tokens = Some(100);
    r
}

fn healthy(tokens: u32) -> Step {
    Step::Stream(vec![
        (ms(200), text(1)),
        (ms(300), text(tokens - 1)),
        (ms(0), done()),
    ])
}

fn breaks_after(tokens: u32, failure: ProviderFailure) -> Step {
    Step::Stream(vec![
        (ms(200), text(tokens)),
        (ms(100), Play::Break(failure)),
    ])
}

fn weighted(group: &str, id: &str, weight: f64) -> Deployment {
    let mut d = dep(group, id);
    d.weight = Some(weight);
    d
}

fn prefill(mut d: Deployment) -> Deployment {
    d.supports_assistant_prefill = true;
    d
}

/// `settings` under the 1.110 profile (`true`) or the default one.
fn profiled(v110: bool, settings: RouterSettings) -> RouterSettings {
    RouterSettings {
        profile: v110.then_some(Profile::LiteLlm110),
        ..settings
    }
}

fn continuation(v110: bool) -> RouterSettings {
    profiled(
        v110,
        RouterSettings {
            fallbacks: fallbacks(&[("A", &["B"])]),
            enable_mid_stream_fallback_continuation: true,
            ..RouterSettings::default()
        },
    )
}

fn give_ups(
    result: &CompletionResult,
    events: &[routersim_engine::event::RoutingEvent],
) -> Vec<GiveUpReason> {
    let _ = result;
    events_named(events, "give_up")
        .into_iter()
        .filter_map(|e| match e {
            EventKind::GiveUp { reason, .. } => Some(reason),
            _ => None,
        })
        .collect()
}

fn cooled(events: &[routersim_engine::event::RoutingEvent]) -> Vec<String> {
    events_named(events, "cooldown_set")
        .into_iter()
        .filter_map(|e| match e {
            EventKind::CooldownSet { deployment_id, .. } => Some(deployment_id.to_string()),
            _ => None,
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_stream_429_before_the_first_chunk_repicks_the_same_deployment_on_the_instant_retry() {
    for v110 in [false, true] {
        // allowed_fails 0: the 429 cools a0 at once; a0 weighs 1000 to 1, so any pick that
        // may take a0 takes it.
        let settings = profiled(
            v110,
            RouterSettings {
                allowed_fails: Some(0),
                ..RouterSettings::default()
            },
        );
        let (router, sink) = make_router(
            config(
                vec![weighted("A", "a0", 1000.0), weighted("A", "a1", 1.0)],
                settings,
            ),
            Scripted::new()
                .script(
                    "a0",
                    vec![Step::Stream(vec![(
                        ms(100),
                        Play::Break(ProviderFailure::new(K::RateLimit)),
                    )])],
                )
                .always("a0", healthy(10))
                .always("a1", healthy(10)),
        );
        let first = router.completion(streamed(1, "A")).await;
        if v110 {
            // The cooldown is written in the background: the instant retry still sees a0.
            assert_eq!(attempts(&first), ["a0:rate_limit", "a0:ok"]);
        } else {
            assert_eq!(attempts(&first), ["a0:rate_limit", "a1:ok"]);
        }
        assert_eq!(waits_ms(&first), [0, 0]);
        assert_eq!(cooled(&sink.events()), ["a0"], "v110 {v110}");
        // The cooldown is in force for the next request either way.
        let second = router.completion(streamed(2, "A")).await;
        assert_eq!(attempts(&second), ["a1:ok"], "v110 {v110}");
    }
}

/// Group A (a2 weighs 1000 to a1's 1, so a pick that may take a2 takes it) whose deployments
/// answer every streamed call with `a_fails`; num_retries 2, fallbacks A -> B. The attempts of
/// two requests in a row, and the deployments cooled, in order.
async fn group_a_exhausted_then_b(a_fails: Step) -> (Vec<String>, Vec<String>, Vec<String>) {
    let settings = profiled(
        true,
        RouterSettings {
            num_retries: 2,
            fallbacks: fallbacks(&[("A", &["B"])]),
            ..RouterSettings::default()
        },
    );
    let (router, sink) = make_router(
        config(
            vec![
                weighted("A", "a2", 1000.0),
                weighted("A", "a1", 1.0),
                dep("B", "b1"),
            ],
            settings,
        ),
        Scripted::new()
            .always("a1", a_fails.clone())
            .always("a2", a_fails)
            .always("b1", healthy(10)),
    );
    let first = router.completion(streamed(1, "A")).await;
    assert!(waits_ms(&first).iter().all(|&w| w == 0), "{first:?}");
    let second = router.completion(streamed(2, "A")).await;
    (attempts(&first), attempts(&second), cooled(&sink.events()))
}

#[tokio::test(start_paused = true)]
async fn a_group_whose_streams_all_429_before_the_first_chunk_spends_three_calls_then_falls_back() {
    // Stream oracle 98 (and 99, with Retry-After: the same calls): a2, a2, a1, then b1. The
    // first a2 failure's cooldown lands after the retry's pick (a2 again) and before the next
    // one (a1 alone left); the next request finds both cooling and goes straight to B.
    let broken = Step::Stream(vec![(
        ms(100),
        Play::Break(ProviderFailure::new(K::RateLimit)),
    )]);
    let (first, second, cooled) = group_a_exhausted_then_b(broken).await;
    assert_eq!(
        first,
        ["a2:rate_limit", "a2:rate_limit", "a1:rate_limit", "b1:ok"]
    );
    assert_eq!(second, ["b1:ok"]);
    assert_eq!(cooled, ["a2", "a2", "a1"]);
    // A 429 answered instead of a stream (stream oracle 80, the OpenAI path) is cooled before
    // the retry picks: two calls in A.
    let (first, second, cooled) = group_a_exhausted_then_b(fail(K::RateLimit)).await;
    assert_eq!(first, ["a2:rate_limit", "a1:rate_limit", "b1:ok"]);
    assert_eq!(second, ["b1:ok"]);
    assert_eq!(cooled, ["a2", "a1"]);
}

#[tokio::test(start_paused = true)]
async fn a_429_answered_before_the_stream_opens_is_cooled_at_once() {
    // An HTTP 429 instead of a stream is an ordinary failed call: its cooldown is written
    // before the retry picks (real LiteLLM's OpenAI path excludes the deployment).
    let settings = profiled(
        true,
        RouterSettings {
            allowed_fails: Some(0),
            ..RouterSettings::default()
        },
    );
    let (router, _sink) = make_router(
        config(
            vec![weighted("A", "a0", 1000.0), weighted("A", "a1", 1.0)],
            settings,
        ),
        Scripted::new()
            .script("a0", vec![fail(K::RateLimit)])
            .always("a0", healthy(10))
            .always("a1", healthy(10)),
    );
    let result = router.completion(streamed(1, "A")).await;
    assert_eq!(attempts(&result), ["a0:rate_limit", "a1:ok"]);
}

#[tokio::test(start_paused = true)]
async fn a_non_streamed_429_still_excludes_the_deployment_from_the_retry() {
    let settings = profiled(
        true,
        RouterSettings {
            allowed_fails: Some(0),
            ..RouterSettings::default()
        },
    );
    let (router, _sink) = make_router(
        config(
            vec![weighted("A", "a0", 1000.0), weighted("A", "a1", 1.0)],
            settings,
        ),
        Scripted::new().script("a0", vec![fail(K::RateLimit)]),
    );
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(attempts(&result), ["a0:rate_limit", "a1:ok"]);
}

#[tokio::test(start_paused = true)]
async fn a_continuation_records_its_reduced_max_tokens_on_its_attempt() {
    for v110 in [false, true] {
        let (router, sink) = make_router(
            config(
                vec![dep("A", "a0"), prefill(dep("B", "b0"))],
                continuation(v110),
            ),
            Scripted::new()
                .script(
                    "a0",
                    vec![breaks_after(20, ProviderFailure::new(K::ApiConnection))],
                )
                .always(
                    "b0",
                    Step::Stream(vec![(ms(150), text(80)), (ms(0), done())]),
                ),
        );
        let result = router.completion(streamed(1, "A")).await;
        assert_eq!(attempts(&result), ["a0:api_connection", "b0:ok"]);
        let max_tokens: Vec<_> = result.attempts.iter().map(|a| a.max_tokens).collect();
        assert_eq!(max_tokens, [Some(100), Some(80)]);
        let started: Vec<_> = events_named(&sink.events(), "attempt_start")
            .into_iter()
            .filter_map(|e| match e {
                EventKind::AttemptStart { max_tokens, .. } => Some(max_tokens),
                _ => None,
            })
            .collect();
        assert_eq!(started, [Some(100), Some(80)]);
        // routersim's own count stays the walk's hops; LiteLLM's counts the continuation.
        assert_eq!(result.fallbacks, 0);
        assert_eq!(result.attempted_fallbacks, u32::from(v110), "v110 {v110}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_4xx_other_than_429_after_content_is_raised_not_continued() {
    // (failure, continued under 1.110)
    let cases = [
        (ProviderFailure::new(K::BadRequest), false),
        (ProviderFailure::new(K::Timeout), false),
        (ProviderFailure::new(K::RateLimit), true),
        (ProviderFailure::new(K::ServiceUnavailable), true),
    ];
    for (failure, continued_110) in cases {
        for v110 in [false, true] {
            let kind = failure.kind;
            let (router, _sink) = make_router(
                config(
                    vec![dep("A", "a0"), prefill(dep("B", "b0"))],
                    continuation(v110),
                ),
                Scripted::new()
                    .script("a0", vec![breaks_after(20, failure.clone())])
                    .always(
                        "b0",
                        Step::Stream(vec![(ms(150), text(80)), (ms(0), done())]),
                    ),
            );
            let result = router.completion(streamed(1, "A")).await;
            let continued = !v110 || continued_110;
            let expected: Vec<String> = if continued {
                vec![format!("a0:{}", kind.as_str()), "b0:ok".into()]
            } else {
                vec![format!("a0:{}", kind.as_str())]
            };
            assert_eq!(attempts(&result), expected, "{kind:?} v110 {v110}");
            if !continued {
                assert_eq!(outcome(&result), kind.as_str());
            }
        }
    }
}

#[tokio::test(start_paused = true)]
async fn stream_timeout_also_limits_every_gap_between_chunks() {
    for v110 in [false, true] {
        let mut settings = continuation(v110);
        settings.stream_timeout = Some(Duration::from_secs(1));
        let (router, sink) = make_router(
            config(
                vec![dep("A", "a0"), dep("A", "a1"), prefill(dep("B", "b0"))],
                settings,
            ),
            Scripted::new()
                .script(
                    "a0",
                    vec![Step::Stream(vec![
                        (ms(200), text(5)),
                        (ms(3000), text(5)),
                        (ms(0), done()),
                    ])],
                )
                .script(
                    "a1",
                    vec![Step::Stream(vec![
                        (ms(200), text(5)),
                        (ms(3000), text(5)),
                        (ms(0), done()),
                    ])],
                )
                .always("b0", healthy(10)),
        );
        let result = router.completion(streamed(1, "A")).await;
        if v110 {
            // A stall after content: 408 after stream_timeout, no retry, no continuation.
            assert_eq!(attempts(&result).len(), 1);
            assert!(attempts(&result)[0].ends_with(":timeout"));
            assert_eq!(outcome(&result), "timeout");
            assert_eq!(
                result.end.duration_since(result.start),
                ms(200 + 1000),
                "the gap's deadline is stream_timeout after the last chunk"
            );
            assert_eq!(result.stream.unwrap().outcome, Some(StreamOutcome::Stalled));
            assert_eq!(
                give_ups(&result, &sink.events()),
                [GiveUpReason::StreamContentDelivered]
            );
        } else {
            // The documented rule: stream_timeout is the first token's deadline only.
            assert_eq!(attempts(&result).len(), 1);
            assert_eq!(outcome(&result), "ok");
        }
    }
}

#[tokio::test(start_paused = true)]
async fn stream_stall_timeout_stays_routersims_own_limit_beside_it() {
    let mut settings = profiled(true, RouterSettings::default());
    settings.stream_timeout = Some(Duration::from_secs(10));
    settings.stream_stall_timeout = Some(Duration::from_secs(2));
    let (router, _sink) = make_router(
        config(vec![dep("A", "a0")], settings),
        Scripted::new().script(
            "a0",
            vec![Step::Stream(vec![
                (ms(200), text(5)),
                (ms(3000), text(5)),
                (ms(0), done()),
            ])],
        ),
    );
    let result = router.completion(streamed(1, "A")).await;
    assert_eq!(outcome(&result), "timeout");
    assert_eq!(result.end.duration_since(result.start), ms(200 + 2000));
}

#[tokio::test(start_paused = true)]
async fn a_role_only_first_chunk_then_a_break_goes_straight_to_the_fallback_group() {
    for v110 in [false, true] {
        let settings = profiled(
            v110,
            RouterSettings {
                fallbacks: fallbacks(&[("A", &["B"])]),
                ..RouterSettings::default()
            },
        );
        let role_then_break = Step::Stream(vec![
            (ms(100), chunk(ChunkKind::RoleOnly, 0)),
            (ms(100), Play::Break(ProviderFailure::new(K::ApiConnection))),
        ]);
        let (router, sink) = make_router(
            config(vec![dep("A", "a0"), dep("B", "b0")], settings),
            Scripted::new()
                .script("a0", vec![role_then_break])
                .always("b0", healthy(10)),
        );
        let result = router.completion(streamed(1, "A")).await;
        if v110 {
            assert_eq!(attempts(&result), ["a0:api_connection", "b0:ok"]);
            assert_eq!(result.retries, 0);
            assert_eq!(
                give_ups(&result, &sink.events()),
                [GiveUpReason::StreamFirstChunkRead]
            );
        } else {
            assert_eq!(attempts(&result), ["a0:api_connection", "a0:ok"]);
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_break_before_any_chunk_still_retries_in_the_group() {
    let settings = profiled(
        true,
        RouterSettings {
            fallbacks: fallbacks(&[("A", &["B"])]),
            ..RouterSettings::default()
        },
    );
    let (router, _sink) = make_router(
        config(vec![dep("A", "a0"), dep("B", "b0")], settings),
        Scripted::new()
            .script(
                "a0",
                vec![Step::Stream(vec![(
                    ms(100),
                    Play::Break(ProviderFailure::new(K::ApiConnection)),
                )])],
            )
            .always("b0", healthy(10)),
    );
    let result = router.completion(streamed(1, "A")).await;
    assert_eq!(attempts(&result), ["a0:api_connection", "a0:ok"]);
}

#[tokio::test(start_paused = true)]
async fn a_broken_stream_bills_what_it_delivered() {
    for v110 in [false, true] {
        let (router, _sink) = make_router(
            config(
                vec![dep("A", "a0")],
                profiled(v110, RouterSettings::default()),
            ),
            Scripted::new().script(
                "a0",
                vec![breaks_after(20, ProviderFailure::new(K::ApiConnection))],
            ),
        );
        let result = router.completion(streamed(1, "A")).await;
        let stats = result.stream.unwrap();
        assert_eq!(stats.outcome, Some(StreamOutcome::BrokenAfterContent));
        assert_eq!(stats.tokens_delivered, 20);
        assert_eq!(
            stats.tokens_billed,
            if v110 { 20 } else { 0 },
            "v110 {v110}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn an_error_frame_inside_a_200_is_api_connection_whatever_its_code() {
    for v110 in [false, true] {
        let frame = |kind| Play::Item(StreamItem::ErrorFrame(ProviderFailure::new(kind)));
        // Before content: retried in the group, as the kind it is read as.
        let (router, _sink) = make_router(
            config(
                vec![dep("A", "a0"), prefill(dep("B", "b0"))],
                continuation(v110),
            ),
            Scripted::new()
                .script(
                    "a0",
                    vec![Step::Stream(vec![(ms(100), frame(K::BadRequest))])],
                )
                .always("a0", healthy(10)),
        );
        let before = router.completion(streamed(1, "A")).await;
        if v110 {
            assert_eq!(attempts(&before), ["a0:api_connection", "a0:ok"]);
            assert_eq!(
                before.attempts[0]
                    .failure
                    .as_ref()
                    .unwrap()
                    .effective_status(),
                Some(500)
            );
        } else {
            // A 400 is not retried; the fallback serves it.
            assert_eq!(attempts(&before), ["a0:bad_request", "b0:ok"]);
        }
        // After content: a 429 frame is an api_connection, continued.
        let (router, _sink) = make_router(
            config(
                vec![dep("A", "a0"), prefill(dep("B", "b0"))],
                continuation(v110),
            ),
            Scripted::new()
                .script(
                    "a0",
                    vec![Step::Stream(vec![
                        (ms(100), text(5)),
                        (ms(100), frame(K::BadRequest)),
                    ])],
                )
                .always("b0", healthy(10)),
        );
        let after = router.completion(streamed(2, "A")).await;
        if v110 {
            assert_eq!(attempts(&after), ["a0:api_connection", "b0:ok"]);
        } else {
            assert_eq!(attempts(&after), ["a0:bad_request", "b0:ok"]);
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_role_only_chunk_then_an_end_without_finish_reason_is_a_failure() {
    let unfinished = || {
        Step::Stream(vec![
            (ms(100), chunk(ChunkKind::RoleOnly, 0)),
            (ms(0), Play::Item(StreamItem::Done(FinishReason::Missing))),
        ])
    };
    for v110 in [false, true] {
        let settings = profiled(
            v110,
            RouterSettings {
                fallbacks: fallbacks(&[("A", &["B"])]),
                ..RouterSettings::default()
            },
        );
        let (router, _sink) = make_router(
            config(vec![dep("A", "a0"), dep("B", "b0")], settings),
            Scripted::new()
                .script("a0", vec![unfinished()])
                .always("b0", healthy(10)),
        );
        let result = router.completion(streamed(1, "A")).await;
        if v110 {
            // "Stream ended before a finish_reason was received": straight to the fallback.
            assert_eq!(attempts(&result), ["a0:api_connection", "b0:ok"]);
        } else {
            assert_eq!(attempts(&result), ["a0:ok"]);
            assert_eq!(result.stream.unwrap().outcome, Some(StreamOutcome::Empty));
        }
    }
    // The end marker alone (nothing before it) is an empty success under both.
    let (router, _sink) = make_router(
        config(
            vec![dep("A", "a0")],
            profiled(true, RouterSettings::default()),
        ),
        Scripted::new().script(
            "a0",
            vec![Step::Stream(vec![(
                ms(100),
                Play::Item(StreamItem::Done(FinishReason::Missing)),
            )])],
        ),
    );
    let result = router.completion(streamed(1, "A")).await;
    assert_eq!(attempts(&result), ["a0:ok"]);
}

#[tokio::test(start_paused = true)]
async fn a_body_that_closes_before_anything_is_an_empty_success_under_1_110() {
    // The OpenAI SDK ends its iteration at the end of the body as at `[DONE]`: with nothing
    // read, LiteLLM 1.110.2 answers an empty stream; after a frame, it is a failure.
    for (v110, plan, want) in [
        (true, vec![(ms(100), Play::Close)], vec!["a0:ok"]),
        (
            false,
            vec![(ms(100), Play::Close)],
            vec!["a0:api_connection", "b0:ok"],
        ),
        (
            true,
            vec![
                (ms(100), chunk(ChunkKind::RoleOnly, 0)),
                (ms(0), Play::Close),
            ],
            vec!["a0:api_connection", "b0:ok"],
        ),
    ] {
        let settings = profiled(
            v110,
            RouterSettings {
                fallbacks: fallbacks(&[("A", &["B"])]),
                num_retries: 0,
                ..RouterSettings::default()
            },
        );
        let (router, _sink) = make_router(
            config(vec![dep("A", "a0"), dep("B", "b0")], settings),
            Scripted::new()
                .script("a0", vec![Step::Stream(plan)])
                .always("b0", healthy(10)),
        );
        let result = router.completion(streamed(1, "A")).await;
        assert_eq!(attempts(&result), want, "v110 {v110}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_continuation_that_breaks_after_content_is_continued_again_from_its_group() {
    for v110 in [false, true] {
        let settings = profiled(
            v110,
            RouterSettings {
                fallbacks: fallbacks(&[("A", &["B"]), ("B", &["C"])]),
                enable_mid_stream_fallback_continuation: true,
                ..RouterSettings::default()
            },
        );
        let (router, _sink) = make_router(
            config(
                vec![
                    dep("A", "a0"),
                    prefill(dep("B", "b0")),
                    prefill(dep("C", "c0")),
                ],
                settings,
            ),
            Scripted::new()
                .script(
                    "a0",
                    vec![breaks_after(20, ProviderFailure::new(K::ApiConnection))],
                )
                .script(
                    "b0",
                    vec![breaks_after(30, ProviderFailure::new(K::ApiConnection))],
                )
                .always(
                    "c0",
                    Step::Stream(vec![(ms(150), text(50)), (ms(0), done())]),
                ),
        );
        let result = router.completion(streamed(1, "A")).await;
        if v110 {
            assert_eq!(
                attempts(&result),
                ["a0:api_connection", "b0:api_connection", "c0:ok"]
            );
            let max_tokens: Vec<_> = result.attempts.iter().map(|a| a.max_tokens).collect();
            assert_eq!(max_tokens, [Some(100), Some(80), Some(50)]);
            assert_eq!(result.stream.unwrap().tokens_delivered, 100);
            // The second hop is nested in the first: LiteLLM's header counts the outer one.
            assert_eq!(result.attempted_fallbacks, 1);
        } else {
            // The documented rule: one continuation; its failure raises the original error.
            assert_eq!(
                attempts(&result),
                ["a0:api_connection", "b0:api_connection"]
            );
            assert_eq!(outcome(&result), "api_connection");
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_continuation_with_no_prefill_deployment_records_its_hop_and_raises_the_original() {
    for v110 in [false, true] {
        let (router, sink) = make_router(
            config(vec![dep("A", "a0"), dep("B", "b0")], continuation(v110)),
            Scripted::new().script(
                "a0",
                vec![breaks_after(20, ProviderFailure::new(K::ApiConnection))],
            ),
        );
        let result = router.completion(streamed(1, "A")).await;
        assert_eq!(attempts(&result), ["a0:api_connection"]);
        assert_eq!(outcome(&result), "api_connection");
        assert_eq!(result.attempted_fallbacks, 0);
        let refused: Vec<_> = give_ups(&result, &sink.events())
            .into_iter()
            .filter(|r| *r == GiveUpReason::NoContinuationDeployment)
            .collect();
        assert_eq!(refused.len(), usize::from(v110), "v110 {v110}");
    }
}

/// Issue 30's crash: group A of two deployments, each breaking after 5 of 10 tokens,
/// `num_retries: 2`, `fallbacks: [{A: [B]}]`, and B's deployment (prefill) breaking after 3
/// more. LiteLLM 1.110.2 on this shape (stream oracle `110_continuation_breaks_again_no_chain_left`):
/// one of A's deployments delivers 5 chunks and raises; one fallback A → B with the prefill;
/// B delivers 3 chunks and raises; the caller receives 8 chunks, then `APIConnectionError`
/// (500): 2 attempts, 1 fallback, final group B: B's error. B has no chain of its own and A's chain
/// holds only B, which the walk already tried, so nothing continues B's break. Before, B was
/// continued on B again and again, a recursion that overflowed the stack. The default
/// profile continues once and raises the original error.
#[tokio::test(start_paused = true)]
async fn a_continuation_that_breaks_again_with_no_chain_left_raises_its_error() {
    for v110 in [false, true] {
        let settings = profiled(
            v110,
            RouterSettings {
                num_retries: 2,
                fallbacks: fallbacks(&[("A", &["B"])]),
                enable_mid_stream_fallback_continuation: true,
                ..RouterSettings::default()
            },
        );
        let (router, sink) = make_router(
            config(
                vec![dep("A", "a0"), dep("A", "a1"), prefill(dep("B", "b0"))],
                settings,
            ),
            Scripted::new()
                .always(
                    "a0",
                    breaks_after(5, ProviderFailure::new(K::ApiConnection)),
                )
                .always(
                    "a1",
                    breaks_after(5, ProviderFailure::new(K::ApiConnection)),
                )
                .always(
                    "b0",
                    breaks_after(3, ProviderFailure::new(K::InternalServer)),
                ),
        );
        let mut request = streamed(1, "A");
        request.max_tokens = Some(10);
        let result = router.completion(request).await;
        let got = attempts(&result);
        assert_eq!(got.len(), 2, "v110 {v110}: {got:?}");
        assert!(got[0].starts_with('a') && got[0].ends_with(":api_connection"));
        assert_eq!(got[1], "b0:internal_server");
        // Which error the caller gets: B's under 1.110 (the oracle's b1 `APIConnectionError`;
        // B breaks with another kind here to tell the two apart), A's by the documented rule.
        let raised = if v110 {
            "internal_server"
        } else {
            "api_connection"
        };
        assert_eq!(outcome(&result), raised);
        assert_eq!(result.stream.unwrap().tokens_delivered, 8);
        assert_eq!(&*result.final_model_group, "B");
        assert_eq!(events_named(&sink.events(), "stream_continued").len(), 1);
        // LiteLLM's header: the continuation counts as its one fallback.
        assert_eq!(result.attempted_fallbacks, u32::from(v110), "v110 {v110}");
    }
}

/// Under 1.110 each continuation is one fallback level deeper, and none goes past
/// `max_fallbacks` (stream oracle `113_continuation_chain_to_max_fallbacks`: a chain
/// A → B → … → H, every leg breaking after content, stops after five continuations, at F).
#[tokio::test(start_paused = true)]
async fn continuations_chain_down_to_max_fallbacks_and_no_further() {
    let groups = ["A", "B", "C", "D", "E", "F", "G", "H"];
    let chain: Vec<(&str, [&str; 1])> = groups.windows(2).map(|w| (w[0], [w[1]])).collect();
    let entries: Vec<(&str, &[&str])> = chain.iter().map(|(k, v)| (*k, &v[..])).collect();
    let mut deployments = vec![dep("A", "a0")];
    let mut provider = Scripted::new().always(
        "a0",
        breaks_after(2, ProviderFailure::new(K::ApiConnection)),
    );
    for g in &groups[1..] {
        let id = format!("{}0", g.to_lowercase());
        deployments.push(prefill(dep(g, &id)));
        provider = provider.always(&id, breaks_after(1, ProviderFailure::new(K::ApiConnection)));
    }
    let (router, _sink) = make_router(
        config(
            deployments,
            profiled(
                true,
                RouterSettings {
                    fallbacks: fallbacks(&entries),
                    enable_mid_stream_fallback_continuation: true,
                    ..RouterSettings::default()
                },
            ),
        ),
        provider,
    );
    let result = router.completion(streamed(1, "A")).await;
    assert_eq!(
        attempts(&result),
        [
            "a0:api_connection",
            "b0:api_connection",
            "c0:api_connection",
            "d0:api_connection",
            "e0:api_connection",
            "f0:api_connection"
        ]
    );
    assert_eq!(result.stream.unwrap().tokens_delivered, 7);
}
