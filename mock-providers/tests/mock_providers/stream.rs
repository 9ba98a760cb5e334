//! Streamed calls under paused time: exact item sequences at exact virtual instants.
#![allow(
    clippy::disallowed_methods,
    reason = "these tests run on tokio's paused runtime and read its clock directly, as the seam does there"
)]

use std::collections::BTreeMap;
use std::time::Duration;

use routersim_engine::config::{Deployment, RouterConfig};
use routersim_engine::failure::FailureKind;
use routersim_engine::provider::{Provider, ProviderCall, ProviderResponse};
use routersim_engine::request::Request;
use routersim_engine::stream::{ChunkKind, FinishReason, ProviderStream, StreamItem};
use routersim_mock_providers::{FakeProviders, FaultSpec, ProviderSpec};
use tokio::time::{Instant, sleep_until};

const EPOCH: i64 = 1_767_225_600_000;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn config(stall: Option<Duration>) -> RouterConfig {
    let dep = |id: &str, group: &str| Deployment {
        id: id.into(),
        model_name: group.into(),
        model: format!("openai/{id}"),
        ..Deployment::default()
    };
    let mut config = RouterConfig {
        deployments: vec![dep("a", "gpt"), dep("b", "gpt")],
        ..RouterConfig::default()
    };
    config.settings.stream_stall_timeout = stall;
    config
}

/// What a reader sees, simplified for comparison: chunks as (kind, tokens, span in ms).
#[derive(Clone, Debug, PartialEq)]
enum Seen {
    Chunk(ChunkKind, u32, u64),
    Frame(FailureKind, Option<u16>),
    Done(FinishReason),
    Broke(FailureKind, Option<u16>),
    Closed,
}

use Seen::{Broke, Chunk, Closed, Done, Frame};

fn text(tokens: u32, span_ms: u64) -> Seen {
    Chunk(ChunkKind::Text, tokens, span_ms)
}

struct Harness {
    config: RouterConfig,
    fakes: FakeProviders,
    start: Instant,
}

impl Harness {
    fn new(providers: &str, faults: &str, stall: Option<Duration>) -> Self {
        let config = config(stall);
        let specs: BTreeMap<String, ProviderSpec> =
            serde_saphyr::from_str(providers).expect("providers parse");
        let faults: Vec<FaultSpec> = serde_saphyr::from_str(faults).expect("faults parse");
        let start = Instant::now();
        let fakes =
            FakeProviders::new(&config, &specs, &faults, 1, EPOCH, start).expect("valid specs");
        Self {
            config,
            fakes,
            start,
        }
    }

    /// Calls deployment `index`; returns the outcome name when the call failed or returned a
    /// complete response, else reads the stream to its end. Times are from the call's start.
    async fn read(&self, index: usize, request: &Request) -> Result<Vec<(u64, Seen)>, String> {
        let began = Instant::now();
        let call = ProviderCall {
            deployment: &self.config.deployments[index],
            deployment_index: index,
            request,
            attempt: 1,
        };
        let since = |began: Instant| Instant::now().duration_since(began).as_millis() as u64;
        let mut stream = match self.fakes.call(call).await {
            Err(f) => return Err(format!("{} at {}ms", f.kind.as_str(), since(began))),
            Ok(ProviderResponse::Complete(c)) => {
                return Err(format!(
                    "complete {} at {}ms",
                    c.output_tokens,
                    since(began)
                ));
            }
            Ok(ProviderResponse::Stream(s)) => s,
        };
        assert_eq!(Instant::now(), began, "the stream opens at once");
        let mut seen = Vec::new();
        loop {
            let item = stream.next_item().await;
            let at = since(began);
            let s = match item {
                Some(Ok(StreamItem::Chunk(c))) => {
                    Chunk(c.kind, c.tokens, c.span.as_millis() as u64)
                }
                Some(Ok(StreamItem::ErrorFrame(f))) => Frame(f.kind, f.status),
                Some(Ok(StreamItem::Done(r))) => Done(r),
                Some(Err(f)) => Broke(f.kind, f.status),
                None => Closed,
            };
            let end = s == Closed;
            seen.push((at, s));
            if end {
                break;
            }
            assert!(seen.len() < 10_000, "runaway stream");
        }
        // Closed stays closed.
        assert!(stream.next_item().await.is_none());
        Ok(seen)
    }
}

