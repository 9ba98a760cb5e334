//! The HTTP provider adapter against a hyper server over `tokio::io::duplex`, under tokio's
//! paused clock: SSE frames written at set virtual instants must come out of the adapter at
//! exactly those instants, and byte-level faults wiremock cannot produce (a body that aborts
//! mid-stream, a frame split across writes, a stall, a clean end with no terminal marker)
//! must read back as the engine's stream items.
//!
//! [`ScriptedConnector`] is the pattern for plugging a duplex pipe into the adapter: each
//! `connect` makes a pipe, serves one half with a hyper server task and returns the other.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "tests fail loudly, read as one story, and drive tokio's paused clock directly"
)]

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::io;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::Uri;
use http_body_util::channel::Channel;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use routersim_engine::Router;
use routersim_engine::config::{Deployment, RouterConfig, RouterSettings};
use routersim_engine::failure::{FailureKind as K, ProviderFailure, RetryAfter};
use routersim_engine::provider::{Provider, ProviderCall, ProviderResponse};
use routersim_engine::request::{Completion, Request};
use routersim_engine::stream::{
    Chunk, ChunkKind, FinishReason, ProviderStream, StreamItem, StreamOutcome,
};
use routersim_wire::client::{Connector, HttpProvider, HttpStream};
use serde_json::json;
use tokio::io::DuplexStream;
use tokio::task::{LocalSet, spawn_local};
use tokio::time::{Instant, sleep};

/// What the server does next on a response body.
#[derive(Clone, Debug)]
enum Act {
    /// Wait this long.
    Wait(Duration),
    /// Write these bytes.
    Write(String),
    /// Abort the body (hyper resets the connection: no terminating chunk).
    Abort,
    /// Let the connection task run (flush what was written) before the next act: hyper drops
    /// bytes still in its write buffer when the body errors in the same poll.
    Flush,
}

/// One connection's behaviour.
#[derive(Clone, Debug)]
struct Script {
    /// Delay before the response head.
    head_after: Duration,
    status: u16,
    headers: Vec<(&'static str, &'static str)>,
    /// The body; it ends cleanly after the last act unless that act is `Abort`.
    body: Vec<Act>,
    /// Close the connection without answering.
    hang_up: bool,
}

impl Script {
    fn ok(head_after: Duration, body: Vec<Act>) -> Self {
        Self {
            head_after,
            status: 200,
            headers: vec![("content-type", "text/event-stream")],
            body,
            hang_up: false,
        }
    }
}

/// A connector that serves each call from the next script, over an in-memory pipe.
#[derive(Clone, Default)]
struct ScriptedConnector {
    scripts: Rc<RefCell<VecDeque<Script>>>,
    /// Per call: the URI the adapter connected for, the request's path and its attempt header.
    seen: Rc<RefCell<Vec<(String, String, String)>>>,
    /// Body writes the server could not make: the client had closed the connection.
    refused: Rc<Cell<u32>>,
}

impl ScriptedConnector {
    fn new(scripts: Vec<Script>) -> Self {
        Self {
            scripts: Rc::new(RefCell::new(scripts.into())),
            seen: Rc::default(),
            refused: Rc::default(),
        }
    }
}

impl Connector for ScriptedConnector {
    type Io = DuplexStream;

    async fn connect(&self, _deployment_index: usize, uri: &Uri) -> io::Result<DuplexStream> {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let script = self
            .scripts
            .borrow_mut()
            .pop_front()
            .expect("a script per call");
        if script.hang_up {
            drop(server);
        } else {
            let seen = Rc::clone(&self.seen);
            seen.borrow_mut()
                .push((uri.to_string(), String::new(), String::new()));
            spawn_local(serve(server, script, seen, Rc::clone(&self.refused)));
        }
        Ok(client)
    }
}

