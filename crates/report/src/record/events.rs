//! Folding one routing event into the recorder's state: the trace rows it writes and the
//! counters, histograms, cooldown lanes and per-second rows it updates.
//!
//! Separate from `csv` (how a row is written) and `summary` (what is made of the state at
//! the end): this is the per-event path.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use routersim_engine::alternatives::AlternativeEvent;
use routersim_engine::contract::{FilterReason, ValidationReason};
use routersim_engine::event::{EventKind, GiveUpReason, RoutingEvent};
use tokio::time::Instant;

use super::csv::{AttemptRow, RequestRow, write_row};
use super::routing::{RoutingLine, write_line};
use super::summary::{new_histogram, record_us};
use super::windows::FinishedRequest;
use super::{RouteLatency, State};
use crate::streams::{break_index, outcome_index};
use crate::timeseries::{Count, DeploymentCooldowns, Lane};
use crate::units::{Ms, micros, micros_since, second_of};

/// Adds one to `name`'s count.
fn count_event(events: &mut Vec<(&'static str, u64)>, name: &'static str) {
    if let Some(entry) = events
        .iter_mut()
        .find(|(n, _)| std::ptr::eq(n.as_ptr(), name.as_ptr()) || *n == name)
    {
        entry.1 += 1;
    } else {
        events.push((name, 1));
    }
}

impl State {
    pub(super) fn us(&self, at: Instant) -> u64 {
        micros_since(self.start, at)
    }

    pub(super) fn record(&mut self, event: &RoutingEvent) {
        // Events often share an instant (an attempt's end and its request's end): converting an
        // `Instant` is a checked subtraction, so the last one is kept.
        let at = match self.last_at {
            (instant, us) if instant == event.at => us,
            _ => {
                let us = self.us(event.at);
                self.last_at = (event.at, us);
                us
            }
        };
        let name = event.kind.name();
        self.agg.last_event_us = self.agg.last_event_us.max(at);
        count_event(&mut self.agg.events, name);
        let second = second_of(at);
        self.series.touch(second);
        self.per_deployment.advance(at, &mut self.error);

        match &event.kind {
            EventKind::AttemptStart { .. } => {
                if let Some(id) = event.request_id {
                    self.agg.ambiguous_replays += u64::from(self.in_flight.attempt_start(id));
                }
            }
            EventKind::AttemptEnd { .. } => self.attempt_row(event, at),
            EventKind::ResponseCost { usd, .. } => {
                self.agg.accepted_cost_usd += *usd;
                self.agg.priced_responses += 1;
            }
            EventKind::ClientTry {
                try_number,
                retries,
                provider_calls_before,
            } => {
                self.agg.client_retries += u64::from(*try_number > 0);
                if let Some(id) = event.request_id {
                    self.in_flight
                        .client_try(id, (*try_number, *retries, *provider_calls_before));
                }
            }
            EventKind::AmbiguousOutcome {
                replay, executed, ..
            } => {
                self.agg.ambiguous_outcomes += 1;
                if let Some(id) = event.request_id {
                    let duplicate = self.in_flight.ambiguous(
                        id,
                        replay.deduplicates(),
                        *executed == Some(true),
                    );
                    self.agg.duplicate_executions += u64::from(duplicate);
                }
            }
            EventKind::RequestEnd { .. } => self.request_end(event, at),
            EventKind::Retry { .. } => {
                self.agg.retries += 1;
                self.series.count(second, Count::Retry);
            }
            EventKind::Fallback { source, target, .. } => {
                self.agg.fallbacks += 1;
                self.series.count(second, Count::Fallback);
                self.plots.fallback(source, target);
            }
            EventKind::CooldownSet {
                model_group,
                deployment_id,
                until,
                ..
            } => {
                self.agg.cooldowns += 1;
                if let Some(h) = self.half_open.get_mut(deployment_id) {
                    h.end(at, &mut self.series);
                }
                let until = self.us(*until);
                self.per_deployment.cooldown_set(deployment_id, at, until);
                self.plots
                    .cooldown_set(model_group, deployment_id, at, until);
                self.cooldowns
                    .entry(deployment_id.clone())
                    .or_default()
                    .set(at, until, &mut self.series);
            }
            // A fleet's deployment is cooling while any replica holds it cooled.
            EventKind::CooldownEnd { deployment_id, .. }
                if self
                    .fleet
                    .as_ref()
                    .is_some_and(|f| f.cooled_elsewhere(deployment_id, event.at)) => {}
            EventKind::CooldownEnd { deployment_id, .. } => {
                self.per_deployment.cooldown_end(deployment_id, at);
                if let Some(d) = self.cooldowns.get_mut(deployment_id) {
                    d.end(at, &mut self.series);
                }
                self.plots.cooldown_end(deployment_id, at);
            }
            EventKind::AllCooled { .. } => self.agg.all_cooled += 1,
            EventKind::HalfOpen {
                model_group,
                deployment_id,
            } => {
                self.plots.half_open(model_group, deployment_id, at);
                self.per_deployment.half_open(deployment_id);
                self.half_open
                    .entry(deployment_id.clone())
                    .or_insert_with(|| DeploymentCooldowns::in_lane(Lane::HalfOpen))
                    .open_until_closed(at);
            }
            EventKind::Recovered { deployment_id, .. } => {
                self.agg.recovered += 1;
                self.plots.recovered(deployment_id, at);
                self.per_deployment.recovered(deployment_id, at);
                if let Some(h) = self.half_open.get_mut(deployment_id) {
                    h.end(at, &mut self.series);
                }
                if let Some(d) = self.cooldowns.get_mut(deployment_id) {
                    d.end(at, &mut self.series);
                }
            }
            EventKind::ProbeOk { .. } => {}
            EventKind::ProbeFailed { .. } => self.agg.probe_failed += 1,
            EventKind::StreamBreak { how, .. } => self.agg.stream_breaks[break_index(*how)] += 1,
            EventKind::StreamChunk {
                tokens,
                gap_before,
                inner_gap,
            } => self.stream_chunk(*tokens, *gap_before, *inner_gap),
            EventKind::RouteFiltered { reason, .. } => {
                if let Some(i) = FilterReason::ALL.iter().position(|r| r == reason) {
                    self.agg.routes_filtered[i] += 1;
                }
            }
            EventKind::ValidationRejected { reason, .. } => {
                if let Some(i) = ValidationReason::ALL.iter().position(|r| r == reason) {
                    self.agg.validation_rejections[i] += 1;
                }
            }
            EventKind::Alternative(alt) => self.alternative(alt),
            EventKind::GiveUp { reason, .. } => {
                self.give_up(*reason);
                if *reason == GiveUpReason::DeadlineExhausted
                    && let Some(id) = event.request_id
                {
                    self.in_flight.deadline_exhausted(id);
                }
            }
            EventKind::Wait { .. }
            | EventKind::OrderFallback { .. }
            | EventKind::WeightedFailover { .. } => {}
            EventKind::StreamContinued { .. } => self.series.count(second, Count::Continuation),
        }

        if !matches!(
            event.kind,
            EventKind::AttemptStart { .. }
                | EventKind::AttemptEnd { .. }
                | EventKind::RequestEnd { .. }
                | EventKind::StreamChunk { .. }
        ) {
            self.event_row(event, at);
        }
    }

    /// A retry refused by a budget is counted under its budget.
    fn give_up(&mut self, reason: GiveUpReason) {
        let (budget, throttling) = match reason {
            GiveUpReason::RetryBudgetExhausted => (1, 0),
            GiveUpReason::RetryThrottled => (0, 1),
            _ => return,
        };
        let a = self.agg.alternatives.get_or_insert_with(Default::default);
        a.retries_denied_by_budget += budget;
        a.retries_denied_by_throttling += throttling;
    }

    /// An alternative mechanism acted.
    fn alternative(&mut self, event: &AlternativeEvent) {
        let a = self.agg.alternatives.get_or_insert_with(Default::default);
        match event {
            AlternativeEvent::Ejected { deployment_id, .. } => {
                a.ejections += 1;
                *a.ejections_by_deployment
                    .entry(deployment_id.to_string())
                    .or_default() += 1;
            }
            AlternativeEvent::Unejected { .. } => a.unejections += 1,
            AlternativeEvent::Hedged {
                extra_input_tokens,
                extra_cost_usd,
                ..
            } => {
                a.hedged_requests += 1;
                a.hedge_extra_input_tokens += u64::from(*extra_input_tokens);
                a.hedge_extra_cost_usd =
                    crate::units::round6(a.hedge_extra_cost_usd + extra_cost_usd);
            }
            AlternativeEvent::HedgeEnd { hedge_won, .. } => a.hedge_wins += u64::from(*hedge_won),
        }
    }

    /// A chunk of `tokens` tokens: `gap_before` before its first, `inner_gap` between the rest.
    fn stream_chunk(&mut self, tokens: u32, gap_before: Option<Duration>, inner_gap: Duration) {
        if tokens == 0 {
            return;
        }
        if let Some(gap) = gap_before {
            let us = micros(gap);
            record_us(&mut self.inter_token, us, 1);
            self.agg.inter_token_max_us = self.agg.inter_token_max_us.max(us);
        }
        if tokens > 1 {
            let us = micros(inner_gap);
            record_us(&mut self.inter_token, us, u64::from(tokens - 1));
            self.agg.inter_token_max_us = self.agg.inter_token_max_us.max(us);
        }
    }

    fn request_end(&mut self, event: &RoutingEvent, at: u64) {
        let EventKind::RequestEnd {
            model,
            final_model_group,
            final_deployment_id,
            failure,
            status,
            attempts,
            retries,
            fallbacks,
            attempted_fallbacks,
            start,
            stream,
        } = &event.kind
        else {
            return;
        };
        let arrival = self.us(*start);
        let latency = at.saturating_sub(arrival);

        let agg = &mut self.agg;
        agg.requests += 1;
        agg.http_ok += u64::from(*status == Some(200));
        match failure {
            None => agg.ok += 1,
            Some(kind) => *agg.failed_by_kind.entry(kind.as_str()).or_default() += 1,
        }
        agg.with_fallback += u64::from(*fallbacks > 0);
        agg.attempted_fallbacks += u64::from(*attempted_fallbacks);
        agg.attempted_differs |= attempted_fallbacks != fallbacks;
        agg.with_retry += u64::from(*retries > 0);
        agg.attempts += u64::from(*attempts);
        if failure.is_none() {
            agg.ok_attempts += u64::from(*attempts);
        }
        agg.attempts_max = agg.attempts_max.max(u64::from(*attempts));
        self.plots.request_end(*attempts);
        agg.latency_sum_us += u128::from(latency);
        agg.latency_max_us = agg.latency_max_us.max(latency);
        record_us(&mut self.latency, latency, 1);
        self.latency_intervals
            .record(second_of(at), latency, &mut self.series, &mut self.error);

        let ttft = stream.and_then(|st| st.ttft).map(micros);
        if let Some(st) = stream {
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

        self.windows.request_end(&FinishedRequest {
            arrival,
            latency_us: latency,
            ok: failure.is_none(),
            retries: *retries,
            fallbacks: *fallbacks,
        });
        self.series.count(second_of(arrival), Count::Arrival);
        let outcome_count = if failure.is_none() {
            Count::Ok
        } else {
            Count::Failed
        };
        self.series.count(second_of(at), outcome_count);

        let trace = self.in_flight.take(event.request_id);
        if failure.is_some() && trace.client_retries_left() {
            self.in_flight.carry(event.request_id, &trace);
        }
        let calls_before = trace.client.map_or(0, |(_, _, before)| before);
        self.agg.user_calls_max = self
            .agg
            .user_calls_max
            .max(u64::from(calls_before) + u64::from(*attempts));
        self.agg.deadline_exhausted += u64::from(failure.is_some() && trace.deadline_exhausted);
        self.route_latency(final_deployment_id.as_deref().unwrap_or(""), latency);
        trace.failures_field(&mut self.failures_field);
        let outcome = failure.map_or("ok", |k| k.as_str());
        // Only the requests something went wrong for: the rest are `requests.csv` rows with
        // one attempt and no failures (and a line each would cost ~8 % of the harness).
        if trace.has_failures() {
            write_line(&mut self.routing, &mut self.error, |w| {
                w.line(&RoutingLine {
                    id: event.request_id,
                    model,
                    attempts: *attempts,
                    trace: &trace,
                    final_deployment: final_deployment_id.as_deref(),
                    outcome,
                })
            });
        }
        let row = RequestRow {
            request_id: event.request_id,
            arrival_us: arrival,
            model,
            final_model_group,
            final_deployment_id: final_deployment_id.as_deref().unwrap_or(""),
            outcome,
            status: *status,
            attempts: *attempts,
            retries: *retries,
            fallbacks: *fallbacks,
            attempted_fallbacks: *attempted_fallbacks,
            latency_us: latency,
            stream: *stream,
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

    fn attempt_row(&mut self, event: &RoutingEvent, at: u64) {
        let EventKind::AttemptEnd {
            attempt,
            start,
            model_group,
            deployment_id,
            failure,
            status,
            retry_after,
            wait,
            fallback_depth,
        } = &event.kind
        else {
            return;
        };
        self.agg.http_ok_attempts += u64::from(*status == Some(200));
        let start_us = self.us(*start);
        self.per_deployment
            .attempt(deployment_id, at.saturating_sub(start_us), *failure);
        if let Some(id) = event.request_id {
            let duplicate = self
                .in_flight
                .attempt_end(id, deployment_id, *failure, *status);
            self.agg.duplicate_executions += u64::from(duplicate);
        }
        let row = AttemptRow {
            request_id: event.request_id,
            attempt: *attempt,
            start_us,
            end_us: at,
            model_group,
            deployment_id,
            outcome: failure.map_or("ok", |k| k.as_str()),
            status: *status,
            retry_after: *retry_after,
            wait: *wait,
            fallback_depth: *fallback_depth,
            replica: self.fleet.as_ref().map(|f| f.current),
        };
        write_row(&mut self.attempts, &mut self.error, |w| w.attempt(&row));
    }

    fn event_row(&mut self, event: &RoutingEvent, at: u64) {
        let detail = &mut self.detail;
        detail.clear();
        // Writing into a String cannot fail; the results are ignored.
        let (group, deployment): (&str, &str) = match &event.kind {
            EventKind::Wait { duration, reason } => {
                let _ = write!(
                    detail,
                    "reason={} duration_ms={}",
                    reason.as_str(),
                    Ms(micros(*duration))
                );
                ("", "")
            }
            EventKind::Retry {
                model_group,
                failure,
                retry,
                budget,
            } => {
                let _ = write!(detail, "failure={failure} retry={retry} budget={budget}");
                (model_group, "")
            }
            EventKind::GiveUp {
                model_group,
                failure,
                reason,
            } => {
                let _ = write!(detail, "failure={failure} reason={}", reason.as_str());
                (model_group, "")
            }
            EventKind::OrderFallback {
                model_group,
                from_order,
                to_order,
            } => {
                let _ = write!(
                    detail,
                    "from_order={} to_order={}",
                    OptOrNone(*from_order),
                    OptOrNone(*to_order)
                );
                (model_group, "")
            }
            EventKind::WeightedFailover {
                model_group,
                excluded,
            } => {
                let _ = write!(detail, "excluded={excluded}");
                (model_group, excluded)
            }
            EventKind::Fallback {
                source,
                target,
                order,
                depth,
                level,
                failure,
            } => {
                let _ = write!(
                    detail,
                    "from={source} to={target} depth={depth} order={order} level={} failure={failure}",
                    level.as_str()
                );
                (source, "")
            }
            EventKind::CooldownSet {
                model_group,
                deployment_id,
                reason,
                failure,
                duration,
                until,
                // Not in events.csv: its bytes stay as they were (the sweep reads the source
                // from the event itself).
                source: _,
            } => {
                let _ = write!(
                    detail,
                    "reason={} failure={failure} duration_ms={} until_ms={}",
                    reason.as_str(),
                    Ms(micros(*duration)),
                    Ms(micros_since(self.start, *until))
                );
                (model_group, deployment_id)
            }
            EventKind::CooldownEnd {
                model_group,
                deployment_id,
            } => (model_group, deployment_id),
            EventKind::AllCooled {
                model_group,
                retry_after,
            } => {
                let _ = write!(detail, "retry_after_ms={}", Ms(micros(*retry_after)));
                (model_group, "")
            }
            EventKind::HalfOpen {
                model_group,
                deployment_id,
            }
            | EventKind::ProbeOk {
                model_group,
                deployment_id,
            } => (model_group, deployment_id),
            EventKind::Recovered {
                model_group,
                deployment_id,
                via,
            } => {
                let _ = write!(detail, "via={}", via.as_str());
                (model_group, deployment_id)
            }
            EventKind::ProbeFailed {
                model_group,
                deployment_id,
                failure,
            } => {
                let _ = write!(detail, "failure={failure}");
                (model_group, deployment_id)
            }
            EventKind::StreamBreak {
                model_group,
                deployment_id,
                failure,
                how,
                tokens_so_far,
                after_content,
            } => {
                let _ = write!(
                    detail,
                    "failure={failure} how={} tokens_so_far={tokens_so_far} after_content={after_content}",
                    how.as_str()
                );
                (model_group, deployment_id)
            }
            EventKind::ResponseCost { .. }
            | EventKind::ClientTry { .. }
            | EventKind::AmbiguousOutcome { .. } => reliability_detail(detail, &event.kind),
            EventKind::StreamContinued {
                from_group,
                from_deployment,
                to_group,
                to_deployment,
                prefill_tokens,
            } => {
                let _ = write!(
                    detail,
                    "to_group={to_group} to_deployment={to_deployment} prefill_tokens={prefill_tokens}"
                );
                (from_group, from_deployment)
            }
            kind @ (EventKind::RouteFiltered { .. } | EventKind::ValidationRejected { .. }) => {
                contract_detail(kind, detail)
            }
            EventKind::Alternative(alt) => alternative_detail(alt, detail, self.start),
            EventKind::AttemptStart { .. }
            | EventKind::AttemptEnd { .. }
            | EventKind::RequestEnd { .. }
            | EventKind::StreamChunk { .. } => return,
        };
        if let Some(id) = event.request_id {
            let sep = if detail.is_empty() { "" } else { " " };
            let _ = write!(detail, "{sep}request={id}");
        }
        let detail = &self.detail;
        let name = event.kind.name();
        write_row(&mut self.events, &mut self.error, |w| {
            w.fmt(Ms(at))?;
            w.str(name)?;
            w.str(group)?;
            w.str(deployment)?;
            w.str(detail)?;
            w.end()
        });
    }
}

/// The `detail` of a `profile: contract` event, and its group and deployment.
fn contract_detail<'e>(kind: &'e EventKind, detail: &mut String) -> (&'e str, &'e str) {
    match kind {
        EventKind::RouteFiltered {
            model_group,
            deployment_id,
            reason,
        } => {
            let _ = write!(detail, "reason={}", reason.as_str());
            (model_group, deployment_id)
        }
        EventKind::ValidationRejected {
            model_group,
            deployment_id,
            attempt,
            reason,
        } => {
            let _ = write!(detail, "attempt={attempt} reason={}", reason.as_str());
            (model_group, deployment_id)
        }
        _ => ("", ""),
    }
}

/// An optional number, `none` when absent.
struct OptOrNone(Option<u32>);

impl std::fmt::Display for OptOrNone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(n) => write!(f, "{n}"),
            None => f.write_str("none"),
        }
    }
}

