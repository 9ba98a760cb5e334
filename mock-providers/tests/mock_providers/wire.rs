//! The wire server end to end: a hyper client against [`WireServer`], over `tokio::io::duplex`
//! under paused time (stream faults at the byte level, at exact instants) and over a real
//! loopback socket (each format's success, errors with every Retry-After form, SSE).
#![allow(
    clippy::disallowed_methods,
    reason = "these tests run on tokio's paused runtime and read its clock directly, as the seam does there"
)]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::Write;
use std::rc::Rc;
use std::time::Duration;

use bytes::Bytes;
use http::HeaderMap;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use routersim_engine::config::{Deployment, RouterConfig};
use routersim_mock_providers::wire::{CallLog, WireServer, serve_connection};
use routersim_mock_providers::{FakeProviders, FaultSpec, ProviderSpec};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::Instant;

const EPOCH: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

/// A `Write` the test reads back (provider_calls.csv).
#[derive(Clone, Default)]
struct Shared(Rc<RefCell<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Shared {
    fn rows(&self, server: &WireServer) -> Vec<Vec<String>> {
        server.call_log().flush();
        let text = String::from_utf8(self.0.borrow().clone()).unwrap();
        text.lines()
            .skip(1)
            .map(|l| l.split(',').map(String::from).collect())
            .collect()
    }
}

fn config() -> RouterConfig {
    let dep = |id: &str, model: &str| Deployment {
        id: id.into(),
        model_name: "group".into(),
        model: model.into(),
        rpm: Some(60),
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

/// A server for `providers` (YAML keyed by deployment id), and its call log.
fn server(providers: &str) -> (Rc<WireServer>, Shared) {
    let config = config();
    let specs: BTreeMap<String, ProviderSpec> =
        serde_saphyr::from_str(&format!("{{{providers}}}")).unwrap();
    let faults: Vec<FaultSpec> = Vec::new();
    let start = Instant::now();
    let fakes = FakeProviders::new(&config, &specs, &faults, 7, EPOCH, start).unwrap();
    let log = Shared::default();
    let server = WireServer::new(
        Rc::new(fakes),
        config.deployments.clone(),
        CallLog::new(log.clone()),
        start,
        EPOCH,
    );
    (Rc::new(server), log)
}

/// What the client saw.
#[derive(Debug)]
struct Reply {
    status: u16,
    headers: HeaderMap,
    /// Each body frame with its arrival time since the request was sent.
    frames: Vec<(Duration, Bytes)>,
    /// The body's error, if it ended in one (an abrupt close), and when.
    error: Option<(Duration, String)>,
}

impl Reply {
    fn text(&self) -> String {
        self.frames
            .iter()
            .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
            .collect()
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.text()).unwrap()
    }

    /// The `data:` payloads (OpenAI) that parse as JSON, with arrival times.
    fn data_events(&self) -> Vec<(Duration, Value)> {
        let mut out = Vec::new();
        for (at, bytes) in &self.frames {
            for line in String::from_utf8_lossy(bytes).lines() {
                if let Some(data) = line.strip_prefix("data: ")
                    && let Ok(v) = serde_json::from_str(data)
                {
                    out.push((*at, v));
                }
            }
        }
        out
    }

    /// Tokens the chunks carried (`x_routersim.tokens`).
    fn tokens(&self) -> u64 {
        self.data_events()
            .iter()
            .filter_map(|(_, v)| v["x_routersim"]["tokens"].as_u64())
            .sum()
    }
}

/// Sends one request on a fresh connection over `io`.
async fn send<I>(
    io: I,
    method: &str,
    path: &str,
    body: Option<Value>,
    headers: &[(&str, &str)],
) -> Result<Reply, String>
where
    I: AsyncRead + AsyncWrite + Unpin + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .map_err(|e| e.to_string())?;
    tokio::task::spawn_local(async move {
        let _ = conn.await;
    });
    let mut builder = http::Request::builder()
        .method(method)
        .uri(path)
        .header("host", "routersim.invalid")
        .header("content-type", "application/json");
    for (k, v) in headers {
        builder = builder.header(*k, *v);
    }
    let body = body
        .map(|b| serde_json::to_vec(&b).unwrap())
        .unwrap_or_default();
    let sent = Instant::now();
    let response = sender
        .send_request(builder.body(Full::new(Bytes::from(body))).unwrap())
        .await
        .map_err(|e| format!("request failed: {e}"))?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let mut body = response.into_body();
    let mut frames = Vec::new();
    let mut error = None;
    loop {
        match body.frame().await {
            None => break,
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    frames.push((sent.elapsed(), data));
                }
            }
            Some(Err(e)) => {
                error = Some((sent.elapsed(), e.to_string()));
                break;
            }
        }
    }
    Ok(Reply {
        status,
        headers,
        frames,
        error,
    })
}

