//! Multigrid's walk (`profile: multigrid`, see [`crate::multigrid`] for the rules and the
//! seed's lines): an ordered list of candidate routes — every deployment of the group asked
//! for, then each model of the request's `models` chain and its deployments — each with its
//! own attempts (the retry policy's inner loop), under one end-to-end deadline. Chosen by
//! [`FallbackPolicy::walks_candidates`](crate::fallback::FallbackPolicy::walks_candidates);
//! the attempt itself is the router's one attempt (`attempt.rs`). `profile: contract` walks
//! the same way, and adds through [`RouteAdmission`](crate::contract::RouteAdmission): routes
//! filtered by the request's contract before ranking, ranked by latency then cost, a cap on
//! attempts, a per-request deadline and the time an attempt needs before it.

use std::sync::Arc;

use tokio::time::Instant;

use super::core::{Router, lock};
use super::group::Group;
use super::run::{Failed, RequestRun};
use super::visit::NoCandidate;
use crate::backoff::WaitContext;
use crate::clock::Clock;
use crate::contract::FilterReason;
use crate::event::{EventKind, FallbackLevel, GiveUpReason};
use crate::failure::{FailureKind, RetryAfter};
use crate::provider::Provider;
use crate::request::{Completion, Request, RouterFailure};
use crate::retry::{RetryContext, RetryDecision};
use crate::small::Indices;

/// Why a walk with no attempt ended, beside its failures.
#[derive(Clone, Copy)]
struct WalkEnd {
    /// The deadline left no room for an attempt.
    out_of_time: bool,
    /// A route was filtered out as suppressed (cooling).
    saw_suppressed: bool,
}

/// How a candidate's attempts ended without an answer.
struct CandidateFailed {
    failed: Failed,
    /// The walk ends here: the deadline is reached, or a stream is past its first byte.
    stop: bool,
}

