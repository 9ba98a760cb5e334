//! `GET /metrics` on the proxy's own port: the engine's events, counted by
//! [`LiveMetrics`] beside the stream routes, in Prometheus's text format.
//!
//! `/metrics` is no path of the OpenAI API the proxy serves (`/v1/…`, `/chat/…`, `/health/…`),
//! so it cannot shadow a caller's request; it is on the same loopback-only listener, so it is
//! as reachable as the proxy itself and no more.

use std::sync::Arc;

use http::{Response, StatusCode};
use routersim_engine::event::{EventSink, RoutingEvent};
use routersim_report::live_metrics::{LiveMetrics, PROM_CONTENT_TYPE};

use super::events::StreamRoutes;
use super::render::{ProxyBody, json_response};

/// The path Prometheus scrapes.
pub const METRICS_PATH: &str = "/metrics";

/// The router's one event sink: every event goes to the stream routes and to the metrics.
#[derive(Debug)]
pub struct ProxySink {
    /// Streamed requests' bodies.
    pub routes: Arc<StreamRoutes>,
    /// The live counters.
    pub metrics: Arc<LiveMetrics>,
}

impl EventSink for ProxySink {
    fn emit(&self, event: &RoutingEvent) {
        self.routes.emit(event);
        self.metrics.emit(event);
    }
}

/// The scrape's answer: `metrics`, then the proxy's own families (`more`).
pub fn metrics_response(metrics: &LiveMetrics, more: &str) -> Response<ProxyBody> {
    let mut text = metrics.render();
    text.push_str(more);
    let mut response = json_response(StatusCode::OK, text.into_bytes());
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(PROM_CONTENT_TYPE),
    );
    response
}