/// One request over an in-memory pipe to `server`.
async fn duplex_call(
    server: &Rc<WireServer>,
    path: &str,
    body: Value,
    headers: &[(&str, &str)],
) -> Result<Reply, String> {
    let (client, server_io) = tokio::io::duplex(64 * 1024);
    tokio::task::spawn_local(serve_connection(server.clone(), server_io));
    send(client, "POST", path, Some(body), headers).await
}

fn chat(stream: bool) -> Value {
    json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hello"}],
           "stream": stream, "stream_options": {"include_usage": true}})
}

fn local<F: std::future::Future>(f: F) -> F::Output {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    tokio::task::LocalSet::new().block_on(&runtime, f)
}

const OPENAI: &str = "/d/gpt-a/v1/chat/completions";
const ANTHROPIC: &str = "/d/claude-a/v1/messages";
const AZURE: &str = "/d/az-a/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21";

// ---------------------------------------------------------------------------------------
// Stream faults at the byte level, over duplex, under paused time.
// ---------------------------------------------------------------------------------------

#[test]
fn break_is_a_connection_error_mid_body_after_the_partial_frames() {
    local(async {
        let (server, log) = server(
            "gpt-a: {ttft: 100ms, inter_token: 10ms, output_tokens: 10, script: [
                {stream_break: {after_tokens: 3, error: service_unavailable}},
                {stream_break: {after_tokens: 2}}]}",
        );
        let reply = duplex_call(&server, OPENAI, chat(true), &[]).await.unwrap();
        assert_eq!(reply.status, 200);
        assert_eq!(reply.headers["content-type"], "text/event-stream");
        let (at, error) = reply.error.clone().expect("the body ends in an error");
        assert_eq!(at, Duration::from_millis(120), "{error}");
        assert_eq!(reply.tokens(), 3);
        assert_eq!(
            reply.frames[0].0,
            Duration::from_millis(100),
            "first token at ttft"
        );
        let text = reply.text();
        assert!(
            text.ends_with(": x-routersim-break kind=service_unavailable status=503\n\n"),
            "{text}"
        );
        assert!(!text.contains("[DONE]") && !text.contains("finish_reason\":\"stop"));

        // api_connection (the default): no comment, just the close.
        let reply = duplex_call(&server, OPENAI, chat(true), &[]).await.unwrap();
        assert!(reply.error.is_some());
        assert_eq!(reply.tokens(), 2);
        assert!(!reply.text().contains("x-routersim-break"));
        let rows = log.rows(&server);
        assert_eq!(rows[0][4], "break:service_unavailable");
        assert_eq!(rows[0][8], "3");
        assert_eq!(rows[1][4], "break:api_connection");
    });
}

#[test]
fn truncated_is_a_clean_end_without_done_and_error_frame_follows_the_200() {
    local(async {
        let (server, log) = server(
            "gpt-a: {ttft: 50ms, inter_token: 10ms, output_tokens: 10, script: [
                {stream_truncated: {after_tokens: 4}},
                {stream_error_frame: {after_tokens: 2, error: overloaded}}]},
             claude-a: {ttft: 50ms, inter_token: 10ms, output_tokens: 10, script: [
                {stream_error_frame: {after_tokens: 1, error: overloaded}}]}",
        );
        let reply = duplex_call(&server, OPENAI, chat(true), &[]).await.unwrap();
        assert_eq!(reply.error, None, "a clean end");
        assert_eq!(reply.tokens(), 4);
        assert!(!reply.text().contains("[DONE]"));
        assert!(!reply.text().contains("finish_reason\":\"stop"));

        let reply = duplex_call(&server, OPENAI, chat(true), &[]).await.unwrap();
        assert_eq!(reply.status, 200);
        assert_eq!(reply.error, None);
        let events = reply.data_events();
        let last = &events.last().unwrap().1;
        assert_eq!(last["error"]["code"], "overloaded");
        assert_eq!(last["error"]["status"], 529);
        assert_eq!(events.last().unwrap().0, Duration::from_millis(60));
        assert!(!reply.text().contains("[DONE]"));

        let reply = duplex_call(&server, ANTHROPIC, chat(true), &[])
            .await
            .unwrap();
        let text = reply.text();
        assert!(text.contains("event: message_start"));
        assert!(
            text.ends_with(
                "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\
                 \"message\":\"Overloaded (routersim fake provider).\"},\
                 \"x_routersim\":{\"status\":529}}\n\n"
            ),
            "{text}"
        );
        let rows = log.rows(&server);
        assert_eq!(rows[0][4], "truncated");
        assert_eq!(rows[1][4], "error_frame:overloaded");
        assert_eq!(rows[2][4], "error_frame:overloaded");
    });
}

