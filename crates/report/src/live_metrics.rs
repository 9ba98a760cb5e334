//! Live metrics: the counters of `metrics.prom`, kept while a real-time process runs
//! (`routersim proxy`, `routersim drive`) and rendered on demand for a Prometheus scrape of
//! `GET /metrics`, so a Grafana already watching the user's services watches the chaos test.
//!
//! The names, HELP texts and histogram bounds are `metrics.prom`'s (one writer,
//! [`write_values`]); what differs is the clock (wall-clock seconds) and one family: a
//! live process never closes its cooling periods, so `routersim_cooldown_periods_total` and
//! its per-deployment twin are absent. Memory is bounded: counters, one bucket array, and a
//! map per failure kind and per deployment (both finite sets), never a sample per request.
//!
//! [`LiveMetrics`] is an engine [`EventSink`]: the engine's `RequestEnd` and `CooldownSet`
//! events feed it, counted as the recorder counts them (requests, attempts, retries and
//! fallbacks from `RequestEnd`), so a scrape at the end of a run agrees with its summary. A
//! process without engine events (`drive` calls a router under test) calls
//! [`LiveMetrics::record_request`] itself, and [`LiveMetrics::requests_only`] leaves out the
//! families it cannot know (attempts, retries, fallbacks, cooldowns).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use routersim_engine::event::{EventKind, EventSink, RoutingEvent};
use routersim_engine::sync::lock_unpoisoned;

use crate::prom::{LatencyBuckets, PromValues, write_values};

/// The content type of the text exposition format this writes.
pub const PROM_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// One finished request, as [`LiveMetrics::record_request`] counts it.
#[derive(Clone, Copy, Debug)]
pub struct RequestOutcome<'a> {
    /// The failure kind (`FailureKind::as_str`, or a transport's own name); `None` on success.
    pub failure: Option<&'a str>,
    /// Provider calls it made.
    pub attempts: u64,
    /// Same-group retries.
    pub retries: u64,
    /// Fallback hops.
    pub fallbacks: u64,
    /// End to end.
    pub latency: Duration,
}

#[derive(Debug, Default)]
struct Counts {
    requests: u64,
    ok: u64,
    failed_by_kind: BTreeMap<String, u64>,
    retries: u64,
    fallbacks: u64,
    attempts: u64,
    cooldowns: u64,
    cooldowns_by_deployment: BTreeMap<String, u64>,
    latency: LatencyBuckets,
}

/// The counters a live process exposes on `/metrics`.
#[derive(Debug, Default)]
pub struct LiveMetrics {
    base_labels: String,
    requests_only: bool,
    counts: Mutex<Counts>,
}

impl LiveMetrics {
    /// Metrics whose every series carries `labels` (`(name, value)` pairs, e.g. the
    /// scenario's name); none is fine (Prometheus adds `job` and `instance`).
    pub fn new(labels: &[(&str, &str)]) -> Self {
        let base_labels = labels
            .iter()
            .map(|(k, v)| format!("{k}=\"{}\"", crate::prom::label_value(v)))
            .collect::<Vec<_>>()
            .join(",");
        Self {
            base_labels,
            requests_only: false,
            counts: Mutex::default(),
        }
    }

    /// Metrics of a client that sees its requests end and nothing behind them
    /// (`routersim drive`): the exposition leaves out retries, fallbacks, attempts and
    /// cooldowns rather than writing 0 for what it does not know.
    pub fn requests_only(labels: &[(&str, &str)]) -> Self {
        Self {
            requests_only: true,
            ..Self::new(labels)
        }
    }

    /// Counts one finished request.
    pub fn record_request(&self, outcome: RequestOutcome<'_>) {
        let mut c = lock_unpoisoned(&self.counts);
        c.requests += 1;
        match outcome.failure {
            None => c.ok += 1,
            Some(kind) => *c.failed_by_kind.entry(kind.to_string()).or_default() += 1,
        }
        c.attempts += outcome.attempts;
        c.retries += outcome.retries;
        c.fallbacks += outcome.fallbacks;
        let us = u64::try_from(outcome.latency.as_micros()).unwrap_or(u64::MAX);
        c.latency.record(us);
    }