/// Serves one request on `io` as `script` says.
async fn serve(
    io: DuplexStream,
    script: Script,
    seen: Rc<RefCell<Vec<(String, String, String)>>>,
    refused: Rc<Cell<u32>>,
) {
    let script = Rc::new(script);
    let service = service_fn(move |request: http::Request<hyper::body::Incoming>| {
        let script = Rc::clone(&script);
        let refused = Rc::clone(&refused);
        if let Some(last) = seen.borrow_mut().last_mut() {
            last.1 = request.uri().to_string();
            last.2 = request
                .headers()
                .get("x-routersim-attempt")
                .map(|v| v.to_str().unwrap().to_string())
                .unwrap_or_default();
        }
        async move {
            sleep(script.head_after).await;
            let (mut tx, body) = Channel::<Bytes, io::Error>::new(16);
            let mut response = http::Response::builder().status(script.status);
            for (name, value) in &script.headers {
                response = response.header(*name, *value);
            }
            let acts = script.body.clone();
            spawn_local(async move {
                for act in acts {
                    match act {
                        Act::Wait(d) => sleep(d).await,
                        Act::Write(text) => {
                            if tx.send_data(Bytes::from(text)).await.is_err() {
                                refused.set(refused.get() + 1);
                                return;
                            }
                        }
                        Act::Abort => {
                            tx.abort(io::Error::other("scripted abort"));
                            return;
                        }
                        Act::Flush => tokio::task::yield_now().await,
                    }
                }
            });
            Ok::<_, Infallible>(response.body(body).unwrap())
        }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(io), service)
        .await;
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn wait(n: u64) -> Act {
    Act::Wait(ms(n))
}

fn data(value: serde_json::Value) -> Act {
    Act::Write(format!("data: {value}\n\n"))
}

fn text(content: &str, tokens: Option<(u32, u64)>) -> Act {
    let mut frame = json!({"object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": null}]});
    if let Some((tokens, span_us)) = tokens {
        frame["x_routersim"] = json!({"tokens": tokens, "span_us": span_us});
    }
    data(frame)
}

fn role() -> Act {
    data(json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}))
}

fn finish(reason: &str) -> Act {
    Act::Write(format!(
        "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
    ))
}

fn deployment(model: &str) -> Deployment {
    let mut d = Deployment {
        id: Arc::from("dep/1"),
        model_name: Arc::from("group"),
        model: model.to_string(),
        ..Deployment::default()
    };
    // The simulator's base: the connector ignores the host.
    d.params.insert(
        "api_base".into(),
        json!("http://routersim.invalid/d/dep%2F1/v1"),
    );
    d
}

fn chunk(kind: ChunkKind, tokens: u32, span: Duration) -> StreamItem {
    StreamItem::Chunk(Chunk { kind, tokens, span })
}

/// What a call gave, each item with its virtual arrival in ms after the call started.
#[derive(Debug)]
struct Played {
    /// When the call returned.
    opened_ms: u128,
    /// The call's failure, or the stream's items.
    failure: Option<ProviderFailure>,
    completion: Option<Completion>,
    items: Vec<(u128, Option<Result<StreamItem, ProviderFailure>>)>,
}

/// Runs one call against `scripts` and reads its stream to the end (and once more past it).
async fn play(model: &str, stream: bool, scripts: Vec<Script>) -> Played {
    let d = deployment(model);
    let provider =
        HttpProvider::new(ScriptedConnector::new(scripts), std::slice::from_ref(&d)).unwrap();
    let mut request = Request::new(1, "group");
    request.stream = stream;
    LocalSet::new()
        .run_until(async {
            let t0 = Instant::now();
            let elapsed = || Instant::now().duration_since(t0).as_millis();
            let call = ProviderCall {
                deployment: &d,
                deployment_index: 0,
                request: &request,
                attempt: 1,
            };
            let mut played = Played {
                opened_ms: 0,
                failure: None,
                completion: None,
                items: Vec::new(),
            };
            let response = provider.call(call).await;
            played.opened_ms = elapsed();
            let mut stream: HttpStream = match response {
                Err(f) => {
                    played.failure = Some(f);
                    return played;
                }
                Ok(ProviderResponse::Complete(c)) => {
                    played.completion = Some(c);
                    return played;
                }
                Ok(ProviderResponse::Stream(s)) => s,
            };
            loop {
                let item = stream.next_item().await;
                let end = item.is_none();
                played.items.push((elapsed(), item));
                if end {
                    break;
                }
            }
            // Past the end it stays ended.
            for _ in 0..2 {
                assert_eq!(stream.next_item().await, None, "after the end");
            }
            played
        })
        .await
}

fn ok(item: StreamItem) -> Option<Result<StreamItem, ProviderFailure>> {
    Some(Ok(item))
}

