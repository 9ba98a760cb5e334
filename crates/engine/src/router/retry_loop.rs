//! The retry loop, the one place that reports retries and waits: try, then ask the retry
//! policy (and the retry budget) whether to go on and the backoff how long to wait, wait, try
//! again. It runs on a group's order level (each try a new pick: LiteLLM's visit) or on one
//! candidate route of the candidate walk (every try on that route, under the walk's
//! deadline and the profile's attempt cap).

use routersim_primitives::js::parse_int_seconds;
use std::time::Duration;

use tokio::time::Instant;

use super::core::{Router, lock};
use super::group::Group;
use super::run::{Failed, NoCandidate, RequestRun};
use crate::backoff::WaitContext;
use crate::clock::Clock;
use crate::event::{EventKind, GiveUpReason};
use crate::failure::{FailureKind, ProviderFailure, RetryAfter};
use crate::fallback;
use crate::provider::Provider;
use crate::request::{Completion, Request};
use crate::retry::{RetryContext, RetryDecision};
use crate::small::{Indices, Tried};

/// Where a retry loop runs (indices as `u32`: every request in flight keeps one).
#[derive(Clone, Copy, Debug)]
pub(super) enum Scope {
    /// An order level of a group (its index): each try is a new pick on the level.
    Level(u32),
    /// One candidate route of the candidate walk (a deployment index): every try on it.
    Route(u32),
}

impl<P: Provider, C: Clock> Router<P, C> {
    /// The retry loop of `scope` in group `g`.
    pub(super) fn retry_loop(
        &self,
        g: &Group,
        scope: Scope,
        request: &Request,
        depth: u32,
        run: &mut RequestRun,
        tried: &mut Tried,
    ) -> impl Future<Output = Result<Completion, Failed>> {
        async move {
            // Only what the loop needs after an attempt is kept across it: the level's members
            // are looked up again, and the deployment picked is not borrowed.
            let mut retries_done = 0u32;
            let mut first_failure = None;
            let mut retry_after_waited = Duration::ZERO;
            loop {
                // The candidates live only until the pick: they are not kept across the attempt.
                let picked = match scope {
                    Scope::Level(level) => self.pick(g, level as usize, request, run),
                    Scope::Route(deployment) => Ok(deployment as usize),
                };
                // A deferred cooldown lands once the pick has seen the deployment without it.
                self.flush_deferred(run);
                let failed = match picked {
                    Err(none) => {
                        run.last_group = Some(g.name.clone());
                        self.no_candidate(g, request, none)
                    }
                    Ok(deployment) => {
                        // A route's tries are all on it: only a level's picks are kept apart.
                        let level = matches!(scope, Scope::Level(_));
                        if level {
                            tried.insert(deployment);
                        }
                        let result = if level && self.alternatives.hedge_after.is_some() {
                            // Boxed: only a router that hedges pays for the race's state.
                            Box::pin(self.attempt_maybe_hedged(
                                g,
                                deployment,
                                request,
                                depth,
                                run,
                                tried,
                                retries_done == 0,
                            ))
                            .await
                        } else {
                            self.attempt(g, deployment, request, depth, run).await
                        };
                        match result {
                            Ok(done) => return Ok(done),
                            Err(failed) => failed,
                        }
                    }
                };
                // Decided before the backoff, in a block: only the wait (and a failure the wait
                // may end in, boxed) is kept while it runs.
                let (deadline, kept, gives_up) = {
                    let looked = Looked {
                        scope,
                        retries_done,
                        first_failure: *first_failure.get_or_insert(failed.failure.kind),
                        retry_after_waited,
                    };
                    self.next_step(g, request, failed, &looked, run, &mut retry_after_waited)?
                };
                if !gives_up {
                    // Counted before the backoff, which then keeps only its timer.
                    retries_done += 1;
                    run.retries += 1;
                    run.scope_retries += 1;
                }
                if let Some(deadline) = deadline {
                    // Time moves on: a deferred cooldown has landed by then.
                    self.flush_deferred(run);
                    self.clock.sleep_until(deadline).await;
                }
                if let Some(failed) = kept
                    && let Some(failed) = self.ends_after_wait(g, request, *failed, gives_up, run)
                {
                    return Err(failed);
                }
            }
        }
    }

