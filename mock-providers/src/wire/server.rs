//! [`WireServer`]: the fake providers behind an HTTP/1.1 server (hyper), on any byte pipe.
//!
//! Each request is one call of [`FakeProviders`]: the request is read
//! ([`routersim_wire::request`]), the deployment's fake decides the outcome (sleeping its
//! latency on tokio's clock, real or paused), and the outcome is rendered in the path's
//! format. An `api_connection` failure (or any failure without a status) closes the
//! connection without a response. Every call ends in one row of the [`CallLog`].

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue};
use http::{Response, StatusCode};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use routersim_engine::config::Deployment;
use routersim_engine::failure::{FailureKind, ProviderFailure, RetryAfter};
use routersim_engine::provider::{Provider, ProviderCall, ProviderResponse};
use routersim_engine::request::Completion;
use routersim_engine::retry_after;
use serde_json::json;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::time::Instant;

use super::body::{Frames, SseBody, StreamBreak, StreamLog, WireBody};
use super::call_log::{CallLog, CallRow};
use super::guard::{BodyDeadline, ConnGate, ConnLimits, read_body, serve_guarded};
use routersim_wire::anthropic::server as anthropic;
use routersim_wire::openai::server as openai;
use routersim_wire::openai::server::Meta;
use routersim_wire::request::{WireRequest, parse_request};
use routersim_wire::route::{Endpoint, Format, Mount, RouteError, route};

use super::error::WireError;
use crate::provider::FakeProviders;

/// The largest request body read (a bigger one is a 413).
pub const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// The fake providers of a router config, served over HTTP.
pub struct WireServer {
    providers: Rc<FakeProviders>,
    deployments: Vec<Deployment>,
    ids: Vec<Arc<str>>,
    log: CallLog,
    start: Instant,
    epoch_unix_ms: i64,
    next_id: Cell<u64>,
}

impl std::fmt::Debug for WireServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WireServer")
            .field("deployments", &self.ids)
            .finish_non_exhaustive()
    }
}

impl WireServer {
    /// Serves `providers` (built from the same config as `deployments`, in its order). `start`
    /// is the instant the server's time counts from (`at_ms`); the wall clock then read
    /// `epoch_unix_ms` (for `created` and HTTP-date Retry-Afters in the log).
    pub fn new(
        providers: Rc<FakeProviders>,
        deployments: Vec<Deployment>,
        log: CallLog,
        start: Instant,
        epoch_unix_ms: i64,
    ) -> Self {
        let ids = deployments.iter().map(|d| d.id.clone()).collect();
        Self {
            providers,
            deployments,
            ids,
            log,
            start,
            epoch_unix_ms,
            next_id: Cell::new(1),
        }
    }

    /// The deployments served, in config order.
    pub fn deployments(&self) -> &[Deployment] {
        &self.deployments
    }

    /// The fake providers (their counters).
    pub fn providers(&self) -> &FakeProviders {
        &self.providers
    }

    /// The log of calls served.
    pub fn call_log(&self) -> &CallLog {
        &self.log
    }