fn streamed(output_tokens: u32) -> Request {
    Request {
        stream: true,
        output_tokens: Some(output_tokens),
        ..Request::new(0, "gpt")
    }
}

const PACE: &str = "a:\n  latency: 3s\n  ttft: 500ms\n  inter_token: 20ms\n";

#[tokio::test(start_paused = true)]
async fn a_stream_is_the_first_token_then_one_coalesced_run() {
    let h = Harness::new(PACE, "[]", None);
    assert_eq!(
        h.read(0, &streamed(100)).await,
        Ok(vec![
            (500, text(1, 0)),
            // Tokens 1..=99: the first at 520 ms, the last at 500 + 99 × 20 = 2480 ms.
            (2480, text(99, 1960)),
            (2480, Done(FinishReason::Stop)),
            (2480, Closed),
        ])
    );
    // The same request, not streamed: a complete answer after `latency`.
    let plain = Request {
        output_tokens: Some(100),
        ..Request::new(1, "gpt")
    };
    assert_eq!(
        h.read(0, &plain).await,
        Err("complete 100 at 3000ms".into())
    );
}

#[tokio::test(start_paused = true)]
async fn chunks_never_span_more_than_half_the_stall_timeout() {
    let h = Harness::new(PACE, "[]", Some(ms(1000)));
    let seen = h.read(0, &streamed(100)).await.expect("a stream");
    assert_eq!(
        seen,
        vec![
            (500, text(1, 0)),
            (1020, text(26, 500)),
            (1540, text(26, 500)),
            (2060, text(26, 500)),
            (2480, text(21, 400)),
            (2480, Done(FinishReason::Stop)),
            (2480, Closed),
        ]
    );
    // The router's stall deadline runs from the previous item: every gap stays under it.
    assert!(seen.windows(2).all(|w| w[1].0 - w[0].0 < 1000));

    // A pace of at least half the stall timeout: one token per chunk.
    let slow = Harness::new(
        "a: {ttft: 100ms, inter_token: 500ms}\n",
        "[]",
        Some(ms(1000)),
    );
    assert_eq!(
        slow.read(0, &streamed(3)).await,
        Ok(vec![
            (100, text(1, 0)),
            (600, text(1, 0)),
            (1100, text(1, 0)),
            (1100, Done(FinishReason::Stop)),
            (1100, Closed),
        ])
    );
}

#[tokio::test(start_paused = true)]
async fn a_break_after_tokens_drops_the_connection_there() {
    let h = Harness::new(
        &format!(
            "{PACE}b:\n  ttft: 500ms\n  script:\n    - {{stream_break: {{after_tokens: 20, error: internal_server}}}}\n    - {{stream_break: {{after_tokens: 0}}}}\n"
        ),
        "[]",
        None,
    );
    let h2 = Harness::new(
        &format!("{PACE}  script: [{{stream_break: {{after_tokens: 20}}}}]\n"),
        "[]",
        None,
    );
    assert_eq!(
        h2.read(0, &streamed(100)).await,
        Ok(vec![
            (500, text(1, 0)),
            (880, text(19, 360)),
            (880, Broke(FailureKind::ApiConnection, None)),
            (880, Closed),
        ])
    );
    assert_eq!(
        h.read(1, &streamed(100)).await,
        Ok(vec![
            (500, text(1, 0)),
            (880, text(19, 360)),
            (880, Broke(FailureKind::InternalServer, Some(500))),
            (880, Closed),
        ])
    );
    // After 0 tokens: the break comes when the first token would have.
    assert_eq!(
        h.read(1, &streamed(100)).await,
        Ok(vec![
            (500, Broke(FailureKind::ApiConnection, None)),
            (500, Closed)
        ])
    );
}

