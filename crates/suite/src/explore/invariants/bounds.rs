//! What a scenario's settings and its profile allow, derived once per run: attempt and retry
//! bounds, fallback depth, continuations, Retry-After waits, and each deployment's deadlines.
//!
//! Separate because it reads only the scenario, never an event. Where profiles differ, the
//! difference is one arm of [`ProfileRules::of`] (an exhaustive match, so a new profile must
//! say what it allows), citing the rule it applies; a check never asks for the profile.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use routersim_engine::backoff::{MAX_BACKOFF, MAX_JITTER, MAX_RETRY_AFTER};
use routersim_engine::config::{
    FallbackTarget, KindPolicy, PortkeyStrategy, Profile, RouterConfig, RouterSettings,
};
use routersim_engine::portkey::PortkeyBackoff;
use routersim_engine::stream::StreamRecovery;

use routersim_sim::scenario::Scenario;
use routersim_sim::traffic::TrafficSpec;

/// Per-deployment deadlines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeploymentLimits {
    /// Index into the checker's cooldown slots.
    pub index: usize,
    /// A non-streamed attempt's deadline (`timeout`, the deployment's else the router's).
    pub timeout: Option<Duration>,
    /// A stream's first-token deadline (`stream_timeout`, the deployment's else the router's).
    pub stream_timeout: Option<Duration>,
}

/// The end-to-end deadline of a profile that walks candidates (`profile: multigrid`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WalkDeadline {
    /// `request_deadline`: a non-streamed request's.
    pub request: Duration,
    /// `stream_deadline`: a streamed request's.
    pub stream: Duration,
}

/// How a cooldown written over a live one sets its deadline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CooldownRewrite {
    /// The later of the old deadline and the new write's.
    #[default]
    KeepLater,
    /// The earlier of the first write's deadline and the new write's: a re-write never
    /// extends a live cooldown.
    FirstOrLatest,
}

/// What the settings allow, derived once per scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Arrivals of the run (request ids are `0..arrivals`).
    pub arrivals: u64,
    /// Attempts one request can make (see [`Bounds::derive`]).
    pub max_attempts: u32,
    /// The largest retry budget any failure can get.
    pub max_retry_budget: u32,
    /// `max_fallbacks`: the deepest hop.
    pub max_fallback_depth: u32,
    /// Hops one request can make: one per group other than the first.
    pub max_fallback_hops: u32,
    /// A committed stream may be continued.
    pub continuation: bool,
    /// How many continuations one request may have: 1 by the documented rule, `max_fallbacks`
    /// where a continuation that breaks after content is continued again (`litellm-1.110`).
    pub max_continuations: u32,
    /// `stream_recovery: litellm`: a stream commits at its first content (Multigrid commits
    /// at the first byte, which events do not show).
    pub commits_at_content: bool,
    /// The longest backoff wait (before it: `max(8 s, retry_after)` plus the jitter).
    pub backoff_cap: Duration,
    /// The longest Retry-After wait honoured.
    pub retry_after_cap: Duration,
    /// A Retry-After of 0 is honoured as a wait of 0 (Multigrid's "the provider's Retry-After
    /// wins"); LiteLLM ignores it.
    pub retry_after_zero: bool,
    /// `stream_stall_timeout`.
    pub stall_timeout: Option<Duration>,
    /// By deployment id.
    pub deployments: BTreeMap<Arc<str>, DeploymentLimits>,
    /// The walk's end-to-end deadline, under a profile that walks candidates.
    pub walk_deadline: Option<WalkDeadline>,
    /// `client_retries`: a client's sends of one user request after the first (each a router
    /// request with the same id, announced by a `client_try` event).
    pub client_retries: u32,
    /// How a cooldown written over a live one sets its deadline.
    pub cooldown_rewrite: CooldownRewrite,
    /// `router.replicas`: the routers of a fleet, each with its own cooldowns (checked per
    /// replica).
    pub replicas: usize,
}

