//! Folding one routing event into the recorder's state: what every event does (its count, its
//! second), then what its kind does, family by family ([`Fold`], an [`EventVisitor`]): the
//! counters, histograms, cooldown lanes and per-second rows it updates. The events that end
//! something go on to `ends`, and every event to its `events.csv` row (`event_row`).
//!
//! Separate from `csv` (how a row is written) and `summary` (what is made of the state at
//! the end): this is the per-event path, the hottest code of a run, so the visitor is
//! dispatched statically and nothing here allocates per event.

use std::sync::Arc;
use std::time::Duration;

use routersim_engine::config::Replay;
use routersim_engine::event::{
    CooldownReason, CooldownSource, EventVisitor, FallbackLevel, FilterReason, GiveUpReason,
    RecoveredVia, RoutingEvent, ValidationReason,
};
use routersim_engine::failure::FailureKind;
use routersim_engine::stream::{BreakKind, StreamStats};
use tokio::time::Instant;

use super::ends::{EndedAttempt, EndedRequest};
use super::histogram::record_us;
use super::state::State;
use crate::streams::break_index;
use crate::summary::AlternativesSummary;
use crate::timeseries::{Count, DeploymentCooldowns, Lane};
use crate::units::{micros, round6, second_of};

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
        self.agg.last_event_us = self.agg.last_event_us.max(at);
        count_event(&mut self.agg.events, event.kind.name());
        let second = second_of(at);
        self.series.touch(second);
        self.per_deployment.advance(at, &mut self.error);
        event.kind.visit(&mut Fold {
            state: self,
            id: event.request_id,
            instant: event.at,
            at,
            second,
        });
        self.event_row(event, at);
    }
}

/// One event being folded: the state, and the event's request id and time (as an instant, in
/// µs since the start, and its second).
struct Fold<'s> {
    state: &'s mut State,
    id: Option<u64>,
    instant: Instant,
    at: u64,
    second: u64,
}

impl Fold<'_> {
    /// The alternatives' counters, created when the first one acts.
    fn alternatives(&mut self) -> &mut AlternativesSummary {
        self.state
            .agg
            .alternatives
            .get_or_insert_with(Default::default)
    }
}