#[test]
fn stall_is_silence_of_exactly_the_pause() {
    local(async {
        let (server, _) = server(
            "gpt-a: {ttft: 100ms, inter_token: 10ms, output_tokens: 4, script: [
                {stream_stall: {after_tokens: 2, for: 5s}}]}",
        );
        let reply = duplex_call(&server, OPENAI, chat(true), &[]).await.unwrap();
        let times: Vec<Duration> = reply.frames.iter().map(|(t, _)| *t).collect();
        // Token 1 at 100 ms, token 2 at 110 ms, then 5 s of nothing: token 3 at 5.110 s,
        // token 4 with the terminal marker at 5.120 s.
        assert_eq!(
            times,
            [100, 110, 5110, 5120, 5120]
                .map(Duration::from_millis)
                .to_vec(),
            "{:?}",
            reply.text()
        );
        assert_eq!(reply.tokens(), 4);
        assert!(reply.text().ends_with("data: [DONE]\n\n"));
    });
}

#[test]
fn empty_stream_and_malformed_success() {
    local(async {
        let (server, _) = server(
            "gpt-a: {ttft: 30ms, script: [{stream_empty: role_only}, {malformed: empty_choices},
                {stream_empty: true}]}",
        );
        let reply = duplex_call(&server, OPENAI, chat(true), &[]).await.unwrap();
        let events = reply.data_events();
        assert_eq!(
            events[0].1["choices"][0]["delta"],
            json!({"role": "assistant", "content": ""})
        );
        assert_eq!(events[1].1["choices"][0]["finish_reason"], "stop");
        assert_eq!(reply.tokens(), 0);
        assert!(reply.text().ends_with("data: [DONE]\n\n"));

        let reply = duplex_call(&server, OPENAI, chat(false), &[])
            .await
            .unwrap();
        assert_eq!(reply.status, 200);
        assert_eq!(reply.json()["choices"], json!([]));

        let reply = duplex_call(&server, OPENAI, chat(true), &[]).await.unwrap();
        let events = reply.data_events();
        assert_eq!(events[0].1["choices"][0]["finish_reason"], "stop");
        assert_eq!(events.len(), 2, "finish chunk and usage chunk only");
    });
}

#[test]
fn a_connection_failure_up_front_closes_without_a_response() {
    local(async {
        let (server, log) = server("gpt-a: {latency: 40ms, script: [api_connection]}");
        let error = duplex_call(&server, OPENAI, chat(false), &[])
            .await
            .unwrap_err();
        assert!(error.starts_with("request failed"), "{error}");
        let rows = log.rows(&server);
        assert_eq!(rows[0][4], "api_connection");
        assert_eq!(rows[0][5], "");
    });
}

#[test]
fn a_client_that_hangs_up_while_the_provider_works_is_logged() {
    local(async {
        let (server, log) = server("gpt-a: {latency: 1s}");
        let call = duplex_call(&server, OPENAI, chat(false), &[]);
        let gave_up = tokio::time::timeout(Duration::from_millis(300), call).await;
        assert!(gave_up.is_err(), "the client gives up first");
        // Let the server see the closed pipe.
        tokio::time::sleep(Duration::from_secs(2)).await;
        let rows = log.rows(&server);
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert_eq!(rows[0][4], "client_closed");
        assert_eq!(rows[0][5], "");
        assert_eq!(rows[0][7], "300.000");
    });
}

