//! Transport parity, call by call: the same specs and seed answered by [`FakeProviders`] in
//! memory and by the engine's [`HttpProvider`] through the wire server over
//! `tokio::io::duplex` (what `transport: http` runs) must give the same outcome for every
//! call — kind, status, Retry-After, completion, every stream item and every instant —
//! in OpenAI, Anthropic and Azure shapes, streamed and not, for every failure kind and
//! stream fault, audio/image chunks and status overrides included.
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use routersim_engine::config::{Deployment, RouterConfig};
use routersim_engine::failure::ProviderFailure;
use routersim_engine::provider::{Provider, ProviderCall, ProviderResponse};
use routersim_engine::request::{Completion, Request};
use routersim_engine::stream::{ProviderStream, StreamItem};
use routersim_mock_providers::wire::{CallLog, WireServer};
use routersim_mock_providers::{FakeProviders, FaultSpec, ProviderSpec};
use routersim_sim::transport::{DuplexConnector, SIMULATED_ORIGIN};
use routersim_wire::client::HttpProvider;
use tokio::time::Instant;

const EPOCH: i64 = 1_767_225_600_000;

fn config() -> RouterConfig {
    let dep = |id: &str, model: &str| Deployment {
        id: id.into(),
        model_name: "group".into(),
        model: model.into(),
        ..Deployment::default()
    };
    RouterConfig {
        deployments: vec![
            dep("gpt-a", "openai/gpt-4o"),
            dep("claude-a", "anthropic/claude-sonnet"),
            dep("az-a", "azure/gpt-4o"),
        ],
        ..RouterConfig::default()
    }
}

const SPECS: &str = "{
  gpt-a: {ttft: 100ms, inter_token: 10ms, latency: 50ms, output_tokens: 10, emits: [thinking, audio], script: [
     ok, ok,
     {stream_break: {after_tokens: 3, error: service_unavailable}},
     {stream_break: {after_tokens: 2}},
     {stream_truncated: {after_tokens: 4}},
     {stream_error_frame: {after_tokens: 2, error: overloaded}},
     {stream_stall: {after_tokens: 2, for: 5s}},
     {stream_empty: role_only}, {stream_empty: true}, {malformed: empty_choices},
     {error: rate_limit, retry_after: 3s},
     {error: rate_limit, retry_after: 1500ms, retry_after_format: ms},
     {error: rate_limit, retry_after: 2s, retry_after_format: http-date},
     service_unavailable, bad_gateway, internal_server, authentication,
     permission_denied, not_found, timeout, content_policy_violation, context_window_exceeded,
     bad_request, conflict, unprocessable_entity, overloaded, api_connection,
     {error: overloaded, status: 503}, {finish_reason: content_filter},
     {stream_error_frame: {after_tokens: 2, error: overloaded, status: 503}},
     {stream_break: {after_tokens: 2, error: rate_limit, status: 503}}, ok]},
  claude-a: {ttft: 100ms, inter_token: 10ms, latency: 50ms, output_tokens: 10, emits: [audio, image], script: [
     ok, ok,
     {stream_break: {after_tokens: 3, error: service_unavailable}},
     {stream_break: {after_tokens: 2}},
     {stream_truncated: {after_tokens: 4}},
     {stream_error_frame: {after_tokens: 2, error: overloaded}},
     {stream_stall: {after_tokens: 2, for: 5s}},
     {stream_empty: role_only}, {stream_empty: true}, {malformed: empty_choices},
     {error: rate_limit, retry_after: 3s},
     {error: rate_limit, retry_after: 1500ms, retry_after_format: ms},
     {error: rate_limit, retry_after: 2s, retry_after_format: http-date},
     service_unavailable, bad_gateway, internal_server, authentication,
     permission_denied, not_found, timeout, content_policy_violation, context_window_exceeded,
     bad_request, conflict, unprocessable_entity, overloaded, api_connection,
     {error: overloaded, status: 503}, {finish_reason: content_filter},
     {stream_error_frame: {after_tokens: 2, error: overloaded, status: 503}},
     {stream_break: {after_tokens: 2, error: rate_limit, status: 503}}, ok]},
  az-a: {ttft: 100ms, inter_token: 10ms, latency: 50ms, output_tokens: 10, emits: [tool_calls, image], script: [
     ok, ok,
     {stream_break: {after_tokens: 3, error: service_unavailable}},
     {stream_break: {after_tokens: 2}},
     {stream_truncated: {after_tokens: 4}},
     {stream_error_frame: {after_tokens: 2, error: overloaded}},
     {stream_stall: {after_tokens: 2, for: 5s}},
     {stream_empty: role_only}, {stream_empty: true}, {malformed: empty_choices},
     {error: rate_limit, retry_after: 3s},
     {error: rate_limit, retry_after: 1500ms, retry_after_format: ms},
     {error: rate_limit, retry_after: 2s, retry_after_format: http-date},
     service_unavailable, bad_gateway, internal_server, authentication,
     permission_denied, not_found, timeout, content_policy_violation, context_window_exceeded,
     bad_request, conflict, unprocessable_entity, overloaded, api_connection,
     {error: overloaded, status: 503}, {finish_reason: content_filter},
     {stream_error_frame: {after_tokens: 2, error: overloaded, status: 503}},
     {stream_break: {after_tokens: 2, error: rate_limit, status: 503}}, ok]}
}";
/// Every script entry, then one call past the end.
const CALLS: usize = 34;

