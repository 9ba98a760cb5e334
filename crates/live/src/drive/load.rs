//! The open-loop load generator: the scenario's arrivals, sent in real time to the router.
//!
//! Each arrival is sent at its scheduled instant on a task of its own, whatever the earlier
//! requests are doing: a slow router cannot slow the arrivals down (no coordinated omission,
//! as wrk2 measures), and every latency counts from the scheduled instant — unless every one of
//! drive's connections was busy: then from when a connection was free and the request was
//! sent ([`super::pool`]: keep-alive connections, a stated budget; a broken connection is
//! never given to the next request).

use routersim_wire::headers;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::net::{SocketAddr, ToSocketAddrs};
use std::rc::Rc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use routersim_engine::failure::FailureKind;
use routersim_engine::request::Request;
use routersim_engine::stream::StreamOutcome;
use routersim_wire::sse::{SseItem, SseParser};
use serde_json::Value;
use tokio::time::Instant;

use super::pool::{Pool, Response, SendError};
use super::record::{RequestRecord, Unfinished, kind_of_code, named_kind};
use routersim_sim::run::VERSION;

/// The largest non-streamed body read (a chat completion is a few KB).
const MAX_BODY: usize = 8 * 1024 * 1024;

/// An HTTP endpoint drive talks to: where to connect and which path to send.
#[derive(Clone, Debug)]
pub struct Target {
    /// The URL as given.
    pub url: String,
    /// `host:port` for the `host` header.
    pub authority: String,
    /// The address connected to.
    pub addr: SocketAddr,
    /// The path prefix up to and including `/v1` (no trailing slash).
    pub v1: String,
    /// The path before `/v1` (the router's root, for `/health/...`).
    pub root: String,
}