    /// [`Router::before_retry`]'s verdict as the loop keeps it across the wait: when the wait
    /// ends, the failure it may end in, and whether the loop gives up after it (a failure
    /// given up at once is the `Err`). A wait on a Retry-After is added to `retry_after_waited`.
    fn next_step(
        &self,
        g: &Group,
        request: &Request,
        failed: Failed,
        looked: &Looked,
        run: &mut RequestRun,
        retry_after_waited: &mut Duration,
    ) -> Result<Step, Failed> {
        let (now, wait, kept, gives_up) = match self.before_retry(g, request, failed, looked, run) {
            Next::Retry {
                now,
                wait,
                kept,
                on_retry_after,
            } => {
                if on_retry_after {
                    *retry_after_waited += wait;
                }
                (now, wait, kept.map(Box::new), false)
            }
            Next::GiveUp { failed, wait: None } => return Err(failed),
            Next::GiveUp {
                failed,
                wait: Some((now, wait)),
            } => (now, wait, Some(Box::new(failed)), true),
        };
        run.pending_wait = wait;
        Ok(((!wait.is_zero()).then(|| now + wait), kept, gives_up))
    }

    /// The failure kept across a wait, when the loop ends with it: a give-up that waited, or
    /// a retry whose wait reached the walk's deadline (the timer wakes on a millisecond tick: a
    /// wait that ended just before the deadline may wake at it, and no attempt starts there).
    fn ends_after_wait(
        &self,
        g: &Group,
        request: &Request,
        failed: Failed,
        gives_up: bool,
        run: &RequestRun,
    ) -> Option<Failed> {
        if gives_up {
            return Some(failed);
        }
        let reason = GiveUpReason::DeadlineExhausted;
        run.walk_deadline
            .is_some_and(|end| self.clock.now() >= end)
            .then(|| self.give_up(g, request, failed, reason, true))
    }

    /// One pick on `level` (a plain function: nothing of it lives across an await).
    fn pick(
        &self,
        g: &Group,
        level: usize,
        request: &Request,
        run: &RequestRun,
    ) -> Result<usize, NoCandidate> {
        let now = self.clock.now();
        let mut candidates = Indices::new();
        let members = self.pick_level_members(g, level, now);
        self.candidates(members, request, now, &mut candidates)
            .and_then(|()| self.drop_excluded(&mut candidates, run))
            .map(|()| {
                let slice = candidates.as_slice();
                slice[self.pick_position(slice, request, now)]
            })
    }

    /// Inside a failover scope: the candidates without the deployments it excludes.
    fn drop_excluded(&self, candidates: &mut Indices, run: &RequestRun) -> Result<(), NoCandidate> {
        let Some(excluded) = run.failover_excluded.as_deref() else {
            return Ok(());
        };
        let mut kept = Indices::new();
        kept.extend(
            candidates
                .as_slice()
                .iter()
                .copied()
                .filter(|d| !excluded.contains(d)),
        );
        if kept.is_empty() {
            return Err(NoCandidate::AllCooling {
                retry_after: Duration::ZERO,
            });
        }
        *candidates = kept;
        Ok(())
    }

