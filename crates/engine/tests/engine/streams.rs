//! Stream recovery (seed: "Streams"): each path asserts the exact attempt sequence and what
//! the caller received.
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
use routersim_engine::config::{Deployment, RouterSettings};
use routersim_engine::event::{EventKind, GiveUpReason};
use routersim_engine::failure::{FailureKind as K, ProviderFailure};
use routersim_engine::request::{CompletionResult, Request, ResponseFormat};
use routersim_engine::stream::{
    BreakKind, ChunkKind, StreamItem, StreamOutcome, StreamRecovery, StreamStats,
};

fn streamed(id: u64, model: &str) -> Request {
    let mut r = Request::new(id, model);
    r.stream = true;
    r.max_tokens = Some(100);
    r
}

fn stats(result: &CompletionResult) -> StreamStats {
    result.stream.unwrap_or_default()
}

/// A healthy stream: first token at 200 ms, the rest 300 ms later, then done.
fn healthy(tokens: u32) -> Step {
    Step::Stream(vec![
        (ms(200), text(1)),
        (ms(300), text(tokens - 1)),
        (ms(0), done()),
    ])
}

/// `tokens` tokens, then the connection drops with `kind`.
fn breaks_after(tokens: u32, kind: K) -> Step {
    Step::Stream(vec![
        (ms(200), text(tokens)),
        (ms(100), Play::Break(ProviderFailure::new(kind))),
    ])
}

fn prefill(mut d: Deployment) -> Deployment {
    d.supports_assistant_prefill = true;
    d
}

fn weighted(group: &str, id: &str, weight: f64) -> Deployment {
    let mut d = dep(group, id);
    d.weight = Some(weight);
    d
}

fn continuation_settings() -> RouterSettings {
    RouterSettings {
        fallbacks: fallbacks(&[("A", &["B"])]),
        enable_mid_stream_fallback_continuation: true,
        ..RouterSettings::default()
    }
}

fn breaks(events: &[routersim_engine::event::RoutingEvent]) -> Vec<(String, BreakKind, u32, bool)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::StreamBreak {
                deployment_id,
                how,
                tokens_so_far,
                after_content,
                ..
            } => Some((
                deployment_id.to_string(),
                *how,
                *tokens_so_far,
                *after_content,
            )),
            _ => None,
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn pre_content_break_retries_in_the_same_group() {
    // A role-only delta is a byte but not content: the break is handled as an up-front failure.
    let a0 = Step::Stream(vec![
        (ms(100), chunk(ChunkKind::RoleOnly, 0)),
        (ms(100), Play::Break(ProviderFailure::new(K::ApiConnection))),
    ]);
    // allowed_fails 0: the break cools a0, so the retry's pick lands on a1.
    let settings = RouterSettings {
        allowed_fails: Some(0),
        ..RouterSettings::default()
    };
    let (router, sink) = make_router(
        config(
            vec![weighted("A", "a0", 1000.0), weighted("A", "a1", 1.0)],
            settings,
        ),
        Scripted::new()
            .script("a0", vec![a0])
            .always("a1", healthy(40)),
    );
    let result = router.completion(streamed(1, "A")).await;
    assert_eq!(attempts(&result), ["a0:api_connection", "a1:ok"]);
    assert_eq!(
        stats(&result),
        StreamStats {
            outcome: Some(StreamOutcome::Completed),
            ttft: Some(ms(400)),
            tokens_delivered: 40,
            tokens_billed: 40,
        }
    );
    assert_eq!(
        breaks(&sink.events()),
        [("a0".into(), BreakKind::Connection, 0, false)]
    );
}

#[tokio::test(start_paused = true)]
async fn pre_content_break_falls_back_like_an_up_front_failure() {
    let settings = RouterSettings {
        fallbacks: fallbacks(&[("A", &["B"])]),
        num_retries: 0,
        ..RouterSettings::default()
    };
    let a0 = Step::Stream(vec![(
        ms(100),
        Play::Break(ProviderFailure::new(K::ServiceUnavailable)),
    )]);
    let (router, sink) = make_router(
        config(vec![dep("A", "a0"), dep("B", "b0")], settings),
        Scripted::new()
            .script("a0", vec![a0])
            .always("b0", healthy(10)),
    );
    let result = router.completion(streamed(1, "A")).await;
    assert_eq!(attempts(&result), ["a0:service_unavailable", "b0:ok"]);
    assert_eq!(result.fallbacks, 1);
    assert_eq!(stats(&result).outcome, Some(StreamOutcome::Completed));
    assert_eq!(events_named(&sink.events(), "fallback").len(), 1);
}

