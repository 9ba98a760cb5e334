//! Multigrid's walk (`profile: multigrid`, see [`crate::multigrid`] for the rules and the
//! seed's lines): an ordered list of candidate routes — every deployment of the group asked
//! for, then each model of the request's `models` chain and its deployments — each with its
//! own attempts (the retry loop on the route, `retry_loop.rs`), under one end-to-end deadline.
//! Chosen by the profile's walk ([`Walk::Candidates`](crate::profile::Walk::Candidates)); the
//! attempt itself is the router's one attempt (`attempt.rs`). `profile: contract` walks
//! the same way, and adds through [`RouteAdmission`](crate::contract::RouteAdmission): routes
//! filtered by the request's contract before ranking, ranked by latency then cost, a cap on
//! attempts, a per-request deadline and the time an attempt needs before it.

use std::sync::Arc;

use tokio::time::Instant;

use super::core::{Router, lock};
use super::group::Group;
use super::retry_loop::Scope;
use super::run::{Failed, NoCandidate, RequestRun};
use crate::clock::Clock;
use crate::event::{EventKind, FallbackLevel, FilterReason, GiveUpReason};
use crate::failure::FailureKind;
use crate::provider::Provider;
use crate::request::{Completion, Request, RouterFailure};
use crate::small::{Indices, Tried};

/// What the walk has seen so far, beside the request's run.
struct WalkState {
    /// The request's end-to-end deadline.
    deadline: Instant,
    /// The profile's cap on attempts per request.
    max_attempts: Option<u32>,
    /// `allow_fallbacks: false`: stop after the first usable route.
    first_route_only: bool,
    /// The deadline left no room for an attempt.
    out_of_time: bool,
    /// A route was filtered out as suppressed (cooling).
    saw_suppressed: bool,
    /// The last failure.
    last: Option<Failed>,
    /// The first candidate found unusable, and why.
    unusable: Option<(usize, NoCandidate)>,
    /// The group the request is at: the first group entered, then each group hopped to.
    serving: Option<Arc<str>>,
    /// The group entered after `serving` and its position in the request's chain: a hop
    /// there is counted (`fallback`) only when an attempt on one of its routes starts.
    entered: Option<(Arc<str>, usize)>,
    /// Usable routes tried.
    routes: u32,
    /// Fallback depth (groups entered after the first).
    depth: u32,
}

/// What the walk does with one candidate route.
enum Check {
    /// Try it.
    Go,
    /// Skip it.
    Skip,
    /// End the walk.
    Stop,
}

/// The walk's horizon when its profile sets no deadline (a year: later than any run).
const NO_DEADLINE: std::time::Duration = std::time::Duration::from_secs(365 * 24 * 3600);

