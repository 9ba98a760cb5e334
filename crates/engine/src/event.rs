//! Routing events: the only thing the engine tells the outside world besides each result.
//!
//! Seed: *"Each hop is reported as a `Fallback` routing event with its source, target, order,
//! depth and level."* and *"Cooldown alerts and metrics fire from the `CooldownSet` routing
//! event."* Every report routersim writes is derived from these.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::contract::{FilterReason, ValidationReason};
use crate::failure::FailureKind;
use crate::replay::Replay;
use crate::stream::{BreakKind, StreamStats};

/// Which fallback list a hop came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FallbackLevel {
    /// `fallbacks` (or the request's own).
    General,
    /// `context_window_fallbacks`.
    ContextWindow,
    /// `content_policy_fallbacks`.
    ContentPolicy,
    /// `default_fallbacks` (the `"*"` entry).
    Default,
}

impl FallbackLevel {
    /// Its name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            FallbackLevel::General => "general",
            FallbackLevel::ContextWindow => "context_window",
            FallbackLevel::ContentPolicy => "content_policy",
            FallbackLevel::Default => "default",
        }
    }
}

/// Why a deployment was cooled down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CooldownReason {
    /// The allowed-fails counter went over its limit.
    AllowedFailsExceeded,
    /// A 429 in a group of two or more deployments.
    RateLimitInGroup,
    /// More than half of the recent requests failed.
    ErrorRate,
    /// A non-retryable status (401, 404) cools even a lone deployment.
    NonRetryableStatus,
    /// A lone deployment whose every request in the window failed (at least the threshold).
    LoneDeploymentAllFailed,
    /// Half-open recovery: the one trial request failed.
    HalfOpenTrialFailed,
    /// A background health probe failed.
    ProbeFailed,
}

/// Where a cooldown's length came from, in LiteLLM's order of precedence: the deployment's
/// own `cooldown_time`, else the provider's Retry-After, else the router's `cooldown_time`.
/// (So a router `cooldown_time` can only matter for cooldowns of the third kind.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CooldownSource {
    /// The deployment's own `cooldown_time` (`litellm_params` or `model_info`).
    Deployment,
    /// The provider's Retry-After.
    RetryAfter,
    /// The router's `cooldown_time` (default 5 s).
    Router,
}

impl CooldownSource {
    /// Its name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            CooldownSource::Deployment => "deployment_cooldown_time",
            CooldownSource::RetryAfter => "retry_after",
            CooldownSource::Router => "router_cooldown_time",
        }
    }
}

/// How a deployment became healthy again before its cooldown would have ended it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveredVia {
    /// Its half-open trial request succeeded.
    Trial,
    /// A background health probe succeeded.
    Probe,
}

impl RecoveredVia {
    /// Its name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            RecoveredVia::Trial => "trial",
            RecoveredVia::Probe => "probe",
        }
    }
}

impl CooldownReason {
    /// Its name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            CooldownReason::AllowedFailsExceeded => "allowed_fails_exceeded",
            CooldownReason::RateLimitInGroup => "rate_limit_in_group",
            CooldownReason::ErrorRate => "error_rate",
            CooldownReason::NonRetryableStatus => "non_retryable_status",
            CooldownReason::LoneDeploymentAllFailed => "lone_deployment_all_failed",
            CooldownReason::HalfOpenTrialFailed => "half_open_trial_failed",
            CooldownReason::ProbeFailed => "probe_failed",
        }
    }
}

/// Why the router waits before a retry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitReason {
    /// The provider's Retry-After.
    RetryAfter,
    /// Exponential backoff with jitter.
    Backoff,
}

impl WaitReason {
    /// Its name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            WaitReason::RetryAfter => "retry_after",
            WaitReason::Backoff => "backoff",
        }
    }
}

