//! A group visit: the retry loop on each `order` level in turn, then weighted failover over
//! the deployments not yet tried; and the candidates a level offers a pick (DeltaLLM's
//! filter order), and the pick itself (the injected strategy).

use std::time::Duration;

use tokio::time::Instant;

use super::core::{Router, lock};
use super::group::Group;
use super::retry_loop::Scope;
use super::run::{Failed, NoCandidate, RequestRun};
use crate::classify::RecoveryScope;
use crate::clock::Clock;
use crate::config::RoutingStrategyName;
use crate::event::EventKind;
use crate::provider::Provider;
use crate::request::{Completion, Request};
use crate::small::{Indices, Tried};
use crate::strategy::PickContext;

impl<P: Provider, C: Clock> Router<P, C> {
    /// One visit to a group: order levels, then weighted failover.
    pub(super) fn serve_group(
        &self,
        g: &Group,
        request: &Request,
        depth: u32,
        run: &mut RequestRun,
    ) -> impl Future<Output = Result<Completion, Failed>> {
        async move {
            let mut level = {
                let now = self.clock.now();
                (0..g.levels.len())
                    .find(|&l| {
                        g.level_members(l)
                            .iter()
                            .any(|&d| !self.is_unavailable(d, now))
                    })
                    .unwrap_or(0)
            };
            let mut tried = Tried::new();
            let failed = loop {
                let failed = match self
                    .retry_loop(
                        g,
                        Scope::Level(level as u32),
                        request,
                        depth,
                        run,
                        &mut tried,
                    )
                    .await
                {
                    Ok(done) => return Ok(done),
                    Err(failed) => failed,
                };
                if failed.committed || failed.retries_closed || failed.no_replay {
                    return Err(failed);
                }
                let skips_walk = failed.failure.kind.has_dedicated_fallback_list()
                    || self.classifier.scope(&failed.failure) != RecoveryScope::RetryPolicy;
                if request.disable_fallbacks || skips_walk || level + 1 >= g.levels.len() {
                    break failed;
                }
                self.emit(
                    Some(request.id),
                    EventKind::OrderFallback {
                        model_group: g.name.clone(),
                        from_order: g.levels[level].0,
                        to_order: g.levels[level + 1].0,
                    },
                );
                run.nested_hop(depth);
                level += 1;
            };
            let scope = self.classifier.scope(&failed.failure);
            let weighted = self.config.settings.enable_weighted_failover
                && self.config.settings.routing_strategy == RoutingStrategyName::SimpleShuffle
                && scope == RecoveryScope::RetryPolicy
                && !failed.failure.kind.has_dedicated_fallback_list();
            let failover = !request.disable_fallbacks
                && (weighted || scope == RecoveryScope::RemainingDeployments);
            if !failover {
                return Err(failed);
            }
            // Boxed: only a request that fails over pays for that state while it is in flight.
            // One await: a second one here would keep `failed` across both (80 bytes more for
            // every request in flight).
            Box::pin(self.fail_over(g, level, request, depth, run, tried, failed)).await
        }
    }