// Requests and their attempts.
impl<'e> EventVisitor<'e> for Fold<'_> {
    type Output = ();

    fn client_try(&mut self, try_number: u32, retries: u32, provider_calls_before: u32) {
        self.state.agg.client_retries += u64::from(try_number > 0);
        if let Some(id) = self.id {
            self.state
                .in_flight
                .client_try(id, (try_number, retries, provider_calls_before));
        }
    }

    fn request_end(
        &mut self,
        model: &'e Arc<str>,
        final_model_group: &'e Arc<str>,
        final_deployment_id: Option<&'e Arc<str>>,
        failure: Option<FailureKind>,
        status: Option<u16>,
        attempts: u32,
        retries: u32,
        fallbacks: u32,
        attempted_fallbacks: u32,
        start: Instant,
        stream: Option<StreamStats>,
    ) {
        let ended = EndedRequest {
            id: self.id,
            model,
            final_model_group,
            final_deployment_id: final_deployment_id.map(|d| &**d),
            failure,
            status,
            attempts,
            retries,
            fallbacks,
            attempted_fallbacks,
            stream,
            arrival_us: self.state.us(start),
            end_us: self.at,
        };
        self.state.ended_request(&ended);
    }

    fn attempt_start(
        &mut self,
        _attempt: u32,
        _model_group: &'e Arc<str>,
        _deployment_id: &'e Arc<str>,
        _fallback_depth: u32,
        _max_tokens: Option<u32>,
    ) {
        if let Some(id) = self.id {
            let state = &mut *self.state;
            state.agg.ambiguous_replays += u64::from(state.in_flight.attempt_start(id));
        }
    }

    fn attempt_end(
        &mut self,
        attempt: u32,
        start: Instant,
        model_group: &'e Arc<str>,
        deployment_id: &'e Arc<str>,
        failure: Option<FailureKind>,
        status: Option<u16>,
        retry_after: Option<Duration>,
        wait: Duration,
        fallback_depth: u32,
    ) {
        let ended = EndedAttempt {
            id: self.id,
            attempt,
            start_us: self.state.us(start),
            end_us: self.at,
            model_group,
            deployment_id,
            failure,
            status,
            retry_after,
            wait,
            fallback_depth,
        };
        self.state.ended_attempt(&ended);
    }

    fn response_cost(
        &mut self,
        _model_group: &'e Arc<str>,
        _deployment_id: &'e Arc<str>,
        _input_tokens: u32,
        _output_tokens: u32,
        usd: f64,
    ) {
        self.state.agg.accepted_cost_usd += usd;
        self.state.agg.priced_responses += 1;
    }

    fn ambiguous_outcome(
        &mut self,
        _model_group: &'e Arc<str>,
        _deployment_id: &'e Arc<str>,
        _operation_id: u64,
        replay: Replay,
        executed: Option<bool>,
    ) {
        let state = &mut *self.state;
        state.agg.ambiguous_outcomes += 1;
        if let Some(id) = self.id {
            let duplicate =
                state
                    .in_flight
                    .ambiguous(id, replay.deduplicates(), executed == Some(true));
            state.agg.duplicate_executions += u64::from(duplicate);
        }
    }

    // Retries and fallbacks.

    fn retry(&mut self, _group: &'e Arc<str>, _failure: FailureKind, _retry: u32, _budget: u32) {
        self.state.agg.retries += 1;
        self.state.series.count(self.second, Count::Retry);
    }

    /// A retry refused by a budget is counted under its budget; a walk a deadline cut short
    /// is noted on its request.
    fn give_up(&mut self, _model_group: &'e Arc<str>, _failure: FailureKind, reason: GiveUpReason) {
        match reason {
            GiveUpReason::RetryBudgetExhausted => self.alternatives().retries_denied_by_budget += 1,
            GiveUpReason::RetryThrottled => self.alternatives().retries_denied_by_throttling += 1,
            GiveUpReason::DeadlineExhausted => {
                if let Some(id) = self.id {
                    self.state.in_flight.deadline_exhausted(id);
                }
            }
            _ => {}
        }
    }

    fn fallback(
        &mut self,
        source: &'e Arc<str>,
        target: &'e Arc<str>,
        _order: u32,
        _depth: u32,
        _level: FallbackLevel,
        _failure: FailureKind,
    ) {
        self.state.agg.fallbacks += 1;
        self.state.series.count(self.second, Count::Fallback);
        self.state.plots.fallback(source, target);
    }

    // Cooldowns and health.

    fn cooldown_set(
        &mut self,
        model_group: &'e Arc<str>,
        deployment_id: &'e Arc<str>,
        _reason: CooldownReason,
        _failure: FailureKind,
        _duration: Duration,
        _source: CooldownSource,
        until: Instant,
    ) {
        let (state, at) = (&mut *self.state, self.at);
        state.agg.cooldowns += 1;
        if let Some(h) = state.half_open.get_mut(deployment_id) {
            h.end(at, &mut state.series);
        }
        let until = state.us(until);
        state.per_deployment.cooldown_set(deployment_id, at, until);
        state
            .plots
            .cooldown_set(model_group, deployment_id, at, until);
        state
            .cooldowns
            .entry(deployment_id.clone())
            .or_default()
            .set(at, until, &mut state.series);
    }

    fn cooldown_end(&mut self, _model_group: &'e Arc<str>, deployment_id: &'e Arc<str>) {
        let (state, at) = (&mut *self.state, self.at);
        // A fleet's deployment is cooling while any replica holds it cooled.
        if state
            .fleet
            .as_ref()
            .is_some_and(|f| f.cooled_elsewhere(deployment_id, self.instant))
        {
            return;
        }
        state.per_deployment.cooldown_end(deployment_id, at);
        if let Some(d) = state.cooldowns.get_mut(deployment_id) {
            d.end(at, &mut state.series);
        }
        state.plots.cooldown_end(deployment_id, at);
    }

    fn all_cooled(&mut self, _model_group: &'e Arc<str>, _retry_after: Duration) {
        self.state.agg.all_cooled += 1;
    }

    fn half_open(&mut self, model_group: &'e Arc<str>, deployment_id: &'e Arc<str>) {
        let (state, at) = (&mut *self.state, self.at);
        state.plots.half_open(model_group, deployment_id, at);
        state.per_deployment.half_open(deployment_id);
        state
            .half_open
            .entry(deployment_id.clone())
            .or_insert_with(|| DeploymentCooldowns::in_lane(Lane::HalfOpen))
            .open_until_closed(at);
    }

    fn recovered(
        &mut self,
        _model_group: &'e Arc<str>,
        deployment_id: &'e Arc<str>,
        _via: RecoveredVia,
    ) {
        let (state, at) = (&mut *self.state, self.at);
        state.agg.recovered += 1;
        state.plots.recovered(deployment_id, at);
        state.per_deployment.recovered(deployment_id, at);
        if let Some(h) = state.half_open.get_mut(deployment_id) {
            h.end(at, &mut state.series);
        }
        if let Some(d) = state.cooldowns.get_mut(deployment_id) {
            d.end(at, &mut state.series);
        }
    }

    fn probe_failed(&mut self, _group: &'e Arc<str>, _id: &'e Arc<str>, _failure: FailureKind) {
        self.state.agg.probe_failed += 1;
    }

    // Streams.

    /// A chunk of `tokens` tokens: `gap_before` before its first, `inner_gap` between the rest.
    fn stream_chunk(&mut self, tokens: u32, gap_before: Option<Duration>, inner_gap: Duration) {
        if tokens == 0 {
            return;
        }
        let state = &mut *self.state;
        if let Some(gap) = gap_before {
            let us = micros(gap);
            record_us(&mut state.inter_token, us, 1);
            state.agg.inter_token_max_us = state.agg.inter_token_max_us.max(us);
        }
        if tokens > 1 {
            let us = micros(inner_gap);
            record_us(&mut state.inter_token, us, u64::from(tokens - 1));
            state.agg.inter_token_max_us = state.agg.inter_token_max_us.max(us);
        }
    }

    fn stream_break(
        &mut self,
        _model_group: &'e Arc<str>,
        _deployment_id: &'e Arc<str>,
        _failure: FailureKind,
        how: BreakKind,
        _tokens_so_far: u32,
        _after_content: bool,
    ) {
        self.state.agg.stream_breaks[break_index(how)] += 1;
    }

    fn stream_continued(
        &mut self,
        _from_group: &'e Arc<str>,
        _from_deployment: &'e Arc<str>,
        _to_group: &'e Arc<str>,
        _to_deployment: &'e Arc<str>,
        _prefill_tokens: u32,
    ) {
        self.state.series.count(self.second, Count::Continuation);
    }

    // Contracts.

    fn route_filtered(&mut self, _group: &'e Arc<str>, _id: &'e Arc<str>, reason: FilterReason) {
        if let Some(i) = FilterReason::ALL.iter().position(|r| *r == reason) {
            self.state.agg.routes_filtered[i] += 1;
        }
    }

    fn validation_rejected(
        &mut self,
        _model_group: &'e Arc<str>,
        _deployment_id: &'e Arc<str>,
        _attempt: u32,
        reason: ValidationReason,
    ) {
        if let Some(i) = ValidationReason::ALL.iter().position(|r| *r == reason) {
            self.state.agg.validation_rejections[i] += 1;
        }
    }

    // Alternatives.

    fn ejected(
        &mut self,
        _model_group: &'e Arc<str>,
        deployment_id: &'e Arc<str>,
        _duration: Duration,
        _until: Instant,
        _ejections: u32,
        _consecutive_5xx: u32,
    ) {
        let a = self.alternatives();
        a.ejections += 1;
        *a.ejections_by_deployment
            .entry(deployment_id.to_string())
            .or_default() += 1;
    }

    fn unejected(&mut self, _model_group: &'e Arc<str>, _deployment_id: &'e Arc<str>) {
        self.alternatives().unejections += 1;
    }

    fn hedged(
        &mut self,
        _model_group: &'e Arc<str>,
        _primary: &'e Arc<str>,
        _hedge: &'e Arc<str>,
        _delay: Duration,
        extra_input_tokens: u32,
        extra_cost_usd: f64,
    ) {
        let a = self.alternatives();
        a.hedged_requests += 1;
        a.hedge_extra_input_tokens += u64::from(extra_input_tokens);
        a.hedge_extra_cost_usd = round6(a.hedge_extra_cost_usd + extra_cost_usd);
    }

    fn hedge_end(&mut self, _model_group: &'e Arc<str>, _winner: &'e Arc<str>, hedge_won: bool) {
        self.alternatives().hedge_wins += u64::from(hedge_won);
    }
}