fn fakes(config: &RouterConfig, start: Instant) -> FakeProviders {
    let specs: BTreeMap<String, ProviderSpec> = serde_saphyr::from_str(SPECS).unwrap();
    let faults: Vec<FaultSpec> = Vec::new();
    FakeProviders::new(config, &specs, &faults, 7, EPOCH, start).unwrap()
}

#[derive(Debug, PartialEq)]
enum Out {
    Fail(u128, ProviderFailure),
    Complete(u128, Completion),
    Stream(
        u128,
        Vec<(u128, Option<Result<StreamItem, ProviderFailure>>)>,
    ),
}

async fn run<P: Provider>(
    p: &P,
    config: &RouterConfig,
    order: [bool; 2],
) -> Vec<(usize, usize, bool, Out)> {
    let mut outs = Vec::new();
    for (index, d) in config.deployments.iter().enumerate() {
        for i in 0..CALLS {
            for stream in order {
                let mut req = Request::new((i * 2 + usize::from(stream)) as u64, "group");
                req.stream = stream;
                req.input_tokens = 100;
                req.tools = true;
                let t0 = Instant::now();
                let ms = || Instant::now().duration_since(t0).as_millis();
                let call = ProviderCall {
                    deployment: d,
                    deployment_index: index,
                    request: &req,
                    attempt: 1,
                };
                let out = match p.call(call).await {
                    Err(f) => Out::Fail(ms(), f),
                    Ok(ProviderResponse::Complete(c)) => Out::Complete(ms(), c),
                    Ok(ProviderResponse::Stream(mut s)) => {
                        let opened = ms();
                        let mut items = Vec::new();
                        loop {
                            let item = s.next_item().await;
                            let end = !matches!(item, Some(Ok(StreamItem::Chunk(_))));
                            items.push((ms(), item));
                            if end {
                                break;
                            }
                        }
                        Out::Stream(opened, items)
                    }
                };
                outs.push((index, i, stream, out));
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
    }
    outs
}

fn local<F: std::future::Future>(f: F) -> F::Output {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    tokio::task::LocalSet::new().block_on(&runtime, f)
}

#[test]
fn memory_and_http_agree() {
    check([true, false]);
}

#[test]
fn memory_and_http_agree_other_order() {
    check([false, true]);
}

fn check(order: [bool; 2]) {
    let config = config();
    let memory = local(async {
        let p = fakes(&config, Instant::now());
        run(&p, &config, order).await
    });
    let http = local(async {
        let start = Instant::now();
        let server = WireServer::new(
            Rc::new(fakes(&config, start)),
            config.deployments.clone(),
            CallLog::new(std::io::sink()),
            start,
            EPOCH,
        );
        let p = HttpProvider::for_wire_server(
            DuplexConnector::new(Rc::new(server)),
            &config.deployments,
            SIMULATED_ORIGIN,
        )
        .unwrap();
        run(&p, &config, order).await
    });
    let mut diffs = 0;
    for (m, h) in memory.iter().zip(http.iter()) {
        if m != h {
            diffs += 1;
            println!(
                "DIFF dep {} call {} stream {}:\n  memory {:?}\n  http   {:?}",
                m.0, m.1, m.2, m.3, h.3
            );
        }
    }
    println!("{} calls, {} diffs", memory.len(), diffs);
    for h in http.iter().filter(|h| h.0 == 1 && h.1 < 8) {
        let short = match &h.3 {
            Out::Fail(ms, f) => {
                format!("fail@{ms} {:?} {:?} {:?}", f.kind, f.status, f.retry_after)
            }
            Out::Complete(ms, c) => format!("complete@{ms} {c:?}"),
            Out::Stream(ms, items) => format!("stream@{ms} {:?}", items.last()),
        };
        println!("claude call {} stream {}: {short}", h.1, h.2);
    }
    assert_eq!(diffs, 0);
}
