//! Request hedging (`hedge_after`, see [`crate::alternatives::hedge`]): the first attempt of
//! a group visit races a second one, started on another deployment once the first has run
//! for the hedge delay. Both are ordinary attempts (events, records, failure handling); the
//! first success wins and the other call is dropped (cancelled), its load released.
//!
//! Deterministic: the race is a `biased` select on the router's clock, the first attempt
//! polled first, so a tie goes to it.

use std::pin::pin;

use super::core::Router;
use super::group::Group;
use super::run::{Failed, RequestRun};
use crate::alternatives::AlternativeEvent;
use crate::clock::Clock;
use crate::event::EventKind;
use crate::provider::Provider;
use crate::recovery::Admission;
use crate::request::{Completion, Request};
use crate::small::Tried;

/// Which call of a race ended.
enum Ended {
    First(Result<Completion, Failed>),
    Hedge(Result<Completion, Failed>),
}

impl<P: Provider, C: Clock> Router<P, C> {
    /// The attempt on `first`, hedged when `hedge_after` is set, the request is not streamed,
    /// this is the visit's first attempt (`first_of_visit`), the delay is known (the group's
    /// estimator is warm), the retry budget admits a hedge when it is due (gRPC's throttling
    /// holds hedges back with retries) and another deployment of the group is available.
    /// Otherwise just [`Router::attempt`].
    #[allow(
        clippy::too_many_arguments,
        reason = "the retry loop's state, passed through to the two attempts"
    )]
    pub(super) fn attempt_maybe_hedged<'a>(
        &'a self,
        g: &'a Group,
        first: usize,
        request: &'a Request,
        depth: u32,
        run: &'a mut RequestRun,
        tried: &'a mut Tried,
        first_of_visit: bool,
    ) -> impl Future<Output = Result<Completion, Failed>> + 'a {
        async move {
            let delay = (first_of_visit
                && !request.stream
                && self.recovery.admit(first) != Admission::Trial)
                .then(|| self.hedge_delay(g))
                .flatten();
            let Some(delay) = delay else {
                return self.attempt(g, first, request, depth, run).await;
            };
            let started = self.clock.now();
            let mut hedge_run = run.scratch();
            // The race, in a block: both attempt futures (and their borrows of the runs)
            // end with it.
            let (result, hedge_won, cancelled, second) = {
                let mut primary = pin!(self.attempt(g, first, request, depth, run));
                tokio::select! {
                    biased;
                    done = &mut primary => return done,
                    () = self.clock.sleep_until(started + delay) => {}
                }
                // gRPC A6: "subsequent hedged RPCs will only be sent if `token_count` is
                // greater than the threshold"; a held-back hedge leaves the first call alone.
                let throttled = !self.retry_budget.admit_hedge(self.clock.now());
                let Some(second) = (!throttled)
                    .then(|| self.hedge_pick(g, first, request))
                    .flatten()
                else {
                    return primary.await;
                };
                tried.insert(second);
                self.emit_hedged(g, first, second, request, delay);
                let mut hedge = pin!(self.attempt(g, second, request, depth, &mut hedge_run));
                let ended = tokio::select! {
                    biased;
                    done = &mut primary => Ended::First(done),
                    done = &mut hedge => Ended::Hedge(done),
                };
                // The first success wins; a failure waits for the other call.
                match ended {
                    Ended::First(Ok(done)) => (Ok(done), false, Some(second), second),
                    Ended::Hedge(Ok(done)) => (Ok(done), true, Some(first), second),
                    Ended::First(Err(_)) => {
                        let done = hedge.await;
                        let won = done.is_ok();
                        (done, won, None, second)
                    }
                    Ended::Hedge(Err(_)) => (primary.await, false, None, second),
                }
            };
            // A hedge the first attempt beat before its first poll never started: nothing of
            // it to cancel.
            let cancelled = cancelled
                .filter(|&loser| loser != second || hedge_run.last_deployment_index.is_some());
            let now = self.clock.now();
            if let Some(loser) = cancelled {
                // Its call was dropped and never ends: its load ends here.
                self.load.on_end(loser, now, None, 0);
            }
            let winner = match (&result, hedge_won) {
                (_, true) => second,
                (Ok(_), false) => first,
                // Both failed: the last to end is the request's failure.
                (Err(failed), false) => failed.deployment.unwrap_or(first),
            };
            Self::merge_hedge(run, hedge_run, cancelled.is_some(), winner);
            let d = &self.config.deployments[winner];
            self.emit_at(
                now,
                Some(request.id),
                EventKind::Alternative(AlternativeEvent::HedgeEnd {
                    model_group: g.name.clone(),
                    winner: d.id.clone(),
                    hedge_won,
                }),
            );
            result
        }
    }

    /// The hedge's deployment: an available member of `g` other than `first`, with no
    /// half-open trial to claim, chosen by the router's strategy.
    fn hedge_pick(&self, g: &Group, first: usize, request: &Request) -> Option<usize> {
        let now = self.clock.now();
        let mut candidates = crate::small::Indices::new();
        self.candidates(&g.members, request, now, &mut candidates)
            .ok()?;
        let mut others = crate::small::Indices::new();
        others.extend(candidates.as_slice().iter().copied().filter(|&d| {
            d != first
                && !self.is_unavailable(d, now)
                && self.recovery.admit(d) == Admission::Normal
        }));
        let slice = others.as_slice();
        (!slice.is_empty()).then(|| slice[self.pick_position(slice, request, now)])
    }

    fn emit_hedged(
        &self,
        g: &Group,
        first: usize,
        second: usize,
        request: &Request,
        delay: std::time::Duration,
    ) {
        let hedge = &self.config.deployments[second];
        let extra_cost_usd = hedge
            .input_cost_per_token
            .map_or(0.0, |price| price * f64::from(request.input_tokens));
        self.emit(
            Some(request.id),
            EventKind::Alternative(AlternativeEvent::Hedged {
                model_group: g.name.clone(),
                primary: self.config.deployments[first].id.clone(),
                hedge: hedge.id.clone(),
                delay,
                extra_input_tokens: request.input_tokens,
                extra_cost_usd,
            }),
        );
    }

    /// The hedge's records join the request's, in the order they ended; a cancelled call is
    /// counted (it had a number) without a record.
    fn merge_hedge(run: &mut RequestRun, hedge_run: RequestRun, cancelled: bool, winner: usize) {
        let mut records = hedge_run.attempts;
        run.attempts.append(&mut records);
        run.attempts.sort_by_key(|a| (a.end, a.attempt));
        if cancelled {
            run.uncounted_attempts += 1;
            // A wait before a cancelled first attempt was its own: no later attempt's.
            run.pending_wait = std::time::Duration::ZERO;
        }
        if hedge_run.last_deployment_index == Some(winner) {
            run.last_deployment_index = Some(winner);
            run.last_group = hedge_run.last_group;
        }
        run.retries += hedge_run.retries;
    }
}