impl Bounds {
    /// The bounds a scenario's settings imply, for a run with `arrivals` requests.
    ///
    /// Attempts: a request visits each model group at most once (the walk skips groups
    /// already tried). Under a profile that walks candidate routes, each deployment is a route
    /// tried at most once with up to `B + 1` attempts (`B` counts the profile's own retry key:
    /// `attempts_per_candidate − 1`, `same_route_retries`), capped by the contract profile's
    /// `max_attempts`. A visit runs one retry loop per `order` level, each at most
    /// `B + 1` attempts (`B`, [`Bounds::max_retry_budget`]: the largest of `num_retries`,
    /// every `retry_policy` and `model_group_retry_policy` count, every deployment's
    /// `num_retries`, every traffic entry's `num_retries` and every fallback target's
    /// `num_retries` override), then weighted failover or DeltaLLM's remaining-deployments
    /// walk, at most one attempt per deployment of the group. Each mid-stream continuation adds
    /// one ([`Bounds::max_continuations`]). So `max_attempts = Σ_groups (levels·(B+1) +
    /// deployments) + continuations`: loose (it assumes every group is reachable and every
    /// retry fails), never too small.
    pub fn derive(scenario: &Scenario, arrivals: u64) -> Self {
        let router = &scenario.router;
        let settings = &router.settings;
        let rules = ProfileRules::of(settings);
        let budget = match rules.walk {
            WalkRule::FallbackLists => max_retry_budget(scenario),
            WalkRule::Candidates { retries, .. } => max_retry_budget(scenario).max(retries),
        };
        let mut groups: BTreeMap<&str, (u32, Vec<Option<u32>>)> = BTreeMap::new();
        for d in &router.deployments {
            let entry = groups.entry(&d.model_name).or_default();
            entry.0 += 1;
            if !entry.1.contains(&d.order) {
                entry.1.push(d.order);
            }
        }

        // A continuation is a step of LiteLLM's fallback walk; a walk over candidate routes
        // (multigrid, contract: the engine's `router/candidates.rs`) never continues a stream,
        // whatever its stream recovery.
        let continuation = settings.enable_mid_stream_fallback_continuation
            && settings.stream_recovery == StreamRecovery::LiteLlm
            && rules.walk == WalkRule::FallbackLists;
        let max_continuations = match (continuation, rules.chained_continuations) {
            (false, _) => 0,
            (true, false) => 1,
            (true, true) => settings.max_fallbacks,
        };
        let per_group = |(size, levels): &(u32, Vec<Option<u32>>)| match rules.walk {
            WalkRule::FallbackLists => (levels.len() as u32)
                .saturating_mul(budget.saturating_add(1))
                .saturating_add(*size),
            WalkRule::Candidates { .. } => size.saturating_mul(budget.saturating_add(1)),
        };
        let walked = groups.values().map(per_group).fold(0, u32::saturating_add);
        let one_route = matches!(
            rules.walk,
            WalkRule::Candidates {
                one_route: true,
                ..
            }
        );
        let walked = match rules.walk {
            WalkRule::Candidates { cap: Some(cap), .. } => walked.min(cap),
            _ if one_route => walked.min(budget.saturating_add(1)),
            _ => walked,
        };
        let max_attempts = walked.saturating_add(max_continuations);
        let deployments = router
            .deployments
            .iter()
            .enumerate()
            .map(|(index, d)| {
                (
                    d.id.clone(),
                    DeploymentLimits {
                        index,
                        timeout: d.timeout.or(settings.timeout),
                        stream_timeout: d.stream_timeout.or(settings.stream_timeout),
                    },
                )
            })
            .collect();
        Bounds {
            arrivals,
            max_attempts,
            max_retry_budget: budget,
            max_fallback_depth: settings.max_fallbacks,
            max_fallback_hops: if one_route {
                0
            } else {
                (groups.len() as u32).saturating_sub(1)
            },
            continuation,
            max_continuations,
            commits_at_content: settings.stream_recovery == StreamRecovery::LiteLlm,
            backoff_cap: MAX_BACKOFF.max(settings.retry_after).max(
                rules
                    .uncapped_backoff
                    .map_or(Duration::ZERO, |wait| wait(budget.saturating_sub(1))),
            ) + MAX_JITTER,
            retry_after_cap: rules.retry_after_cap,
            retry_after_zero: rules.retry_after_zero,
            stall_timeout: settings.stream_stall_timeout,
            deployments,
            walk_deadline: settings
                .profile
                .is_some_and(|p| p.has_walk_deadline())
                .then_some(WalkDeadline {
                    request: settings.request_deadline,
                    stream: settings.stream_deadline,
                }),
            client_retries: scenario.client_retries,
            replicas: scenario.fleet.replicas.max(1),
            cooldown_rewrite: rules.cooldown_rewrite,
        }
    }
}

/// What a profile's own rules allow where profiles differ.
#[derive(Clone, Copy, Debug)]
struct ProfileRules {
    /// A continuation that breaks after its own content is continued again, each one a
    /// fallback level deeper (so at most `max_fallbacks` of them).
    chained_continuations: bool,
    /// The longest Retry-After wait.
    retry_after_cap: Duration,
    /// A Retry-After of 0 is a wait of 0.
    retry_after_zero: bool,
    /// How a cooldown written over a live one sets its deadline.
    cooldown_rewrite: CooldownRewrite,
    /// How the request is walked, and the retries it gives a route.
    walk: WalkRule,
    /// The wait before retry `k` (0-based) of a backoff with no cap, when the profile's has
    /// none (its last retry's wait is then the longest a backoff can be).
    uncapped_backoff: Option<fn(u32) -> Duration>,
}

/// How a profile walks a request, for the attempt bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WalkRule {
    /// LiteLLM's: per group, a retry loop per `order` level, then failover.
    FallbackLists,
    /// Candidate routes, each deployment at most once with its own retries (`retries`: the
    /// most a route gets from the profile's own key).
    Candidates {
        /// Retries on one route.
        retries: u32,
        /// The walk's cap on attempts per request, when it has one.
        cap: Option<u32>,
        /// The walk tries one route only (Portkey's `loadbalance`): one retry loop, no hop.
        one_route: bool,
    },
}