#[tokio::test(start_paused = true)]
async fn post_content_break_fails_with_the_original_error_and_the_partial_text() {
    // Siblings, retries and fallbacks are all available: none may run once content was sent.
    let settings = RouterSettings {
        fallbacks: fallbacks(&[("A", &["B"])]),
        ..RouterSettings::default()
    };
    let (router, sink) = make_router(
        config(
            vec![
                weighted("A", "a0", 1000.0),
                weighted("A", "a1", 1.0),
                dep("B", "b0"),
            ],
            settings,
        ),
        Scripted::new().script("a0", vec![breaks_after(20, K::ApiConnection)]),
    );
    let result = router.completion(streamed(1, "A")).await;
    assert_eq!(attempts(&result), ["a0:api_connection"]);
    assert_eq!(outcome(&result), "api_connection");
    assert_eq!(
        stats(&result),
        StreamStats {
            outcome: Some(StreamOutcome::BrokenAfterContent),
            ttft: Some(ms(200)),
            tokens_delivered: 20,
            tokens_billed: 0,
        }
    );
    assert_eq!(
        breaks(&sink.events()),
        [("a0".into(), BreakKind::Connection, 20, true)]
    );
    assert!(matches!(
        &events_named(&sink.events(), "give_up")[..],
        [EventKind::GiveUp {
            reason: GiveUpReason::StreamContentDelivered,
            ..
        }]
    ));
    assert!(events_named(&sink.events(), "fallback").is_empty());
}

#[tokio::test(start_paused = true)]
async fn continuation_carries_the_stream_on_a_prefill_deployment() {
    let (router, sink) = make_router(
        config(
            vec![dep("A", "a0"), prefill(dep("B", "b0"))],
            continuation_settings(),
        ),
        Scripted::new()
            .script("a0", vec![breaks_after(20, K::ApiConnection)])
            .always(
                "b0",
                Step::Stream(vec![(ms(150), text(80)), (ms(0), done())]),
            ),
    );
    let result = router.completion(streamed(1, "A")).await;
    assert_eq!(attempts(&result), ["a0:api_connection", "b0:ok"]);
    assert_eq!(outcome(&result), "ok");
    assert_eq!(
        stats(&result),
        StreamStats {
            outcome: Some(StreamOutcome::Continued),
            ttft: Some(ms(200)),
            tokens_delivered: 100,
            tokens_billed: 100,
        }
    );
    assert_eq!(
        events_named(&sink.events(), "stream_continued"),
        vec![EventKind::StreamContinued {
            from_group: Arc::from("A"),
            from_deployment: Arc::from("a0"),
            to_group: Arc::from("B"),
            to_deployment: Arc::from("b0"),
            prefill_tokens: 20,
        }]
    );
    // The continuation carries the text so far as a prefill, with max_tokens reduced.
    let seen = router.provider().seen.borrow();
    assert_eq!(seen[1].0, "b0");
    assert_eq!(seen[1].1.prefill_tokens, 20);
    assert_eq!(seen[1].1.max_tokens, Some(80));
}