/// Why the retry loop in a group stopped (the failure goes on to the walk).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GiveUpReason {
    /// The retry budget is spent.
    RetriesExhausted,
    /// A context-window error with context-window fallbacks configured.
    ContextWindowFallbackExists,
    /// A content-policy error with content-policy fallbacks configured.
    ContentPolicyFallbackExists,
    /// A 4xx other than 401, 403, 408, 409 and 429.
    NonRetryableStatus,
    /// A not-found error.
    NotFound,
    /// A rate limit with no healthy deployment left, and fallbacks exist.
    RateLimitNoHealthyWithFallbacks,
    /// An auth or permission error in a group with a single deployment.
    AuthSingleDeployment,
    /// No healthy deployment is left.
    NoHealthyDeployment,
    /// A stream broke after content reached the caller: a retry would repeat output.
    StreamContentDelivered,
    /// DeltaLLM: an unclassified 401/403/404 goes straight to the general fallback chain.
    ClassifiedGeneralFallbacks,
    /// DeltaLLM: an unclassified 400/409/422 skips same-deployment retries; the group's
    /// remaining deployments are tried, then the general fallbacks.
    ClassifiedRemainingDeployments,
    /// The router's retry budget (shared by every request) refused the retry.
    RetryBudgetExhausted,
    /// The request named a `model_group_alias` entry that maps to no single model group (a
    /// list, a number, …): LiteLLM 1.110.2 loads such a file and fails only these requests,
    /// with a 400 before any attempt. `model_group` is the alias.
    UnroutableAlias,
    /// LiteLLM 1.110.2: a stream's first chunk (even role-only) was read inside the attempt,
    /// so a break after it goes to the fallbacks, never to a retry in the group.
    StreamFirstChunkRead,
    /// LiteLLM 1.110.2: a continuation entered its fallback group (a hop in its trace) and
    /// found no deployment that supports assistant prefill; the original error is raised.
    NoContinuationDeployment,
    /// `profile: multigrid`: the request's end-to-end deadline is reached, or the wait before
    /// the next try would consume what is left of it (the walk fails over now instead).
    DeadlineExhausted,
    /// `profile: contract`: a permanent failure (bad request, auth, not found) ends the walk.
    PermanentFailure,
    /// `profile: contract`: the route cannot serve this request (context, content policy);
    /// only another compatible route is tried.
    RouteIncompatible,
    /// `profile: contract`: the answer was rejected by validation; the walk moves on.
    InvalidResponse,
    /// `retry_throttling` (gRPC's retry throttling): the token bucket is at most half full,
    /// so no retry is taken.
    RetryThrottled,
    /// `replay: never`: the attempt's outcome is ambiguous (the provider may have executed
    /// it), so nothing replays it: no retry, no fallback.
    AmbiguousNotReplayed,
}

impl GiveUpReason {
    /// Its name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            GiveUpReason::RetriesExhausted => "retries_exhausted",
            GiveUpReason::ContextWindowFallbackExists => "context_window_fallback_exists",
            GiveUpReason::ContentPolicyFallbackExists => "content_policy_fallback_exists",
            GiveUpReason::NonRetryableStatus => "non_retryable_status",
            GiveUpReason::NotFound => "not_found",
            GiveUpReason::RateLimitNoHealthyWithFallbacks => "rate_limit_no_healthy_with_fallbacks",
            GiveUpReason::AuthSingleDeployment => "auth_single_deployment",
            GiveUpReason::NoHealthyDeployment => "no_healthy_deployment",
            GiveUpReason::StreamContentDelivered => "stream_content_delivered",
            GiveUpReason::StreamFirstChunkRead => "stream_first_chunk_read",
            GiveUpReason::NoContinuationDeployment => "no_continuation_deployment",
            GiveUpReason::ClassifiedGeneralFallbacks => "classified_general_fallbacks",
            GiveUpReason::ClassifiedRemainingDeployments => "classified_remaining_deployments",
            GiveUpReason::RetryBudgetExhausted => "retry_budget_exhausted",
            GiveUpReason::UnroutableAlias => "unroutable_alias",
            GiveUpReason::DeadlineExhausted => "deadline_exhausted",
            GiveUpReason::PermanentFailure => "permanent_failure",
            GiveUpReason::RouteIncompatible => "route_incompatible",
            GiveUpReason::InvalidResponse => "invalid_response",
            GiveUpReason::RetryThrottled => "retry_throttled",
            GiveUpReason::AmbiguousNotReplayed => "ambiguous_not_replayed",
        }
    }
}

