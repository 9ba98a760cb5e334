//! Why the router did what an event reports: the reasons and sources events carry, each with
//! its name in reports.

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