impl ProfileRules {
    /// The rules of the settings' profile (none set: `litellm`).
    fn of(settings: &RouterSettings) -> Self {
        // LiteLLM's documented wait: *"the router honors the provider's Retry-After, up to
        // one minute"*; 0 is not a Retry-After it honours (`backoff::LiteLlmBackoff`).
        let documented = ProfileRules {
            chained_continuations: false,
            retry_after_cap: MAX_RETRY_AFTER,
            retry_after_zero: false,
            cooldown_rewrite: CooldownRewrite::KeepLater,
            walk: WalkRule::FallbackLists,
            uncapped_backoff: None,
        };
        // The Multigrid wait (the contract profile waits as Multigrid does): *"The provider's
        // Retry-After wins over our backoff, in either legal form — seconds or an HTTP date"*,
        // with no cap of its own; 0 is a legal delay-seconds (RFC 9110 §10.2.3). The walk's
        // deadline bounds the wait: *"If a wait would consume what is left of it, we fail
        // over now instead"* (checked by `within_walk_deadline`).
        let multigrid_wait = ProfileRules {
            retry_after_cap: settings.request_deadline.max(settings.stream_deadline),
            retry_after_zero: true,
            ..documented
        };
        match settings.profile.unwrap_or(Profile::LiteLlm) {
            Profile::LiteLlm | Profile::DeltaLlm => documented,
            // LiteLLM 1.110.2, measured by the oracle: a Retry-After in (0, 60] s is the base
            // and its jitter (up to 0.75 s) is added to it too (calls 24-27); a continuation
            // is the fallback walk, so one that breaks after content is continued again, one
            // level deeper each time, down to `max_fallbacks` (streams 23, 110-118).
            // Its store's re-write never extends a live cooldown: the deadline becomes the
            // earlier of the first write's and the new one's (calls 44-48).
            Profile::LiteLlm110 => ProfileRules {
                chained_continuations: true,
                retry_after_cap: MAX_RETRY_AFTER + MAX_JITTER,
                cooldown_rewrite: CooldownRewrite::FirstOrLatest,
                ..documented
            },
            // *"Three attempts per candidate by default, the first included"*:
            // `attempts_per_candidate` tries on each candidate route.
            Profile::Multigrid => ProfileRules {
                walk: WalkRule::Candidates {
                    retries: settings.attempts_per_candidate.saturating_sub(1),
                    cap: None,
                    one_route: false,
                },
                ..multigrid_wait
            },
            // The contract seed: *"Stop after a small number of attempts"* — `max_attempts`
            // per request over every route, `same_route_retries` on one.
            Profile::Contract => ProfileRules {
                walk: WalkRule::Candidates {
                    retries: settings.same_route_retries,
                    cap: Some(settings.max_attempts),
                    one_route: false,
                },
                ..multigrid_wait
            },
            // The Portkey gateway 1.15.2 (`src/handlers/handlerUtils.ts`): a `fallback`
            // strategy over the group's targets, each tried with its own retries (the
            // retry budget), never a stream continuation; Retry-After within 60 s
            // (`MAX_RETRY_LIMIT_MS`, `src/globals.ts`); its `loadbalance` strategy tries the one
            // target it draws and never another (no hop).
            Profile::Portkey => ProfileRules {
                walk: WalkRule::Candidates {
                    retries: 0,
                    cap: None,
                    one_route: settings.portkey_strategy == PortkeyStrategy::Loadbalance,
                },
                // Its waits double from 1 s with no cap (`PortkeyBackoff`).
                uncapped_backoff: Some(PortkeyBackoff::wait_before),
                ..documented
            },
        }
    }
}

/// The largest retry budget the config and the traffic can produce (see [`Bounds::derive`]).
pub(super) fn max_retry_budget(scenario: &Scenario) -> u32 {
    let router: &RouterConfig = &scenario.router;
    let settings = &router.settings;
    let policy_max = |p: &KindPolicy| p.per_kind.values().copied().chain(p.default).max();
    let target_max = |targets: &[FallbackTarget]| {
        targets
            .iter()
            .filter_map(|t| t.overrides.get("num_retries"))
            .filter_map(|v| v.as_u64())
            // The engine reads the override as `as u32`.
            .map(|v| v as u32)
            .max()
    };
    let maps = [
        &settings.fallbacks,
        &settings.context_window_fallbacks,
        &settings.content_policy_fallbacks,
    ];
    let traffic = scenario.traffic.iter().map(|t| match t {
        TrafficSpec::Request(r) => &r.template,
        TrafficSpec::Stream(s) => &s.template,
    });
    std::iter::once(settings.num_retries)
        .chain(settings.retry_policy.as_ref().and_then(policy_max))
        .chain(
            settings
                .model_group_retry_policy
                .values()
                .filter_map(policy_max),
        )
        .chain(router.deployments.iter().filter_map(|d| d.num_retries))
        .chain(
            maps.iter()
                .flat_map(|m| m.entries.iter())
                .filter_map(|(_, targets)| target_max(targets)),
        )
        .chain(traffic.clone().filter_map(|t| t.num_retries))
        .chain(traffic.filter_map(|t| t.fallbacks.as_deref().and_then(target_max)))
        .max()
        .unwrap_or(0)
}
