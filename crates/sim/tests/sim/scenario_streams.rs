//! Streamed traffic from a scenario file, through the real router against the fake
//! providers: the fakes' coalesced chunks never trip the router's stall deadline, and each
//! stream fault reaches the caller as the router's stream policy says.

use std::path::Path;
use std::time::Duration;

use routersim_engine::Router;
use routersim_engine::clock::TokioClock;
use routersim_engine::request::CompletionResult;
use routersim_engine::stream::StreamOutcome;
use routersim_mock_providers::FakeProviders;
use routersim_mock_providers::rng::seeded_rng;
use routersim_sim::scenario::{Scenario, parse_scenario};
use tokio::time::Instant;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A scenario with two deployments of group `g` (`a`, `b`), `stream_stall_timeout: 1s`, and
/// `providers`/`faults`/`traffic` as given (top-level YAML).
fn scenario(rest: &str) -> Scenario {
    let text = format!(
        "duration: 10m\nrouter:\n  model_list:\n    - {{model_name: g, litellm_params: {{model: openai/a}}, model_info: {{id: a}}}}\n    - {{model_name: g, litellm_params: {{model: openai/b}}, model_info: {{id: b}}}}\n  router_settings:\n    routing_strategy: simple-shuffle\n    num_retries: 1\n    stream_stall_timeout: 1s\n{rest}"
    );
    parse_scenario(&text, Path::new("streams.yaml")).expect("valid scenario")
}

/// Serves every arrival of `s` in turn (each one finishes before the next arrives).
async fn serve(s: &Scenario) -> Vec<CompletionResult> {
    let start = Instant::now();
    let providers = FakeProviders::new(
        &s.router,
        &s.providers,
        &s.faults,
        s.seed,
        s.epoch_unix_ms,
        start,
    )
    .expect("valid providers");
    let router = Router::builder(s.router.clone(), providers)
        .clock(TokioClock::with_epoch(s.epoch_unix_ms))
        .rng(seeded_rng(s.seed, "router"))
        .build();
    let mut results = Vec::new();
    for arrival in s.arrivals() {
        tokio::time::sleep_until(start + arrival.at).await;
        results.push(router.completion(arrival.request).await);
    }
    results
}

#[tokio::test(start_paused = true)]
async fn long_coalesced_streams_never_look_stalled() {
    let s = scenario(
        "providers:\n  a: {ttft: 500ms, inter_token: 20ms}\n  b: {ttft: 500ms, inter_token: 490ms}\ntraffic:\n  - {at: 0s, model: g, stream: true, output_tokens: 1000, count: 4}\n",
    );
    for r in serve(&s).await {
        let stream = r.stream.expect("streamed");
        assert_eq!(stream.outcome, Some(StreamOutcome::Completed), "{r:?}");
        assert_eq!(stream.tokens_delivered, 1000);
        assert_eq!(stream.ttft, Some(ms(500)));
        assert_eq!(r.attempts.len(), 1);
        let pace = match r.final_deployment_id.as_deref() {
            Some("a") => 20,
            _ => 490,
        };
        assert_eq!(r.latency(), ms(500 + 999 * pace));
    }
}

#[tokio::test(start_paused = true)]
async fn a_stall_longer_than_the_timeout_is_caught_where_it_starts() {
    let s = scenario(
        "providers:\n  a: {ttft: 500ms, inter_token: 20ms, then: {stream_stall: {after_tokens: 10, for: 30s}}}\n  b: {ttft: 500ms, inter_token: 20ms, then: {stream_stall: {after_tokens: 10, for: 30s}}}\ntraffic:\n  - {at: 0s, model: g, stream: true, output_tokens: 100}\n",
    );
    let r = serve(&s).await.remove(0);
    let stream = r.stream.expect("streamed");
    assert_eq!(stream.outcome, Some(StreamOutcome::Stalled), "{r:?}");
    assert_eq!(stream.tokens_delivered, 10);
    // The 10th token at 680 ms; the router gives up 1 s later.
    assert_eq!(r.latency(), ms(1680));
}

#[tokio::test(start_paused = true)]
async fn a_break_before_content_is_retried_and_after_content_fails() {
    let text = "duration: 1m\nrouter:\n  model_list:\n    - {model_name: g, litellm_params: {model: openai/a}, model_info: {id: a}}\n  router_settings:\n    num_retries: 1\nproviders:\n  a: {ttft: 100ms, inter_token: 10ms, script: [{stream_break: {after_tokens: 0}}, ok, {stream_break: {after_tokens: 5, error: internal_server}}]}\ntraffic:\n  - {at: 0s, model: g, stream: true, output_tokens: 20}\n  - {at: 10s, model: g, stream: true, output_tokens: 20}\n";
    let s = parse_scenario(text, Path::new("breaks.yaml")).expect("valid scenario");
    let results = serve(&s).await;
    // Broken before any content: retried like an up-front failure, and the retry completes.
    let first = &results[0];
    assert_eq!(first.attempts.len(), 2, "{first:?}");
    assert_eq!(
        first.attempts[0].failure.as_ref().map(|f| f.kind.as_str()),
        Some("api_connection")
    );
    let stream = first.stream.expect("streamed");
    assert_eq!(stream.outcome, Some(StreamOutcome::Completed));
    assert_eq!(stream.tokens_delivered, 20);
    // Broken after 5 tokens: the caller gets the error (no continuation configured).
    let second = &results[1];
    assert_eq!(second.attempts.len(), 1, "{second:?}");
    let stream = second.stream.expect("streamed");
    assert_eq!(stream.outcome, Some(StreamOutcome::BrokenAfterContent));
    assert_eq!(stream.tokens_delivered, 5);
    assert_eq!(
        second.outcome.as_ref().map_err(|f| f.kind.as_str()),
        Err("internal_server")
    );
}

#[tokio::test(start_paused = true)]
async fn an_empty_stream_is_a_malformed_success() {
    let s = scenario(
        "providers:\n  a: {ttft: 100ms, then: {stream_empty: role_only}}\n  b: {ttft: 100ms, then: {stream_empty: true}}\ntraffic:\n  - {at: 0s, model: g, stream: true, count: 6}\n",
    );
    for r in serve(&s).await {
        let stream = r.stream.expect("streamed");
        assert_eq!(stream.outcome, Some(StreamOutcome::Empty), "{r:?}");
        assert_eq!(stream.tokens_delivered, 0);
        assert_eq!(r.latency(), ms(100));
    }
}