#[tokio::test(start_paused = true)]
async fn continuation_is_refused_for_every_disqualifier() {
    // (label, what a0 streams before breaking, request tweak, break kind)
    type Case = (&'static str, Vec<(Duration, Play)>, fn(&mut Request), K);
    let cases: Vec<Case> = vec![
        (
            "tool calls",
            vec![(ms(100), chunk(ChunkKind::ToolCall, 5)), (ms(50), text(5))],
            |_| {},
            K::ApiConnection,
        ),
        (
            "thinking",
            vec![(ms(100), chunk(ChunkKind::Thinking, 5)), (ms(50), text(5))],
            |_| {},
            K::ApiConnection,
        ),
        (
            "audio",
            vec![(ms(100), chunk(ChunkKind::Audio, 5))],
            |_| {},
            K::ApiConnection,
        ),
        (
            "image",
            vec![(ms(100), chunk(ChunkKind::Image, 5))],
            |_| {},
            K::ApiConnection,
        ),
        (
            "json mode",
            vec![(ms(100), text(10))],
            |r| r.response_format = ResponseFormat::Json,
            K::ApiConnection,
        ),
        (
            "content policy",
            vec![(ms(100), text(10))],
            |_| {},
            K::ContentPolicyViolation,
        ),
    ];
    for (label, mut plan, tweak, kind) in cases {
        plan.push((
            ms(50),
            Play::Item(StreamItem::ErrorFrame(ProviderFailure::new(kind))),
        ));
        let (router, sink) = make_router(
            config(
                vec![dep("A", "a0"), prefill(dep("B", "b0"))],
                continuation_settings(),
            ),
            Scripted::new()
                .script("a0", vec![Step::Stream(plan)])
                .always("b0", healthy(10)),
        );
        let mut request = streamed(1, "A");
        tweak(&mut request);
        let result = router.completion(request).await;
        assert_eq!(attempts(&result), [format!("a0:{kind}")], "{label}");
        assert_eq!(
            stats(&result).outcome,
            Some(StreamOutcome::BrokenAfterContent),
            "{label}"
        );
        assert!(
            events_named(&sink.events(), "stream_continued").is_empty(),
            "{label}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn continuation_without_an_eligible_deployment_raises_the_original_error() {
    // B exists but does not support assistant prefill.
    let (router, _) = make_router(
        config(
            vec![dep("A", "a0"), dep("B", "b0")],
            continuation_settings(),
        ),
        Scripted::new()
            .script("a0", vec![breaks_after(20, K::Overloaded)])
            .always("b0", healthy(10)),
    );
    let result = router.completion(streamed(1, "A")).await;
    assert_eq!(attempts(&result), ["a0:overloaded"]);
    assert_eq!(outcome(&result), "overloaded");
    assert_eq!(stats(&result).tokens_delivered, 20);
}

#[tokio::test(start_paused = true)]
async fn stall_timeout_cuts_a_stream_that_stops_sending() {
    let settings = RouterSettings {
        stream_stall_timeout: Some(Duration::from_secs(2)),
        ..RouterSettings::default()
    };
    let a0 = Step::Stream(vec![
        (ms(200), text(5)),
        (Duration::from_secs(30), text(5)),
        (ms(0), done()),
    ]);
    let (router, sink) = make_router(
        config(vec![dep("A", "a0")], settings),
        Scripted::new().script("a0", vec![a0]),
    );
    let result = router.completion(streamed(1, "A")).await;
    assert_eq!(attempts(&result), ["a0:timeout"]);
    // Cut 2 s after the last chunk (at 0.2 s), not after the 30 s stall.
    assert_eq!(result.attempts[0].end - result.attempts[0].start, ms(2200));
    assert_eq!(stats(&result).outcome, Some(StreamOutcome::Stalled));
    assert_eq!(
        breaks(&sink.events()),
        [("a0".into(), BreakKind::Stall, 5, true)]
    );
}

#[tokio::test(start_paused = true)]
async fn first_token_timeout_is_a_pre_content_timeout_and_retries() {
    let settings = RouterSettings {
        stream_timeout: Some(Duration::from_secs(1)),
        ..RouterSettings::default()
    };
    let slow = Step::Stream(vec![(Duration::from_secs(5), text(10)), (ms(0), done())]);
    let (router, _) = make_router(
        config(vec![dep("A", "a0")], settings),
        Scripted::new().script("a0", vec![slow, healthy(10)]),
    );
    let result = router.completion(streamed(1, "A")).await;
    assert_eq!(attempts(&result), ["a0:timeout", "a0:ok"]);
    assert_eq!(
        result.attempts[0].end - result.attempts[0].start,
        Duration::from_secs(1)
    );
    assert_eq!(stats(&result).outcome, Some(StreamOutcome::Completed));
}

#[tokio::test(start_paused = true)]
async fn error_frame_after_200_is_a_break_before_or_after_content() {
    // Before content: retried like any failure.
    let frame = |kind| Play::Item(StreamItem::ErrorFrame(ProviderFailure::new(kind)));
    let before = Step::Stream(vec![
        (ms(100), chunk(ChunkKind::RoleOnly, 0)),
        (ms(10), frame(K::Overloaded)),
    ]);
    let (router, sink) = make_router(
        config(vec![dep("A", "a0")], RouterSettings::default()),
        Scripted::new().script("a0", vec![before, healthy(10)]),
    );
    let result = router.completion(streamed(1, "A")).await;
    assert_eq!(attempts(&result), ["a0:overloaded", "a0:ok"]);
    assert_eq!(
        breaks(&sink.events()),
        [("a0".into(), BreakKind::ErrorFrame, 0, false)]
    );

    // After content: the caller gets the error with the text so far.
    let after = Step::Stream(vec![(ms(100), text(7)), (ms(10), frame(K::Overloaded))]);
    let (router, _) = make_router(
        config(vec![dep("A", "a0")], RouterSettings::default()),
        Scripted::new().script("a0", vec![after]),
    );
    let result = router.completion(streamed(1, "A")).await;
    assert_eq!(attempts(&result), ["a0:overloaded"]);
    assert_eq!(stats(&result).tokens_delivered, 7);
    assert_eq!(
        stats(&result).outcome,
        Some(StreamOutcome::BrokenAfterContent)
    );
}

#[tokio::test(start_paused = true)]
async fn truncated_stream_without_terminal_marker_is_a_break() {
    let a0 = Step::Stream(vec![(ms(100), text(10)), (ms(50), Play::Close)]);
    let (router, sink) = make_router(
        config(vec![dep("A", "a0")], RouterSettings::default()),
        Scripted::new().script("a0", vec![a0]),
    );
    let result = router.completion(streamed(1, "A")).await;
    assert_eq!(attempts(&result), ["a0:api_connection"]);
    assert_eq!(
        breaks(&sink.events()),
        [("a0".into(), BreakKind::Truncated, 10, true)]
    );
    assert_eq!(
        stats(&result).outcome,
        Some(StreamOutcome::BrokenAfterContent)
    );
}

#[tokio::test(start_paused = true)]
async fn empty_stream_is_a_malformed_success() {
    let a0 = Step::Stream(vec![
        (ms(100), chunk(ChunkKind::RoleOnly, 0)),
        (ms(0), done()),
    ]);
    let (router, _) = make_router(
        config(vec![dep("A", "a0")], RouterSettings::default()),
        Scripted::new().script("a0", vec![a0]),
    );
    let result = router.completion(streamed(1, "A")).await;
    assert_eq!(outcome(&result), "ok");
    assert_eq!(
        stats(&result),
        StreamStats {
            outcome: Some(StreamOutcome::Empty),
            ttft: None,
            tokens_delivered: 0,
            tokens_billed: 0
        }
    );
}

#[tokio::test(start_paused = true)]
async fn multigrid_policy_recovers_only_until_the_first_byte() {
    let settings = || RouterSettings {
        stream_recovery: StreamRecovery::Multigrid,
        enable_mid_stream_fallback_continuation: true,
        fallbacks: fallbacks(&[("A", &["B"])]),
        ..RouterSettings::default()
    };
    // No byte yet: retried (and would fail over) as usual.
    let no_byte = Step::Stream(vec![(
        ms(100),
        Play::Break(ProviderFailure::new(K::ApiConnection)),
    )]);
    let (router, _) = make_router(
        config(vec![dep("A", "a0"), prefill(dep("B", "b0"))], settings()),
        Scripted::new().script("a0", vec![no_byte, healthy(10)]),
    );
    let result = router.completion(streamed(1, "A")).await;
    assert_eq!(attempts(&result), ["a0:api_connection", "a0:ok"]);

    // A role-only frame is the first byte: after it, an error on the same stream, no retry
    // (LiteLLM would have retried: there was no content).
    let role_then_break = Step::Stream(vec![
        (ms(100), chunk(ChunkKind::RoleOnly, 0)),
        (ms(100), Play::Break(ProviderFailure::new(K::ApiConnection))),
    ]);
    let (router, _) = make_router(
        config(vec![dep("A", "a0"), prefill(dep("B", "b0"))], settings()),
        Scripted::new()
            .script("a0", vec![role_then_break])
            .always("b0", healthy(10)),
    );
    let result = router.completion(streamed(1, "A")).await;
    assert_eq!(attempts(&result), ["a0:api_connection"]);
    assert_eq!(
        stats(&result).outcome,
        Some(StreamOutcome::BrokenAfterContent)
    );

    // After content: every token produced so far is delivered and billed; never continued.
    let (router, sink) = make_router(
        config(vec![dep("A", "a0"), prefill(dep("B", "b0"))], settings()),
        Scripted::new()
            .script("a0", vec![breaks_after(20, K::ApiConnection)])
            .always("b0", healthy(10)),
    );
    let result = router.completion(streamed(1, "A")).await;
    assert_eq!(attempts(&result), ["a0:api_connection"]);
    assert_eq!(
        stats(&result),
        StreamStats {
            outcome: Some(StreamOutcome::BrokenAfterContent),
            ttft: Some(ms(200)),
            tokens_delivered: 20,
            tokens_billed: 20,
        }
    );
    assert!(events_named(&sink.events(), "stream_continued").is_empty());
}

#[tokio::test(start_paused = true)]
async fn stream_chunks_report_gaps_for_the_inter_token_histogram() {
    let a0 = Step::Stream(vec![
        (ms(300), text(1)),
        (
            ms(100),
            Play::Item(StreamItem::Chunk(routersim_engine::stream::Chunk {
                kind: ChunkKind::Text,
                tokens: 5,
                span: ms(80),
            })),
        ),
        (ms(0), done()),
    ]);
    let (router, sink) = make_router(
        config(vec![dep("A", "a0")], RouterSettings::default()),
        Scripted::new().script("a0", vec![a0]),
    );
    let result = router.completion(streamed(1, "A")).await;
    assert_eq!(stats(&result).ttft, Some(ms(300)));
    assert_eq!(
        events_named(&sink.events(), "stream_chunk"),
        vec![
            EventKind::StreamChunk {
                tokens: 1,
                gap_before: None,
                inner_gap: Duration::ZERO
            },
            // Five tokens over 80 ms ending at 400 ms: the first at 320 ms, 20 ms after the last.
            EventKind::StreamChunk {
                tokens: 5,
                gap_before: Some(ms(20)),
                inner_gap: ms(20)
            },
        ]
    );
}