#[test]
fn routersim_headers_set_exact_counts() {
    local(async {
        let (server, log) = server("gpt-a: {latency: 10ms, context_window: 1000}");
        let headers = [("x-routersim-input-tokens", "1001")];
        let reply = duplex_call(&server, OPENAI, chat(false), &headers)
            .await
            .unwrap();
        assert_eq!(reply.status, 400);
        assert_eq!(reply.json()["error"]["code"], "context_length_exceeded");
        let headers = [
            ("x-routersim-input-tokens", "999"),
            ("x-routersim-output-tokens", "17"),
        ];
        let reply = duplex_call(&server, OPENAI, chat(false), &headers)
            .await
            .unwrap();
        assert_eq!(reply.json()["usage"]["completion_tokens"], 17);
        assert_eq!(reply.json()["usage"]["prompt_tokens"], 999);
        let rows = log.rows(&server);
        assert_eq!(rows[1][8], "17");
        assert_eq!(rows[1][7], "10.000", "latency_ms is the scripted latency");
    });
}

// ---------------------------------------------------------------------------------------
// A real loopback socket, real time.
// ---------------------------------------------------------------------------------------

fn real<F: std::future::Future>(f: F) -> F::Output {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tokio::task::LocalSet::new().block_on(&runtime, f)
}

async fn tcp_server(providers: &str) -> (std::net::SocketAddr, Shared, Rc<WireServer>) {
    let (server, log) = server(providers);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::task::spawn_local(routersim_mock_providers::wire::listen(
        server.clone(),
        listener,
        routersim_mock_providers::wire::Mount::Shared,
    ));
    (addr, log, server)
}

async fn tcp_call(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> Reply {
    let io = tokio::net::TcpStream::connect(addr).await.unwrap();
    send(io, method, path, body, &[]).await.unwrap()
}

#[test]
fn loopback_successes_in_each_format() {
    real(async {
        let (addr, log, server) = tcp_server(
            "gpt-a: {latency: 5ms, output_tokens: 3},
             claude-a: {latency: 5ms, output_tokens: 2},
             az-a: {latency: 5ms, output_tokens: 4, script: [{finish_reason: content_filter}]}",
        )
        .await;
        let reply = tcp_call(addr, "POST", OPENAI, Some(chat(false))).await;
        assert_eq!(reply.status, 200);
        let v = reply.json();
        assert_eq!(v["object"], "chat.completion");
        assert_eq!(v["choices"][0]["message"]["content"], "tok tok tok");
        assert_eq!(v["usage"]["prompt_tokens"], 2, "ceil(5 chars / 4)");

        let reply = tcp_call(addr, "POST", ANTHROPIC, Some(chat(false))).await;
        let v = reply.json();
        assert_eq!(v["type"], "message");
        assert_eq!(v["stop_reason"], "end_turn");
        assert_eq!(v["usage"]["output_tokens"], 2);

        let reply = tcp_call(addr, "POST", AZURE, Some(chat(false))).await;
        assert_eq!(
            reply.json()["choices"][0]["finish_reason"],
            "content_filter"
        );

        let reply = tcp_call(addr, "GET", "/v1/models", None).await;
        assert_eq!(reply.json()["data"].as_array().unwrap().len(), 3);
        let reply = tcp_call(addr, "GET", "/d/claude-a/v1/models", None).await;
        assert_eq!(reply.json()["data"][0]["id"], "claude-sonnet");

        let reply = tcp_call(
            addr,
            "POST",
            "/d/nobody/v1/chat/completions",
            Some(chat(false)),
        )
        .await;
        assert_eq!(reply.status, 404);
        assert_eq!(reply.json()["error"]["code"], "unknown_url");
        let reply = tcp_call(addr, "POST", "/v2/whatever", Some(chat(false))).await;
        assert_eq!(reply.status, 404);
        assert_eq!(reply.json()["error"]["type"], "invalid_request_error");
        assert_eq!(log.rows(&server).len(), 3, "one row per provider call");
    });
}

#[test]
fn loopback_errors_with_each_retry_after_form() {
    real(async {
        let (addr, log, server) = tcp_server(
            "gpt-a: {latency: 1ms, script: [
                {error: rate_limit, retry_after: 3s},
                {error: rate_limit, retry_after: 1500ms, retry_after_format: ms},
                {error: rate_limit, retry_after: 2s, retry_after_format: http-date},
                service_unavailable, bad_gateway, internal_server, authentication,
                permission_denied, not_found, timeout, content_policy_violation,
                {error: overloaded, status: 503}]},
             claude-a: {latency: 1ms, script: [overloaded, context_window_exceeded]},
             az-a: {latency: 1ms, script: [{error: rate_limit, retry_after: 2s},
                content_policy_violation]}",
        )
        .await;
        let reply = tcp_call(addr, "POST", OPENAI, Some(chat(false))).await;
        assert_eq!(reply.status, 429);
        assert_eq!(reply.headers["retry-after"], "3");
        assert!(reply.headers.get("retry-after-ms").is_none());
        assert_eq!(reply.headers["x-ratelimit-limit-requests"], "60");
        assert_eq!(reply.headers["x-ratelimit-remaining-requests"], "0");
        assert_eq!(reply.headers["x-ratelimit-reset-requests"], "3s");
        assert_eq!(
            reply.json(),
            json!({"error": {"message": "Rate limit reached for requests (routersim fake provider). Please try again later.",
                "type": "requests", "param": null, "code": "rate_limit_exceeded"}})
        );
        let reply = tcp_call(addr, "POST", OPENAI, Some(chat(false))).await;
        assert_eq!(reply.headers["retry-after-ms"], "1500");
        assert_eq!(reply.headers["retry-after"], "2");
        let reply = tcp_call(addr, "POST", OPENAI, Some(chat(false))).await;
        let date = reply.headers["retry-after"].to_str().unwrap();
        assert!(
            date.ends_with(" GMT") && date.starts_with("Thu, 01 Jan 2026 00:00:0"),
            "{date}"
        );
        for (status, code) in [
            (503, "service_unavailable"),
            (502, "bad_gateway"),
            (500, "internal_server_error"),
            (401, "invalid_api_key"),
            (403, "permission_denied"),
            (404, "model_not_found"),
            (408, "request_timeout"),
            (400, "content_policy_violation"),
            (503, "overloaded"),
        ] {
            let reply = tcp_call(addr, "POST", OPENAI, Some(chat(false))).await;
            assert_eq!(
                (reply.status, reply.json()["error"]["code"].clone()),
                (status, json!(code))
            );
        }
        let reply = tcp_call(addr, "POST", ANTHROPIC, Some(chat(false))).await;
        assert_eq!(reply.status, 529);
        assert_eq!(reply.json()["error"]["type"], "overloaded_error");
        let reply = tcp_call(addr, "POST", ANTHROPIC, Some(chat(false))).await;
        assert_eq!(reply.status, 400);
        assert!(
            reply.json()["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("prompt is too long")
        );
        let reply = tcp_call(addr, "POST", AZURE, Some(chat(false))).await;
        assert_eq!(reply.headers["retry-after-ms"], "2000");
        assert_eq!(reply.headers["retry-after"], "2");
        let reply = tcp_call(addr, "POST", AZURE, Some(chat(false))).await;
        assert_eq!(reply.json()["error"]["code"], "content_filter");
        let rows = log.rows(&server);
        assert_eq!(rows[0][4..7], ["rate_limit", "429", "3000"]);
        assert_eq!(rows[1][6], "1500");
    });
}

