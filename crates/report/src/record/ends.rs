//! The two events that end something: `AttemptEnd` (an `attempts.csv` row, the deployment's
//! second) and `RequestEnd` (a `requests.csv` row, maybe a `routing.jsonl` line, and most of
//! the summary's counters, histograms and windows).
//!
//! Why apart from `fold`: these are the events with trace rows of their own and the most
//! fields; the rest of the fold is a line or two per event.

use std::sync::Arc;
use std::time::Duration;

use routersim_engine::failure::FailureKind;
use routersim_engine::stream::StreamStats;

use super::csv::{AttemptRow, RequestRow, write_row};
use super::histogram::{new_histogram, record_us};
use super::routing::{RequestTrace, RoutingLine, write_line};
use super::state::{RouteLatency, State};
use super::windows::FinishedRequest;
use crate::streams::outcome_index;
use crate::timeseries::Count;
use crate::units::{micros, second_of};

/// A `RequestEnd` event's fields, with its request id and its times in µs since the start.
pub(super) struct EndedRequest<'e> {
    pub(super) id: Option<u64>,
    pub(super) model: &'e str,
    pub(super) final_model_group: &'e str,
    pub(super) final_deployment_id: Option<&'e str>,
    pub(super) failure: Option<FailureKind>,
    pub(super) status: Option<u16>,
    pub(super) attempts: u32,
    pub(super) retries: u32,
    pub(super) fallbacks: u32,
    pub(super) attempted_fallbacks: u32,
    pub(super) stream: Option<StreamStats>,
    /// When the request arrived.
    pub(super) arrival_us: u64,
    /// When it ended (the event's time).
    pub(super) end_us: u64,
}

/// An `AttemptEnd` event's fields, with its request id and its times in µs since the start.
pub(super) struct EndedAttempt<'e> {
    pub(super) id: Option<u64>,
    pub(super) attempt: u32,
    pub(super) start_us: u64,
    pub(super) end_us: u64,
    pub(super) model_group: &'e str,
    pub(super) deployment_id: &'e Arc<str>,
    pub(super) failure: Option<FailureKind>,
    pub(super) status: Option<u16>,
    pub(super) retry_after: Option<Duration>,
    pub(super) wait: Duration,
    pub(super) fallback_depth: u32,
}

impl State {
    /// Folds a finished request into every aggregate and writes its trace rows.
    pub(super) fn ended_request(&mut self, r: &EndedRequest<'_>) {
        let latency = r.end_us.saturating_sub(r.arrival_us);
        self.count_request(r, latency);
        let ttft = self.count_stream(r.stream);
        self.windows.request_end(&FinishedRequest {
            arrival: r.arrival_us,
            latency_us: latency,
            ok: r.failure.is_none(),
            retries: r.retries,
            fallbacks: r.fallbacks,
        });
        self.series.count(second_of(r.arrival_us), Count::Arrival);
        let outcome_count = if r.failure.is_none() {
            Count::Ok
        } else {
            Count::Failed
        };
        self.series.count(second_of(r.end_us), outcome_count);
        self.trace_request(r, latency, ttft);
    }

    /// The request's counters, its attempts bar and its latency (histogram and hlog interval).
    fn count_request(&mut self, r: &EndedRequest<'_>, latency: u64) {
        let agg = &mut self.agg;
        agg.requests += 1;
        agg.http_ok += u64::from(r.status == Some(200));
        match r.failure {
            None => agg.ok += 1,
            Some(kind) => *agg.failed_by_kind.entry(kind.as_str()).or_default() += 1,
        }
        agg.with_fallback += u64::from(r.fallbacks > 0);
        agg.attempted_fallbacks += u64::from(r.attempted_fallbacks);
        agg.attempted_differs |= r.attempted_fallbacks != r.fallbacks;
        agg.with_retry += u64::from(r.retries > 0);
        agg.attempts += u64::from(r.attempts);
        if r.failure.is_none() {
            agg.ok_attempts += u64::from(r.attempts);
        }
        agg.attempts_max = agg.attempts_max.max(u64::from(r.attempts));
        self.plots
            .request_end(r.attempts, second_of(r.end_us), latency);
        agg.latency_sum_us += u128::from(latency);
        agg.latency_max_us = agg.latency_max_us.max(latency);
        record_us(&mut self.latency, latency, 1);
        self.latency_intervals.record(
            second_of(r.end_us),
            latency,
            &mut self.series,
            &mut self.error,
        );
    }

