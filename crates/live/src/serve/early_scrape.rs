//! A Prometheus scrape that comes before any traffic must neither start serve's fault timeline
//! (the first connection starts it: [`super::first_connection`]) nor be the first client serve
//! waits for past the scenario's duration. A connection on the shared listener whose first
//! bytes are `GET /metrics` is therefore answered here, beside the fake providers, for as long
//! as it stays open (Prometheus keeps it alive and scrapes again on it; the counters are the
//! call log's own, shared), and serve goes on waiting for its first connection.
//!
//! Telling a scrape from traffic takes the first bytes a client sends. A client sends its
//! request at once, so the wait ([`SNIFF_AT_MOST`]) is spent only on a connection that sends
//! nothing (drive's clock connection), and the timeline then counts from its accept, not from
//! the end of the wait.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Response, StatusCode};
use http_body_util::Full;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use routersim_report::live_metrics::PROM_CONTENT_TYPE;
use routersim_report::provider_metrics::ProviderCallMetrics;
use routersim_wire::route::METRICS_PATH;
use tokio::net::TcpStream;
use tokio::time::Instant;

/// The longest a new connection's first bytes are waited for.
pub const SNIFF_AT_MOST: Duration = Duration::from_millis(50);

/// A scrape's request line begins so.
const SCRAPE: &[u8] = b"GET /metrics";

/// Whether the client's first bytes are a `GET /metrics` request line (peeked: nothing is
/// consumed). No bytes within [`SNIFF_AT_MOST`], or any other bytes: not a scrape.
pub async fn is_scrape(stream: &TcpStream) -> bool {
    let deadline = Instant::now() + SNIFF_AT_MOST;
    let mut buf = [0_u8; SCRAPE.len() + 1];
    loop {
        let n = match tokio::time::timeout_at(deadline, stream.peek(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => n,
            _ => return false,
        };
        if n > SCRAPE.len() {
            return buf.starts_with(SCRAPE) && matches!(buf[SCRAPE.len()], b' ' | b'?');
        }
        if !SCRAPE.starts_with(&buf[..n]) {
            return false;
        }
        // The start of a scrape's line: the rest is on its way.
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// Answers `GET /metrics` on `stream` until the client closes it (anything else: a 404 that
/// says why). Call inside a `LocalSet`.
pub async fn answer_scrapes(stream: TcpStream, metrics: Arc<ProviderCallMetrics>) {
    let service = service_fn(move |req: http::Request<hyper::body::Incoming>| {
        let response = if req.method() == http::Method::GET && req.uri().path() == METRICS_PATH {
            let mut response = Response::new(Full::new(Bytes::from(metrics.render())));
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static(PROM_CONTENT_TYPE),
            );
            response
        } else {
            let mut response = Response::new(Full::new(Bytes::from_static(
                b"this connection opened with a GET /metrics before the fault timeline started: \
                  it serves GET /metrics only; open a new connection\n",
            )));
            *response.status_mut() = StatusCode::NOT_FOUND;
            response
        };
        std::future::ready(Ok::<_, Infallible>(response))
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .await;
}