#[test]
fn loopback_sse_in_each_format() {
    real(async {
        let (addr, _, _) = tcp_server(
            "gpt-a: {ttft: 5ms, inter_token: 1ms, output_tokens: 5, emits: [thinking]},
             claude-a: {ttft: 5ms, inter_token: 1ms, output_tokens: 3},
             az-a: {ttft: 5ms, inter_token: 1ms, output_tokens: 3}",
        )
        .await;
        let reply = tcp_call(addr, "POST", OPENAI, Some(chat(true))).await;
        assert_eq!(reply.error, None);
        let events = reply.data_events();
        assert_eq!(
            events[0].1["choices"][0]["delta"]["reasoning_content"],
            "tok"
        );
        assert_eq!(
            events[1].1["choices"][0]["delta"]["content"], "tok tok tok tok",
            "the rest coalesced"
        );
        assert_eq!(reply.tokens(), 5);
        let usage = &events.last().unwrap().1["usage"];
        assert_eq!(usage["completion_tokens"], 5);
        assert!(reply.text().ends_with("data: [DONE]\n\n"));

        let reply = tcp_call(addr, "POST", ANTHROPIC, Some(chat(true))).await;
        let text = reply.text();
        let names: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("event: "))
            .collect();
        assert_eq!(names.first(), Some(&"message_start"));
        assert_eq!(names.last(), Some(&"message_stop"));
        assert!(names.contains(&"content_block_delta"));
        assert!(text.contains("\"stop_reason\":\"end_turn\""));

        let reply = tcp_call(addr, "POST", AZURE, Some(chat(true))).await;
        assert_eq!(reply.tokens(), 3);
        assert!(reply.text().ends_with("data: [DONE]\n\n"));
    });
}
