//! The adapter's keep-alive pool (`HttpProvider::with_pool`) against a hand-written loopback
//! server that counts connections and requests and closes exactly when told: calls reuse a
//! connection only after a whole answer, a request that was written is never resent, a
//! reused connection closed before the request went out is not a failure, and a cut or a
//! deadline still closes the provider's connection as without a pool.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods,
    reason = "tests fail loudly and read as one story"
)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use routersim_engine::config::Deployment;
use routersim_engine::failure::{FailureKind as K, ProviderFailure};
use routersim_engine::provider::{Provider, ProviderCall, ProviderResponse};
use routersim_engine::request::Request;
use routersim_engine::stream::{ProviderStream, StreamItem};
use routersim_wire::client::{Connector, HttpProvider, HttpStream, Pool, TcpConnector};
use serde_json::json;
use std::cell::RefCell;
use std::rc::Rc;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::net::TcpListener;
use tokio::task::LocalSet;

/// What the server does with the `n`-th request (from 0) of a connection.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Act {
    /// Answer it and keep the connection.
    Answer,
    /// Answer it, then close the connection (no `Connection: close` header).
    AnswerThenClose,
    /// Close without answering.
    Close,
    /// Send half an SSE stream, then close.
    CutStream,
    /// Never answer (hold the connection until the client closes it).
    Hang,
}

struct Server {
    origin: String,
    connections: Arc<AtomicUsize>,
    requests: Arc<AtomicUsize>,
    /// Connections the client closed (the server read end-of-file).
    client_closes: Arc<AtomicUsize>,
}

const JSON_ANSWER: &str = r#"{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"tok tok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}"#;

fn sse_answer() -> String {
    let frames = [
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": "tok tok"}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    ];
    let mut body: String = frames.iter().map(|f| format!("data: {f}\n\n")).collect();
    body.push_str("data: [DONE]\n\n");
    body
}

/// Reads one request (headers and a `content-length` body); `None` at end of file.
async fn read_request<S: AsyncRead + Unpin>(socket: &mut S, buf: &mut Vec<u8>) -> Option<bool> {
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse().unwrap());
            while buf.len() < end + 4 + length {
                let mut chunk = [0u8; 4096];
                let n = socket.read(&mut chunk).await.ok()?;
                if n == 0 {
                    return None;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            let body = String::from_utf8_lossy(&buf[end + 4..end + 4 + length]).to_string();
            buf.drain(..end + 4 + length);
            return Some(body.contains("\"stream\":true"));
        }
        let mut chunk = [0u8; 4096];
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn response(stream: bool) -> String {
    let (kind, body) = if stream {
        ("text/event-stream", sse_answer())
    } else {
        ("application/json", JSON_ANSWER.to_string())
    };
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// A server whose connections act on their `n`-th request as `act(n)` says.
async fn server(act: fn(usize) -> Act) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let connections = Arc::new(AtomicUsize::new(0));
    let requests = Arc::new(AtomicUsize::new(0));
    let client_closes = Arc::new(AtomicUsize::new(0));
    let (c, r, closes) = (connections.clone(), requests.clone(), client_closes.clone());
    tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            c.fetch_add(1, Ordering::SeqCst);
            let (r, closes) = (r.clone(), closes.clone());
            tokio::spawn(async move {
                let mut buf = Vec::new();
                for n in 0.. {
                    let Some(stream) = read_request(&mut socket, &mut buf).await else {
                        closes.fetch_add(1, Ordering::SeqCst);
                        return;
                    };
                    r.fetch_add(1, Ordering::SeqCst);
                    match act(n) {
                        Act::Answer => socket.write_all(response(stream).as_bytes()).await.unwrap(),
                        Act::AnswerThenClose => {
                            socket.write_all(response(stream).as_bytes()).await.unwrap();
                            return;
                        }
                        Act::Close => return,
                        Act::CutStream => {
                            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                                        transfer-encoding: chunked\r\n\r\n";
                            let frame = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok\"}}]}\n\n";
                            let chunk = format!("{:x}\r\n{frame}\r\n", frame.len());
                            socket.write_all(head.as_bytes()).await.unwrap();
                            socket.write_all(chunk.as_bytes()).await.unwrap();
                            return;
                        }
                        Act::Hang => {
                            let mut rest = [0u8; 64];
                            if matches!(socket.read(&mut rest).await, Ok(0)) {
                                closes.fetch_add(1, Ordering::SeqCst);
                            }
                            return;
                        }
                    }
                }
            });
        }
    });
    Server {
        origin,
        connections,
        requests,
        client_closes,
    }
}