    fn now_unix_ms(&self) -> i64 {
        let elapsed = routersim_runtime::time::now().saturating_duration_since(self.start);
        let elapsed = i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX);
        self.epoch_unix_ms.saturating_add(elapsed)
    }

    fn fresh_id(&self) -> u64 {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        id
    }

    /// Answers one request.
    async fn handle(
        self: Rc<Self>,
        mount: Mount,
        req: http::Request<Incoming>,
    ) -> Result<Response<WireBody>, StreamBreak> {
        let arrived = routersim_runtime::time::now();
        let path = req.uri().path().to_string();
        let endpoint = match route(req.method(), &path, mount, &self.ids) {
            Ok(endpoint) => endpoint,
            Err(e) => return Ok(self.not_found(req.method(), &path, &e)),
        };
        let (index, format) = match endpoint {
            Endpoint::Models(which) => return Ok(self.models(which)),
            Endpoint::Metrics => return Ok(self.metrics()),
            Endpoint::Chat(index, format) => (index, format),
        };
        let (parts, body) = req.into_parts();
        let deadline = parts.extensions.get::<BodyDeadline>().copied();
        let headers = parts.headers;
        let body = match read_body(body, MAX_BODY_BYTES, deadline).await {
            Ok(body) => body,
            Err(e) => {
                return Ok(self.refuse(index, &path, arrived, format, e.status(), &e.to_string()));
            }
        };
        let group = self.deployments[index].model_name.clone();
        let wire = match parse_request(&body, &headers, &group, self.fresh_id()) {
            Ok(wire) => wire,
            Err(why) => return Ok(self.refuse(index, &path, arrived, format, 400, &why)),
        };
        let call = ProviderCall {
            deployment: &self.deployments[index],
            deployment_index: index,
            request: &wire.request,
            attempt: wire.attempt,
        };
        // A client that hangs up while the provider works drops this future: the guard still
        // logs the call (`client_closed`).
        let mut guard = RowGuard {
            server: self.clone(),
            arrived,
            row: Some(CallRow {
                at: arrived.saturating_duration_since(self.start),
                deployment_id: self.ids[index].clone(),
                path,
                stream: wire.request.stream,
                outcome: String::new(),
                status: None,
                retry_after_ms: None,
                latency: Duration::ZERO,
                tokens: 0,
                request_id: wire.client_request_id,
            }),
        };
        let result = self.providers.call(call).await;
        let Some(mut row) = guard.row.take() else {
            return Err(StreamBreak(FailureKind::ApiConnection));
        };
        let meta = self.meta(&wire, format);
        match result {
            Ok(ProviderResponse::Complete(completion)) => {
                Ok(self.complete(row, arrived, format, &meta, &completion))
            }
            Ok(ProviderResponse::Stream(stream)) => {
                row.status = Some(200);
                let frames = match format {
                    Format::Anthropic => Frames::Anthropic(anthropic::SseFrames::new(meta)),
                    _ => Frames::OpenAi(openai::SseFrames::new(meta, format, wire.include_usage)),
                };
                let server = self.clone();
                let log = StreamLog {
                    row,
                    arrived,
                    sink: Rc::new(move |row: &CallRow| server.log.record(row)),
                };
                let mut response = Response::new(WireBody::Sse(Box::new(SseBody::new(
                    stream,
                    frames,
                    Some(log),
                ))));
                let h = response.headers_mut();
                h.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
                h.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
                Ok(response)
            }
            Err(failure) => self.failed(row, arrived, index, format, &failure),
        }
    }

    fn meta(&self, wire: &WireRequest, format: Format) -> Meta {
        let n = self.fresh_id();
        Meta {
            id: match format {
                Format::Anthropic => format!("msg_routersim{n}"),
                _ => format!("chatcmpl-routersim{n}"),
            },
            model: wire.model.clone(),
            created: self.now_unix_ms().div_euclid(1000),
            input_tokens: wire.request.input_tokens,
        }
    }

    fn finish_row(&self, mut row: CallRow, arrived: Instant) {
        row.latency = routersim_runtime::time::now().saturating_duration_since(arrived);
        self.log.record(&row);
    }

    fn complete(
        &self,
        mut row: CallRow,
        arrived: Instant,
        format: Format,
        meta: &Meta,
        completion: &Completion,
    ) -> Response<WireBody> {
        let body = match format {
            Format::Anthropic => anthropic::completion_body(meta, completion),
            _ => openai::completion_body(meta, completion),
        };
        row.outcome = "ok".into();
        row.status = Some(200);
        row.tokens = if completion.empty_choices {
            0
        } else {
            completion.output_tokens
        };
        self.finish_row(row, arrived);
        json_response(StatusCode::OK, body)
    }

    fn failed(
        &self,
        mut row: CallRow,
        arrived: Instant,
        index: usize,
        format: Format,
        failure: &ProviderFailure,
    ) -> Result<Response<WireBody>, StreamBreak> {
        row.outcome = failure.kind.as_str().to_string();
        let status = failure
            .status
            .and_then(|s| StatusCode::from_u16(s).ok())
            .filter(|_| failure.kind != FailureKind::ApiConnection);
        let Some(status) = status else {
            // No response at all: hyper closes the connection when the service fails.
            self.finish_row(row, arrived);
            return Err(StreamBreak(failure.kind));
        };
        let body = match format {
            Format::Anthropic => anthropic::error_body(failure),
            _ => openai::error_body(failure, format),
        };
        let mut response = json_response(status, body);
        let headers = response.headers_mut();
        let retry_after_ms = match &failure.retry_after {
            Some(retry) => retry_after_headers(headers, retry, format, self.now_unix_ms()),
            None => None,
        };
        if status == StatusCode::TOO_MANY_REQUESTS {
            let limit = self.deployments[index].rpm.unwrap_or(0);
            let reset = retry_after_ms.unwrap_or(1000).div_ceil(1000);
            for (name, value) in [
                ("x-ratelimit-limit-requests", limit.to_string()),
                ("x-ratelimit-remaining-requests", "0".to_string()),
                ("x-ratelimit-reset-requests", format!("{reset}s")),
            ] {
                if let Ok(value) = HeaderValue::from_str(&value) {
                    headers.insert(name, value);
                }
            }
        }
        row.status = Some(status.as_u16());
        row.retry_after_ms = retry_after_ms;
        self.finish_row(row, arrived);
        Ok(response)
    }

    /// A request the server refuses before any fake provider sees it.
    fn refuse(
        &self,
        index: usize,
        path: &str,
        arrived: Instant,
        format: Format,
        status: u16,
        why: &str,
    ) -> Response<WireBody> {
        let row = CallRow {
            at: arrived.saturating_duration_since(self.start),
            deployment_id: self.ids[index].clone(),
            path: path.to_string(),
            stream: false,
            outcome: "bad_request".into(),
            status: Some(status),
            retry_after_ms: None,
            latency: Duration::ZERO,
            tokens: 0,
            request_id: None,
        };
        self.finish_row(row, arrived);
        let body = match format {
            Format::Anthropic => serde_json::to_vec(&json!({
                "type": "error", "error": {"type": "invalid_request_error", "message": why},
            }))
            .unwrap_or_default(),
            _ => openai::plain_error_body(why, "invalid_request_error", None),
        };
        json_response(
            StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
            body,
        )
    }

    fn not_found(&self, method: &http::Method, path: &str, e: &RouteError) -> Response<WireBody> {
        let message = match e {
            RouteError::UnknownPath => format!(
                "Unknown request URL: {method} {path}. routersim serves POST \
                 /d/<deployment_id>/v1/chat/completions, /d/<deployment_id>/v1/messages, \
                 /d/<deployment_id>/openai/deployments/<name>/chat/completions, GET /v1/models and GET \
                 /metrics."
            ),
            RouteError::UnknownDeployment(id) => format!(
                "No deployment has id {id:?}; deployment ids: {}",
                self.ids.iter().map(|i| &**i).collect::<Vec<_>>().join(", ")
            ),
        };
        json_response(
            StatusCode::NOT_FOUND,
            openai::plain_error_body(&message, "invalid_request_error", Some("unknown_url")),
        )
    }

    /// `GET /metrics`: the calls logged so far, counted (never itself a call, never a row).
    fn metrics(&self) -> Response<WireBody> {
        let mut response = json_response(StatusCode::OK, self.log.metrics().render().into_bytes());
        response.headers_mut().insert(
            CONTENT_TYPE,
            HeaderValue::from_static(routersim_report::live_metrics::PROM_CONTENT_TYPE),
        );
        response
    }

    fn models(&self, which: Option<usize>) -> Response<WireBody> {
        let entry = |d: &Deployment| {
            let model = d.model.split_once('/').map_or(&*d.model, |(_, m)| m);
            json!({"id": model, "object": "model", "created": 0, "owned_by": "routersim",
                   "x_routersim": {"deployment_id": &*d.id, "model_name": &*d.model_name}})
        };
        let data: Vec<_> = match which {
            Some(i) => self.deployments.get(i).map(entry).into_iter().collect(),
            None => self.deployments.iter().map(entry).collect(),
        };
        json_response(
            StatusCode::OK,
            serde_json::to_vec(&json!({"object": "list", "data": data})).unwrap_or_default(),
        )
    }
}