#[tokio::test(start_paused = true)]
async fn a_break_after_a_time_delivers_the_tokens_that_arrived_by_then() {
    let h = Harness::new(
        &format!(
            "{PACE}  script: [{{stream_break: {{after: 1.51s}}}}, {{stream_break: {{after: 5s}}}}]\n"
        ),
        "[]",
        None,
    );
    // Cut at 500 + 1510 = 2010 ms: tokens 0..=75 (the last at 2000 ms) are delivered.
    assert_eq!(
        h.read(0, &streamed(100)).await,
        Ok(vec![
            (500, text(1, 0)),
            (2000, text(75, 1480)),
            (2010, Broke(FailureKind::ApiConnection, None)),
            (2010, Closed),
        ])
    );
    // A cut after the last token never fires.
    assert_eq!(
        h.read(0, &streamed(100)).await,
        Ok(vec![
            (500, text(1, 0)),
            (2480, text(99, 1960)),
            (2480, Done(FinishReason::Stop)),
            (2480, Closed),
        ])
    );
}

#[tokio::test(start_paused = true)]
async fn an_error_frame_arrives_inside_the_stream() {
    let h = Harness::new(
        &format!(
            "{PACE}  script: [{{stream_error_frame: {{after_tokens: 5, error: overloaded}}}}]\n"
        ),
        "[]",
        None,
    );
    assert_eq!(
        h.read(0, &streamed(100)).await,
        Ok(vec![
            (500, text(1, 0)),
            (580, text(4, 60)),
            (580, Frame(FailureKind::Overloaded, Some(529))),
            (580, Closed),
        ])
    );
}

#[tokio::test(start_paused = true)]
async fn a_truncated_stream_closes_without_its_terminal_marker() {
    let h = Harness::new(
        &format!(
            "{PACE}  script: [{{stream_truncated: {{after_tokens: 5}}}}, {{stream_truncated: {{after_tokens: 1000}}}}]\n"
        ),
        "[]",
        None,
    );
    assert_eq!(
        h.read(0, &streamed(100)).await,
        Ok(vec![(500, text(1, 0)), (580, text(4, 60)), (580, Closed)])
    );
    // Past the answer's length: every token, then no terminal marker.
    assert_eq!(
        h.read(0, &streamed(100)).await,
        Ok(vec![
            (500, text(1, 0)),
            (2480, text(99, 1960)),
            (2480, Closed)
        ])
    );
}

#[tokio::test(start_paused = true)]
async fn a_stall_pauses_the_stream_then_it_completes() {
    let h = Harness::new(
        &format!(
            "{PACE}  script:\n    - {{stream_stall: {{after_tokens: 10, for: 30s}}}}\n    - {{stream_stall: {{after_tokens: 100, for: 30s}}}}\n    - {{stream_stall: {{after: 1s, for: 10s}}}}\n"
        ),
        "[]",
        None,
    );
    assert_eq!(
        h.read(0, &streamed(100)).await,
        Ok(vec![
            (500, text(1, 0)),
            (680, text(9, 160)),
            // Nothing for 30 s; the first token after the stall comes alone.
            (30_680, text(1, 0)),
            (32_460, text(89, 1760)),
            (32_460, Done(FinishReason::Stop)),
            (32_460, Closed),
        ])
    );
    // After every token: the terminal marker comes 30 s late.
    assert_eq!(
        h.read(0, &streamed(100)).await,
        Ok(vec![
            (500, text(1, 0)),
            (2480, text(99, 1960)),
            (32_480, Done(FinishReason::Stop)),
            (32_480, Closed),
        ])
    );
    // Cut 1 s after the first token (at 1500 ms): tokens 0..=50 are sent; token 51 comes at
    // 11.5 s, the last (99) at 11.5 s + 48 × 20 ms.
    assert_eq!(
        h.read(0, &streamed(100)).await,
        Ok(vec![
            (500, text(1, 0)),
            (1500, text(50, 980)),
            (11_500, text(1, 0)),
            (12_460, text(48, 940)),
            (12_460, Done(FinishReason::Stop)),
            (12_460, Closed),
        ])
    );
}

