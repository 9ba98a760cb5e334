//! The retry loop on one order level of a group: pick, attempt, then ask the retry policy
//! (and the retry budget) whether to go on and the backoff how long to wait.

use std::time::Duration;

use tokio::time::Instant;

use super::core::{Router, lock};
use super::group::Group;
use super::run::{Failed, RequestRun};
use super::visit::NoCandidate;
use crate::backoff::WaitContext;
use crate::clock::Clock;
use crate::event::EventKind;
use crate::failure::{FailureKind, ProviderFailure, RetryAfter};
use crate::fallback;
use crate::provider::Provider;
use crate::request::{Completion, Request};
use crate::retry::{RetryContext, RetryDecision};
use crate::small::{Indices, Tried};

impl<P: Provider, C: Clock> Router<P, C> {
    /// The retry loop on one order level of a group.
    pub(super) fn retry_loop(
        &self,
        g: &Group,
        level: usize,
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
            loop {
                // The candidates live only until the pick: they are not kept across the attempt.
                let picked = self.pick(g, level, request, run);
                // A deferred cooldown lands once the pick has seen the deployment without it.
                self.flush_deferred(run);
                let failed = match picked {
                    Err(none) => {
                        run.last_group = Some(g.name.clone());
                        self.no_candidate(g, request, none)
                    }
                    Ok(deployment) => {
                        tried.insert(deployment);
                        let result = if self.alternatives.hedge_after.is_some() {
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
                // Decided before the backoff, in a block: only the wait (and a give-up's
                // failure, boxed) is kept while it runs.
                let (deadline, give_up) = {
                    let looked = Looked {
                        members: g.level_members(level),
                        retries_done,
                        first_failure: *first_failure.get_or_insert(failed.failure.kind),
                    };
                    let (now, wait, give_up) = match self.before_retry(g, request, failed, &looked)
                    {
                        Next::Retry { now, wait } => (now, wait, None),
                        Next::GiveUp { failed, wait: None } => return Err(failed),
                        Next::GiveUp {
                            failed,
                            wait: Some((now, wait)),
                        } => (now, wait, Some(Box::new(failed))),
                    };
                    run.pending_wait = wait;
                    ((!wait.is_zero()).then(|| now + wait), give_up)
                };
                if give_up.is_none() {
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
                if let Some(failed) = give_up {
                    return Err(*failed);
                }
            }
        }
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
        }
    }

    /// After a failed attempt (or pick): give up with the failure (reported: a stream past
    /// the point of no return, the retry policy, the retry budget), or retry (reported, with
    /// its wait). Returns when the wait starts and how long it is; the caller waits. A
    /// retry policy may ask for the wait after giving up too.
    fn before_retry(
        &self,
        g: &Group,
        request: &Request,
        failed: Failed,
        looked: &Looked<'_>,
    ) -> Next {
        let stream_reason = failed.forced_give_up_reason();
        if let Some(reason) = stream_reason {
            self.emit(
                Some(request.id),
                EventKind::GiveUp {
                    model_group: g.name.clone(),
                    failure: failed.failure.kind,
                    reason,
                },
            );
            return Next::GiveUp { failed, wait: None };
        }
        let settings = &self.config.settings;
        let now = self.clock.now();
        let ctx = self.retry_context(g, request, &failed, looked, now);
        let (healthy_left, group_healthy_left) = (ctx.healthy_left, ctx.group_healthy_left);
        let retries_done = looked.retries_done;
        let decision = match self.retry.decide(&failed.failure, &ctx, retries_done) {
            RetryDecision::Retry { max_retries } => match self.retry_budget.admit(now) {
                Some(refused) => RetryDecision::GiveUp(refused),
                None => RetryDecision::Retry { max_retries },
            },
            decision => decision,
        };
        let wait_ctx = WaitContext {
            group_size: g.members.len(),
            healthy_left,
            group_healthy_left,
            retry_after: self.resolve_retry_after(&failed.failure),
            retry_after_is_date: matches!(
                failed.failure.retry_after,
                Some(RetryAfter::HttpDate(_))
            ),
            retry_index: retries_done,
            min_backoff: settings.retry_after,
        };
        let max_retries = match decision {
            RetryDecision::Retry { max_retries } => max_retries,
            RetryDecision::GiveUp(reason) => {
                self.emit_at(
                    now,
                    Some(request.id),
                    EventKind::GiveUp {
                        model_group: g.name.clone(),
                        failure: failed.failure.kind,
                        reason,
                    },
                );
                let wait = self
                    .retry
                    .waits_before_giving_up(reason, &ctx)
                    .then(|| (now, self.wait_for(&wait_ctx, request, now)));
                return Next::GiveUp { failed, wait };
            }
        };
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
        let wait = self.wait_for(&wait_ctx, request, now);
        Next::Retry { now, wait }
    }

    /// What the retry policy is told about a failure.
    fn retry_context<'a>(
        &'a self,
        g: &'a Group,
        request: &'a Request,
        failed: &Failed,
        looked: &Looked<'_>,
        now: Instant,
    ) -> RetryContext<'a> {
        let settings = &self.config.settings;
        let healthy = |members: &[usize]| {
            members
                .iter()
                .filter(|&&d| !self.is_unavailable(d, now))
                .count()
        };
        RetryContext {
            request,
            deployment: failed.deployment.map(|i| &self.config.deployments[i]),
            model_group: &g.name,
            group_size: g.members.len(),
            healthy_left: healthy(looked.members),
            group_healthy_left: healthy(&g.members),
            first_failure: Some(looked.first_failure),
            fallbacks_configured: fallback::general_fallbacks_configured(settings, request),
            context_window_fallbacks_configured: !settings.context_window_fallbacks.is_empty(),
            content_policy_fallbacks_configured: !settings.content_policy_fallbacks.is_empty(),
            scope: self.classifier.scope(&failed.failure),
            settings,
        }
    }

    /// The backoff's wait, reported when there is one.
    fn wait_for(&self, wait_ctx: &WaitContext, request: &Request, now: Instant) -> Duration {
        let (wait, reason) = self.backoff.wait(wait_ctx, &mut lock(&self.rng));
        if let Some(reason) = reason {
            self.emit_at(
                now,
                Some(request.id),
                EventKind::Wait {
                    duration: wait,
                    reason,
                },
            );
        }
        wait
    }
}

/// What the retry loop knows when it asks about a failure.
struct Looked<'a> {
    /// The level's members.
    members: &'a [usize],
    retries_done: u32,
    first_failure: FailureKind,
}

/// What comes after a failure.
enum Next {
    /// Retry after `wait` from `now`.
    Retry { now: Instant, wait: Duration },
    /// Give up, after `wait` when the retry policy asks for one.
    GiveUp {
        failed: Failed,
        wait: Option<(Instant, Duration)>,
    },
}
