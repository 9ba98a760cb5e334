//! Streamed attempts: reading a provider's stream on the caller's behalf (first-token and
//! stall deadlines), what the caller has received so far, a mid-stream continuation on a
//! fallback deployment, and the caller's view of the stream for the report.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::core::Router;
use super::group::Group;
use super::run::{Failed, RequestRun, StreamProgress};
use super::walk::apply_overrides;
use crate::clock::Clock;
use crate::config::{Deployment, FallbackTarget, RouterSettings};
use crate::event::EventKind;
use crate::failure::{FailureKind, ProviderFailure};
use crate::fallback;
use crate::provider::Provider;
use crate::request::{Completion, Request, ResponseFormat, RouterFailure};
use crate::small::Tried;
use crate::stream::{
    BreakKind, Chunk, FinishReason, ProviderStream, StreamItem, StreamOutcome, StreamRecovery,
    StreamStats,
};

/// How a streamed attempt broke.
pub(super) struct StreamBroke {
    pub(super) failure: ProviderFailure,
    how: BreakKind,
    /// A chunk (even role-only) of this attempt's stream came before the break.
    after_frame: bool,
}

/// Where a continuation stands: the stream that broke, the group that served it, its
/// fallback level, and the groups the walk that produced it tried.
struct Leg {
    group: usize,
    broken: Failed,
    depth: u32,
    /// The groups the fallback walk that produced the broken stream tried (LiteLLM's
    /// `attempted_targets`): a leg that resumes that walk's chain skips them; a leg into a
    /// group's own chain starts a walk of its own.
    walk_tried: Tried,
    /// No leg has been continued yet.
    first: bool,
}

/// Whether `targets` is `serving`'s own entry in one of the router's fallback lists (rather
/// than the requested group's, the `"*"` entry or the request's own list).
fn is_own_chain(settings: &RouterSettings, targets: &[FallbackTarget], serving: &str) -> bool {
    [
        &settings.fallbacks,
        &settings.context_window_fallbacks,
        &settings.content_policy_fallbacks,
    ]
    .iter()
    .any(|map| {
        map.get(serving)
            .is_some_and(|own| std::ptr::eq(own, targets))
    })
}

impl<P: Provider, C: Clock> Router<P, C> {
    /// Reads a provider's stream to its end on the caller's behalf, with the first-token and
    /// stall deadlines; a break comes back as the failure it broke with.
    pub(super) fn drive_stream(
        &self,
        mut stream: P::Stream,
        deployment: &Deployment,
        attempt_start: Instant,
        request_id: u64,
        run: &mut RequestRun,
    ) -> impl Future<Output = Result<Completion, StreamBroke>> {
        async move {
            let mut tokens = 0u32;
            let mut last_item_at: Option<Instant> = None;
            loop {
                // Looked up each time rather than kept: every stream in flight holds this state.
                let settings = &self.config.settings;
                let deadline = match last_item_at {
                    None => deployment
                        .stream_timeout
                        .or(settings.stream_timeout)
                        .map(|t| (attempt_start + t, BreakKind::FirstTokenTimeout)),
                    Some(at) => {
                        let gap = self.stream_rules.gap_limit(deployment, settings);
                        match (settings.stream_stall_timeout, gap) {
                            (Some(a), Some(b)) => Some(a.min(b)),
                            (a, b) => a.or(b),
                        }
                        .map(|t| (at + t, BreakKind::Stall))
                    }
                };
                let after_frame = last_item_at.is_some();
                let item = match deadline {
                    None => stream.next_item().await,
                    // Boxed: only a stream with a deadline pays for its timer beside the read.
                    Some((deadline, how)) => {
                        match Box::pin(self.next_before(&mut stream, deadline)).await {
                            Some(item) => item,
                            None => {
                                return Err(StreamBroke {
                                    failure: ProviderFailure::new(FailureKind::Timeout),
                                    how,
                                    after_frame,
                                });
                            }
                        }
                    }
                };
                let now = self.clock.now();
                last_item_at = Some(now);
                let (failure, how) = match item {
                    Some(Ok(StreamItem::Chunk(chunk))) => {
                        tokens += self.deliver(chunk, (now, attempt_start), request_id, run);
                        continue;
                    }
                    Some(Ok(StreamItem::Done(reason))) => {
                        match self.end_of_stream(Some(reason), tokens, after_frame, run) {
                            Ok(done) => return Ok(done),
                            Err(broke) => broke,
                        }
                    }
                    Some(Ok(StreamItem::ErrorFrame(failure))) => {
                        run.stream.first_byte = true;
                        (
                            self.stream_rules.read_error_frame(failure),
                            BreakKind::ErrorFrame,
                        )
                    }
                    Some(Err(failure)) => (failure, BreakKind::Connection),
                    None => match self.end_of_stream(None, tokens, after_frame, run) {
                        Ok(done) => return Ok(done),
                        Err(broke) => broke,
                    },
                };
                return Err(StreamBroke {
                    failure,
                    how,
                    after_frame,
                });
            }
        }
    }