/// The `detail` (and group, deployment) of an alternative's event in `events.csv`.
fn alternative_detail<'e>(
    event: &'e AlternativeEvent,
    detail: &mut String,
    start: Instant,
) -> (&'e str, &'e str) {
    match event {
        AlternativeEvent::Ejected {
            model_group,
            deployment_id,
            duration,
            until,
            ejections,
            consecutive_5xx,
        } => {
            let _ = write!(
                detail,
                "duration_ms={} until_ms={} ejections={ejections} consecutive_5xx={consecutive_5xx}",
                Ms(micros(*duration)),
                Ms(micros_since(start, *until))
            );
            (model_group, deployment_id)
        }
        AlternativeEvent::Unejected {
            model_group,
            deployment_id,
        } => (model_group, deployment_id),
        AlternativeEvent::Hedged {
            model_group,
            primary,
            hedge,
            delay,
            extra_input_tokens,
            extra_cost_usd,
        } => {
            let _ = write!(
                detail,
                "primary={primary} delay_ms={} extra_input_tokens={extra_input_tokens} extra_cost_usd={extra_cost_usd}",
                Ms(micros(*delay))
            );
            (model_group, hedge)
        }
        AlternativeEvent::HedgeEnd {
            model_group,
            winner,
            hedge_won,
        } => {
            let _ = write!(detail, "hedge_won={hedge_won}");
            (model_group, winner)
        }
    }
}

