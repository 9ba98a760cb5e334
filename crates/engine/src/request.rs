//! What a caller asks the router for, and what it gets back.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use crate::config::FallbackTarget;
use crate::contract::Contract;
use crate::failure::{FailureKind, ProviderFailure};
use crate::stream::{FinishReason, StreamStats};

/// One completion request, as the router sees it.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// The caller's id for this request; every event names it.
    pub id: u64,
    /// The model group (or alias) asked for.
    pub model: Arc<str>,
    /// Prompt size in tokens.
    pub input_tokens: u32,
    /// `max_tokens`, when the caller set one.
    pub max_tokens: Option<u32>,
    /// The request's own `num_retries`; `Some(0)` turns retries off, even against a policy.
    pub num_retries: Option<u32>,
    /// The request's own fallbacks: they replace the router's for this request.
    pub fallbacks: Option<Vec<FallbackTarget>>,
    /// Stop after the retry loop: no order walk, no failover, no fallbacks (`profile:
    /// multigrid`: `allow_fallbacks: false`, stop after the first usable route).
    pub disable_fallbacks: bool,
    /// `models: [...]` (`profile: multigrid`): the models to walk after the one asked for, in
    /// order; every deployment of one is tried before the next is considered. Shared: a
    /// template's requests hold one copy.
    pub models: Arc<[Arc<str>]>,
    /// `metadata.tags`.
    pub tags: Vec<String>,
    /// Whether the caller asked for a stream.
    pub stream: bool,
    /// `response_format`: JSON mode is constrained output (never continued mid-stream).
    pub response_format: ResponseFormat,
    /// Whether the request offers tools.
    pub tools: bool,
    /// Assistant prefill tokens sent with the request (a mid-stream continuation sets this).
    pub prefill_tokens: u32,
    /// For simulated providers only: how many output tokens the answer has (a real provider
    /// decides this itself and ignores the field).
    pub output_tokens: Option<u32>,
    /// Other request params; a fallback target's overrides are merged in for its hop.
    pub params: BTreeMap<String, Value>,
    /// The workload's routing contract (`profile: contract`; shared by every request of the
    /// workload).
    pub contract: Option<Arc<Contract>>,
    /// The caller retries failed requests itself (a retry owner above the router, the
    /// contracts seed's *"retry policies at several application layers can multiply the
    /// resulting load"*): which send of the same user request this is. Reported (a
    /// `client_try` event), never decided on. The id stays the user request's (its operation
    /// id) across the client's sends.
    pub client: Option<ClientTry>,
}

/// One send of a user request by a client that retries failures itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientTry {
    /// 0 for the first send, then 1, 2, … for the client's retries.
    pub try_number: u32,
    /// The client's retries in all (`client_retries`).
    pub retries: u32,
    /// Provider calls the router made for the earlier sends of the same user request.
    pub provider_calls_before: u32,
}

impl Request {
    /// A request for `model` with id `id` and nothing else set.
    pub fn new(id: u64, model: impl Into<Arc<str>>) -> Self {
        Self {
            id,
            model: model.into(),
            ..Self::default()
        }
    }
}

/// `response_format`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ResponseFormat {
    /// Free text.
    #[default]
    Text,
    /// JSON mode or a JSON schema: constrained output.
    Json,
}

/// One provider attempt, as the result reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct AttemptRecord {
    /// Counts from 1 across the whole request.
    pub attempt: u32,
    /// When the call started.
    pub start: Instant,
    /// When it ended.
    pub end: Instant,
    /// The model group served.
    pub model_group: Arc<str>,
    /// The deployment called.
    pub deployment_id: Arc<str>,
    /// `None` for success, else the failure (kind, status, Retry-After).
    pub failure: Option<ProviderFailure>,
    /// The wait before this attempt.
    pub wait: Duration,
    /// How many fallback hops deep this attempt is (0 = the group asked for).
    pub fallback_depth: u32,
    /// The `max_tokens` the call asked for (a continuation's is reduced by the tokens
    /// already delivered).
    pub max_tokens: Option<u32>,
}