/// A routing event. `at` is the clock's instant; `request_id` names the request that caused it
/// (`None` for events the background sweeper emits).
#[derive(Clone, Debug, PartialEq)]
pub struct RoutingEvent {
    /// When it happened.
    pub at: Instant,
    /// The request it belongs to.
    pub request_id: Option<u64>,
    /// What happened.
    pub kind: EventKind,
}

/// What happened.
#[derive(Clone, Debug, PartialEq)]
pub enum EventKind {
    /// A provider call starts.
    AttemptStart {
        /// Counts from 1 across the request.
        attempt: u32,
        /// Model group served.
        model_group: Arc<str>,
        /// Deployment called.
        deployment_id: Arc<str>,
        /// Fallback depth.
        fallback_depth: u32,
        /// The `max_tokens` the call asks for (a continuation's is reduced by the tokens
        /// already delivered).
        max_tokens: Option<u32>,
    },
    /// A provider call ended.
    AttemptEnd {
        /// Counts from 1 across the request.
        attempt: u32,
        /// When it started.
        start: Instant,
        /// Model group served.
        model_group: Arc<str>,
        /// Deployment called.
        deployment_id: Arc<str>,
        /// `None` on success.
        failure: Option<FailureKind>,
        /// HTTP status (on success: 200).
        status: Option<u16>,
        /// The provider's Retry-After, resolved against the clock.
        retry_after: Option<Duration>,
        /// The wait before this attempt.
        wait: Duration,
        /// Fallback depth.
        fallback_depth: u32,
    },
    /// The router waits before the next attempt.
    Wait {
        /// How long.
        duration: Duration,
        /// Why that long.
        reason: WaitReason,
    },
    /// The retry loop goes round again in the same group.
    Retry {
        /// Model group.
        model_group: Arc<str>,
        /// The failure retried.
        failure: FailureKind,
        /// Which retry this is (1 = first).
        retry: u32,
        /// The budget for this failure kind.
        budget: u32,
    },
    /// The retry loop stopped in this group.
    GiveUp {
        /// Model group.
        model_group: Arc<str>,
        /// The last failure.
        failure: FailureKind,
        /// Why.
        reason: GiveUpReason,
    },
    /// The next `order` level of the same group is tried.
    OrderFallback {
        /// Model group.
        model_group: Arc<str>,
        /// The level that failed.
        from_order: Option<u32>,
        /// The level tried next.
        to_order: Option<u32>,
    },
    /// Weighted failover: the failed deployment is excluded and the pick repeats.
    WeightedFailover {
        /// Model group.
        model_group: Arc<str>,
        /// The deployment excluded.
        excluded: Arc<str>,
    },
    /// A fallback hop to another model group.
    Fallback {
        /// The group that failed.
        source: Arc<str>,
        /// The group tried next.
        target: Arc<str>,
        /// Position of the target in its list (0-based).
        order: u32,
        /// Hop depth (1 = first hop).
        depth: u32,
        /// Which list.
        level: FallbackLevel,
        /// The failure that caused it.
        failure: FailureKind,
    },
    /// A deployment is cooled down (or its cooldown extended).
    CooldownSet {
        /// Model group.
        model_group: Arc<str>,
        /// Deployment.
        deployment_id: Arc<str>,
        /// Why.
        reason: CooldownReason,
        /// The failure that triggered it.
        failure: FailureKind,
        /// How long this cooldown asks for.
        duration: Duration,
        /// Where that length came from.
        source: CooldownSource,
        /// When the deployment is eligible again (the later of old and new deadlines).
        until: Instant,
    },
    /// A cooldown expired; the deployment is eligible again.
    CooldownEnd {
        /// Model group.
        model_group: Arc<str>,
        /// Deployment.
        deployment_id: Arc<str>,
    },
    /// A cooldown ended under half-open recovery: the deployment admits one trial request.
    HalfOpen {
        /// Model group.
        model_group: Arc<str>,
        /// Deployment.
        deployment_id: Arc<str>,
    },
    /// A deployment is healthy again (its trial or a probe succeeded): cooldown, half-open
    /// state and failure counts are cleared.
    Recovered {
        /// Model group.
        model_group: Arc<str>,
        /// Deployment.
        deployment_id: Arc<str>,
        /// What showed it healthy.
        via: RecoveredVia,
    },
    /// A background health probe succeeded.
    ProbeOk {
        /// Model group.
        model_group: Arc<str>,
        /// Deployment.
        deployment_id: Arc<str>,
    },
    /// A background health probe failed.
    ProbeFailed {
        /// Model group.
        model_group: Arc<str>,
        /// Deployment.
        deployment_id: Arc<str>,
        /// How.
        failure: FailureKind,
    },
    /// Every candidate of a group is cooling: the pick fails with `router_rate_limit`.
    AllCooled {
        /// Model group.
        model_group: Arc<str>,
        /// Time until the soonest cooldown ends.
        retry_after: Duration,
    },
    /// The request is done.
    RequestEnd {
        /// Model asked for.
        model: Arc<str>,
        /// Group of the final attempt.
        final_model_group: Arc<str>,
        /// Deployment of the final attempt.
        final_deployment_id: Option<Arc<str>>,
        /// `None` on success.
        failure: Option<FailureKind>,
        /// Status of the final outcome.
        status: Option<u16>,
        /// Provider attempts.
        attempts: u32,
        /// Same-group retries.
        retries: u32,
        /// Fallback hops.
        fallbacks: u32,
        /// Hops as LiteLLM's `x-litellm-attempted-fallbacks` header counts them
        /// ([`CompletionResult::attempted_fallbacks`](crate::request::CompletionResult)).
        attempted_fallbacks: u32,
        /// When the request arrived.
        start: Instant,
        /// For streamed requests: what the caller's stream delivered.
        stream: Option<StreamStats>,
    },
    /// A stream broke (before or after content reached the caller).
    StreamBreak {
        /// Model group.
        model_group: Arc<str>,
        /// Deployment whose stream broke.
        deployment_id: Arc<str>,
        /// The failure it broke with.
        failure: FailureKind,
        /// How it broke.
        how: BreakKind,
        /// Tokens the caller had received from this stream.
        tokens_so_far: u32,
        /// Whether any content had reached the caller.
        after_content: bool,
    },
    /// A broken stream continues on another deployment with the text so far as a prefill.
    StreamContinued {
        /// Group of the broken stream.
        from_group: Arc<str>,
        /// Deployment of the broken stream.
        from_deployment: Arc<str>,
        /// Group continuing it.
        to_group: Arc<str>,
        /// Deployment continuing it.
        to_deployment: Arc<str>,
        /// Tokens sent as the assistant prefill.
        prefill_tokens: u32,
    },
    /// `profile: contract`: a route that cannot satisfy the request's contract was left out
    /// of the walk before ranking (it is never tried).
    RouteFiltered {
        /// Model group.
        model_group: Arc<str>,
        /// The deployment left out.
        deployment_id: Arc<str>,
        /// The first filter it failed.
        reason: FilterReason,
    },
    /// `profile: contract`: a successful (200) answer failed validation before acceptance.
    ValidationRejected {
        /// Model group.
        model_group: Arc<str>,
        /// The deployment that answered.
        deployment_id: Arc<str>,
        /// The attempt (counting from 1 across the request).
        attempt: u32,
        /// Why it was rejected.
        reason: ValidationReason,
    },
    /// A successful attempt on a deployment with prices (`input_cost_per_token`,
    /// `output_cost_per_token`; one not set counts 0): what the accepted response cost.
    ResponseCost {
        /// Model group.
        model_group: Arc<str>,
        /// Deployment called.
        deployment_id: Arc<str>,
        /// Prompt tokens.
        input_tokens: u32,
        /// Output tokens produced.
        output_tokens: u32,
        /// `input_tokens × input price + output_tokens × output price`, USD.
        usd: f64,
    },
    /// The request is a send by a client that retries failures itself (see
    /// [`ClientTry`](crate::request::ClientTry)); the request's first event.
    ClientTry {
        /// 0 for the first send, then the client's retry number.
        try_number: u32,
        /// The client's retries in all.
        retries: u32,
        /// Provider calls made for the earlier sends of the same user request.
        provider_calls_before: u32,
    },
    /// An attempt's connection was lost after the request was sent: the provider may have
    /// executed it (the contracts seed's ambiguous execution; see [`crate::replay`]). Follows
    /// the attempt's `AttemptEnd`.
    AmbiguousOutcome {
        /// Model group.
        model_group: Arc<str>,
        /// Deployment called.
        deployment_id: Arc<str>,
        /// The operation: the request's id (a client's retries of the same user request keep
        /// it).
        operation_id: u64,
        /// `router_settings.replay`: whether (and how) the operation may be sent again.
        replay: Replay,
        /// Whether the provider executed it, when it can say (reported, never decided on).
        executed: Option<bool>,
    },
    /// Content reached the caller: `tokens` tokens, the first `gap_before` after the previous
    /// token (`None` for the stream's first chunk), the rest `inner_gap` apart.
    StreamChunk {
        /// Tokens in the chunk.
        tokens: u32,
        /// Gap from the previous token to this chunk's first.
        gap_before: Option<Duration>,
        /// Gap between consecutive tokens inside the chunk.
        inner_gap: Duration,
    },
    /// What an alternative mechanism did (outlier ejection, hedging; see
    /// [`crate::alternatives`]).
    Alternative(crate::alternatives::AlternativeEvent),
}