fn deployment(origin: &str) -> Deployment {
    let mut params = BTreeMap::new();
    params.insert("api_base".to_string(), json!(format!("{origin}/v1")));
    Deployment {
        id: Arc::from("d"),
        model_name: Arc::from("group"),
        model: "gpt-4o".into(),
        params,
        ..Deployment::default()
    }
}

fn pooled(d: &Deployment) -> HttpProvider<TcpConnector> {
    HttpProvider::new(TcpConnector, std::slice::from_ref(d))
        .unwrap()
        .with_pool(Pool::with_defaults(1, tokio::time::Instant::now))
}

async fn call(
    provider: &HttpProvider<TcpConnector>,
    d: &Deployment,
    stream: bool,
) -> Result<ProviderResponse<HttpStream>, ProviderFailure> {
    let mut request = Request::new(1, "group");
    request.stream = stream;
    let call = ProviderCall {
        deployment: d,
        deployment_index: 0,
        request: &request,
        attempt: 1,
    };
    provider.call(call).await
}

/// Reads a stream to its end: its items' last, or the failure.
async fn read_stream(mut stream: HttpStream) -> Result<StreamItem, ProviderFailure> {
    let mut last = None;
    while let Some(item) = stream.next_item().await {
        last = Some(item?);
    }
    Ok(last.expect("an item"))
}

/// Lets the connection tasks (and a finished stream's drain) run.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(50)).await;
}