impl Target {
    /// Parses `http://host:port[/prefix][/v1]`. Only `http` (a chaos target is local).
    pub fn parse(url: &str) -> Result<Self, String> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| format!("{url}: only http:// URLs are supported"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        if authority.is_empty() {
            return Err(format!("{url}: no host"));
        }
        let with_port = if authority
            .rsplit_once(':')
            .is_some_and(|(_, p)| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        {
            authority.to_string()
        } else {
            format!("{authority}:80")
        };
        let addr = with_port
            .to_socket_addrs()
            .map_err(|e| format!("{url}: {e}"))?
            .next()
            .ok_or_else(|| format!("{url}: the host has no address"))?;
        let path = path.trim_end_matches('/');
        let (root, v1) = match path.strip_suffix("/v1") {
            Some(root) => (root.to_string(), path.to_string()),
            None => (path.to_string(), format!("{path}/v1")),
        };
        Ok(Self {
            url: url.to_string(),
            authority: authority.to_string(),
            addr,
            v1,
            root,
        })
    }

    /// Whether the address is loopback.
    pub fn is_loopback(&self) -> bool {
        self.addr.ip().is_loopback()
    }
}

/// What every request carries.
#[derive(Clone, Debug)]
pub struct Client {
    /// The router (the first of `replicas`): health and identity are asked here.
    pub target: Target,
    /// Every router replica, `target` first: chat requests go round-robin over them.
    pub replicas: Vec<Target>,
    /// `Authorization: Bearer …`.
    pub api_key: Option<String>,
    /// `--header`s and the ready hook's, sent on every request.
    pub headers: std::cell::RefCell<Vec<super::header::ExtraHeader>>,
    /// The connections, kept alive and bounded.
    pub pool: Rc<Pool>,
}

/// `user-agent` of every request.
pub fn user_agent() -> String {
    format!("routersim-drive/{VERSION}")
}

/// A bodyless or JSON request to `path` on the target.
fn build(
    client: &Client,
    target: &Target,
    method: http::Method,
    path: &str,
    body: Option<Bytes>,
    extra: &[(&'static str, String)],
) -> Result<http::Request<Full<Bytes>>, String> {
    let mut builder = http::Request::builder()
        .method(method)
        .uri(path)
        .header(http::header::HOST, &target.authority)
        .header(http::header::USER_AGENT, user_agent())
        .header(headers::DRIVE, "1");
    if let Some(key) = &client.api_key {
        builder = builder.header(http::header::AUTHORIZATION, format!("Bearer {key}"));
    }
    if body.is_some() {
        builder = builder.header(http::header::CONTENT_TYPE, "application/json");
    }
    for header in client.headers.borrow().iter() {
        builder = builder.header(&header.name, &header.value);
    }
    for (name, value) in extra {
        builder = builder.header(*name, value);
    }
    builder
        .body(Full::new(body.unwrap_or_default()))
        .map_err(|e| e.to_string())
}

/// Why a body could not be read whole.
#[derive(Debug)]
enum BodyError {
    /// Longer than [`MAX_BODY`]: not a chat completion, whatever it is.
    TooLong,
    /// The connection failed before the body ended.
    Cut(String),
}

/// Reads a whole body, at most [`MAX_BODY`] bytes.
async fn read_body(response: Response) -> Result<Bytes, BodyError> {
    let limited = http_body_util::Limited::new(response.into_body(), MAX_BODY);
    limited
        .collect()
        .await
        .map(http_body_util::Collected::to_bytes)
        .map_err(|e| {
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                BodyError::TooLong
            } else {
                BodyError::Cut(e.to_string())
            }
        })
}

/// `GET path` on the target: the status and body, if it answered.
pub async fn get(client: &Client, path: &str) -> Option<(u16, http::HeaderMap, Bytes)> {
    get_from(client, &client.target, path).await
}

/// `GET path` on one replica.
pub async fn get_from(
    client: &Client,
    target: &Target,
    path: &str,
) -> Option<(u16, http::HeaderMap, Bytes)> {
    get_within(client, target, path, Duration::from_secs(5)).await
}

/// `GET path` on one replica, the answer and its body each within `wait`.
pub async fn get_within(
    client: &Client,
    target: &Target,
    path: &str,
    wait: Duration,
) -> Option<(u16, http::HeaderMap, Bytes)> {
    let request = build(client, target, http::Method::GET, path, None, &[]).ok()?;
    let (response, lease, _) = tokio::time::timeout(wait, client.pool.send(target.addr, request))
        .await
        .ok()?
        .ok()?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = tokio::time::timeout(wait, read_body(response))
        .await
        .ok()?
        .ok()?;
    lease.release();
    Some((status, headers, body))
}

/// The request body of an arrival: the traffic's model, a short placeholder message, the
/// output length the traffic asks for, a stream where it says so.
pub fn body_of(request: &Request) -> Bytes {
    Bytes::from(wire_body::request_body(
        &request.model,
        request.id,
        request.stream,
        request.output_tokens.or(request.max_tokens),
    ))
}

/// An arrival drive could not send: the OS refused it a socket (the load generator's limit,
/// not the target's failure).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotSent {
    /// The request's id.
    pub id: u64,
    /// What the OS said.
    pub why: String,
}

/// Sends one arrival to replica `replica` (modulo their number) and records what came back.
/// `arrival` is its scheduled instant; the record's arrival is when it was sent (later only
/// when it waited for a connection).
pub async fn request(
    client: Rc<Client>,
    replica: usize,
    request: Request,
    start: Instant,
    arrival: Instant,
) -> Result<RequestRecord, NotSent> {
    let mut record = RequestRecord {
        id: request.id,
        model: request.model.to_string(),
        stream: request.stream,
        arrival: arrival.saturating_duration_since(start),
        ..RequestRecord::default()
    };
    let mut extra = vec![
        (headers::REQUEST_ID, request.id.to_string()),
        (headers::INPUT_TOKENS, request.input_tokens.to_string()),
    ];
    if let Some(n) = request.output_tokens {
        extra.push((headers::OUTPUT_TOKENS, n.to_string()));
    }
    let target = client
        .replicas
        .get(replica % client.replicas.len().max(1))
        .unwrap_or(&client.target);
    let path = format!("{}/chat/completions", target.v1);
    let outcome = match build(
        &client,
        target,
        http::Method::POST,
        &path,
        Some(body_of(&request)),
        &extra,
    ) {
        Ok(http_request) => match client.pool.send(target.addr, http_request).await {
            Ok((response, lease, waited)) => {
                let sent = arrival + waited;
                record.arrival = sent.saturating_duration_since(start);
                record.connection_wait = waited;
                match exchange(response, &mut record, sent).await {
                    Ok(true) => {
                        lease.release();
                        Ok(())
                    }
                    Ok(false) => Ok(()),
                    Err(e) => Err(e),
                }
            }
            Err(SendError::Refused(why)) => {
                return Err(NotSent { id: record.id, why });
            }
            Err(SendError::Failed(e)) => Err(e),
        },
        Err(e) => Err(e),
    };
    if let Err(e) = outcome {
        record.transport_error = Some(e);
    }
    record.end = Instant::now().saturating_duration_since(start);
    Ok(record)
}

/// Reads the answer into `record`; `Ok(true)` when it was read to its end (its connection can
/// serve the next request).
async fn exchange(
    response: Response,
    record: &mut RequestRecord,
    arrival: Instant,
) -> Result<bool, String> {
    let status = response.status().as_u16();
    record.status = Some(status);
    record.read_headers(response.headers());
    let content_type = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let is_sse = content_type.starts_with("text/event-stream");
    if !(200..300).contains(&status) {
        // The status says it failed; a cut error body still counts by its status.
        let Ok(body) = read_body(response).await else {
            return Ok(false);
        };
        record.read_error_body(&body);
        return Ok(true);
    }
    if record.stream {
        if is_sse {
            return read_stream(response, record, arrival).await;
        }
        record.malformed = Some(format!(
            "a stream was asked for; the answer's content-type is `{content_type}`"
        ));
        return Ok(false);
    }
    let body = match read_body(response).await {
        Ok(body) => body,
        Err(BodyError::TooLong) => {
            record.malformed = Some(format!("a body over {MAX_BODY} bytes"));
            return Ok(false);
        }
        Err(BodyError::Cut(e)) => return Err(e),
    };
    if let Some(tokens) = wire_body::answer_completion_tokens(&body) {
        record.tokens = tokens
            .filter(|&n| n <= body.len() as u64)
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(0);
        return Ok(true);
    }
    match serde_json::from_slice::<Value>(&body) {
        Ok(json) if json.get("choices").is_some_and(Value::is_array) => {
            record.tokens = completion_tokens(&json, body.len()).unwrap_or(0);
        }
        Ok(_) => record.malformed = Some("a JSON body without `choices`".to_string()),
        Err(_) => {
            record.malformed = Some(format!(
                "a body that is not JSON (content-type `{content_type}`)"
            ));
        }
    }
    Ok(true)
}

/// `usage.completion_tokens`, when present and believable: a peer's count above `bytes` (what
/// it sent: a token is at least a byte) is refused, never trusted.
fn completion_tokens(json: &Value, bytes: usize) -> Option<u32> {
    json.get("usage")?
        .get("completion_tokens")?
        .as_u64()
        .filter(|&n| n <= bytes as u64)
        .and_then(|n| u32::try_from(n).ok())
}

/// Reads an OpenAI SSE stream frame by frame: TTFT at the first content delta; tokens from the
/// usage chunk, else the chunks' `x_routersim.tokens`, else words. `Ok(true)`: the body was
/// read to its end.
async fn read_stream(
    response: Response,
    record: &mut RequestRecord,
    arrival: Instant,
) -> Result<bool, String> {
    let mut body = response.into_body();
    let mut parser = SseParser::new();
    let (mut counted, mut usage, mut done) = (0_u32, None, false);
    let mut received = 0_usize;
    let mut outcome = None;
    let mut ended = false;
    while outcome.is_none() {
        let Some(frame) = body.frame().await else {
            ended = true;
            break;
        };
        let Ok(frame) = frame else {
            outcome = Some(if counted > 0 {
                StreamOutcome::BrokenAfterContent
            } else {
                StreamOutcome::BrokenBeforeContent
            });
            break;
        };
        let Some(data) = frame.data_ref() else {
            continue;
        };
        received = received.saturating_add(data.len());
        if parser.feed(data).is_err() {
            outcome = Some(StreamOutcome::BrokenAfterContent);
            break;
        }
        while let Some(item) = parser.next_item() {
            let SseItem::Event { data, .. } = item else {
                continue;
            };
            if data.trim() == "[DONE]" {
                done = true;
                continue;
            }
            let Ok(json) = serde_json::from_str::<Value>(&data) else {
                record.malformed = Some("a stream frame that is not JSON".to_string());
                continue;
            };
            if let Some(error) = json.get("error") {
                let code = error.get("code").and_then(Value::as_str).unwrap_or("");
                let status = error.get("status").and_then(Value::as_u64);
                record.stream_error = Some(
                    named_kind(&json)
                        .or_else(|| kind_of_code(code))
                        .unwrap_or_else(|| {
                            status
                                .and_then(|s| u16::try_from(s).ok())
                                .map_or(FailureKind::ApiConnection, FailureKind::from_status)
                        }),
                );
                outcome = Some(if counted > 0 {
                    StreamOutcome::BrokenAfterContent
                } else {
                    StreamOutcome::BrokenBeforeContent
                });
                break;
            }
            if let Some(n) = completion_tokens(&json, received) {
                usage = Some(n);
            }
            let tokens = chunk_tokens(&json, data.len());
            if tokens > 0 && record.ttft.is_none() {
                record.ttft = Some(arrival.elapsed());
            }
            counted = counted.saturating_add(tokens);
        }
    }
    record.tokens = usage.unwrap_or(counted);
    record.stream_outcome = Some(outcome.unwrap_or(if !done {
        // A clean end without `[DONE]`: truncated, reported as a break before or after
        // content like the engine's stream reader does.
        if counted > 0 {
            StreamOutcome::BrokenAfterContent
        } else {
            StreamOutcome::BrokenBeforeContent
        }
    } else if counted == 0 && usage.unwrap_or(0) == 0 {
        StreamOutcome::Empty
    } else {
        StreamOutcome::Completed
    }));
    // A stream that ended but said garbage on the way failed without a break: no outcome, as
    // the simulation records such a failure.
    if record.malformed.is_some()
        && matches!(
            record.stream_outcome,
            Some(StreamOutcome::Completed | StreamOutcome::Empty)
        )
    {
        record.stream_outcome = None;
    }
    Ok(ended)
}

/// Tokens of one chunk: the wire server's exact count when it rides along and is believable
/// (at most the frame's `bytes`: a count above what was sent is refused), else words.
fn chunk_tokens(json: &Value, bytes: usize) -> u32 {
    if let Some(n) = json
        .get("x_routersim")
        .and_then(|x| x.get("tokens"))
        .and_then(Value::as_u64)
        .filter(|&n| n <= bytes as u64)
        .and_then(|n| u32::try_from(n).ok())
    {
        return n;
    }
    json.get("choices")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("delta")?.get("content")?.as_str())
        .map(|s| u32::try_from(s.split_whitespace().count()).unwrap_or(u32::MAX))
        .sum()
}