#[tokio::test(start_paused = true)]
async fn role_only_and_empty_streams_carry_no_content() {
    let h = Harness::new(
        &format!("{PACE}  script: [{{stream_empty: role_only}}, {{stream_empty: true}}]\n"),
        "[]",
        None,
    );
    assert_eq!(
        h.read(0, &streamed(100)).await,
        Ok(vec![
            (500, Chunk(ChunkKind::RoleOnly, 0, 0)),
            (500, Done(FinishReason::Stop)),
            (500, Closed),
        ])
    );
    assert_eq!(
        h.read(0, &streamed(100)).await,
        Ok(vec![(500, Done(FinishReason::Stop)), (500, Closed)])
    );
    let stats = h.fakes.stats_by_id("a").expect("a");
    assert_eq!((stats.streams, stats.stream_faults, stats.ok), (2, 2, 2));
}

#[tokio::test(start_paused = true)]
async fn emits_come_first_in_order_and_tool_calls_only_with_tools() {
    let h = Harness::new(
        "a: {ttft: 500ms, inter_token: 20ms, emits: [thinking, tool_calls, image]}\n",
        "[]",
        None,
    );
    assert_eq!(
        h.read(0, &streamed(10)).await,
        Ok(vec![
            (500, Chunk(ChunkKind::Thinking, 1, 0)),
            (520, Chunk(ChunkKind::Image, 1, 0)),
            (680, text(8, 140)),
            (680, Done(FinishReason::Stop)),
            (680, Closed),
        ])
    );
    let with_tools = Request {
        tools: true,
        ..streamed(10)
    };
    assert_eq!(
        h.read(0, &with_tools).await,
        Ok(vec![
            (500, Chunk(ChunkKind::Thinking, 1, 0)),
            (520, Chunk(ChunkKind::ToolCall, 1, 0)),
            (540, Chunk(ChunkKind::Image, 1, 0)),
            (680, text(7, 120)),
            (680, Done(FinishReason::ToolCalls)),
            (680, Closed),
        ])
    );
}

#[tokio::test(start_paused = true)]
async fn stream_windows_apply_only_inside_from_to_and_only_to_streams() {
    let h = Harness::new(
        "a: {latency: 0s, ttft: 100ms, inter_token: 10ms}\n",
        "- {deployment: a, from: 2s, to: 5s, stream_truncated: {after_tokens: 1}}\n",
        None,
    );
    let mut seen = Vec::new();
    for at in [0, 1999, 2000, 4999, 5000] {
        sleep_until(h.start + ms(at)).await;
        let ended = h.read(0, &streamed(3)).await.expect("a stream");
        seen.push((at, ended.last().cloned(), ended.len()));
    }
    let done = |n| (Some((120, Closed)), n);
    let cut = (Some((100, Closed)), 2);
    assert_eq!(
        seen.iter()
            .map(|(at, last, n)| (*at, (last.clone(), *n)))
            .collect::<Vec<_>>(),
        vec![
            (0, done(4)),
            (1999, done(4)),
            (2000, cut.clone()),
            (4999, cut),
            (5000, done(4)),
        ]
    );
    // A non-streamed call in the window is not hit.
    sleep_until(h.start + ms(3000)).await;
    let plain = Request {
        output_tokens: Some(3),
        ..Request::new(1, "gpt")
    };
    assert_eq!(h.read(0, &plain).await, Err("complete 3 at 0ms".into()));
}

