//! The fallback walk: one request from its arrival to its answer. Serve the group asked for;
//! on failure walk the fallback lists depth first ([`Frame`] per list), each hop with its
//! target's overrides applied to the request; a stream broken past the point of no return
//! goes to a continuation instead.

use std::sync::Arc;

use super::core::Router;
use super::run::{Failed, RequestRun};
use crate::clock::Clock;
use crate::config::FallbackTarget;
use crate::event::{EventKind, FallbackLevel, GiveUpReason};
use crate::failure::{FailureKind, ProviderFailure};
use crate::profile::Walk;
use crate::provider::Provider;
use crate::request::{Completion, CompletionResult, Request, RouterFailure};
use crate::small::Tried;

/// One fallback list being walked.
struct Frame {
    source: Arc<str>,
    targets: Vec<FallbackTarget>,
    level: FallbackLevel,
    failure: FailureKind,
    next: usize,
    depth: u32,
}

impl<P: Provider, C: Clock> Router<P, C> {
    /// Serves one request: the full retry, order, failover and fallback walk.
    pub fn completion(&self, request: Request) -> impl Future<Output = CompletionResult> {
        async move { self.completion_of(&request).await }
    }

    /// [`Router::completion`] of a request the caller keeps: the future holds a reference to
    /// it, so a caller with many requests in flight (the simulator) holds one copy of each.
    pub fn completion_of<'a>(
        &'a self,
        request: &'a Request,
    ) -> impl Future<Output = CompletionResult> + 'a {
        async move {
            let mut run = RequestRun::new(self.clock.now());
            self.retry_budget.deposit(run.start);
            if let Some(client) = request.client {
                self.emit(
                    Some(request.id),
                    EventKind::ClientTry {
                        try_number: client.try_number,
                        retries: client.retries,
                        provider_calls_before: client.provider_calls_before,
                    },
                );
            }
            // The walk is written out here rather than awaited as its own future, which would
            // keep a second copy of `self`, `request` and `run` for the whole request.
            let outcome = 'walk: {
                if self.walk == Walk::Candidates {
                    // Boxed: only a request of a profile that walks candidates pays for it.
                    break 'walk Box::pin(self.walk_candidates(request, &mut run)).await;
                }
                let Some(requested) = self.resolve_group(&request.model) else {
                    if let Some(failed) = self.unroutable_alias(request) {
                        if request.disable_fallbacks {
                            break 'walk Err(failed.into_router_failure());
                        }
                        let alias = request.model.clone();
                        break 'walk Box::pin(
                            self.fall_back_from(alias, request, failed, &mut run),
                        )
                        .await;
                    }
                    break 'walk Err(RouterFailure {
                        kind: FailureKind::BadRequest,
                        status: Some(400),
                        retry_after: None,
                    });
                };
                run.tried_groups.push(requested);
                let g = &self.groups[requested];
                let original = match self.serve_group(g, request, 0, &mut run).await {
                    Ok(done) => break 'walk Ok(done),
                    Err(failed) => failed,
                };
                // Both boxed: only a request whose stream broke, or that falls back, pays for
                // that state while it is in flight.
                if original.committed {
                    break 'walk Box::pin(self.continue_stream(
                        requested,
                        request,
                        original,
                        0,
                        Tried::new(),
                        &mut run,
                    ))
                    .await;
                }
                if request.disable_fallbacks || original.no_replay {
                    break 'walk Err(original.into_router_failure());
                }
                Box::pin(self.fall_back(requested, request, original, &mut run)).await
            };
            self.end_request(request, run, outcome)
        }
    }

    /// The request's `request_end` event and its result.
    fn end_request(
        &self,
        request: &Request,
        mut run: RequestRun,
        outcome: Result<Completion, RouterFailure>,
    ) -> CompletionResult {
        self.flush_deferred(&mut run);
        let (start, end) = (run.start, self.clock.now());
        let final_model_group = run
            .last_group
            .clone()
            .unwrap_or_else(|| request.model.clone());
        let (failure, status) = match &outcome {
            Ok(_) => (None, Some(200)),
            Err(f) => (Some(f.kind), f.status),
        };
        let stream = request
            .stream
            .then(|| self.stream_stats(&run, outcome.is_ok()));
        let final_deployment_id = self.last_deployment_id(&run);
        self.emit_at(
            end,
            Some(request.id),
            EventKind::RequestEnd {
                model: request.model.clone(),
                final_model_group: final_model_group.clone(),
                final_deployment_id: final_deployment_id.clone(),
                failure,
                status,
                attempts: run.attempts.len() as u32,
                retries: run.retries,
                fallbacks: run.fallbacks,
                attempted_fallbacks: run.attempted_fallbacks,
                start,
                stream,
            },
        );
        CompletionResult {
            request_id: request.id,
            model: request.model.clone(),
            outcome,
            attempts: run.attempts,
            final_model_group,
            final_deployment_id,
            fallbacks: run.fallbacks,
            retries: run.retries,
            attempted_fallbacks: run.attempted_fallbacks,
            attempted_retries: run.scope_retries,
            start,
            end,
            stream,
        }
    }

    /// A request for a `model_group_alias` entry that routes nowhere (a list, a number, …):
    /// LiteLLM 1.110.2 fails it with a 400 before any attempt and without a retry
    /// (`router_rust/core.py` `_failure_error`, `unknown_model`), then walks the fallbacks
    /// listed for the alias. `None` when the name is no such alias.
    fn unroutable_alias(&self, request: &Request) -> Option<Failed> {
        if !self
            .config
            .settings
            .unroutable_aliases
            .contains_key(&*request.model)
        {
            return None;
        }
        self.emit(
            Some(request.id),
            EventKind::GiveUp {
                model_group: request.model.clone(),
                failure: FailureKind::BadRequest,
                reason: GiveUpReason::UnroutableAlias,
            },
        );
        Some(Failed {
            failure: ProviderFailure::new(FailureKind::BadRequest),
            deployment: None,
            retry_after: None,
            committed: false,
            retries_closed: false,
            no_replay: false,
            ends_walk: false,
        })
    }

    /// The fallback walk after the requested group failed with `original`: fallback lists
    /// depth-first, each target group served in turn.
    fn fall_back(
        &self,
        requested: usize,
        request: &Request,
        original: Failed,
        run: &mut RequestRun,
    ) -> impl Future<Output = Result<Completion, RouterFailure>> {
        self.fall_back_from(self.groups[requested].name.clone(), request, original, run)
    }

    /// [`Self::fall_back`] from a name: a group's, or an unroutable alias's.
    fn fall_back_from(
        &self,
        requested_name: Arc<str>,
        request: &Request,
        original: Failed,
        run: &mut RequestRun,
    ) -> impl Future<Output = Result<Completion, RouterFailure>> {
        async move {
            let max_depth = self.config.settings.max_fallbacks;
            let mut stack: Vec<Frame> = Vec::new();
            if let Some(frame) =
                self.frame_for(request, &original, &requested_name, &requested_name, 0)
                && max_depth > 0
            {
                stack.push(frame);
            }
            while let Some(frame) = stack.last_mut() {
                let Some(target) = frame.targets.get(frame.next).cloned() else {
                    stack.pop();
                    continue;
                };
                let order = frame.next as u32;
                frame.next += 1;
                let Some(group) = self.resolve_group(&target.model) else {
                    continue;
                };
                if run.tried_groups.contains(&group) {
                    continue;
                }
                run.tried_groups.push(group);
                let depth = frame.depth + 1;
                let (source, level, failure) = (frame.source.clone(), frame.level, frame.failure);
                run.fallbacks += 1;
                run.hop(depth);
                self.emit(
                    Some(request.id),
                    EventKind::Fallback {
                        source,
                        target: self.groups[group].name.clone(),
                        order,
                        depth,
                        level,
                        failure,
                    },
                );
                let hop_request = apply_overrides(request, &target);
                match self
                    .serve_group(&self.groups[group], &hop_request, depth, run)
                    .await
                {
                    Ok(done) => return Ok(done),
                    Err(failed) if failed.no_replay => return Err(failed.into_router_failure()),
                    Err(failed) if failed.committed => {
                        // The walk's tried targets, as the continuation may resume its list.
                        let walk_tried = stack
                            .last()
                            .map(|f| self.frame_tried(f))
                            .unwrap_or_default();
                        return Box::pin(self.continue_stream(
                            group,
                            &hop_request,
                            failed,
                            depth,
                            walk_tried,
                            run,
                        ))
                        .await;
                    }
                    Err(failed) => {
                        let serving = self.groups[group].name.clone();
                        if depth < max_depth
                            && let Some(next) =
                                self.frame_for(request, &failed, &serving, &requested_name, depth)
                        {
                            stack.push(next);
                        }
                    }
                }
            }
            Err(original.into_router_failure())
        }
    }

    /// The groups a fallback list's walk has tried so far (its targets before `next`).
    fn frame_tried(&self, frame: &Frame) -> Tried {
        let mut tried = Tried::new();
        for target in &frame.targets[..frame.next] {
            if let Some(g) = self.resolve_group(&target.model) {
                tried.insert(g);
            }
        }
        tried
    }

    fn frame_for(
        &self,
        request: &Request,
        failed: &Failed,
        serving: &Arc<str>,
        requested: &str,
        depth: u32,
    ) -> Option<Frame> {
        let choice = self.fallback_policy.choose(
            &self.config.settings,
            request,
            failed.failure.kind,
            serving,
            requested,
        )?;
        Some(Frame {
            source: serving.clone(),
            targets: choice.targets.to_vec(),
            level: choice.level,
            failure: failed.failure.kind,
            next: 0,
            depth,
        })
    }
}

/// The request as a fallback hop sees it: the target dict's other keys override its params
/// (`num_retries` and `max_tokens` also set the fields the router reads).
pub(super) fn apply_overrides(request: &Request, target: &FallbackTarget) -> Request {
    let mut hop = request.clone();
    for (key, value) in &target.overrides {
        match key.as_str() {
            "num_retries" => hop.num_retries = target.num_retries,
            "max_tokens" => hop.max_tokens = target.max_tokens,
            _ => {}
        }
        hop.params.insert(key.clone(), value.clone());
    }
    hop
}