/// Logs a call whose client hung up before the answer (see [`WireServer::handle`]).
struct RowGuard {
    server: Rc<WireServer>,
    arrived: Instant,
    row: Option<CallRow>,
}

impl Drop for RowGuard {
    fn drop(&mut self) {
        if let Some(mut row) = self.row.take() {
            row.outcome = "client_closed".into();
            row.latency = routersim_runtime::time::now().saturating_duration_since(self.arrived);
            self.server.log.record(&row);
        }
    }
}

fn json_response(status: StatusCode, body: Vec<u8>) -> Response<WireBody> {
    let mut response = Response::new(WireBody::full(Bytes::from(body)));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// Sets the Retry-After headers of a failure and returns the delay they say, in ms (an
/// HTTP-date resolved against `now_unix_ms`).
///
/// Whole seconds go out as `retry-after: <secs>` (Azure adds `retry-after-ms`); any other
/// delay as `retry-after-ms: <ms>` plus `retry-after: <secs rounded up>`; a date verbatim.
pub fn retry_after_headers(
    headers: &mut http::HeaderMap,
    retry: &RetryAfter,
    format: Format,
    now_unix_ms: i64,
) -> Option<u64> {
    let mut set = |name: &'static str, value: String| {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(name, value);
        }
    };
    match retry {
        RetryAfter::Delay(d) => {
            let ms = u64::try_from(d.as_nanos().div_ceil(1_000_000)).unwrap_or(u64::MAX);
            let whole = d.subsec_nanos() == 0;
            set(
                "retry-after",
                d.as_secs().saturating_add(u64::from(!whole)).to_string(),
            );
            if !whole || format == Format::Azure {
                set("retry-after-ms", ms.to_string());
            }
            Some(ms)
        }
        RetryAfter::HttpDate(date) => {
            set("retry-after", date.clone());
            retry_after::resolve(retry, now_unix_ms)
                .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        }
    }
}