#[tokio::test(start_paused = true)]
async fn up_front_errors_beat_stream_faults_and_a_scripted_stream_fault_beats_a_window() {
    let h = Harness::new(
        "a:\n  latency: 300ms\n  ttft: 100ms\n  inter_token: 10ms\n  script: [rate_limit, {stream_truncated: {after_tokens: 1}}, ok]\n\
         b:\n  latency: 300ms\n  ttft: 100ms\n  script: [{stream_truncated: {after_tokens: 1}}]\n",
        "- {deployment: a, stream_break: {after_tokens: 2}}\n- {deployment: b, error: overloaded}\n",
        None,
    );
    // A scripted error on a streamed call: an up-front error after `latency`, no stream.
    assert_eq!(
        h.read(0, &streamed(3)).await,
        Err("rate_limit at 300ms".into())
    );
    // A scripted stream fault beats the window's.
    assert_eq!(
        h.read(0, &streamed(3)).await,
        Ok(vec![(100, text(1, 0)), (100, Closed)])
    );
    // A scripted ok: the window's break.
    assert_eq!(
        h.read(0, &streamed(3)).await,
        Ok(vec![
            (100, text(1, 0)),
            (110, text(1, 0)),
            (110, Broke(FailureKind::ApiConnection, None)),
            (110, Closed),
        ])
    );
    // An error window beats a scripted stream fault.
    assert_eq!(
        h.read(1, &streamed(3)).await,
        Err("overloaded at 300ms".into())
    );
}

#[tokio::test(start_paused = true)]
async fn a_non_streamed_call_ignores_a_scripted_stream_fault() {
    let h = Harness::new(
        "a: {latency: 300ms, script: [{stream_break: {after_tokens: 1}}]}\n",
        "[]",
        None,
    );
    assert_eq!(
        h.read(0, &Request::new(0, "gpt")).await,
        Err("complete 200 at 300ms".into())
    );
    let stats = h.fakes.stats_by_id("a").expect("a");
    assert_eq!((stats.ok, stats.streams, stats.stream_faults), (1, 0, 0));
}

#[tokio::test(start_paused = true)]
async fn ttft_defaults_to_latency_and_follows_slowdowns_and_an_oks_own_latency() {
    let h = Harness::new(
        "a: {latency: 700ms, inter_token: 0s, script: [ok, {ok: {latency: 50ms}}]}\nb: {ttft: 100ms}\n",
        "- {deployment: b, from: 10s, latency: 4s}\n",
        None,
    );
    let first = |seen: Result<Vec<(u64, Seen)>, String>| seen.expect("a stream")[0].0;
    assert_eq!(first(h.read(0, &streamed(5)).await), 700);
    assert_eq!(first(h.read(0, &streamed(5)).await), 50);
    // inter_token 0s: every token at the first-token instant.
    assert_eq!(
        h.read(0, &streamed(5)).await,
        Ok(vec![
            (700, text(1, 0)),
            (700, text(4, 0)),
            (700, Done(FinishReason::Stop)),
            (700, Closed),
        ])
    );
    assert_eq!(first(h.read(1, &streamed(5)).await), 100);
    sleep_until(h.start + ms(10_000)).await;
    assert_eq!(first(h.read(1, &streamed(5)).await), 4000);
}