impl<P: Provider, C: Clock> Router<P, C> {
    /// The whole walk of one request; the last failure when every candidate failed.
    pub(super) fn walk_candidates<'a>(
        &'a self,
        request: &'a Request,
        run: &'a mut RequestRun,
    ) -> impl Future<Output = Result<Completion, RouterFailure>> + 'a {
        async move {
            let mut walk = self.start_walk(request, run);
            let models = std::iter::once(&request.model).chain(request.models.iter());
            'walk: for (position, model) in models.enumerate() {
                let Some((group, mut visited)) =
                    self.enter_group(position, model, request, run, &mut walk)
                else {
                    continue;
                };
                let g = &self.groups[group];
                let mut cursor = 0;
                while let Some(member) = self.next_member(g, request, visited, &mut cursor) {
                    visited |= 1u128 << member.min(127);
                    let d = g.members[member];
                    match self.check_route(g, group, d, request, run, &mut walk) {
                        Check::Go => {}
                        Check::Skip => continue,
                        Check::Stop => break 'walk,
                    }
                    self.hop_to_entered(request, run, &mut walk);
                    walk.routes += 1;
                    let mut tried = Tried::new();
                    let scope = Scope::Route(d as u32);
                    match self
                        .retry_loop(g, scope, request, walk.depth, run, &mut tried)
                        .await
                    {
                        Ok(done) => return Ok(done),
                        Err(failed) => {
                            let stop = failed.ends_walk;
                            walk.last = Some(failed);
                            if stop {
                                break 'walk;
                            }
                        }
                    }
                }
            }
            Err(self.walk_failure(walk, request))
        }
    }

    /// The walk's state at its start: its deadline (the request's arrival plus the contract's
    /// `deadline_ms`, else `request_deadline` / `stream_deadline`), set on the run too, where
    /// it cuts an attempt still running there.
    fn start_walk(&self, request: &Request, run: &mut RequestRun) -> WalkState {
        let settings = &self.config.settings;
        let limit = if request.stream {
            settings.stream_deadline
        } else {
            settings.request_deadline
        };
        let limit = self.admission.deadline(request).unwrap_or(limit);
        // A walk without a deadline (`profile: portkey`: the gateway has none) is never out of
        // time, and its calls are not cut.
        let has_deadline = crate::profile::spec(settings.profile).walk_deadline;
        let deadline = run.start + if has_deadline { limit } else { NO_DEADLINE };
        run.walk_deadline = has_deadline.then_some(deadline);
        WalkState {
            deadline,
            max_attempts: self.admission.max_attempts(settings),
            first_route_only: request.disable_fallbacks
                || !settings.allow_fallbacks
                || self.admission.picks_one_route(settings),
            out_of_time: false,
            saw_suppressed: false,
            last: None,
            unusable: None,
            serving: None,
            entered: None,
            routes: 0,
            depth: 0,
        }
    }

    /// Enters the group `model` names (its position in the request's chain), if the walk
    /// goes there: its routes the contract rules out (a mask). A group after the first is a
    /// hop only once an attempt there starts ([`Router::hop_to_entered`]); a group with no
    /// compatible route is none.
    fn enter_group(
        &self,
        position: usize,
        model: &str,
        request: &Request,
        run: &mut RequestRun,
        walk: &mut WalkState,
    ) -> Option<(usize, u128)> {
        let group = self.resolve_group(model)?;
        if run.tried_groups.contains(&group) || (walk.first_route_only && walk.routes > 0) {
            return None;
        }
        run.tried_groups.push(group);
        let g = &self.groups[group];
        // The seed's order: filter every route first (each filtered one reported), then rank
        // the rest; cost and suppression are checked again before each attempt, as the walk
        // spends budget and cools routes.
        let (visited, suppressed) = self.filter_group(g, request, run);
        walk.saw_suppressed |= suppressed;
        if g.members.len() <= 128 && visited.count_ones() as usize == g.members.len() {
            return None;
        }
        walk.entered = None;
        if walk.serving.is_none() {
            walk.serving = Some(g.name.clone());
        } else {
            walk.entered = Some((g.name.clone(), position));
        }
        Some((group, visited))
    }

    /// An attempt is about to start in the group last entered: when that is not the group
    /// the request is at, the request hops there (`fallback`, counted in its fallbacks). A
    /// group the walk leaves without an attempt (its routes skipped, or the walk stopped by
    /// the deadline or the attempt cap) is no hop.
    fn hop_to_entered(&self, request: &Request, run: &mut RequestRun, walk: &mut WalkState) {
        let Some((target, position)) = walk.entered.take() else {
            return;
        };
        let Some(source) = walk.serving.replace(target.clone()) else {
            return;
        };
        walk.depth += 1;
        run.fallbacks += 1;
        run.hop(walk.depth);
        self.emit(
            Some(request.id),
            EventKind::Fallback {
                source,
                target,
                order: position.saturating_sub(1) as u32,
                depth: walk.depth,
                level: FallbackLevel::General,
                failure: walk
                    .last
                    .as_ref()
                    .map_or(FailureKind::RouterRateLimit, |f| f.failure.kind),
            },
        );
    }

    /// Whether the walk tries route `d` of `g` (group index `group`) now: not when the
    /// contract rules it out or it is not usable (skipped), nor past the first usable route
    /// under `allow_fallbacks: false`, the profile's attempt cap or the deadline (the walk
    /// ends); a route the time left is too short for is skipped (a faster one may fit).
    fn check_route(
        &self,
        g: &Group,
        group: usize,
        d: usize,
        request: &Request,
        run: &RequestRun,
        walk: &mut WalkState,
    ) -> Check {
        if let Some(reason) = self.route_filtered(g, d, request, run) {
            walk.saw_suppressed |= reason == FilterReason::Suppressed;
            return Check::Skip;
        }
        if let Err(none) = self.usable(g, d, request) {
            walk.unusable.get_or_insert((group, none));
            return Check::Skip;
        }
        if walk.first_route_only && walk.routes > 0 {
            return Check::Stop;
        }
        if walk
            .max_attempts
            .is_some_and(|max| run.attempts.len() as u32 >= max)
        {
            return Check::Stop;
        }
        let now = self.clock.now();
        if now >= walk.deadline {
            self.deadline_exhausted(g, request, walk.last.as_ref());
            walk.out_of_time = true;
            return Check::Stop;
        }
        if now + self.allowance(d) > walk.deadline {
            self.deadline_exhausted(g, request, walk.last.as_ref());
            walk.out_of_time = true;
            return Check::Skip;
        }
        Check::Go
    }

    /// What a walk that got no answer returns: the last failure, else why no route was
    /// usable, else a timeout when the deadline left no room, else `router_rate_limit` when
    /// every compatible route was cooling, else a bad request (no route can satisfy the
    /// request: its contract, or its model).
    fn walk_failure(&self, walk: WalkState, request: &Request) -> RouterFailure {
        match (walk.last, walk.unusable) {
            (Some(failed), _) => failed.into_router_failure(),
            (None, Some((group, none))) => self
                .no_candidate(&self.groups[group], request, none)
                .into_router_failure(),
            (None, None) if walk.out_of_time => RouterFailure {
                kind: FailureKind::Timeout,
                status: FailureKind::Timeout.default_status(),
                retry_after: None,
            },
            // Every compatible route is cooling: as when every deployment of a group is.
            (None, None) if walk.saw_suppressed => RouterFailure {
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
        if self.admission.picks_one_route(&self.config.settings) {
            return self.pick_one(g, visited, cursor);
        }
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

    /// The admission's one pick among the members of `g` not `visited` (`cursor`: made).
    fn pick_one(&self, g: &Group, visited: u128, cursor: &mut usize) -> Option<usize> {
        if std::mem::replace(cursor, 1) > 0 {
            return None;
        }
        let open: Vec<usize> = (0..g.members.len())
            .filter(|&p| p >= 128 || visited & (1u128 << p) == 0)
            .collect();
        let routes: Vec<_> = open
            .iter()
            .map(|&p| &self.config.deployments[g.members[p]])
            .collect();
        let picked = self.admission.pick_route(&routes, &mut lock(&self.rng))?;
        open.get(picked).copied()
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
    pub(super) fn allowance(&self, d: usize) -> std::time::Duration {
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
}
