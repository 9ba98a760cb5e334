//! The retry loop on one order level of a group: pick, attempt, then ask the retry policy
//! (and the retry budget) whether to go on and the backoff how long to wait.

use std::time::Duration;

use tokio::time::Instant;

use super::visit::NoCandidate;
use super::{Failed, Group, RequestRun, Router, lock};
use crate::backoff::WaitContext;
use crate::clock::Clock;
use crate::event::{EventKind, GiveUpReason};
use crate::failure::{FailureKind, ProviderFailure};
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
            loop {
                // The candidates live only until the pick: they are not kept across the attempt.
                let picked = {
                    let now = self.clock.now();
                    let mut candidates = Indices::new();
                    self.candidates(g.level_members(level), request, now, &mut candidates)
                        .map(|()| {
                            let slice = candidates.as_slice();
                            slice[self.pick_position(slice, request, now)]
                        })
                };
                // A deferred cooldown lands once the pick has seen the deployment without it.
                self.flush_deferred(run);
                let failed = match picked {
                    Err(none) => {
                        run.last_group = Some(g.name.clone());
                        self.no_candidate(g, request, none)
                    }
                    Ok(deployment) => {
                        tried.insert(deployment);
                        match self.attempt(g, deployment, request, depth, run).await {
                            Ok(done) => return Ok(done),
                            Err(failed) => failed,
                        }
                    }
                };
                // Decided before the backoff: only the wait is kept while it runs.
                let members = g.level_members(level);
                let (now, wait) = self.before_retry(g, members, request, failed, retries_done)?;
                // Counted before the backoff, which then keeps only its timer.
                retries_done += 1;
                run.retries += 1;
                run.pending_wait = wait;
                if !wait.is_zero() {
                    self.flush_deferred(run);
                    self.clock.sleep_until(now + wait).await;
                }
            }
        }
    }

    /// The failure a pick with no candidate stands for (`router_rate_limit` while everything
    /// is cooling or over its limits).
    fn no_candidate(&self, g: &Group, request: &Request, none: NoCandidate) -> Failed {
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
        }
    }

    /// After a failed attempt (or pick): give up with the failure (reported: a stream past
    /// the point of no return, the retry policy, the retry budget), or retry (reported, with
    /// its wait). Returns when the wait starts and how long it is; the caller waits.
    fn before_retry(
        &self,
        g: &Group,
        members: &[usize],
        request: &Request,
        failed: Failed,
        retries_done: u32,
    ) -> Result<(Instant, Duration), Failed> {
        let stream_reason = if failed.committed {
            Some(GiveUpReason::StreamContentDelivered)
        } else if failed.retries_closed {
            Some(GiveUpReason::StreamFirstChunkRead)
        } else {
            None
        };
        if let Some(reason) = stream_reason {
            self.emit(
                Some(request.id),
                EventKind::GiveUp {
                    model_group: g.name.clone(),
                    failure: failed.failure.kind,
                    reason,
                },
            );
            return Err(failed);
        }
        let settings = &self.config.settings;
        let now = self.clock.now();
        let healthy_left = members
            .iter()
            .filter(|&&d| !self.is_unavailable(d, now))
            .count();
        let ctx = RetryContext {
            request,
            deployment: failed.deployment.map(|i| &self.config.deployments[i]),
            model_group: &g.name,
            group_size: g.members.len(),
            healthy_left,
            fallbacks_configured: fallback::general_fallbacks_configured(settings, request),
            context_window_fallbacks_configured: !settings.context_window_fallbacks.is_empty(),
            content_policy_fallbacks_configured: !settings.content_policy_fallbacks.is_empty(),
            scope: self.classifier.scope(&failed.failure),
            settings,
        };
        let decision = match self.retry.decide(&failed.failure, &ctx, retries_done) {
            RetryDecision::Retry { .. } if !self.retry_budget.withdraw(now) => {
                RetryDecision::GiveUp(GiveUpReason::RetryBudgetExhausted)
            }
            decision => decision,
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
                return Err(failed);
            }
        };
        let wait_ctx = WaitContext {
            group_size: g.members.len(),
            healthy_left,
            retry_after: self.resolve_retry_after(&failed.failure),
            retry_index: retries_done,
            min_backoff: settings.retry_after,
        };
        let (wait, reason) = self.backoff.wait(&wait_ctx, &mut lock(&self.rng));
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
        Ok((now, wait))
    }
}
