//! The caller's answer: OpenAI chat completion bodies, error bodies, SSE streams and
//! LiteLLM's response headers, rendered from what the engine returned and reported.
//!
//! Text: the engine carries token counts, not text, so an answer's content is one short word
//! per output token (`tok`), as routersim's fake providers write it, whatever the provider
//! sent. `usage` and `finish_reason` are the engine's.
//!
//! A stream's end follows how the engine ended the caller's stream: a success ends with the
//! `finish_reason` chunk, a usage chunk when asked, and `data: [DONE]`; a failure after
//! content is an error frame (`data: {"error": …}`, then a clean end without `[DONE]`), except
//! when the stream that failed broke at the connection (an abrupt close, as the provider did:
//! first the comment `: x-routersim-break kind=… status=…`) or was truncated (a clean end
//! without `[DONE]`).

use routersim_wire::headers;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderName, HeaderValue, RETRY_AFTER};
use http::{Response, StatusCode};
use hyper::body::{Body, Frame, SizeHint};
use routersim_engine::failure::FailureKind;
use routersim_engine::request::{CompletionResult, RouterFailure};
use routersim_engine::stream::{BreakKind, Chunk, ChunkKind};
use routersim_mock_providers::wire::Format;
use routersim_wire::openai::server::{self as openai, Meta, SseFrames};
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;

use super::events::StreamMsg;

/// How many times a breaking body yields to the connection before its error, so hyper
/// flushes the frames before the break (as the fake providers' bodies do).
const FLUSH_YIELDS: u8 = 4;

/// The error a body yields to abort its connection.
#[derive(Debug, thiserror::Error)]
#[error("the stream broke at the connection ({0})")]
pub struct BodyBreak(pub FailureKind);

/// What the LiteLLM headers say: the attempts so far (all of them for a complete answer; up to
/// the first content for a stream, whose headers leave with its first byte).
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// Provider attempts.
    pub attempts: u32,
    /// Same-group retries.
    pub retries: u32,
    /// Fallback hops.
    pub fallbacks: u32,
    /// The deployment of the last attempt.
    pub deployment_id: Option<Arc<str>>,
    /// The model group of the last attempt.
    pub model_group: Option<Arc<str>>,
}

impl Tally {
    /// Counts a message a stream's body heard before its first byte.
    pub fn hear(&mut self, msg: &StreamMsg) {
        match msg {
            StreamMsg::Attempt {
                deployment_id,
                model_group,
            } => {
                self.attempts += 1;
                self.deployment_id = Some(deployment_id.clone());
                self.model_group = Some(model_group.clone());
            }
            StreamMsg::Retry => self.retries += 1,
            StreamMsg::Fallback => self.fallbacks += 1,
            _ => {}
        }
    }

    /// The whole request's tally.
    pub fn of(result: &CompletionResult) -> Self {
        Self {
            attempts: u32::try_from(result.attempts.len()).unwrap_or(u32::MAX),
            retries: result.retries,
            fallbacks: result.fallbacks,
            deployment_id: result.final_deployment_id.clone(),
            model_group: Some(result.final_model_group.clone()),
        }
    }
}

/// A response body: whole, or an SSE stream fed by the engine's events.
pub enum ProxyBody {
    /// All at once.
    Full(Option<Bytes>),
    /// A stream.
    Sse(Box<SseBody>),
}

impl std::fmt::Debug for ProxyBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProxyBody::Full(b) => f.debug_tuple("Full").field(b).finish(),
            ProxyBody::Sse(_) => f.write_str("Sse"),
        }
    }
}

/// A JSON response.
pub fn json_response(status: StatusCode, body: Vec<u8>) -> Response<ProxyBody> {
    let mut response = Response::new(ProxyBody::Full(Some(Bytes::from(body))));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// An OpenAI-shaped error the proxy itself answers (bad JSON, unknown path).
pub fn plain_error(status: StatusCode, message: &str, code: Option<&str>) -> Response<ProxyBody> {
    json_response(
        status,
        openai::plain_error_body(message, "invalid_request_error", code),
    )
}

/// Sets the LiteLLM headers, `x-routersim-request-id` and `x-routersim-version`.
pub fn set_headers(response: &mut Response<ProxyBody>, tally: &Tally, request_id: u64) {
    let h = response.headers_mut();
    let mut set = |name: &'static str, value: &str| {
        if let Ok(value) = HeaderValue::from_str(value) {
            h.insert(HeaderName::from_static(name), value);
        }
    };
    set("x-litellm-attempted-retries", &tally.retries.to_string());
    set(
        "x-litellm-attempted-fallbacks",
        &tally.fallbacks.to_string(),
    );
    if let Some(id) = &tally.deployment_id {
        set("x-litellm-model-id", id);
    }
    if let Some(group) = &tally.model_group {
        set("x-litellm-model-group", group);
    }
    let id = request_id.to_string();
    set("x-litellm-call-id", &id);
    set(headers::REQUEST_ID, &id);
    set(headers::ATTEMPTS, &tally.attempts.to_string());
    set(headers::VERSION, env!("CARGO_PKG_VERSION"));
}