    /// A stream's end: its terminal marker's reason (`None`: the body closed without one).
    /// An end without a finish reason is what the stream rules say; a finish is judged by the
    /// classifier (content filter, empty choices).
    fn end_of_stream(
        &self,
        reason: Option<FinishReason>,
        tokens: u32,
        after_frame: bool,
        run: &RequestRun,
    ) -> Result<Completion, (ProviderFailure, BreakKind)> {
        let finish_reason = match reason {
            Some(FinishReason::Missing) | None => {
                if let Some(failure) = self
                    .stream_rules
                    .unfinished_end(reason.is_some(), after_frame)
                {
                    return Err((failure, BreakKind::Truncated));
                }
                FinishReason::Stop
            }
            Some(reason) => reason,
        };
        let done = Completion {
            output_tokens: tokens,
            finish_reason,
            empty_choices: !run.stream.any_content(),
            body: None,
        };
        let Some(failure) = self.classifier.judge_success(&done) else {
            return Ok(done);
        };
        let how = if done.empty_choices {
            BreakKind::EmptyResponse
        } else {
            BreakKind::ContentFilter
        };
        Err((failure, how))
    }

    /// The stream's next item, or `None` when `deadline` comes first.
    fn next_before<'a>(
        &'a self,
        stream: &'a mut P::Stream,
        deadline: Instant,
    ) -> impl Future<Output = Option<Option<Result<StreamItem, ProviderFailure>>>> + 'a {
        async move {
            tokio::select! {
                biased;
                item = stream.next_item() => Some(item),
                () = self.clock.sleep_until(deadline) => None,
            }
        }
    }

    /// One chunk reaches the caller: its tokens are counted and reported. Returns the content
    /// tokens it carried.
    fn deliver(
        &self,
        chunk: Chunk,
        (now, attempt_start): (Instant, Instant),
        request_id: u64,
        run: &mut RequestRun,
    ) -> u32 {
        run.stream.first_byte = true;
        if !chunk.kind.is_content() {
            return 0;
        }
        if !chunk.kind.allows_continuation() {
            run.stream.non_text_content = true;
        }
        let first_at = now
            .checked_sub(chunk.span)
            .unwrap_or(now)
            .max(attempt_start);
        if run.stream.first_token_at.is_none() {
            run.stream.first_token_at = Some(first_at);
        }
        let gap_before = run
            .stream
            .last_token_at
            .map(|t| first_at.saturating_duration_since(t));
        let inner_gap = if chunk.tokens > 1 {
            chunk.span / (chunk.tokens - 1)
        } else {
            Duration::ZERO
        };
        run.stream.last_token_at = Some(now);
        run.stream.delivered += chunk.tokens;
        self.emit(
            Some(request_id),
            EventKind::StreamChunk {
                tokens: chunk.tokens,
                gap_before,
                inner_gap,
            },
        );
        chunk.tokens
    }

    /// Records and reports a broken stream; returns whether it broke past the point of no
    /// return (then nothing may retry or fall back).
    pub(super) fn report_break(
        &self,
        g: &Group,
        deployment: &Deployment,
        request: &Request,
        broke: &StreamBroke,
        run: &mut RequestRun,
    ) -> bool {
        run.stream.last_break = Some(broke.how);
        let committed = self.past_point_of_no_return(&run.stream);
        self.emit(
            Some(request.id),
            EventKind::StreamBreak {
                model_group: g.name.clone(),
                deployment_id: deployment.id.clone(),
                failure: broke.failure.kind,
                how: broke.how,
                tokens_so_far: run.stream.delivered,
                after_content: committed,
            },
        );
        committed
    }

    /// Whether a break ends the group's retries (the request goes to its fallbacks): the stream
    /// rules' decision on what the attempt's stream had sent.
    pub(super) fn ends_retries(&self, broke: &StreamBroke) -> bool {
        self.stream_rules.break_ends_retries(broke.after_frame)
    }

    /// A stream broke after content: continue it on a fallback deployment that supports
    /// assistant prefill when the setting allows and nothing disqualifies it; otherwise the
    /// caller gets the error the stream broke with. `walk_tried`: the groups the fallback walk
    /// that produced the broken stream had tried (see [`Leg::walk_tried`]).
    ///
    /// Under rules where a continuation goes through the fallback path (LiteLLM 1.110.2), a
    /// continuation that breaks after its own content is continued again from its group, with
    /// everything delivered so far as the prefill: a loop over legs, never a recursion, and
    /// bounded: each leg is one fallback level deeper and none goes past `max_fallbacks`.
    pub(super) fn continue_stream(
        &self,
        group: usize,
        request: &Request,
        broken: Failed,
        depth: u32,
        walk_tried: Tried,
        run: &mut RequestRun,
    ) -> impl Future<Output = Result<Completion, RouterFailure>> {
        async move {
            let mut leg = Leg {
                group,
                broken,
                depth,
                walk_tried,
                first: true,
            };
            loop {
                let Some((g, deployment, hop)) = self.next_leg(request, &mut leg, run) else {
                    return Err(leg.broken.into_router_failure());
                };
                match self
                    .attempt(&self.groups[g], deployment, &hop, leg.depth + 1, run)
                    .await
                {
                    Ok(done) => {
                        return Ok(Completion {
                            output_tokens: run.stream.delivered.max(done.output_tokens),
                            ..done
                        });
                    }
                    Err(again) if again.committed && self.stream_rules.continues_as_fallback() => {
                        // The continuation broke after its own content: the next leg continues
                        // it from its group.
                        run.stream.continued = false;
                        leg.group = g;
                        leg.broken = again;
                        leg.depth += 1;
                    }
                    Err(_) => {
                        run.stream.continued = false;
                        return Err(leg.broken.into_router_failure());
                    }
                }
            }
        }
    }

    /// The next leg of a continuation: the group, deployment and request it continues on
    /// (announced by its `stream_continued`), or `None` when the broken stream may not be
    /// continued or nothing can continue it.
    ///
    /// LiteLLM 1.110.2 (`router_rust/invoke/streaming.py`, `wrap_chat_stream`: a broken
    /// stream's continuation is `attempt.fallback(...)`, the fallback walk; its lookup,
    /// `fallback_lookup_groups` in `router_utils/fallback_event_handlers.py`: *"a fallback hop
    /// that fails after `run_async_fallback` already returned its stream: the hop has no chain
    /// of its own, so it resumes the original group's chain, and `attempted_targets` keeps the
    /// entries already tried from being repeated"*), as measured by the stream oracle
    /// (`110`-`118` in `tools/litellm-oracle/stream/scenarios/`): a leg goes one fallback level
    /// deeper and none goes past `max_fallbacks`; a group with a chain of its own starts a new
    /// walk of it; one without resumes the chain it came from, skipping the groups that walk
    /// tried. Under the documented rules there is one continuation, to the first target with a
    /// deployment that can continue.
    fn next_leg(
        &self,
        request: &Request,
        leg: &mut Leg,
        run: &mut RequestRun,
    ) -> Option<(usize, usize, Request)> {
        if !self.may_continue(request, &leg.broken, run) {
            return None;
        }
        let settings = &self.config.settings;
        let as_fallback = self.stream_rules.continues_as_fallback();
        if as_fallback && leg.depth >= settings.max_fallbacks {
            return None;
        }
        let serving = self.groups[leg.group].name.clone();
        let requested = self
            .resolve_group(&request.model)
            .map_or_else(|| serving.clone(), |i| self.groups[i].name.clone());
        let choice = fallback::choose(
            settings,
            request,
            leg.broken.failure.kind,
            &serving,
            &requested,
        )?;
        let own_chain = is_own_chain(settings, choice.targets, &serving);
        let skipped = |g: usize| as_fallback && !own_chain && leg.walk_tried.contains(&g);
        let now = self.clock.now();
        let target = choice.targets.iter().find_map(|target| {
            let g = self.resolve_group(&target.model).filter(|&g| !skipped(g))?;
            let prefill: Vec<usize> = self.groups[g]
                .members
                .iter()
                .copied()
                .filter(|&d| {
                    self.config.deployments[d].supports_assistant_prefill
                        && !self.is_cooling(d, now)
                })
                .collect();
            (!prefill.is_empty()).then_some((g, target, prefill))
        });
        let Some((g, target, candidates)) = target else {
            let first = choice
                .targets
                .iter()
                .filter_map(|t| self.resolve_group(&t.model))
                .find(|&g| !skipped(g));
            self.no_continuation_deployment(request, &leg.broken, first);
            return None;
        };
        if own_chain {
            leg.walk_tried = Tried::new();
        }
        leg.walk_tried.insert(g);
        let deployment = candidates[self.pick_position(&candidates, request, now)];
        self.flush_deferred(run);
        let delivered = run.stream.delivered;
        let mut hop = apply_overrides(request, target);
        hop.prefill_tokens += delivered;
        hop.max_tokens = hop.max_tokens.map(|m| m.saturating_sub(delivered));
        hop.output_tokens = hop.output_tokens.map(|m| m.saturating_sub(delivered));
        let from_deployment = self
            .last_deployment_id(run)
            .unwrap_or_else(|| Arc::from(""));
        self.emit(
            Some(request.id),
            EventKind::StreamContinued {
                from_group: serving,
                from_deployment,
                to_group: self.groups[g].name.clone(),
                to_deployment: self.config.deployments[deployment].id.clone(),
                prefill_tokens: delivered,
            },
        );
        // A continuation is reported as `stream_continued`, not as a fallback hop (routersim's
        // own `fallbacks`); LiteLLM 1.110.2 counts it in its attempted fallbacks.
        run.stream.continued = true;
        if as_fallback {
            run.hop(leg.depth + 1);
            if leg.first && leg.depth > 0 {
                // The caller's `x-litellm-attempted-fallbacks` is the first continuation's
                // response's: continuing a stream that a fallback hop opened, the walk counts
                // every level down to the continuation (oracle 116-118).
                run.attempted_fallbacks = run.attempted_fallbacks.max(leg.depth + 1);
            }
        }
        leg.first = false;
        Some((g, deployment, hop))
    }

    /// No fallback group of a continuation has a deployment to continue on: under rules that
    /// say so, the hop into the first one (`first`) is reported (a `give_up` there).
    fn no_continuation_deployment(&self, request: &Request, broken: &Failed, first: Option<usize>) {
        if !self.stream_rules.continues_as_fallback() {
            return;
        }
        if let Some(g) = first {
            self.emit(
                Some(request.id),
                EventKind::GiveUp {
                    model_group: self.groups[g].name.clone(),
                    failure: broken.failure.kind,
                    reason: crate::event::GiveUpReason::NoContinuationDeployment,
                },
            );
        }
    }

    /// Whether a broken stream may be continued elsewhere (LiteLLM's rules).
    fn may_continue(&self, request: &Request, broken: &Failed, run: &RequestRun) -> bool {
        let settings = &self.config.settings;
        settings.stream_recovery == StreamRecovery::LiteLlm
            && settings.enable_mid_stream_fallback_continuation
            && run.stream.delivered > 0
            && !run.stream.non_text_content
            && request.response_format != ResponseFormat::Json
            && broken.failure.kind != FailureKind::ContentPolicyViolation
            && self.stream_rules.may_continue_after(&broken.failure)
            && !run.stream.continued
    }

    /// The caller's view of a streamed request.
    pub(super) fn stream_stats(&self, run: &RequestRun, ok: bool) -> StreamStats {
        let p = &run.stream;
        let committed_failure = !ok && self.past_point_of_no_return(p);
        let outcome = if ok {
            Some(if p.continued {
                StreamOutcome::Continued
            } else if p.any_content() {
                StreamOutcome::Completed
            } else {
                StreamOutcome::Empty
            })
        } else {
            match p.last_break {
                Some(BreakKind::Stall | BreakKind::FirstTokenTimeout) => {
                    Some(StreamOutcome::Stalled)
                }
                Some(_) if committed_failure => Some(StreamOutcome::BrokenAfterContent),
                Some(_) => Some(StreamOutcome::BrokenBeforeContent),
                None => None,
            }
        };
        let billed = match (ok, self.config.settings.stream_recovery) {
            (true, _) | (false, StreamRecovery::Multigrid) => p.delivered,
            (false, StreamRecovery::LiteLlm) => self.stream_rules.billed_after_break(p.delivered),
        };
        StreamStats {
            outcome,
            ttft: p
                .first_token_at
                .map(|t| t.saturating_duration_since(run.start)),
            tokens_delivered: p.delivered,
            tokens_billed: billed,
        }
    }

    /// Whether a broken stream can no longer be retried or failed over: after content
    /// (LiteLLM), or after the first byte (Multigrid).
    fn past_point_of_no_return(&self, p: &StreamProgress) -> bool {
        match self.config.settings.stream_recovery {
            StreamRecovery::LiteLlm => p.any_content(),
            StreamRecovery::Multigrid => p.first_byte,
        }
    }
}