impl EventKind {
    /// The event's name in reports.
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::AttemptStart { .. } => "attempt_start",
            EventKind::AttemptEnd { .. } => "attempt_end",
            EventKind::Wait { .. } => "wait",
            EventKind::Retry { .. } => "retry",
            EventKind::GiveUp { .. } => "give_up",
            EventKind::OrderFallback { .. } => "order_fallback",
            EventKind::WeightedFailover { .. } => "weighted_failover",
            EventKind::Fallback { .. } => "fallback",
            EventKind::CooldownSet { .. } => "cooldown_set",
            EventKind::CooldownEnd { .. } => "cooldown_end",
            EventKind::AllCooled { .. } => "all_cooled",
            EventKind::HalfOpen { .. } => "half_open",
            EventKind::Recovered { .. } => "recovered",
            EventKind::ProbeOk { .. } => "probe_ok",
            EventKind::ProbeFailed { .. } => "probe_failed",
            EventKind::RequestEnd { .. } => "request_end",
            EventKind::StreamBreak { .. } => "stream_break",
            EventKind::StreamContinued { .. } => "stream_continued",
            EventKind::AmbiguousOutcome { .. } => "ambiguous_outcome",
            EventKind::ClientTry { .. } => "client_try",
            EventKind::ResponseCost { .. } => "response_cost",
            EventKind::StreamChunk { .. } => "stream_chunk",
            EventKind::RouteFiltered { .. } => "route_filtered",
            EventKind::ValidationRejected { .. } => "validation_rejected",
            EventKind::Alternative(event) => event.name(),
        }
    }
}

/// Where events go. Called synchronously, in order, on the router's task.
pub trait EventSink {
    /// Receives one event.
    fn emit(&self, event: &RoutingEvent);
}

/// Drops every event.
#[derive(Clone, Copy, Debug, Default)]
pub struct NullSink;

impl EventSink for NullSink {
    fn emit(&self, _event: &RoutingEvent) {}
}

/// Keeps every event in memory (tests, small runs).
#[derive(Debug, Default)]
pub struct VecSink {
    events: Mutex<Vec<RoutingEvent>>,
}

impl VecSink {
    /// An empty sink.
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy of every event so far.
    pub fn events(&self) -> Vec<RoutingEvent> {
        crate::sync::lock_unpoisoned(&self.events).clone()
    }
}

impl EventSink for VecSink {
    fn emit(&self, event: &RoutingEvent) {
        crate::sync::lock_unpoisoned(&self.events).push(event.clone());
    }
}

impl<S: EventSink + ?Sized> EventSink for Arc<S> {
    fn emit(&self, event: &RoutingEvent) {
        (**self).emit(event);
    }
}

impl<S: EventSink + ?Sized> EventSink for &S {
    fn emit(&self, event: &RoutingEvent) {
        (**self).emit(event);
    }
}