/// The status a failure answers with: its own, else 500 (a connection failure has none; LiteLLM
/// answers `APIConnectionError` with a 500).
pub fn failure_status(failure: &RouterFailure) -> StatusCode {
    failure
        .status
        .and_then(|s| StatusCode::from_u16(s).ok())
        .filter(|s| s.is_client_error() || s.is_server_error())
        .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// The error object of a failure: OpenAI's `type`, LiteLLM's `code` (the status as a string),
/// a message, and the extension `x_routersim` (the kind and the attempts).
fn error_object(failure: &RouterFailure, result: &CompletionResult, model: &str) -> Value {
    let status = failure_status(failure);
    let (kind_type, _, _) = openai::error_fields(failure.kind, Format::OpenAi);
    let message = if failure.kind == FailureKind::BadRequest && result.attempts.is_empty() {
        format!(
            "Invalid model name passed in model={model} (routersim proxy: no model group serves that name; an alias that maps to a list serves none)"
        )
    } else {
        format!(
            "routersim proxy: {} (status {}) after {} attempt(s); model group {}",
            failure.kind.as_str(),
            failure
                .status
                .map_or_else(|| "none".to_string(), |s| s.to_string()),
            result.attempts.len(),
            result.final_model_group,
        )
    };
    json!({
        "message": message,
        "type": kind_type,
        "param": null,
        "code": status.as_u16().to_string(),
        "x_routersim": {"kind": failure.kind.as_str(), "attempts": result.attempts.len()},
    })
}

/// Retry-After in whole seconds, rounded up.
fn retry_after_secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// A failed request's response (no byte of it was sent before).
pub fn failure_response(
    failure: &RouterFailure,
    result: &CompletionResult,
    model: &str,
    tally: &Tally,
) -> Response<ProxyBody> {
    let body = serde_json::to_vec(&json!({"error": error_object(failure, result, model)}))
        .unwrap_or_default();
    let mut response = json_response(failure_status(failure), body);
    if let Some(retry) = failure.retry_after
        && let Ok(value) = HeaderValue::from_str(&retry_after_secs(retry).to_string())
    {
        response.headers_mut().insert(RETRY_AFTER, value);
    }
    set_headers(&mut response, tally, result.request_id);
    response
}

/// A non-streamed answer, success or failure.
pub fn result_response(result: &CompletionResult, meta: &Meta) -> Response<ProxyBody> {
    let tally = Tally::of(result);
    match &result.outcome {
        Ok(completion) => {
            let mut response =
                json_response(StatusCode::OK, openai::completion_body(meta, completion));
            set_headers(&mut response, &tally, result.request_id);
            response
        }
        Err(failure) => failure_response(failure, result, &meta.model, &tally),
    }
}

/// Starts a stream's response: its headers, the role chunk, and what was heard so far.
pub fn stream_response(
    meta: Meta,
    include_usage: bool,
    tally: &Tally,
    request_id: u64,
    first: StreamMsg,
    rx: UnboundedReceiver<StreamMsg>,
) -> Response<ProxyBody> {
    let mut body = SseBody {
        frames: SseFrames::new(meta, Format::OpenAi, include_usage),
        rx,
        out: Vec::new(),
        last_break: None,
        breaking: None,
        ended: false,
    };
    body.frames.chunk(
        &Chunk {
            kind: ChunkKind::RoleOnly,
            tokens: 0,
            span: Duration::ZERO,
        },
        &mut body.out,
    );
    body.render(first);
    let mut response = Response::new(ProxyBody::Sse(Box::new(body)));
    let h = response.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    set_headers(&mut response, tally, request_id);
    response
}

/// An SSE body fed by a request's [`StreamMsg`]s.
pub struct SseBody {
    frames: SseFrames,
    rx: UnboundedReceiver<StreamMsg>,
    /// Bytes rendered, not yet sent.
    out: Vec<u8>,
    /// How the last stream broke (decides how a failure ends the caller's stream).
    last_break: Option<(BreakKind, FailureKind)>,
    /// A connection break whose frames went out: yields left, then the error.
    breaking: Option<(FailureKind, u8)>,
    /// The terminal frames are rendered: the body ends once they are sent.
    ended: bool,
}

impl SseBody {
    fn render(&mut self, msg: StreamMsg) {
        match msg {
            StreamMsg::Chunk { tokens, span } => self.frames.chunk(
                &Chunk {
                    kind: ChunkKind::Text,
                    tokens,
                    span,
                },
                &mut self.out,
            ),
            StreamMsg::Break { how, failure } => self.last_break = Some((how, failure)),
            StreamMsg::End(result) => self.end(&result),
            StreamMsg::Attempt { .. } | StreamMsg::Retry | StreamMsg::Fallback => {}
        }
    }

    fn end(&mut self, result: &CompletionResult) {
        self.ended = true;
        let failure = match &result.outcome {
            Ok(completion) => {
                self.frames.done(completion.finish_reason, &mut self.out);
                return;
            }
            Err(failure) => failure,
        };
        match self.last_break {
            Some((BreakKind::Connection, kind)) => {
                if kind != FailureKind::ApiConnection {
                    let status = failure
                        .status
                        .map_or_else(|| "none".to_string(), |s| s.to_string());
                    self.out.extend_from_slice(
                        format!(
                            ": x-routersim-break kind={} status={status}\n\n",
                            kind.as_str()
                        )
                        .as_bytes(),
                    );
                }
                self.breaking = Some((kind, FLUSH_YIELDS));
            }
            Some((BreakKind::Truncated, _)) => {}
            _ => {
                let mut error = error_object(failure, result, "");
                if let Value::Object(map) = &mut error {
                    map.insert("status".into(), json!(failure_status(failure).as_u16()));
                }
                self.out.extend_from_slice(b"data: ");
                let _ = serde_json::to_writer(&mut self.out, &json!({"error": error}));
                self.out.extend_from_slice(b"\n\n");
            }
        }
    }
}

impl Body for ProxyBody {
    type Data = Bytes;
    type Error = BodyBreak;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyBreak>>> {
        let sse = match self.get_mut() {
            ProxyBody::Full(bytes) => {
                return Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b))));
            }
            ProxyBody::Sse(sse) => sse,
        };
        // Everything already heard goes out in one frame.
        while !sse.ended {
            match sse.rx.poll_recv(cx) {
                Poll::Ready(Some(msg)) => sse.render(msg),
                // The request's task is gone without its end (the server is stopping).
                Poll::Ready(None) => {
                    sse.ended = true;
                    sse.breaking = Some((FailureKind::ApiConnection, FLUSH_YIELDS));
                }
                Poll::Pending => break,
            }
        }
        if !sse.out.is_empty() {
            return Poll::Ready(Some(Ok(Frame::data(Bytes::from(std::mem::take(
                &mut sse.out,
            ))))));
        }
        match &mut sse.breaking {
            Some((kind, 0)) => Poll::Ready(Some(Err(BodyBreak(*kind)))),
            Some((_, left)) => {
                *left -= 1;
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            None if sse.ended => Poll::Ready(None),
            None => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ProxyBody::Full(bytes) => bytes.is_none(),
            ProxyBody::Sse(_) => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ProxyBody::Full(Some(bytes)) => SizeHint::with_exact(bytes.len() as u64),
            ProxyBody::Full(None) => SizeHint::with_exact(0),
            ProxyBody::Sse(_) => SizeHint::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;
    use routersim_engine::request::Completion;
    use tokio::sync::mpsc::unbounded_channel;
    use tokio::time::Instant;

    use super::*;

    fn result(outcome: Result<Completion, RouterFailure>) -> Box<CompletionResult> {
        let now = Instant::now();
        Box::new(CompletionResult {
            request_id: 5,
            model: "gpt".into(),
            outcome,
            attempts: Vec::new(),
            final_model_group: "gpt".into(),
            final_deployment_id: Some("a".into()),
            fallbacks: 0,
            retries: 0,
            attempted_fallbacks: 0,
            attempted_retries: 0,
            start: now,
            end: now,
            stream: None,
        })
    }

    fn meta() -> Meta {
        Meta {
            id: "chatcmpl-x".into(),
            model: "gpt".into(),
            created: 0,
            input_tokens: 3,
        }
    }

    fn unavailable() -> RouterFailure {
        RouterFailure {
            kind: FailureKind::ServiceUnavailable,
            status: Some(503),
            retry_after: None,
        }
    }

    /// Renders a stream that hears `after` after its first chunk: the text sent, and whether
    /// the body ended with an error (an abrupt close).
    async fn stream(after: Vec<StreamMsg>) -> (String, bool) {
        let (tx, rx) = unbounded_channel();
        for msg in after {
            tx.send(msg).unwrap();
        }
        let first = StreamMsg::Chunk {
            tokens: 2,
            span: Duration::from_millis(4),
        };
        let response = stream_response(meta(), false, &Tally::default(), 5, first, rx);
        assert_eq!(response.headers()["x-routersim-request-id"], "5");
        let mut body = response.into_body();
        let mut text = String::new();
        loop {
            match body.frame().await {
                None => return (text, false),
                Some(Err(_)) => return (text, true),
                Some(Ok(frame)) => {
                    text.push_str(&String::from_utf8_lossy(&frame.into_data().unwrap()));
                }
            }
        }
    }

    #[tokio::test]
    async fn a_success_ends_with_finish_and_done() {
        let (text, broke) = stream(vec![StreamMsg::End(result(Ok(Completion {
            output_tokens: 2,
            ..Completion::default()
        })))])
        .await;
        assert!(!broke);
        assert!(
            text.contains(r#""delta":{"role":"assistant","content":""}"#),
            "{text}"
        );
        assert!(text.contains(r#""content":"tok tok""#), "{text}");
        assert!(text.contains(r#""finish_reason":"stop""#), "{text}");
        assert!(text.ends_with("data: [DONE]\n\n"), "{text}");
    }

    #[tokio::test]
    async fn a_failure_after_content_ends_as_the_engine_ended_the_stream() {
        let broke_with = |how, failure| StreamMsg::Break { how, failure };
        // An error frame: the caller gets one, then a clean end without [DONE].
        let (text, broke) = stream(vec![
            broke_with(BreakKind::ErrorFrame, FailureKind::ServiceUnavailable),
            StreamMsg::End(result(Err(unavailable()))),
        ])
        .await;
        assert!(!broke && !text.contains("[DONE]"), "{text}");
        let last = text.trim_end().rsplit("\n\n").next().unwrap();
        let v: Value = serde_json::from_str(&last["data: ".len()..]).unwrap();
        assert_eq!(v["error"]["status"], 503, "{text}");
        assert_eq!(v["error"]["x_routersim"]["kind"], "service_unavailable");
        // A connection break: an abrupt close after what was sent.
        let (text, broke) = stream(vec![
            broke_with(BreakKind::Connection, FailureKind::ApiConnection),
            StreamMsg::End(result(Err(RouterFailure {
                kind: FailureKind::ApiConnection,
                status: None,
                retry_after: None,
            }))),
        ])
        .await;
        assert!(
            broke && text.contains("tok tok") && !text.contains("error"),
            "{text}"
        );
        // Truncated: a clean end with neither an error nor [DONE].
        let (text, broke) = stream(vec![
            broke_with(BreakKind::Truncated, FailureKind::ApiConnection),
            StreamMsg::End(result(Err(unavailable()))),
        ])
        .await;
        assert!(
            !broke && !text.contains("error") && !text.contains("[DONE]"),
            "{text}"
        );
    }

    #[test]
    fn a_router_rate_limit_says_when_to_come_back() {
        let failure = RouterFailure {
            kind: FailureKind::RouterRateLimit,
            status: Some(429),
            retry_after: Some(Duration::from_millis(2_300)),
        };
        let result = result(Err(failure.clone()));
        let response = failure_response(&failure, &result, "gpt", &Tally::of(&result));
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(response.headers()[RETRY_AFTER], "3");
        assert_eq!(response.headers()["x-litellm-model-id"], "a");
        let connection = RouterFailure {
            kind: FailureKind::ApiConnection,
            status: None,
            retry_after: None,
        };
        assert_eq!(
            failure_status(&connection),
            StatusCode::INTERNAL_SERVER_ERROR
        );
    }
}
