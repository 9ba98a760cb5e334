//! One attempt: a provider call under its deadline, its events, its record, and what the
//! failure handler and the recovery policy learn from it.

use std::time::Duration;

use tokio::time::Instant;

use super::core::Router;
use super::group::Group;
use super::health::FailureReport;
use super::run::{Failed, RequestRun};
use crate::clock::Clock;
use crate::config::Deployment;
use crate::cooldown::FailureOrigin;
use crate::event::{EventKind, RecoveredVia};
use crate::failure::{FailureKind, ProviderFailure};
use crate::provider::{Provider, ProviderCall, ProviderResponse};
use crate::request::{AttemptRecord, Completion, Request};

/// Whether `failure` is a 200 that validation rejected (the only failure with status 200).
fn is_validation_rejection(failure: &ProviderFailure) -> bool {
    failure.kind == FailureKind::MalformedResponse && failure.status == Some(200)
}

/// What one attempt was, for its event and record.
struct Attempted<'a> {
    g: &'a Group,
    deployment: &'a Deployment,
    request: &'a Request,
    attempt: u32,
    start: Instant,
    end: Instant,
    wait: Duration,
    depth: u32,
}

/// What an attempt's call came to, before the bookkeeping.
type Outcome = (
    Result<Completion, ProviderFailure>,
    Option<super::stream::StreamBroke>,
);

