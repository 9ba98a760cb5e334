//! `routersim drive --metrics-addr ADDR`: `GET /metrics` while the traffic runs, so a Grafana
//! already watching the user's services watches the chaos test from the client's side.
//!
//! Drive sees its requests end, not the provider calls behind them: its exposition has
//! `metrics.prom`'s request families under the same names and meaning (requests, ok, failed,
//! failed by kind, the end-to-end latency histogram, counted when a request ends, as the
//! report counts the requests it answers), and leaves out attempts, retries, fallbacks and
//! cooldowns: the report derives those by joining the provider call log after the run, which
//! a scrape during the run cannot wait for. What drive does know live has names of its own:
//! the requests sent and in flight, and the sums of the router's own headers
//! (`x-litellm-attempted-retries` counts only the final model group's retries, so it is not
//! `routersim_retries_total`). Memory is bounded: counters and one bucket array.
//!
//! The listener is loopback only unless `--allow-remote`, like every other routersim listener;
//! it serves `GET /metrics` and answers 404 to anything else.

use std::cell::Cell;
use std::convert::Infallible;
use std::fmt::Write as _;
use std::rc::Rc;

use bytes::Bytes;
use http::{Response, StatusCode};
use http_body_util::Full;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use routersim_report::live_metrics::{LiveMetrics, PROM_CONTENT_TYPE, RequestOutcome};
use tokio::net::TcpListener;

use super::load::Counters;
use super::record::RequestRecord;

/// The path Prometheus scrapes.
pub const METRICS_PATH: &str = "/metrics";

/// What drive counts for `/metrics`.
#[derive(Debug)]
pub struct DriveMetrics {
    requests: LiveMetrics,
    router_retries: Cell<u64>,
    router_fallbacks: Cell<u64>,
}

impl Default for DriveMetrics {
    fn default() -> Self {
        Self {
            requests: LiveMetrics::requests_only(&[]),
            router_retries: Cell::new(0),
            router_fallbacks: Cell::new(0),
        }
    }
}

impl DriveMetrics {
    /// Counts one answered request, as the report will: its failure ([`RequestRecord::failure`])
    /// and its latency from its scheduled arrival to its end.
    pub fn record(&self, record: &RequestRecord) {
        let failure = record.failure();
        self.requests.record_request(RequestOutcome {
            failure: failure.map(|f| f.as_str()),
            // Not rendered (`requests_only`): the calls are joined after the run.
            attempts: 0,
            retries: 0,
            fallbacks: 0,
            latency: record.end.saturating_sub(record.arrival),
        });
        let add =
            |cell: &Cell<u64>, n: Option<u32>| cell.set(cell.get() + u64::from(n.unwrap_or(0)));
        add(&self.router_retries, record.attempted_retries);
        add(&self.router_fallbacks, record.attempted_fallbacks);
    }

    /// The exposition now: the request families, then drive's own.
    pub fn render(&self, counters: &Counters) -> String {
        let mut text = self.requests.render();
        let families: [(&str, &str, &str, u64); 4] = [
            (
                "routersim_drive_sent_total",
                "counter",
                "Requests drive sent (answered or not yet).",
                counters.sent.get(),
            ),
            (
                "routersim_drive_in_flight",
                "gauge",
                "Requests sent and not answered yet.",
                counters.in_flight.get(),
            ),
            (
                "routersim_drive_router_attempted_retries_total",
                "counter",
                "Sum of the router's x-litellm-attempted-retries header over answered requests (LiteLLM counts the final model group's retries only; no header adds 0).",
                self.router_retries.get(),
            ),
            (
                "routersim_drive_router_attempted_fallbacks_total",
                "counter",
                "Sum of the router's x-litellm-attempted-fallbacks header over answered requests (no header adds 0).",
                self.router_fallbacks.get(),
            ),
        ];
        for (name, kind, help, value) in families {
            let _ = writeln!(text, "# HELP {name} {help}");
            let _ = writeln!(text, "# TYPE {name} {kind}");
            let _ = writeln!(text, "{name} {value}");
        }
        text
    }
}

/// Serves `GET /metrics` on `listener` until the task is dropped (call inside a `LocalSet`).
pub async fn serve_metrics(
    listener: TcpListener,
    metrics: Rc<DriveMetrics>,
    counters: Rc<Counters>,
) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of file descriptors: tried again in 10 ms, as serve's listeners do.
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            continue;
        };
        let (metrics, counters) = (metrics.clone(), counters.clone());
        let service = service_fn(move |req: http::Request<hyper::body::Incoming>| {
            let response = if req.method() == http::Method::GET && req.uri().path() == METRICS_PATH
            {
                let mut response = Response::new(Full::new(Bytes::from(metrics.render(&counters))));
                response.headers_mut().insert(
                    http::header::CONTENT_TYPE,
                    http::HeaderValue::from_static(PROM_CONTENT_TYPE),
                );
                response
            } else {
                let mut response = Response::new(Full::new(Bytes::from_static(
                    b"routersim drive serves GET /metrics only\n",
                )));
                *response.status_mut() = StatusCode::NOT_FOUND;
                response
            };
            std::future::ready(Ok::<_, Infallible>(response))
        });
        tokio::task::spawn_local(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