    /// Counts one cooldown set on `deployment`.
    pub fn record_cooldown(&self, deployment: &str) {
        let mut c = lock_unpoisoned(&self.counts);
        c.cooldowns += 1;
        *c.cooldowns_by_deployment
            .entry(deployment.to_string())
            .or_default() += 1;
    }

    /// The exposition now, in the text format (version 0.0.4).
    pub fn render(&self) -> String {
        let c = lock_unpoisoned(&self.counts);
        let values = PromValues {
            requests: c.requests,
            ok: c.ok,
            failed: c.failed_by_kind.values().sum(),
            retries: c.retries,
            fallbacks: c.fallbacks,
            attempts: c.attempts,
            cooldowns: c.cooldowns,
            cooldown_periods: None,
            failed_by_kind: c
                .failed_by_kind
                .iter()
                .map(|(k, v)| (k.as_str(), *v))
                .collect(),
            deployment_cooldowns: c
                .cooldowns_by_deployment
                .iter()
                .map(|(k, v)| (k.as_str(), *v))
                .collect(),
            deployment_cooldown_periods: None,
            latency: c.latency.clone(),
            clock: "wall-clock",
            requests_only: self.requests_only,
        };
        let mut out = Vec::new();
        // Writing to a Vec cannot fail.
        let _ = write_values(&values, &self.base_labels, &mut out);
        String::from_utf8_lossy(&out).into_owned()
    }
}

impl EventSink for LiveMetrics {
    fn emit(&self, event: &RoutingEvent) {
        match &event.kind {
            EventKind::RequestEnd {
                failure,
                attempts,
                retries,
                fallbacks,
                start,
                ..
            } => self.record_request(RequestOutcome {
                failure: failure.map(|f| f.as_str()),
                attempts: u64::from(*attempts),
                retries: u64::from(*retries),
                fallbacks: u64::from(*fallbacks),
                latency: event.at.saturating_duration_since(*start),
            }),
            EventKind::CooldownSet { deployment_id, .. } => self.record_cooldown(deployment_id),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_requests_failures_and_buckets() {
        let metrics = LiveMetrics::new(&[]);
        for (failure, ms) in [(None, 3), (Some("rate_limit"), 40), (None, 2_000)] {
            metrics.record_request(RequestOutcome {
                failure,
                attempts: 2,
                retries: 1,
                fallbacks: 0,
                latency: Duration::from_millis(ms),
            });
        }
        metrics.record_cooldown("east");
        let text = metrics.render();
        for line in [
            "routersim_requests_total 3",
            "routersim_ok_total 2",
            "routersim_failed_total 1",
            "routersim_attempts_total 6",
            "routersim_retries_total 3",
            "routersim_failed_by_kind_total{kind=\"rate_limit\"} 1",
            "routersim_deployment_cooldowns_total{deployment=\"east\"} 1",
            // 3 ms is under 5 ms; 40 ms under 50 ms; 2 s under 2.5 s.
            "routersim_request_latency_seconds_bucket{le=\"0.005\"} 1",
            "routersim_request_latency_seconds_bucket{le=\"0.05\"} 2",
            "routersim_request_latency_seconds_bucket{le=\"1\"} 2",
            "routersim_request_latency_seconds_bucket{le=\"2.5\"} 3",
            "routersim_request_latency_seconds_bucket{le=\"+Inf\"} 3",
            "routersim_request_latency_seconds_sum 2.043",
            "routersim_request_latency_seconds_count 3",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
        assert!(!text.contains("cooldown_periods"), "{text}");
    }

    #[test]
    fn a_client_exposes_its_requests_and_nothing_it_cannot_know() {
        let metrics = LiveMetrics::requests_only(&[]);
        metrics.record_request(RequestOutcome {
            failure: Some("timeout"),
            attempts: 0,
            retries: 0,
            fallbacks: 0,
            latency: Duration::from_millis(7),
        });
        let text = metrics.render();
        for line in [
            "routersim_requests_total 1",
            "routersim_failed_total 1",
            "routersim_failed_by_kind_total{kind=\"timeout\"} 1",
            "routersim_request_latency_seconds_count 1",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
        for absent in ["attempts", "retries", "fallbacks", "cooldown"] {
            assert!(!text.contains(absent), "{absent} in\n{text}");
        }
    }
}