/// What the request tasks share with the generator: counters for the progress line, the
/// finished records (a slot per request sent, by arrival index), and a wake-up per finish.
#[derive(Debug, Default)]
pub struct Counters {
    /// The finished records.
    pub records: RefCell<Vec<Option<RequestRecord>>>,
    /// Each slot's request (its id and scheduled arrival), finished or not.
    pub slots: RefCell<Vec<Unfinished>>,
    /// Notified when a request finishes.
    pub done: tokio::sync::Notify,
    /// Requests sent.
    pub sent: Cell<u64>,
    /// Requests in flight.
    pub in_flight: Cell<u64>,
    /// Requests finished with a failure.
    pub failed: Cell<u64>,
    /// What `GET /metrics` serves (`--metrics-addr`).
    pub metrics: Option<Rc<super::metrics::DriveMetrics>>,
    /// The slots of requests never sent (the OS refused a socket), and the first refusal.
    pub not_sent: RefCell<(std::collections::BTreeSet<usize>, Option<NotSent>)>,
}

impl Counters {
    /// Counts a request the OS refused a socket; the first refusal is said once on stderr.
    pub fn refused(&self, slot: usize, not_sent: NotSent) {
        let mut refused = self.not_sent.borrow_mut();
        refused.0.insert(slot);
        if refused.1.is_none() {
            eprintln!("{}", refusal_note(&not_sent.why));
            refused.1 = Some(not_sent);
        }
    }
}

/// What drive says, once, when the OS refuses it a socket.
pub fn refusal_note(why: &str) -> String {
    format!(
        "drive: the operating system refused a socket ({why}): the load generator's limit, not \
         the target's; such requests are not sent and not counted as failures (raise `ulimit -n` \
         or lower --max-connections)"
    )
}

/// The `--max-rps` guard: the sends of the last second.
#[derive(Debug)]
pub struct RateGuard {
    max: u64,
    recent: VecDeque<Instant>,
}

impl RateGuard {
    /// At most `max` sends in any one second.
    pub fn new(max: u64) -> Self {
        Self {
            max,
            recent: VecDeque::new(),
        }
    }

    /// Counts a send at `now`; `false` when it would exceed the cap.
    pub fn admit(&mut self, now: Instant) -> bool {
        while self
            .recent
            .front()
            .is_some_and(|t| now.saturating_duration_since(*t) >= Duration::from_secs(1))
        {
            self.recent.pop_front();
        }
        if self.recent.len() as u64 >= self.max {
            return false;
        }
        self.recent.push_back(now);
        true
    }
}

#[cfg(test)]
mod tests;
mod wire_body;