impl<P: Provider, C: Clock> Router<P, C> {
    /// The whole walk of one request; the last failure when every candidate failed.
    pub(super) fn walk_candidates<'a>(
        &'a self,
        request: &'a Request,
        run: &'a mut RequestRun,
    ) -> impl Future<Output = Result<Completion, RouterFailure>> + 'a {
        async move {
            let settings = &self.config.settings;
            let limit = if request.stream {
                settings.stream_deadline
            } else {
                settings.request_deadline
            };
            let limit = self.admission.deadline(request).unwrap_or(limit);
            let deadline = run.start + limit;
            run.walk_deadline = Some(deadline);
            let max_attempts = self.admission.max_attempts(settings);
            let mut out_of_time = false;
            let mut saw_suppressed = false;
            let first_route_only = request.disable_fallbacks || !settings.allow_fallbacks;
            let mut last: Option<Failed> = None;
            let mut unusable: Option<(usize, NoCandidate)> = None;
            let mut serving: Option<Arc<str>> = None;
            let mut routes = 0u32;
            let mut depth = 0u32;
            let models = std::iter::once(&request.model).chain(request.models.iter());
            'walk: for (position, model) in models.enumerate() {
                let Some(group) = self.resolve_group(model) else {
                    continue;
                };
                if run.tried_groups.contains(&group) || (first_route_only && routes > 0) {
                    continue;
                }
                run.tried_groups.push(group);
                let g = &self.groups[group];
                // The seed's order: filter every route first (each filtered one reported),
                // then rank the rest; cost and suppression are checked again before each
                // attempt, as the walk spends budget and cools routes. A group with no
                // compatible route is no hop.
                let (mut visited, suppressed) = self.filter_group(g, request, run);
                saw_suppressed |= suppressed;
                if g.members.len() <= 128 && visited.count_ones() as usize == g.members.len() {
                    continue;
                }
                if let Some(source) = serving.replace(g.name.clone()) {
                    depth += 1;
                    run.fallbacks += 1;
                    run.hop(depth);
                    self.emit(
                        Some(request.id),
                        EventKind::Fallback {
                            source,
                            target: g.name.clone(),
                            order: position.saturating_sub(1) as u32,
                            depth,
                            level: FallbackLevel::General,
                            failure: last
                                .as_ref()
                                .map_or(FailureKind::RouterRateLimit, |f| f.failure.kind),
                        },
                    );
                }
                let mut cursor = 0;
                while let Some(member) = self.next_member(g, request, visited, &mut cursor) {
                    visited |= 1u128 << member.min(127);
                    let d = g.members[member];
                    if let Some(reason) = self.route_filtered(g, d, request, run) {
                        saw_suppressed |= reason == FilterReason::Suppressed;
                        continue;
                    }
                    if let Err(none) = self.usable(g, d, request) {
                        unusable.get_or_insert((group, none));
                        continue;
                    }
                    if first_route_only && routes > 0 {
                        break 'walk;
                    }
                    if max_attempts.is_some_and(|max| run.attempts.len() as u32 >= max) {
                        break 'walk;
                    }
                    let now = self.clock.now();
                    if now >= deadline {
                        self.deadline_exhausted(g, request, last.as_ref());
                        out_of_time = true;
                        break 'walk;
                    }
                    if now + self.allowance(d) > deadline {
                        // Not enough time left for an attempt here; a faster route may fit.
                        self.deadline_exhausted(g, request, last.as_ref());
                        out_of_time = true;
                        continue;
                    }
                    routes += 1;
                    match self.candidate(g, d, request, depth, deadline, run).await {
                        Ok(done) => return Ok(done),
                        Err(CandidateFailed { failed, stop }) => {
                            last = Some(failed);
                            if stop {
                                break 'walk;
                            }
                        }
                    }
                }
            }
            let ended = WalkEnd {
                out_of_time,
                saw_suppressed,
            };
            Err(self.walk_failure(last, unusable, ended, request))
        }
    }

    /// What a walk that got no answer returns: the last failure, else why no route was
    /// usable, else a timeout when the deadline left no room, else `router_rate_limit` when
    /// every compatible route was cooling, else a bad request (no route can satisfy the
    /// request: its contract, or its model).
    fn walk_failure(
        &self,
        last: Option<Failed>,
        unusable: Option<(usize, NoCandidate)>,
        ended: WalkEnd,
        request: &Request,
    ) -> RouterFailure {
        match (last, unusable) {
            (Some(failed), _) => failed.into_router_failure(),
            (None, Some((group, none))) => self
                .no_candidate(&self.groups[group], request, none)
                .into_router_failure(),
            (None, None) if ended.out_of_time => RouterFailure {
                kind: FailureKind::Timeout,
                status: FailureKind::Timeout.default_status(),
                retry_after: None,
            },
            // Every compatible route is cooling: as when every deployment of a group is.
            (None, None) if ended.saw_suppressed => RouterFailure {
                kind: FailureKind::RouterRateLimit,
                status: FailureKind::RouterRateLimit.default_status(),
                retry_after: None,
            },
            (None, None) => RouterFailure {
                kind: FailureKind::BadRequest,
                status: Some(400),
                retry_after: None,
            },
        }
    }

    /// The next member (position in `g.members`) to walk: the next not `visited` in config
    /// order (`cursor` keeps the place), or — when the profile ranks routes — the healthiest,
    /// then the one with the best measured latency (never measured: after every measured
    /// one), then the lowest estimated cost. A group of more than 128 deployments is walked in config order.
    fn next_member(
        &self,
        g: &Group,
        request: &Request,
        visited: u128,
        cursor: &mut usize,
    ) -> Option<usize> {
        let open = |p: usize| p >= 128 || visited & (1u128 << p) == 0;
        if !self.admission.ranks_routes() || g.members.len() > 128 {
            while *cursor < g.members.len() {
                let p = *cursor;
                *cursor += 1;
                if open(p) {
                    return Some(p);
                }
            }
            return None;
        }
        let key = |p: usize| {
            let d = g.members[p];
            let latency = self
                .load
                .read(|loads| loads[d].mean_latency())
                .unwrap_or(std::time::Duration::MAX);
            let cost =
                crate::contract::capability::estimated_cost(request, &self.config.deployments[d]);
            ((self.admission.unhealth(d), latency), cost, p)
        };
        (0..g.members.len())
            .filter(|&p| open(p))
            .map(key)
            .min_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2)))
            .map(|(_, _, p)| p)
    }

    /// The members of `g` the request's contract rules out, as a mask of positions (each
    /// reported as `route_filtered`).
    fn filter_group(&self, g: &Group, request: &Request, run: &RequestRun) -> (u128, bool) {
        if request.contract.is_none() {
            return (0, false);
        }
        let mut excluded = 0u128;
        let mut suppressed = false;
        for (p, &d) in g.members.iter().enumerate().take(128) {
            if let Some(reason) = self.route_filtered(g, d, request, run) {
                excluded |= 1u128 << p;
                suppressed |= reason == FilterReason::Suppressed;
            }
        }
        (excluded, suppressed)
    }

    /// Why the request's contract rules out deployment `d`, if it does (reported as
    /// `route_filtered`).
    fn route_filtered(
        &self,
        g: &Group,
        d: usize,
        request: &Request,
        run: &RequestRun,
    ) -> Option<FilterReason> {
        request.contract.as_ref()?;
        let now = self.clock.now();
        let deployment = &self.config.deployments[d];
        let suppressed = self.is_unavailable(d, now);
        let reason = self
            .admission
            .filter(request, deployment, suppressed, run.spent_usd)?;
        self.emit_at(
            now,
            Some(request.id),
            EventKind::RouteFiltered {
                model_group: g.name.clone(),
                deployment_id: deployment.id.clone(),
                reason,
            },
        );
        Some(reason)
    }

    /// The time an attempt on `d` needs before the deadline (zero unless the profile says).
    fn allowance(&self, d: usize) -> std::time::Duration {
        let measured = self.load.read(|loads| loads[d].mean_latency());
        self.admission.attempt_allowance(
            &self.config.deployments[d],
            measured,
            &self.config.settings,
        )
    }

    /// Whether deployment `d` of `g` is a usable route now: what a pick in its group would
    /// let through (not cooling, the request's tags, the pre-call checks).
    fn usable(&self, g: &Group, d: usize, request: &Request) -> Result<(), NoCandidate> {
        let mut candidates = Indices::new();
        self.candidates(&g.members, request, self.clock.now(), &mut candidates)?;
        if candidates.as_slice().contains(&d) {
            Ok(())
        } else {
            Err(NoCandidate::AllCooling {
                retry_after: self
                    .state
                    .cooldown_until(d)
                    .map_or(std::time::Duration::ZERO, |until| {
                        until.saturating_duration_since(self.clock.now())
                    }),
            })
        }
    }

    /// The `give_up` of a walk out of time.
    fn deadline_exhausted(&self, g: &Group, request: &Request, last: Option<&Failed>) {
        self.emit(
            Some(request.id),
            EventKind::GiveUp {
                model_group: g.name.clone(),
                failure: last.map_or(FailureKind::Timeout, |f| f.failure.kind),
                reason: GiveUpReason::DeadlineExhausted,
            },
        );
    }

    /// One candidate's inner loop: attempt, then (for a failure the retry policy retries) the
    /// backoff's wait — unless it would reach the deadline: then the walk fails over now.
    fn candidate<'a>(
        &'a self,
        g: &'a Group,
        d: usize,
        request: &'a Request,
        depth: u32,
        deadline: Instant,
        run: &'a mut RequestRun,
    ) -> impl Future<Output = Result<Completion, CandidateFailed>> + 'a {
        async move {
            let mut retries_done = 0u32;
            let mut first_failure = None;
            loop {
                self.flush_deferred(run);
                let failed = match self.attempt(g, d, request, depth, run).await {
                    Ok(done) => return Ok(done),
                    Err(failed) => failed,
                };
                let first = *first_failure.get_or_insert(failed.failure.kind);
                let stream_reason = failed.forced_give_up_reason();
                if let Some(reason) = stream_reason {
                    self.give_up(g, request, &failed, reason);
                    let stop = failed.committed || failed.no_replay;
                    return Err(CandidateFailed { failed, stop });
                }
                let now = self.clock.now();
                let (wait, wait_reason, max_retries) =
                    match self.decide_retry(g, d, request, &failed, first, retries_done) {
                        Ok(next) => next,
                        Err(reason) => {
                            self.give_up(g, request, &failed, reason);
                            let stop = self.admission.ends_walk(&failed.failure);
                            return Err(CandidateFailed { failed, stop });
                        }
                    };
                let settings = &self.config.settings;
                if self
                    .admission
                    .max_attempts(settings)
                    .is_some_and(|max| run.attempts.len() as u32 >= max)
                {
                    self.give_up(g, request, &failed, GiveUpReason::RetriesExhausted);
                    return Err(CandidateFailed { failed, stop: true });
                }
                if now + wait + self.allowance(d) > deadline || now + wait >= deadline {
                    self.give_up(g, request, &failed, GiveUpReason::DeadlineExhausted);
                    let stop = now >= deadline;
                    return Err(CandidateFailed { failed, stop });
                }
                self.emit_at(
                    now,
                    Some(request.id),
                    EventKind::Retry {
                        model_group: g.name.clone(),
                        failure: failed.failure.kind,
                        retry: retries_done + 1,
                        budget: max_retries,
                    },
                );
                if let Some(reason) = wait_reason {
                    self.emit_at(
                        now,
                        Some(request.id),
                        EventKind::Wait {
                            duration: wait,
                            reason,
                        },
                    );
                }
                retries_done += 1;
                run.retries += 1;
                run.scope_retries += 1;
                run.pending_wait = wait;
                if !wait.is_zero() {
                    self.flush_deferred(run);
                    self.clock.sleep_until(now + wait).await;
                    // The timer wakes on a millisecond tick: a wait that ended just before the
                    // deadline may wake at it, and no attempt starts there.
                    if self.clock.now() >= deadline {
                        self.give_up(g, request, &failed, GiveUpReason::DeadlineExhausted);
                        return Err(CandidateFailed { failed, stop: true });
                    }
                }
            }
        }
    }

    fn give_up(&self, g: &Group, request: &Request, failed: &Failed, reason: GiveUpReason) {
        self.emit(
            Some(request.id),
            EventKind::GiveUp {
                model_group: g.name.clone(),
                failure: failed.failure.kind,
                reason,
            },
        );
    }

    /// The retry policy's (and the retry budget's) verdict on a candidate's failure, with the
    /// backoff's wait when it retries: `(wait, its reason, the budget)`.
    fn decide_retry(
        &self,
        g: &Group,
        d: usize,
        request: &Request,
        failed: &Failed,
        first_failure: FailureKind,
        retries_done: u32,
    ) -> Result<(std::time::Duration, Option<crate::event::WaitReason>, u32), GiveUpReason> {
        let settings = &self.config.settings;
        let now = self.clock.now();
        let healthy = g
            .members
            .iter()
            .filter(|&&m| !self.is_unavailable(m, now))
            .count();
        let ctx = RetryContext {
            request,
            deployment: Some(&self.config.deployments[d]),
            model_group: &g.name,
            group_size: g.members.len(),
            healthy_left: healthy,
            group_healthy_left: healthy,
            first_failure: Some(first_failure),
            fallbacks_configured: !request.models.is_empty(),
            context_window_fallbacks_configured: false,
            content_policy_fallbacks_configured: false,
            scope: self.classifier.scope(&failed.failure),
            settings,
        };
        let max_retries = match self.retry.decide(&failed.failure, &ctx, retries_done) {
            RetryDecision::GiveUp(reason) => return Err(reason),
            RetryDecision::Retry { max_retries } => match self.retry_budget.admit(now) {
                Some(refused) => return Err(refused),
                None => max_retries,
            },
        };
        let wait_ctx = WaitContext {
            group_size: g.members.len(),
            healthy_left: healthy,
            group_healthy_left: healthy,
            retry_after: self.resolve_retry_after(&failed.failure),
            retry_after_is_date: matches!(
                failed.failure.retry_after,
                Some(RetryAfter::HttpDate(_))
            ),
            retry_index: retries_done,
            min_backoff: settings.retry_after,
        };
        let (wait, reason) = self.backoff.wait(&wait_ctx, &mut lock(&self.rng));
        Ok((wait, reason, max_retries))
    }
}