    /// Weighted failover: one attempt on each deployment of the group not yet tried and not
    /// cooling, picked by the strategy, until one succeeds or the classifier says stop.
    #[allow(
        clippy::too_many_arguments,
        reason = "the visit's state, passed by value so that no future keeps it twice"
    )]
    fn fail_over(
        &self,
        g: &Group,
        level: usize,
        request: &Request,
        depth: u32,
        run: &mut RequestRun,
        mut tried: Tried,
        mut failed: Failed,
    ) -> impl Future<Output = Result<Completion, Failed>> {
        async move {
            if self.retry.failover_hops_retry() {
                return self
                    .fail_over_scopes(g, level, request, depth, run, tried, failed)
                    .await;
            }
            loop {
                // The candidates live only until the pick: they are not kept across the attempt.
                let deployment = {
                    let now = self.clock.now();
                    let mut candidates = Indices::new();
                    candidates.extend(
                        g.members
                            .iter()
                            .copied()
                            .filter(|d| !tried.contains(d) && !self.is_unavailable(*d, now)),
                    );
                    if candidates.is_empty() {
                        return Err(failed);
                    }
                    let candidates = candidates.as_slice();
                    candidates[self.pick_position(candidates, request, now)]
                };
                if let Some(excluded) = tried.last() {
                    run.nested_hop(depth);
                    self.emit(
                        Some(request.id),
                        EventKind::WeightedFailover {
                            model_group: g.name.clone(),
                            excluded: self.config.deployments[excluded].id.clone(),
                        },
                    );
                }
                tried.push(deployment);
                self.flush_deferred(run);
                match self.attempt(g, deployment, request, depth, run).await {
                    Ok(done) => return Ok(done),
                    Err(f) if f.committed || f.retries_closed || f.no_replay => return Err(f),
                    Err(f) => {
                        let stop =
                            self.classifier.scope(&f.failure) == RecoveryScope::GeneralFallbacks;
                        failed = f;
                        if stop {
                            return Err(failed);
                        }
                    }
                }
            }
        }
    }

    /// Weighted failover as nested retry scopes (LiteLLM 1.110.2): each hop excludes the
    /// deployments that failed so far and runs a retry loop, with its own budget, on the rest,
    /// until one succeeds or none is left.
    #[allow(
        clippy::too_many_arguments,
        reason = "the visit's state, passed by value so that no future keeps it twice"
    )]
    fn fail_over_scopes(
        &self,
        g: &Group,
        level: usize,
        request: &Request,
        depth: u32,
        run: &mut RequestRun,
        mut excluded: Tried,
        mut failed: Failed,
    ) -> impl Future<Output = Result<Completion, Failed>> {
        async move {
            loop {
                let now = self.clock.now();
                let left = g
                    .members
                    .iter()
                    .any(|&d| !excluded.contains(&d) && !self.is_unavailable(d, now));
                let Some(last) = excluded.last().filter(|_| left) else {
                    return Err(failed);
                };
                self.emit(
                    Some(request.id),
                    EventKind::WeightedFailover {
                        model_group: g.name.clone(),
                        excluded: self.config.deployments[last].id.clone(),
                    },
                );
                run.nested_hop(depth);
                run.failover_excluded = Some(Box::new(excluded.clone()));
                let mut tried = Tried::new();
                let result = self
                    .retry_loop(
                        g,
                        Scope::Level(level as u32),
                        request,
                        depth,
                        run,
                        &mut tried,
                    )
                    .await;
                run.failover_excluded = None;
                match result {
                    Ok(done) => return Ok(done),
                    Err(f) if f.committed || f.no_replay => return Err(f),
                    Err(f) => {
                        let stop =
                            self.classifier.scope(&f.failure) == RecoveryScope::GeneralFallbacks;
                        failed = f;
                        if stop {
                            return Err(failed);
                        }
                        for d in tried.iter() {
                            excluded.insert(d);
                        }
                    }
                }
            }
        }
    }

    /// The strategy's pick among `candidates` (a position in it).
    pub(super) fn pick_position(
        &self,
        candidates: &[usize],
        request: &Request,
        now: Instant,
    ) -> usize {
        let minute = self.load.minute_of(now);
        let pos = self.load.read(|load| {
            let ctx = PickContext {
                deployments: &self.config.deployments,
                candidates,
                request,
                load,
                minute,
            };
            self.strategy.pick(&ctx, &mut lock(&self.rng))
        });
        pos.min(candidates.len().saturating_sub(1))
    }

    fn health_check_routing(&self) -> bool {
        let s = &self.config.settings;
        s.enable_health_check_routing
            && (s.allowed_fails_policy.is_some()
                || self
                    .config
                    .deployments
                    .iter()
                    .any(|d| d.allowed_fails_policy.is_some()))
    }

    /// The deployments of a group level a request may be picked from, in DeltaLLM's order:
    /// drop cooling (and half-open-busy) deployments, filter by the request's tags, then the
    /// pre-call RPM/TPM and context checks.
    pub(super) fn candidates(
        &self,
        members: &[usize],
        request: &Request,
        now: Instant,
        out: &mut Indices,
    ) -> Result<(), NoCandidate> {
        out.clear();
        let deployments = &self.config.deployments;
        let tagged = |d: usize| {
            request.tags.is_empty() || deployments[d].tags.iter().any(|t| request.tags.contains(t))
        };
        let default_tagged = |d: usize| deployments[d].tags.iter().any(|t| t == "default");
        let tag_filter: &dyn Fn(usize) -> bool = if members.iter().any(|&d| tagged(d)) {
            &tagged
        } else if !request.tags.is_empty() && members.iter().any(|&d| default_tagged(d)) {
            &default_tagged
        } else {
            return Err(NoCandidate::NoTagMatch);
        };
        out.extend(
            members
                .iter()
                .copied()
                .filter(|&d| tag_filter(d) && !self.is_unavailable(d, now)),
        );
        if out.is_empty() {
            if self.health_check_routing() {
                out.extend(members.iter().copied().filter(|&d| tag_filter(d)));
            } else {
                let retry_after = members
                    .iter()
                    .filter_map(|&d| self.state.cooldown_until(d))
                    .min()
                    .map_or(Duration::ZERO, |until| until.saturating_duration_since(now));
                return Err(NoCandidate::AllCooling { retry_after });
            }
        }
        if !self.config.settings.enable_pre_call_checks {
            return Ok(());
        }
        self.pre_call_checks(request, now, out)
    }

    /// Pre-call checks: drop deployments the prompt overflows or that are over their RPM/TPM
    /// this minute.
    fn pre_call_checks(
        &self,
        request: &Request,
        now: Instant,
        out: &mut Indices,
    ) -> Result<(), NoCandidate> {
        let deployments = &self.config.deployments;
        let minute = self.load.minute_of(now);
        let (mut over_limits, mut too_large) = (false, false);
        let mut kept = Indices::new();
        self.load.read(|load| {
            kept.extend(out.as_slice().iter().copied().filter(|&d| {
                let dep = &deployments[d];
                if dep
                    .max_input_tokens
                    .is_some_and(|m| request.input_tokens > m)
                {
                    too_large = true;
                    return false;
                }
                let (requests, tokens) = load[d].usage(minute);
                let over = dep.rpm.is_some_and(|rpm| requests >= rpm)
                    || dep
                        .tpm
                        .is_some_and(|tpm| tokens + u64::from(request.input_tokens) > tpm);
                over_limits |= over;
                !over
            }));
        });
        *out = kept;
        if out.is_empty() {
            if over_limits {
                let retry_after = self.load.until_next_minute(now);
                return Err(NoCandidate::OverLimits { retry_after });
            }
            if too_large {
                return Err(NoCandidate::ContextTooLarge);
            }
        }
        Ok(())
    }
}