impl AttemptRecord {
    /// The outcome's name: `ok` or the failure kind.
    pub fn outcome_name(&self) -> &'static str {
        self.failure.as_ref().map_or("ok", |f| f.kind.as_str())
    }
}

/// What a response said, for validation before acceptance (`profile: contract`): the
/// message content (JSON text for structured output) and the tool calls.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResponseBody {
    /// The message content.
    pub content: Option<String>,
    /// The tool calls, in order.
    pub tool_calls: Vec<ToolCall>,
}

/// One tool call of a response.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolCall {
    /// The tool's name.
    pub name: String,
    /// Its arguments, as the JSON text the model wrote.
    pub arguments: String,
}

/// A successful response.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Completion {
    /// Output tokens produced.
    pub output_tokens: u32,
    /// Why it finished (`content_filter` is a content-policy failure under DeltaLLM's rules).
    pub finish_reason: FinishReason,
    /// The response had no choices at all (DeltaLLM: a `malformed_response`).
    pub empty_choices: bool,
    /// What it said, when the provider passes it on (fake providers do for requests under a
    /// contract that validates; shared, so a completion stays cheap to move).
    pub body: Option<Arc<ResponseBody>>,
}

/// How a request ended: the response, or the original failure.
#[derive(Clone, Debug)]
pub struct CompletionResult {
    /// The request's id.
    pub request_id: u64,
    /// The model group asked for.
    pub model: Arc<str>,
    /// The response, or the failure the caller gets (the original one when a fallback walk failed).
    pub outcome: Result<Completion, RouterFailure>,
    /// Every attempt, in order.
    pub attempts: Vec<AttemptRecord>,
    /// The group that served the final attempt (or was asked for, when nothing was attempted).
    pub final_model_group: Arc<str>,
    /// The deployment of the final attempt.
    pub final_deployment_id: Option<Arc<str>>,
    /// Fallback hops taken.
    pub fallbacks: u32,
    /// Retries: attempts after the first one in a group visit (same-group re-picks).
    pub retries: u32,
    /// Hops as LiteLLM's `x-litellm-attempted-fallbacks` header counts them: the hops from
    /// the group asked for (a fallback, an order fallback or a weighted-failover hop); LiteLLM
    /// nests every later hop inside the one before it and counts the outermost level only.
    pub attempted_fallbacks: u32,
    /// Retries since the last of those hops (LiteLLM's `x-litellm-attempted-retries`).
    pub attempted_retries: u32,
    /// When the request arrived at the router.
    pub start: Instant,
    /// When the router returned.
    pub end: Instant,
    /// For streamed requests: what the caller's stream delivered.
    pub stream: Option<StreamStats>,
}

impl CompletionResult {
    /// End-to-end latency.
    pub fn latency(&self) -> Duration {
        self.end.saturating_duration_since(self.start)
    }
}

/// The failure a caller receives.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind} (status {status:?})")]
pub struct RouterFailure {
    /// The failure's kind.
    pub kind: FailureKind,
    /// Its status.
    pub status: Option<u16>,
    /// For [`FailureKind::RouterRateLimit`]: time until the soonest cooldown ends.
    pub retry_after: Option<Duration>,
}

impl RouterFailure {
    /// Whether a caller's own retry could help (LiteLLM's retryable statuses).
    pub fn is_retryable(&self) -> bool {
        match self.kind {
            FailureKind::RateLimit
            | FailureKind::RouterRateLimit
            | FailureKind::Timeout
            | FailureKind::Conflict
            | FailureKind::InternalServer
            | FailureKind::BadGateway
            | FailureKind::ServiceUnavailable
            | FailureKind::Overloaded
            | FailureKind::ApiConnection
            | FailureKind::MalformedResponse => true,
            FailureKind::ContextWindowExceeded
            | FailureKind::ContentPolicyViolation
            | FailureKind::BadRequest
            | FailureKind::Authentication
            | FailureKind::PermissionDenied
            | FailureKind::NotFound
            | FailureKind::UnprocessableEntity => false,
        }
    }
}