    /// The members a pick on `level` may choose from: the level's, or (when the retry policy
    /// lets a retry reach later orders) the first level from it with one not cooling.
    fn pick_level_members<'g>(&self, g: &'g Group, level: usize, now: Instant) -> &'g [usize] {
        if self.retry.retry_reaches_later_orders() {
            for l in level..g.levels.len() {
                let members = g.level_members(l);
                if members.iter().any(|&d| !self.is_unavailable(d, now)) {
                    return members;
                }
            }
        }
        g.level_members(level)
    }

    /// The failure a pick with no candidate stands for (`router_rate_limit` while everything
    /// is cooling or over its limits).
    pub(super) fn no_candidate(&self, g: &Group, request: &Request, none: NoCandidate) -> Failed {
        let (kind, retry_after) = match none {
            NoCandidate::AllCooling { retry_after } => {
                self.emit(
                    Some(request.id),
                    EventKind::AllCooled {
                        model_group: g.name.clone(),
                        retry_after,
                    },
                );
                (FailureKind::RouterRateLimit, Some(retry_after))
            }
            NoCandidate::OverLimits { retry_after } => {
                (FailureKind::RouterRateLimit, Some(retry_after))
            }
            NoCandidate::NoTagMatch => (FailureKind::BadRequest, None),
            NoCandidate::ContextTooLarge => (FailureKind::ContextWindowExceeded, None),
        };
        Failed {
            failure: ProviderFailure::new(kind),
            deployment: None,
            retry_after,
            committed: false,
            retries_closed: false,
            no_replay: false,
            ends_walk: false,
        }
    }

    /// After a failed attempt (or pick): give up with the failure (reported: a stream past
    /// the point of no return, the retry policy, the retry budget, the walk's attempt cap or
    /// deadline), or retry (reported, with its wait). Returns when the wait starts and how
    /// long it is; the caller waits. A retry policy may ask for the wait after giving up too.
    fn before_retry(
        &self,
        g: &Group,
        request: &Request,
        failed: Failed,
        looked: &Looked,
        run: &RequestRun,
    ) -> Next {
        if let Some(reason) = failed.forced_give_up_reason() {
            let ends_walk = failed.committed || failed.no_replay;
            let failed = self.give_up(g, request, failed, reason, ends_walk);
            return Next::GiveUp { failed, wait: None };
        }
        let now = self.clock.now();
        let ctx = self.retry_context(g, request, &failed, looked, now);
        let wait_ctx = self.wait_context(g, &failed, &ctx, looked);
        let decision = match self
            .retry
            .decide(&failed.failure, &ctx, looked.retries_done)
        {
            RetryDecision::Retry { max_retries } => match self.retry_budget.admit(now) {
                Some(refused) => RetryDecision::GiveUp(refused),
                None => RetryDecision::Retry { max_retries },
            },
            decision => decision,
        };
        let max_retries = match decision {
            RetryDecision::Retry { max_retries } => max_retries,
            RetryDecision::GiveUp(reason) => {
                let ends_walk = self
                    .admission
                    .ends_walk(&failed.failure, &self.config.settings);
                let waits = self
                    .retry
                    .waits_before_giving_up(reason, &failed.failure, &ctx);
                let failed = self.give_up(g, request, failed, reason, ends_walk);
                let wait = waits.then(|| (now, self.wait_for(&wait_ctx, request, now)));
                return Next::GiveUp { failed, wait };
            }
        };
        let (wait, wait_reason) = self.backoff.wait(&wait_ctx, &mut lock(&self.rng));
        if let Some((reason, ends_walk)) = self.walk_stops(&failed, now, wait, run) {
            let failed = self.give_up(g, request, failed, reason, ends_walk);
            return Next::GiveUp { failed, wait: None };
        }
        self.emit_at(
            now,
            Some(request.id),
            EventKind::Retry {
                model_group: g.name.clone(),
                failure: failed.failure.kind,
                retry: looked.retries_done + 1,
                budget: max_retries,
            },
        );
        self.emit_wait(wait, wait_reason, request, now);
        // Kept across the wait only when a deadline the wait may reach would end the retry.
        let kept = (run.walk_deadline.is_some() && !wait.is_zero()).then_some(failed);
        let on_retry_after = wait_reason == Some(crate::event::WaitReason::RetryAfter);
        Next::Retry {
            now,
            wait,
            kept,
            on_retry_after,
        }
    }

    /// The candidate walk's own limits on a retry it would take after `wait`: the profile's cap
    /// on attempts (the walk ends), and the deadline (a wait that would reach it, or leave too
    /// little time for an attempt, fails over now; the walk ends once it is reached). `None`
    /// outside the candidate walk, which sets no deadline.
    fn walk_stops(
        &self,
        failed: &Failed,
        now: Instant,
        wait: Duration,
        run: &RequestRun,
    ) -> Option<(GiveUpReason, bool)> {
        let deadline = run.walk_deadline?;
        let settings = &self.config.settings;
        if self
            .admission
            .max_attempts(settings)
            .is_some_and(|max| run.attempts.len() as u32 >= max)
        {
            return Some((GiveUpReason::RetriesExhausted, true));
        }
        let allowance = failed
            .deployment
            .map_or(Duration::ZERO, |d| self.allowance(d));
        (now + wait + allowance > deadline || now + wait >= deadline)
            .then_some((GiveUpReason::DeadlineExhausted, now >= deadline))
    }

    /// Reports giving up on `failed` for `reason`; `ends_walk`: the candidate walk stops too.
    pub(super) fn give_up(
        &self,
        g: &Group,
        request: &Request,
        mut failed: Failed,
        reason: GiveUpReason,
        ends_walk: bool,
    ) -> Failed {
        self.emit(
            Some(request.id),
            EventKind::GiveUp {
                model_group: g.name.clone(),
                failure: failed.failure.kind,
                reason,
            },
        );
        failed.ends_walk = ends_walk;
        failed
    }

    /// What the retry policy is told about a failure: on a level, its health and the group's,
    /// and the fallback lists that exist; on a route, the group's health, and the request's
    /// `models` as its fallbacks.
    fn retry_context<'a>(
        &'a self,
        g: &'a Group,
        request: &'a Request,
        failed: &Failed,
        looked: &Looked,
        now: Instant,
    ) -> RetryContext<'a> {
        let settings = &self.config.settings;
        let healthy = |members: &[usize]| {
            members
                .iter()
                .filter(|&&d| !self.is_unavailable(d, now))
                .count()
        };
        let (healthy_left, group_healthy_left, fallbacks_configured, dedicated_lists) =
            match looked.scope {
                Scope::Level(level) => (
                    healthy(g.level_members(level as usize)),
                    healthy(&g.members),
                    fallback::general_fallbacks_configured(settings, request),
                    true,
                ),
                Scope::Route(_) => {
                    let healthy = healthy(&g.members);
                    (healthy, healthy, !request.models.is_empty(), false)
                }
            };
        RetryContext {
            request,
            deployment: failed.deployment.map(|i| &self.config.deployments[i]),
            model_group: &g.name,
            group_size: g.members.len(),
            healthy_left,
            group_healthy_left,
            first_failure: Some(looked.first_failure),
            fallbacks_configured,
            context_window_fallbacks_configured: dedicated_lists
                && !settings.context_window_fallbacks.is_empty(),
            content_policy_fallbacks_configured: dedicated_lists
                && !settings.content_policy_fallbacks.is_empty(),
            scope: self.classifier.scope(&failed.failure),
            settings,
            retry_after_waited: looked.retry_after_waited,
        }
    }

    /// What the backoff is told about a failure.
    fn wait_context(
        &self,
        g: &Group,
        failed: &Failed,
        ctx: &RetryContext<'_>,
        looked: &Looked,
    ) -> WaitContext {
        WaitContext {
            group_size: g.members.len(),
            healthy_left: ctx.healthy_left,
            group_healthy_left: ctx.group_healthy_left,
            retry_after: self.resolve_retry_after(&failed.failure),
            retry_after_is_date: matches!(
                failed.failure.retry_after,
                Some(RetryAfter::HttpDate(_))
            ),
            retry_after_parse_int: match &failed.failure.retry_after {
                Some(RetryAfter::HttpDate(text)) => parse_int_seconds(text),
                _ => None,
            },
            retry_index: looked.retries_done,
            min_backoff: self.config.settings.retry_after,
            status: failed
                .failure
                .status
                .or(failed.failure.kind.default_status()),
            retry_after_waited: looked.retry_after_waited,
            use_retry_after_header: self.config.settings.portkey_use_retry_after_header,
        }
    }

    /// The backoff's wait, reported when there is one.
    fn wait_for(&self, wait_ctx: &WaitContext, request: &Request, now: Instant) -> Duration {
        let (wait, reason) = self.backoff.wait(wait_ctx, &mut lock(&self.rng));
        self.emit_wait(wait, reason, request, now);
        wait
    }

    /// Reports a wait that has a reason.
    fn emit_wait(
        &self,
        duration: Duration,
        reason: Option<crate::event::WaitReason>,
        request: &Request,
        now: Instant,
    ) {
        if let Some(reason) = reason {
            self.emit_at(now, Some(request.id), EventKind::Wait { duration, reason });
        }
    }
}

/// What the loop keeps across a wait: when it ends, the failure it may end in, and whether
/// the loop gives up after it.
type Step = (Option<Instant>, Option<Box<Failed>>, bool);

/// What the retry loop knows when it asks about a failure.
struct Looked {
    scope: Scope,
    retries_done: u32,
    first_failure: FailureKind,
    /// What the loop has waited on the provider's Retry-After so far.
    retry_after_waited: Duration,
}

/// What comes after a failure.
enum Next {
    /// Retry after `wait` from `now`; `kept`: the failure, when the wait may end the retry;
    /// `on_retry_after`: the wait is the provider's Retry-After.
    Retry {
        now: Instant,
        wait: Duration,
        kept: Option<Failed>,
        on_retry_after: bool,
    },
    /// Give up, after `wait` when the retry policy asks for one.
    GiveUp {
        failed: Failed,
        wait: Option<(Instant, Duration)>,
    },
}
