//! Folding one routing event into the recorder's state: the counters, histograms, cooldown
//! lanes and per-second rows it updates; the events that end something (`ends`) and the
//! `events.csv` row (`event_row`) are passed on.
//!
//! Separate from `csv` (how a row is written) and `summary` (what is made of the state at
//! the end): this is the per-event path, the hottest code of a run.

use std::time::Duration;

use routersim_engine::alternatives::AlternativeEvent;
use routersim_engine::contract::{FilterReason, ValidationReason};
use routersim_engine::event::{EventKind, GiveUpReason, RoutingEvent};

use super::histogram::record_us;
use super::state::State;
use crate::streams::break_index;
use crate::timeseries::{Count, DeploymentCooldowns, Lane};
use crate::units::{micros, second_of};

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
}
