//! What happened: a routing event and its kinds.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::alternative::AlternativeEvent;
use super::contract::{FilterReason, ValidationReason};
use super::reasons::{
    CooldownReason, CooldownSource, FallbackLevel, GiveUpReason, RecoveredVia, WaitReason,
};
use crate::config::Replay;
use crate::failure::FailureKind;
use crate::stream::{BreakKind, StreamStats};

/// A routing event. `at` is the clock's instant; `request_id` names the request that caused it
/// (`None` for events the background sweeper emits). `S` names groups and deployments.
#[derive(Clone, Debug, PartialEq)]
pub struct RoutingEvent<S = Arc<str>> {
    /// When it happened.
    pub at: Instant,
    /// The request it belongs to.
    pub request_id: Option<u64>,
    /// What happened.
    pub kind: EventKind<S>,
}

/// What happened (`S`: see [`RoutingEvent`]).
#[derive(Clone, Debug, PartialEq)]
pub enum EventKind<S = Arc<str>> {
    /// A provider call starts.
    AttemptStart {
        /// Counts from 1 across the request.
        attempt: u32,
        /// Model group served.
        model_group: S,
        /// Deployment called.
        deployment_id: S,
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
        model_group: S,
        /// Deployment called.
        deployment_id: S,
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
        model_group: S,
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
        model_group: S,
        /// The last failure.
        failure: FailureKind,
        /// Why.
        reason: GiveUpReason,
    },
    /// The next `order` level of the same group is tried.
    OrderFallback {
        /// Model group.
        model_group: S,
        /// The level that failed.
        from_order: Option<u32>,
        /// The level tried next.
        to_order: Option<u32>,
    },
    /// Weighted failover: the failed deployment is excluded and the pick repeats.
    WeightedFailover {
        /// Model group.
        model_group: S,
        /// The deployment excluded.
        excluded: S,
    },
    /// A fallback hop to another model group.
    Fallback {
        /// The group that failed.
        source: S,
        /// The group tried next.
        target: S,
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
        model_group: S,
        /// Deployment.
        deployment_id: S,
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
        model_group: S,
        /// Deployment.
        deployment_id: S,
    },
    /// A cooldown ended under half-open recovery: the deployment admits one trial request.
    HalfOpen {
        /// Model group.
        model_group: S,
        /// Deployment.
        deployment_id: S,
    },
    /// A deployment is healthy again (its trial or a probe succeeded): cooldown, half-open
    /// state and failure counts are cleared.
    Recovered {
        /// Model group.
        model_group: S,
        /// Deployment.
        deployment_id: S,
        /// What showed it healthy.
        via: RecoveredVia,
    },
    /// A background health probe succeeded.
    ProbeOk {
        /// Model group.
        model_group: S,
        /// Deployment.
        deployment_id: S,
    },
    /// A background health probe failed.
    ProbeFailed {
        /// Model group.
        model_group: S,
        /// Deployment.
        deployment_id: S,
        /// How.
        failure: FailureKind,
    },
    /// Every candidate of a group is cooling: the pick fails with `router_rate_limit`.
    AllCooled {
        /// Model group.
        model_group: S,
        /// Time until the soonest cooldown ends.
        retry_after: Duration,
    },
    /// The request is done.
    RequestEnd {
        /// Model asked for.
        model: S,
        /// Group of the final attempt.
        final_model_group: S,
        /// Deployment of the final attempt.
        final_deployment_id: Option<S>,
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
        model_group: S,
        /// Deployment whose stream broke.
        deployment_id: S,
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
        from_group: S,
        /// Deployment of the broken stream.
        from_deployment: S,
        /// Group continuing it.
        to_group: S,
        /// Deployment continuing it.
        to_deployment: S,
        /// Tokens sent as the assistant prefill.
        prefill_tokens: u32,
    },
    /// `profile: contract`: a route that cannot satisfy the request's contract was left out
    /// of the walk before ranking (it is never tried).
    RouteFiltered {
        /// Model group.
        model_group: S,
        /// The deployment left out.
        deployment_id: S,
        /// The first filter it failed.
        reason: FilterReason,
    },
    /// `profile: contract`: a successful (200) answer failed validation before acceptance.
    ValidationRejected {
        /// Model group.
        model_group: S,
        /// The deployment that answered.
        deployment_id: S,
        /// The attempt (counting from 1 across the request).
        attempt: u32,
        /// Why it was rejected.
        reason: ValidationReason,
    },
    /// A successful attempt on a deployment with prices (`input_cost_per_token`,
    /// `output_cost_per_token`; one not set counts 0): what the accepted response cost.
    ResponseCost {
        /// Model group.
        model_group: S,
        /// Deployment called.
        deployment_id: S,
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
        model_group: S,
        /// Deployment called.
        deployment_id: S,
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
    Alternative(AlternativeEvent<S>),
}

impl<S> EventKind<S> {
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