impl<P: Provider, C: Clock> Router<P, C> {
    /// Makes one provider call, cut off at `start` plus the deployment's `timeout` (else the
    /// router's), if one is set, or at the walk's deadline (`walk_deadline`), if earlier.
    pub(super) fn call_with_deadline<'a>(
        &'a self,
        call: ProviderCall<'a>,
        start: Instant,
        walk_deadline: Option<Instant>,
    ) -> impl Future<Output = Result<ProviderResponse<P::Stream>, ProviderFailure>> + 'a {
        async move {
            let timeout = call
                .deployment
                .timeout
                .or(self.config.settings.timeout)
                .map(|limit| start + limit);
            let deadline = match (timeout, walk_deadline) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            match deadline {
                None => self.provider.call(call).await,
                Some(deadline) => {
                    tokio::select! {
                        biased;
                        r = self.provider.call(call) => r,
                        () = self.clock.sleep_until(deadline) => {
                            Err(ProviderFailure::new(FailureKind::Timeout))
                        }
                    }
                }
            }
        }
    }

    /// One provider call, with its events, its record and the failure handler.
    pub(super) fn attempt(
        &self,
        g: &Group,
        deployment_index: usize,
        request: &Request,
        depth: u32,
        run: &mut RequestRun,
    ) -> impl Future<Output = Result<Completion, Failed>> {
        async move {
            // Kept across the call: only what cannot be read again after it (the attempt's
            // number, its wait and its deployment are; nothing else touches them meanwhile).
            let (start, trial) = self.begin_attempt(g, deployment_index, request, depth, run);
            let deployment: &Deployment = &self.config.deployments[deployment_index];
            let call = ProviderCall {
                deployment,
                deployment_index,
                request,
                attempt: run.next_attempt(),
            };
            // The call is made here, not in a helper future: each nested future would keep
            // its own copy of the call's arguments for the whole attempt. Its result lives in
            // this block only: a stream's reader below must not keep it beside the stream.
            let stream = {
                let timed = deployment
                    .timeout
                    .or(self.config.settings.timeout)
                    .is_some()
                    || run.walk_deadline.is_some();
                let called = if timed {
                    // Boxed: only a call with a deadline pays for the deadline's timer.
                    Box::pin(self.call_with_deadline(call, start, run.walk_deadline)).await
                } else {
                    self.provider.call(call).await
                };
                match called {
                    Ok(ProviderResponse::Stream(stream)) => stream,
                    Ok(ProviderResponse::Complete(done)) => {
                        let judged = self.classifier.judge_success(&done);
                        let outcome = (judged.map_or(Ok(done), Err), None);
                        return self.end_attempt(
                            g,
                            deployment_index,
                            request,
                            depth,
                            start,
                            trial,
                            outcome,
                            run,
                        );
                    }
                    Err(failure) => {
                        return self.end_attempt(
                            g,
                            deployment_index,
                            request,
                            depth,
                            start,
                            trial,
                            (Err(failure), None),
                            run,
                        );
                    }
                }
            };
            let deployment = &self.config.deployments[deployment_index];
            // Boxed: only a streamed attempt pays for the stream reader's state.
            let outcome =
                match Box::pin(self.drive_stream(stream, deployment, start, request.id, run)).await
                {
                    Ok(done) => (Ok(done), None),
                    Err(broke) => (Err(broke.failure.clone()), Some(broke)),
                };
            self.end_attempt(
                g,
                deployment_index,
                request,
                depth,
                start,
                trial,
                outcome,
                run,
            )
        }
    }

    /// The attempt's call came back: its facts, then [`Router::settle`].
    #[allow(
        clippy::too_many_arguments,
        reason = "the attempt's state, passed by value so that no future keeps it twice"
    )]
    fn end_attempt(
        &self,
        g: &Group,
        deployment_index: usize,
        request: &Request,
        depth: u32,
        start: Instant,
        trial: bool,
        mut outcome: Outcome,
        run: &mut RequestRun,
    ) -> Result<Completion, Failed> {
        if let (Ok(done), Some(_)) = (&outcome.0, &request.contract) {
            let deployment = &self.config.deployments[deployment_index];
            run.spent_usd +=
                crate::contract::capability::answer_cost(request, deployment, done.output_tokens);
            // A streamed answer already reached the caller as it came: nothing left to reject.
            let judged = (!request.stream)
                .then(|| self.admission.validate(request, done))
                .flatten();
            if let Some(reason) = judged {
                self.emit(
                    Some(request.id),
                    EventKind::ValidationRejected {
                        model_group: g.name.clone(),
                        deployment_id: deployment.id.clone(),
                        attempt: run.attempts.len() as u32 + 1,
                        reason,
                    },
                );
                // A 200 whose content was rejected: the status says the transport succeeded.
                outcome.0 = Err(
                    ProviderFailure::new(FailureKind::MalformedResponse).with_status(Some(200))
                );
            }
        }
        self.admission.record(deployment_index, outcome.0.is_ok());
        let facts = Attempted {
            g,
            deployment: &self.config.deployments[deployment_index],
            request,
            attempt: run.next_attempt(),
            start,
            end: self.clock.now(),
            wait: std::mem::take(&mut run.pending_wait),
            depth,
        };
        self.settle(&facts, deployment_index, trial, outcome, run)
    }

    /// An attempt begins: its event, the load it adds, a half-open trial claimed. Returns
    /// when it started and whether it is the trial.
    fn begin_attempt(
        &self,
        g: &Group,
        deployment_index: usize,
        request: &Request,
        depth: u32,
        run: &mut RequestRun,
    ) -> (Instant, bool) {
        let start = self.clock.now();
        run.last_group = Some(g.name.clone());
        run.last_deployment_index = Some(deployment_index);
        self.emit_at(
            start,
            Some(request.id),
            EventKind::AttemptStart {
                attempt: run.next_attempt(),
                model_group: g.name.clone(),
                deployment_id: self.config.deployments[deployment_index].id.clone(),
                fallback_depth: depth,
                max_tokens: request.max_tokens,
            },
        );
        self.load
            .on_start(deployment_index, start, request.input_tokens);
        (start, self.recovery.claim_trial(deployment_index))
    }

    /// What an attempt's outcome teaches (latency, a break, the record) and what it does
    /// (a success restores a trial; a failure goes to the failure handler).
    fn settle(
        &self,
        facts: &Attempted<'_>,
        deployment_index: usize,
        trial: bool,
        (result, broke): Outcome,
        run: &mut RequestRun,
    ) -> Result<Completion, Failed> {
        let Attempted {
            g,
            deployment,
            request,
            start,
            end,
            ..
        } = *facts;
        self.learn_latency(deployment_index, request, &result, (start, end), run);
        let committed = broke
            .as_ref()
            .is_some_and(|broke| self.report_break(g, deployment, request, broke, run));
        let retries_closed =
            !committed && broke.as_ref().is_some_and(|broke| self.ends_retries(broke));
        let retry_after = result
            .as_ref()
            .err()
            .and_then(|f| self.resolve_retry_after(f));
        self.record(facts, &result, retry_after, run);
        self.learn_alternatives(
            g,
            deployment_index,
            result.as_ref().err(),
            (end, end - start),
            request.id,
        );
        match result {
            Ok(done) => {
                self.price(g, deployment, request, &done);
                self.cooldown.on_success(deployment_index, end);
                if trial {
                    self.recovery.on_trial_result(deployment_index, true);
                    self.restore(deployment_index, RecoveredVia::Trial, Some(request.id));
                }
                Ok(done)
            }
            Err(failure) => {
                let origin = if trial {
                    // A failed trial frees the slot: the next request is the trial, unless
                    // the trigger cools the deployment again.
                    self.recovery.on_trial_result(deployment_index, false);
                    FailureOrigin::Trial
                } else {
                    FailureOrigin::Traffic
                };
                let report = FailureReport {
                    deployment: deployment_index,
                    group_size: g.members.len(),
                    failure: &failure,
                    origin,
                    retry_after,
                    now: end,
                    request_id: Some(request.id),
                };
                // A 200 rejected by validation (`profile: contract`) is the contract's failure,
                // not the transport's: it does not count toward the deployment's cooldown,
                // which every workload shares (the seed: "Tune thresholds by route and failure
                // class").
                if !is_validation_rejection(&failure) {
                    self.report_or_defer(report, broke.is_some(), run);
                }
                let no_replay = self.ambiguous(g, deployment, request, &failure);
                Err(Failed {
                    failure,
                    deployment: Some(deployment_index),
                    retry_after: None,
                    committed,
                    retries_closed,
                    no_replay,
                    ends_walk: false,
                })
            }
        }
    }

    /// A success on a priced deployment: its cost, reported.
    fn price(&self, g: &Group, deployment: &Deployment, request: &Request, done: &Completion) {
        let (input, output) = (
            deployment.input_cost_per_token,
            deployment.output_cost_per_token,
        );
        if input.is_none() && output.is_none() {
            return;
        }
        let usd = input.unwrap_or(0.0) * f64::from(request.input_tokens)
            + output.unwrap_or(0.0) * f64::from(done.output_tokens);
        self.emit(
            Some(request.id),
            EventKind::ResponseCost {
                model_group: g.name.clone(),
                deployment_id: deployment.id.clone(),
                input_tokens: request.input_tokens,
                output_tokens: done.output_tokens,
                usd,
            },
        );
    }

    /// An ambiguous attempt (the connection was lost after the request was sent): reported,
    /// with what `router_settings.replay` allows; true when it forbids any replay. The one
    /// place the replay policy is read.
    fn ambiguous(
        &self,
        g: &Group,
        deployment: &Deployment,
        request: &Request,
        failure: &ProviderFailure,
    ) -> bool {
        let Some(ambiguity) = failure.ambiguous else {
            return false;
        };
        let replay = self.config.settings.replay;
        self.emit(
            Some(request.id),
            EventKind::AmbiguousOutcome {
                model_group: g.name.clone(),
                deployment_id: deployment.id.clone(),
                operation_id: request.id,
                replay,
                executed: ambiguity.executed,
            },
        );
        !replay.replays()
    }

    /// Latency-based routing learns from successes (a stream by its time to first token) and
    /// from timeouts (as long as they took); other failures say nothing about speed, but they
    /// do make the deployment "tried" (see `DeploymentLoad::was_tried`).
    fn learn_latency(
        &self,
        deployment_index: usize,
        request: &Request,
        result: &Result<Completion, ProviderFailure>,
        (start, end): (Instant, Instant),
        run: &RequestRun,
    ) {
        let sample = match result {
            Ok(_) => Some(match run.stream.first_token_at {
                Some(first) if request.stream && first >= start => first - start,
                _ => end - start,
            }),
            // A rejected 200 took as long as an accepted one would have.
            Err(f) if f.kind == FailureKind::Timeout || is_validation_rejection(f) => {
                Some(end - start)
            }
            Err(_) => None,
        };
        let output_tokens = result.as_ref().map_or(0, |done| done.output_tokens);
        self.load
            .on_end(deployment_index, end, sample, output_tokens);
    }

    /// The attempt's `attempt_end` event and its record in the request's result.
    fn record(
        &self,
        facts: &Attempted<'_>,
        result: &Result<Completion, ProviderFailure>,
        retry_after: Option<Duration>,
        run: &mut RequestRun,
    ) {
        let (failure_kind, status) = match result {
            Ok(_) => (None, Some(200)),
            Err(f) => (Some(f.kind), f.status),
        };
        self.emit_at(
            facts.end,
            Some(facts.request.id),
            EventKind::AttemptEnd {
                attempt: facts.attempt,
                start: facts.start,
                model_group: facts.g.name.clone(),
                deployment_id: facts.deployment.id.clone(),
                failure: failure_kind,
                status,
                retry_after,
                wait: facts.wait,
                fallback_depth: facts.depth,
            },
        );
        run.attempts.push(AttemptRecord {
            attempt: facts.attempt,
            start: facts.start,
            end: facts.end,
            model_group: facts.g.name.clone(),
            deployment_id: facts.deployment.id.clone(),
            failure: result.as_ref().err().cloned(),
            wait: facts.wait,
            fallback_depth: facts.depth,
            max_tokens: facts.request.max_tokens,
        });
    }
}