#[tokio::test(start_paused = true)]
async fn chunks_arrive_at_their_exact_virtual_instants() {
    // A frame split across two writes 50 ms apart arrives whole, at the second write.
    let split = format!(
        "data: {}\n\n",
        json!({"choices": [{"index": 0, "delta": {"content": "tok tok"}}],
               "x_routersim": {"tokens": 5, "span_us": 100_000}})
    );
    let (first, second) = split.split_at(20);
    let played = play(
        "openai/gpt-4o",
        true,
        vec![Script::ok(
            ms(100),
            vec![
                role(),
                wait(50),
                text("tok", None),
                wait(100),
                Act::Write(first.to_string()),
                wait(50),
                Act::Write(second.to_string()),
                // A stall: nothing for 30 s.
                wait(30_000),
                text("tok tok tok", None),
                wait(100),
                finish("length"),
            ],
        )],
    )
    .await;
    assert_eq!(
        played.opened_ms, 100,
        "the call returns with the response head"
    );
    assert_eq!(
        played.items,
        vec![
            (100, ok(chunk(ChunkKind::RoleOnly, 0, Duration::ZERO))),
            (150, ok(chunk(ChunkKind::Text, 1, Duration::ZERO))),
            (300, ok(chunk(ChunkKind::Text, 5, ms(100)))),
            (30_300, ok(chunk(ChunkKind::Text, 3, Duration::ZERO))),
            (30_400, ok(StreamItem::Done(FinishReason::Length))),
            (30_400, None),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_mid_body_abort_is_a_connection_failure_with_the_tokens_delivered() {
    let played = play(
        "gpt-4o",
        true,
        vec![Script::ok(
            ms(10),
            vec![
                text("tok", Some((2, 0))),
                wait(40),
                text("tok", Some((1, 0))),
                wait(200),
                Act::Abort,
                // Never written.
                finish("stop"),
            ],
        )],
    )
    .await;
    let mut broken = ProviderFailure::new(K::ApiConnection).with_status(None);
    broken.tokens_delivered = 3;
    assert_eq!(
        played.items,
        vec![
            (10, ok(chunk(ChunkKind::Text, 2, Duration::ZERO))),
            (50, ok(chunk(ChunkKind::Text, 1, Duration::ZERO))),
            (250, Some(Err(broken))),
            (250, None),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_break_comment_names_the_kind_of_the_abort_that_follows() {
    let played = play(
        "gpt-4o",
        true,
        vec![Script::ok(
            ms(0),
            vec![
                text("tok tok", None),
                wait(100),
                Act::Write(": x-routersim-break kind=service_unavailable status=503\n\n".into()),
                Act::Flush,
                Act::Abort,
            ],
        )],
    )
    .await;
    let mut broken = ProviderFailure::new(K::ServiceUnavailable);
    broken.tokens_delivered = 2;
    assert_eq!(
        played.items,
        vec![
            (0, ok(chunk(ChunkKind::Text, 2, Duration::ZERO))),
            (100, Some(Err(broken))),
            (100, None),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_clean_end_without_a_terminal_marker_is_truncated() {
    // Even after a break comment: the comment only names a break, and this is no break.
    let played = play(
        "gpt-4o",
        true,
        vec![Script::ok(
            ms(0),
            vec![
                text("tok", None),
                wait(70),
                Act::Write(": x-routersim-break kind=rate_limit status=429\n\n".into()),
            ],
        )],
    )
    .await;
    assert_eq!(
        played.items,
        vec![
            (0, ok(chunk(ChunkKind::Text, 1, Duration::ZERO))),
            (70, None),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn an_error_frame_after_the_200_is_an_error_frame() {
    let played = play(
        "gpt-4o",
        true,
        vec![Script::ok(
            ms(5),
            vec![
                text("tok tok tok tok", None),
                wait(20),
                data(
                    json!({"error": {"message": "Rate limit reached.", "type": "requests",
                    "param": null, "code": "rate_limit_exceeded", "status": 429}}),
                ),
                wait(20),
                text("never read", None),
            ],
        )],
    )
    .await;
    let mut frame = ProviderFailure::new(K::RateLimit);
    frame.tokens_delivered = 4;
    assert_eq!(
        played.items,
        vec![
            (5, ok(chunk(ChunkKind::Text, 4, Duration::ZERO))),
            (25, ok(StreamItem::ErrorFrame(frame))),
            (25, None),
        ]
    );
    // Without a status field: the kind's default status.
    let played = play(
        "gpt-4o",
        true,
        vec![Script::ok(
            ms(0),
            vec![data(
                json!({"error": {"message": "m", "type": "server_error",
                "param": null, "code": "service_unavailable"}}),
            )],
        )],
    )
    .await;
    assert_eq!(
        played.items[0],
        (
            0,
            ok(StreamItem::ErrorFrame(ProviderFailure::new(
                K::ServiceUnavailable
            )))
        )
    );
}

fn event(name: &str, value: serde_json::Value) -> Act {
    Act::Write(format!("event: {name}\ndata: {value}\n\n"))
}

#[tokio::test(start_paused = true)]
async fn anthropic_events_at_their_instants_and_its_error_event() {
    let delta = |kind: &str, field: &str, text: &str, tokens: u32| {
        event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": kind, field: text},
                   "x_routersim": {"tokens": tokens, "span_us": 0}}),
        )
    };
    let played = play(
        "anthropic/claude",
        true,
        vec![Script::ok(
            ms(200),
            vec![
                event(
                    "message_start",
                    json!({"type": "message_start", "message": {"id": "m"}}),
                ),
                event(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": 0,
                    "content_block": {"type": "thinking", "thinking": ""}}),
                ),
                event("ping", json!({"type": "ping"})),
                delta("thinking_delta", "thinking", "hmm", 1),
                wait(30),
                delta("text_delta", "text", "tok tok", 2),
                wait(30),
                event(
                    "message_delta",
                    json!({"type": "message_delta",
                    "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}}),
                ),
                event("message_stop", json!({"type": "message_stop"})),
            ],
        )],
    )
    .await;
    assert_eq!(
        played.items,
        vec![
            (200, ok(chunk(ChunkKind::Thinking, 1, Duration::ZERO))),
            (230, ok(chunk(ChunkKind::Text, 2, Duration::ZERO))),
            (260, ok(StreamItem::Done(FinishReason::Stop))),
            (260, None),
        ]
    );
    let played = play(
        "anthropic/claude",
        true,
        vec![Script::ok(
            ms(0),
            vec![
                delta("text_delta", "text", "tok", 1),
                wait(500),
                event(
                    "error",
                    json!({"type": "error",
                    "error": {"type": "overloaded_error", "message": "Overloaded"}}),
                ),
            ],
        )],
    )
    .await;
    let mut frame = ProviderFailure::new(K::Overloaded);
    frame.tokens_delivered = 1;
    assert_eq!(played.items[1], (500, ok(StreamItem::ErrorFrame(frame))));
}

#[tokio::test(start_paused = true)]
async fn non_streamed_answers_and_errors_arrive_when_sent() {
    let body = json!({"id": "c", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "tok"},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 12, "total_tokens": 13}});
    let mut script = Script::ok(ms(250), vec![Act::Write(body.to_string())]);
    script.headers = vec![("content-type", "application/json")];
    let played = play("gpt-4o", false, vec![script]).await;
    assert_eq!(played.opened_ms, 250);
    assert_eq!(played.completion.map(|c| c.output_tokens), Some(12));

    // A body written in two parts: the call returns when the last arrives.
    let text = body.to_string();
    let (a, b) = text.split_at(30);
    let script = Script::ok(
        ms(10),
        vec![Act::Write(a.into()), wait(90), Act::Write(b.into())],
    );
    let played = play("gpt-4o", false, vec![script]).await;
    assert_eq!(played.opened_ms, 100);
    assert_eq!(played.completion.map(|c| c.output_tokens), Some(12));

    // An error status with its Retry-After.
    let mut script = Script::ok(
        ms(80),
        vec![Act::Write(
            json!({"error": {"message": "busy", "type": "server_error", "param": null,
                             "code": "service_unavailable"}})
            .to_string(),
        )],
    );
    script.status = 503;
    script.headers = vec![("retry-after", "3")];
    let played = play("gpt-4o", false, vec![script]).await;
    assert_eq!(played.opened_ms, 80);
    assert_eq!(
        played.failure,
        Some(
            ProviderFailure::new(K::ServiceUnavailable)
                .with_retry_after(RetryAfter::Delay(Duration::from_secs(3)))
        )
    );

    // A success body cut off: a connection failure, not a half-read completion.
    let script = Script::ok(ms(0), vec![Act::Write(a.into()), wait(5), Act::Abort]);
    let played = play("gpt-4o", false, vec![script]).await;
    assert_eq!(
        played.failure,
        Some(ProviderFailure::new(K::ApiConnection).with_status(None))
    );
}

#[tokio::test(start_paused = true)]
async fn a_hang_up_before_any_response_is_a_connection_failure() {
    let mut script = Script::ok(ms(0), vec![]);
    script.hang_up = true;
    let played = play("gpt-4o", true, vec![script]).await;
    assert_eq!(
        played.failure,
        Some(ProviderFailure::new(K::ApiConnection).with_status(None))
    );
}

#[tokio::test(start_paused = true)]
async fn the_router_recovers_a_stream_broken_before_content_over_http() {
    // Attempt 1 opens a stream that aborts before any content; attempt 2 streams to the end.
    let scripts = vec![
        Script::ok(ms(100), vec![wait(50), Act::Abort]),
        Script::ok(
            ms(100),
            vec![
                role(),
                wait(10),
                text("tok tok", None),
                wait(10),
                finish("stop"),
            ],
        ),
    ];
    let mut d = deployment("openai/gpt-4o");
    d.params.clear();
    let connector = ScriptedConnector::new(scripts);
    let seen = Rc::clone(&connector.seen);
    let provider = HttpProvider::for_wire_server(
        connector,
        std::slice::from_ref(&d),
        "http://routersim.invalid",
    )
    .unwrap();
    let config = RouterConfig {
        deployments: vec![d],
        settings: RouterSettings::default(),
        ..RouterConfig::default()
    };
    let router = Router::builder(config, provider).seed(7).build();
    let mut request = Request::new(1, "group");
    request.stream = true;
    request.num_retries = Some(1);
    let result = LocalSet::new().run_until(router.completion(request)).await;
    let outcomes: Vec<&str> = result.attempts.iter().map(|a| a.outcome_name()).collect();
    assert_eq!(outcomes, vec!["api_connection", "ok"]);
    assert!(result.outcome.is_ok(), "{:?}", result.outcome);
    let stream = result.stream.unwrap();
    assert_eq!(stream.outcome, Some(StreamOutcome::Completed));
    assert_eq!(stream.tokens_delivered, 2);
    // Both calls went to the deployment's address on the wire server, each a fresh connection.
    let uri = "http://routersim.invalid/d/dep%2F1/v1/chat/completions";
    let path = "/d/dep%2F1/v1/chat/completions";
    assert_eq!(
        *seen.borrow(),
        vec![
            (uri.to_string(), path.to_string(), "1".to_string()),
            (uri.to_string(), path.to_string(), "2".to_string()),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn dropping_a_stream_closes_its_connection() {
    // A long answer (a token every 10 ms for 10 s) that the caller abandons after two items.
    let mut body = vec![role()];
    for _ in 0..1000 {
        body.push(wait(10));
        body.push(text("tok", None));
    }
    let connector = ScriptedConnector::new(vec![Script::ok(ms(0), body)]);
    let refused = Rc::clone(&connector.refused);
    let d = deployment("gpt-4o");
    let provider = HttpProvider::new(connector, std::slice::from_ref(&d)).unwrap();
    let mut request = Request::new(1, "group");
    request.stream = true;
    LocalSet::new()
        .run_until(async {
            let call = ProviderCall {
                deployment: &d,
                deployment_index: 0,
                request: &request,
                attempt: 1,
            };
            let Ok(ProviderResponse::Stream(mut stream)) = provider.call(call).await else {
                panic!("expected a stream")
            };
            assert!(matches!(stream.next_item().await, Some(Ok(_))));
            assert!(matches!(stream.next_item().await, Some(Ok(_))));
            assert_eq!(refused.get(), 0);
            drop(stream);
            sleep(ms(50)).await;
            // The server's next write found the connection gone: nothing keeps the rest of the
            // answer (or a task) alive once the caller lets go.
            assert_eq!(refused.get(), 1);
        })
        .await;
}