/// The `detail` (and group, deployment) of the reliability events: `response_cost`,
/// `client_try`, `ambiguous_outcome`.
fn reliability_detail<'k>(detail: &mut String, kind: &'k EventKind) -> (&'k str, &'k str) {
    match kind {
        EventKind::ResponseCost {
            model_group,
            deployment_id,
            input_tokens,
            output_tokens,
            usd,
        } => {
            let _ = write!(
                detail,
                "input_tokens={input_tokens} output_tokens={output_tokens} usd={}",
                crate::units::round6(*usd * 1000.0) / 1000.0
            );
            (model_group, deployment_id)
        }
        EventKind::ClientTry {
            try_number,
            retries,
            provider_calls_before,
        } => {
            let _ = write!(
                detail,
                "try={try_number} retries={retries} provider_calls_before={provider_calls_before}"
            );
            ("", "")
        }
        EventKind::AmbiguousOutcome {
            model_group,
            deployment_id,
            operation_id,
            replay,
            executed,
        } => {
            let executed = executed.map_or("unknown", |e| if e { "true" } else { "false" });
            let _ = write!(
                detail,
                "operation={operation_id} replay={} executed={executed}",
                replay.as_str()
            );
            (model_group, deployment_id)
        }
        _ => ("", ""),
    }
}