#[tokio::test(start_paused = true)]
async fn the_answers_length_and_max_tokens() {
    let h = Harness::new(
        "a: {ttft: 0s, inter_token: 0s}\nb: {ttft: 0s, inter_token: 0s, output_tokens: 10..20}\n",
        "[]",
        None,
    );
    let tokens = |seen: Vec<(u64, Seen)>| -> (u32, Seen) {
        let n = seen
            .iter()
            .map(|(_, s)| match s {
                Chunk(_, n, _) => *n,
                _ => 0,
            })
            .sum();
        let done = seen[seen.len() - 2].1.clone();
        (n, done)
    };
    let stop = Done(FinishReason::Stop);
    let length = Done(FinishReason::Length);
    let stream = |output_tokens: Option<u32>, max_tokens: Option<u32>, prefill: u32| Request {
        stream: true,
        output_tokens,
        max_tokens,
        prefill_tokens: prefill,
        ..Request::new(0, "gpt")
    };
    let read =
        async |index, request: Request| tokens(h.read(index, &request).await.expect("a stream"));
    // No length anywhere: 200; max_tokens stands in for it.
    assert_eq!(read(0, stream(None, None, 0)).await, (200, stop.clone()));
    assert_eq!(read(0, stream(None, Some(64), 0)).await, (64, stop.clone()));
    // The request's length wins; max_tokens cuts it (finish `length`).
    assert_eq!(
        read(0, stream(Some(30), Some(64), 0)).await,
        (30, stop.clone())
    );
    assert_eq!(
        read(0, stream(Some(90), Some(64), 0)).await,
        (64, length.clone())
    );
    // A continuation: the request's (already reduced) length as is; a default one less prefill.
    assert_eq!(
        read(0, stream(Some(70), None, 30)).await,
        (70, stop.clone())
    );
    assert_eq!(read(0, stream(None, None, 30)).await, (170, stop.clone()));
    // The spec's range, drawn per call, when the request sets none.
    let mut drawn = Vec::new();
    for _ in 0..200 {
        drawn.push(read(1, stream(None, None, 0)).await.0);
    }
    assert!(drawn.iter().all(|n| (10..=20).contains(n)));
    assert!(drawn.contains(&10) && drawn.contains(&20));
    assert_eq!(read(1, stream(Some(5), None, 0)).await, (5, stop.clone()));
    assert_eq!(read(1, stream(None, Some(8), 0)).await, (8, length));
    // A non-streamed call answers the same length.
    let plain = Request {
        output_tokens: Some(30),
        ..Request::new(0, "gpt")
    };
    assert_eq!(h.read(0, &plain).await, Err("complete 30 at 200ms".into()));
}

#[tokio::test(start_paused = true)]
async fn a_ranged_inter_token_is_drawn_once_per_stream() {
    let h = Harness::new(
        "a: {ttft: 0s, inter_token: {uniform: [10ms, 30ms]}}\n",
        "[]",
        Some(ms(1)),
    );
    let mut paces = Vec::new();
    for _ in 0..50 {
        let seen = h.read(0, &streamed(6)).await.expect("a stream");
        let times: Vec<u64> = seen
            .iter()
            .filter(|(_, s)| matches!(s, Chunk(..)))
            .map(|(t, _)| *t)
            .collect();
        assert_eq!(times.len(), 6);
        let pace = times[1] - times[0];
        assert!(times.windows(2).all(|w| w[1] - w[0] == pace), "{times:?}");
        paces.push(pace);
    }
    assert!(paces.iter().all(|p| (10..=30).contains(p)));
    assert!(paces.iter().any(|&p| p != paces[0]));
}

async fn break_pattern(seed: u64) -> Vec<bool> {
    let config = config(None);
    let specs: BTreeMap<String, ProviderSpec> =
        serde_saphyr::from_str("a: {ttft: 1ms, inter_token: 1ms}\n").expect("parse");
    let faults: Vec<FaultSpec> = serde_saphyr::from_str(
        "- {model_group: gpt, stream_break: {after_tokens: 1}, probability: 0.3}\n",
    )
    .expect("parse");
    let fakes =
        FakeProviders::new(&config, &specs, &faults, seed, EPOCH, Instant::now()).expect("valid");
    let mut broke = Vec::new();
    for _ in 0..2000 {
        let call = ProviderCall {
            deployment: &config.deployments[0],
            deployment_index: 0,
            request: &streamed(2),
            attempt: 1,
        };
        let Ok(ProviderResponse::Stream(mut s)) = fakes.call(call).await else {
            panic!("a stream");
        };
        let mut hit = false;
        while let Some(item) = s.next_item().await {
            hit |= item.is_err();
        }
        broke.push(hit);
    }
    let stats = fakes.stats(0).expect("a");
    assert_eq!(
        stats.stream_faults,
        broke.iter().filter(|&&b| b).count() as u64
    );
    broke
}

#[tokio::test(start_paused = true)]
async fn a_stream_windows_probability_is_seeded() {
    let a = break_pattern(9).await;
    let rate = a.iter().filter(|&&b| b).count() as f64 / a.len() as f64;
    assert!((rate - 0.3).abs() < 0.04, "{rate}");
    assert_eq!(break_pattern(9).await, a);
    assert_ne!(break_pattern(10).await, a);
}