#[tokio::test]
async fn whole_answers_reuse_one_connection_and_unpooled_calls_open_one_each() {
    let s = server(|_| Act::Answer).await;
    let d = deployment(&s.origin);
    let provider = pooled(&d);
    LocalSet::new()
        .run_until(async {
            for stream in [false, false, true, true, false] {
                match call(&provider, &d, stream).await.unwrap() {
                    ProviderResponse::Complete(_) => assert!(!stream),
                    ProviderResponse::Stream(st) => {
                        assert!(matches!(read_stream(st).await, Ok(StreamItem::Done(_))));
                    }
                }
                settle().await;
            }
        })
        .await;
    assert_eq!(s.requests.load(Ordering::SeqCst), 5);
    assert_eq!(
        s.connections.load(Ordering::SeqCst),
        1,
        "every call on one connection"
    );
    assert_eq!(provider.pool().unwrap().idle(0), 1);

    // Without a pool (the simulator's transport): one connection per call, as always.
    let s = server(|_| Act::Answer).await;
    let d = deployment(&s.origin);
    let provider = HttpProvider::new(TcpConnector, std::slice::from_ref(&d)).unwrap();
    LocalSet::new()
        .run_until(async {
            for _ in 0..3 {
                assert!(call(&provider, &d, false).await.is_ok());
            }
        })
        .await;
    assert_eq!(s.connections.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_connection_the_server_closed_after_its_answer_is_no_failure() {
    // Each connection answers once and closes: every pooled connection is dead by its reuse.
    let s = server(|_| Act::AnswerThenClose).await;
    let d = deployment(&s.origin);
    let provider = pooled(&d);
    LocalSet::new()
        .run_until(async {
            for i in 0..5 {
                let result = call(&provider, &d, i % 2 == 1).await;
                assert!(result.is_ok(), "call {i}: {result:?}");
                if let Ok(ProviderResponse::Stream(st)) = result {
                    assert!(matches!(read_stream(st).await, Ok(StreamItem::Done(_))));
                    settle().await;
                }
            }
        })
        .await;
    assert_eq!(
        s.requests.load(Ordering::SeqCst),
        5,
        "no request sent twice"
    );
    assert_eq!(s.connections.load(Ordering::SeqCst), 5);
}

#[tokio::test]
async fn a_request_written_on_a_reused_connection_is_never_resent() {
    // The first request of a connection is answered, the second read and left unanswered.
    let s = server(|n| if n == 0 { Act::Answer } else { Act::Close }).await;
    let d = deployment(&s.origin);
    let provider = pooled(&d);
    let second = LocalSet::new()
        .run_until(async {
            assert!(call(&provider, &d, false).await.is_ok());
            settle().await;
            call(&provider, &d, false).await
        })
        .await;
    let failure = second.expect_err("the unanswered call fails");
    assert_eq!(failure.kind, K::ApiConnection);
    assert_eq!(failure.status, None);
    assert_eq!(
        s.requests.load(Ordering::SeqCst),
        2,
        "the written request was not resent"
    );
    assert_eq!(s.connections.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_cut_stream_is_a_connection_failure_and_its_connection_is_not_kept() {
    let s = server(|n| if n == 0 { Act::Answer } else { Act::CutStream }).await;
    let d = deployment(&s.origin);
    let provider = pooled(&d);
    let outcome = LocalSet::new()
        .run_until(async {
            assert!(call(&provider, &d, false).await.is_ok());
            settle().await;
            let Ok(ProviderResponse::Stream(st)) = call(&provider, &d, true).await else {
                panic!("a stream")
            };
            let outcome = read_stream(st).await;
            settle().await;
            outcome
        })
        .await;
    let failure = outcome.expect_err("the cut stream fails");
    assert_eq!(failure.kind, K::ApiConnection);
    assert_eq!(failure.tokens_delivered, 1);
    assert_eq!(
        provider.pool().unwrap().idle(0),
        0,
        "the cut connection is not kept"
    );
}

#[tokio::test]
async fn a_call_dropped_by_its_deadline_closes_its_pooled_connection() {
    let s = server(|n| if n == 0 { Act::Answer } else { Act::Hang }).await;
    let d = deployment(&s.origin);
    let provider = pooled(&d);
    LocalSet::new()
        .run_until(async {
            assert!(call(&provider, &d, false).await.is_ok());
            settle().await;
            let late = tokio::time::timeout(Duration::from_millis(100), call(&provider, &d, false));
            assert!(late.await.is_err(), "the deadline passes");
            settle().await;
        })
        .await;
    assert_eq!(
        s.connections.load(Ordering::SeqCst),
        1,
        "the second call reused the first"
    );
    assert_eq!(
        s.client_closes.load(Ordering::SeqCst),
        1,
        "the provider sees the connection close"
    );
    assert_eq!(provider.pool().unwrap().idle(0), 0);
}

/// In-memory connections whose server halves, after one answer each, are parked where the
/// test can drop them at an exact point (no task runs between the drop and the next call).
#[derive(Clone, Default)]
struct ParkingConnector {
    parked: Rc<RefCell<Vec<DuplexStream>>>,
    connects: Rc<RefCell<usize>>,
    requests: Rc<RefCell<usize>>,
}

impl Connector for ParkingConnector {
    type Io = DuplexStream;

    async fn connect(&self, _index: usize, _uri: &http::Uri) -> std::io::Result<DuplexStream> {
        *self.connects.borrow_mut() += 1;
        let (client, mut server) = tokio::io::duplex(64 * 1024);
        let (parked, requests) = (self.parked.clone(), self.requests.clone());
        tokio::task::spawn_local(async move {
            let mut buf = Vec::new();
            if let Some(stream) = read_request(&mut server, &mut buf).await {
                *requests.borrow_mut() += 1;
                server.write_all(response(stream).as_bytes()).await.unwrap();
                parked.borrow_mut().push(server);
            }
        });
        Ok(client)
    }
}

#[tokio::test]
async fn a_reused_connection_closed_before_the_request_went_out_is_resent_once_on_a_fresh_one() {
    let connector = ParkingConnector::default();
    let d = deployment("http://pool.invalid");
    let provider = HttpProvider::new(connector.clone(), std::slice::from_ref(&d))
        .unwrap()
        .with_pool(Pool::with_defaults(1, tokio::time::Instant::now));
    let mut request = Request::new(1, "group");
    request.stream = false;
    let outcomes = LocalSet::new()
        .run_until(async {
            let mut outcomes = Vec::new();
            for _ in 0..3 {
                let call = ProviderCall {
                    deployment: &d,
                    deployment_index: 0,
                    request: &request,
                    attempt: 1,
                };
                outcomes.push(provider.call(call).await.map(|_| ()));
                settle().await;
                // The server closes the idle connection; the client has not seen it yet.
                connector.parked.borrow_mut().clear();
            }
            outcomes
        })
        .await;
    assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
    // Calls 2 and 3 each took the pooled (dead) connection, got the request back unsent
    // and sent it once on a fresh connection: three requests served, three connections.
    assert_eq!(*connector.requests.borrow(), 3);
    assert_eq!(*connector.connects.borrow(), 3);
}

#[tokio::test]
async fn the_pool_keeps_at_most_max_idle_and_no_connection_past_its_idle_timeout() {
    // Bound 1: two calls at once open two connections; one is kept, the other closed.
    let s = server(|_| Act::Answer).await;
    let d = deployment(&s.origin);
    let provider = HttpProvider::new(TcpConnector, std::slice::from_ref(&d))
        .unwrap()
        .with_pool(Pool::new(
            1,
            1,
            Duration::from_secs(30),
            tokio::time::Instant::now,
        ));
    LocalSet::new()
        .run_until(async {
            let (a, b) = tokio::join!(call(&provider, &d, false), call(&provider, &d, false));
            assert!(a.is_ok() && b.is_ok());
            settle().await;
        })
        .await;
    assert_eq!(s.connections.load(Ordering::SeqCst), 2);
    assert_eq!(provider.pool().unwrap().idle(0), 1);
    assert_eq!(
        s.client_closes.load(Ordering::SeqCst),
        1,
        "the one over the bound closed"
    );

    // Idle timeout 0: a kept connection is never reused.
    let s = server(|_| Act::Answer).await;
    let d = deployment(&s.origin);
    let provider = HttpProvider::new(TcpConnector, std::slice::from_ref(&d))
        .unwrap()
        .with_pool(Pool::new(1, 8, Duration::ZERO, tokio::time::Instant::now));
    LocalSet::new()
        .run_until(async {
            for _ in 0..2 {
                assert!(call(&provider, &d, false).await.is_ok());
                settle().await;
            }
        })
        .await;
    assert_eq!(s.connections.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_finished_stream_whose_rest_already_arrived_goes_back_when_dropped() {
    // The finish and `[DONE]` come in one write: once the stream handed out its finish and
    // is dropped, its connection is idle in the pool at once, with no background drain to
    // wait for (no `settle`).
    let s = server(|_| Act::Answer).await;
    let d = deployment(&s.origin);
    let provider = pooled(&d);
    LocalSet::new()
        .run_until(async {
            let ProviderResponse::Stream(mut st) = call(&provider, &d, true).await.unwrap() else {
                panic!("a stream");
            };
            let mut last = None;
            while let Some(item) = st.next_item().await {
                last = Some(item.unwrap());
            }
            assert!(matches!(last, Some(StreamItem::Done(_))));
            // Let the connection task deliver the body's end, as a caller's turn would.
            tokio::task::yield_now().await;
            drop(st);
            assert_eq!(provider.pool().unwrap().idle(0), 1);
        })
        .await;
}