    /// A streamed request's outcome, tokens and TTFT; returns the TTFT in µs.
    fn count_stream(&mut self, stream: Option<StreamStats>) -> Option<u64> {
        let ttft = stream.and_then(|st| st.ttft).map(micros);
        if let Some(st) = stream {
            let agg = &mut self.agg;
            agg.streamed += 1;
            if let Some(outcome) = st.outcome {
                agg.stream_outcomes[outcome_index(outcome)] += 1;
            }
            agg.tokens_delivered += u64::from(st.tokens_delivered);
            agg.tokens_billed += u64::from(st.tokens_billed);
            if let Some(us) = ttft {
                agg.ttft_max_us = agg.ttft_max_us.max(us);
                record_us(&mut self.ttft, us, 1);
            }
        }
        ttft
    }

    /// What the request's trace adds: a client's retries carried to its next send, the
    /// calls per user request, the final route's latency, and the trace rows.
    fn trace_request(&mut self, r: &EndedRequest<'_>, latency: u64, ttft: Option<u64>) {
        let trace = self.in_flight.take(r.id);
        if r.failure.is_some() && trace.client_retries_left() {
            self.in_flight.carry(r.id, &trace);
        }
        let calls_before = trace.client.map_or(0, |(_, _, before)| before);
        self.agg.user_calls_max = self
            .agg
            .user_calls_max
            .max(u64::from(calls_before) + u64::from(r.attempts));
        self.agg.deadline_exhausted += u64::from(r.failure.is_some() && trace.deadline_exhausted);
        self.route_latency(r.final_deployment_id.unwrap_or(""), latency);
        trace.failures_field(&mut self.failures_field);
        let outcome = r.failure.map_or("ok", |k| k.as_str());
        // Only the requests something went wrong for: the rest are `requests.csv` rows with
        // one attempt and no failures (and a line each would cost ~8 % of the harness).
        if trace.has_failures() {
            write_line(&mut self.routing, &mut self.error, |w| {
                w.line(&RoutingLine {
                    id: r.id,
                    model: r.model,
                    attempts: r.attempts,
                    trace: &trace,
                    final_deployment: r.final_deployment_id,
                    outcome,
                })
            });
        }
        self.request_row(r, latency, ttft, &trace, outcome);
    }

    /// The request's `requests.csv` row.
    fn request_row(
        &mut self,
        r: &EndedRequest<'_>,
        latency: u64,
        ttft: Option<u64>,
        trace: &RequestTrace,
        outcome: &str,
    ) {
        let row = RequestRow {
            request_id: r.id,
            arrival_us: r.arrival_us,
            model: r.model,
            final_model_group: r.final_model_group,
            final_deployment_id: r.final_deployment_id.unwrap_or(""),
            outcome,
            status: r.status,
            attempts: r.attempts,
            retries: r.retries,
            fallbacks: r.fallbacks,
            attempted_fallbacks: r.attempted_fallbacks,
            latency_us: latency,
            stream: r.stream,
            ttft_us: ttft,
            routing_failures: &self.failures_field,
            client_try: trace.client.map(|(n, _, _)| n),
            replica: self.fleet.as_ref().map(|f| f.current),
        };
        write_row(&mut self.requests, &mut self.error, |w| w.request(&row));
    }

    /// One more request ended on `deployment` (`""`: on none) after `latency_us`.
    fn route_latency(&mut self, deployment: &str, latency_us: u64) {
        // Once per request: one lookup when the route is known (it almost always is).
        if let Some(route) = self.routes.get_mut(deployment) {
            route.count += 1;
            route.max_us = route.max_us.max(latency_us);
            record_us(&mut route.hist, latency_us, 1);
            return;
        }
        let Ok(mut hist) = new_histogram() else {
            return;
        };
        record_us(&mut hist, latency_us, 1);
        self.routes.insert(
            Arc::from(deployment),
            RouteLatency {
                count: 1,
                max_us: latency_us,
                hist,
            },
        );
    }

    /// Folds an attempt's end into the counters and the deployment's second, and writes its
    /// `attempts.csv` row.
    pub(super) fn ended_attempt(&mut self, a: &EndedAttempt<'_>) {
        self.agg.http_ok_attempts += u64::from(a.status == Some(200));
        self.per_deployment.attempt(
            a.deployment_id,
            a.end_us.saturating_sub(a.start_us),
            a.failure,
        );
        if let Some(id) = a.id {
            let duplicate = self
                .in_flight
                .attempt_end(id, a.deployment_id, a.failure, a.status);
            self.agg.duplicate_executions += u64::from(duplicate);
        }
        let row = AttemptRow {
            request_id: a.id,
            attempt: a.attempt,
            start_us: a.start_us,
            end_us: a.end_us,
            model_group: a.model_group,
            deployment_id: a.deployment_id,
            outcome: a.failure.map_or("ok", |k| k.as_str()),
            status: a.status,
            retry_after: a.retry_after,
            wait: a.wait,
            fallback_depth: a.fallback_depth,
            replica: self.fleet.as_ref().map(|f| f.current),
        };
        write_row(&mut self.attempts, &mut self.error, |w| w.attempt(&row));
    }
}