/// Serves HTTP/1.1 on `io` for every deployment (`/d/<id>/…`) until the client closes it.
pub async fn serve_connection<I>(server: Rc<WireServer>, io: I) -> Result<(), WireError>
where
    I: AsyncRead + AsyncWrite + Unpin + 'static,
{
    serve_connection_at(server, io, Mount::Shared).await
}

/// [`serve_connection`] for a listener mounted at `mount`.
pub async fn serve_connection_at<I>(
    server: Rc<WireServer>,
    io: I,
    mount: Mount,
) -> Result<(), WireError>
where
    I: AsyncRead + AsyncWrite + Unpin + 'static,
{
    let service = service_fn(move |req| server.clone().handle(mount, req));
    hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(io), service)
        .await?;
    Ok(())
}

/// Accepts connections on `listener` forever with the default [`ConnLimits`] and a gate of
/// its own (call inside a `LocalSet`); see [`listen_with`].
pub async fn listen(server: Rc<WireServer>, listener: TcpListener, mount: Mount) {
    let limits = ConnLimits::default();
    listen_with(
        server,
        listener,
        mount,
        limits,
        ConnGate::new(limits.max_connections),
    )
    .await;
}

/// Accepts connections on `listener` forever, each served on its own local task under
/// `limits` (header and idle timeouts), at most as many at once as `gate` admits (a server's
/// listeners share one gate). Call inside a `LocalSet`.
pub async fn listen_with(
    server: Rc<WireServer>,
    listener: TcpListener,
    mount: Mount,
    limits: ConnLimits,
    gate: ConnGate,
) {
    gate.accept(listener, |stream| {
        serve_client(server.clone(), stream, mount, limits)
    })
    .await;
}

/// Serves one accepted TCP client of a listener mounted at `mount` under `limits` (header and
/// idle timeouts), until it closes or a rule cuts it.
pub async fn serve_client(
    server: Rc<WireServer>,
    stream: tokio::net::TcpStream,
    mount: Mount,
    limits: ConnLimits,
) {
    serve_guarded(stream, limits, move |req| server.clone().handle(mount, req)).await;
}
