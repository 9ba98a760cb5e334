//! One log row, whatever the format it came in: a provider call (or, where the log says only
//! that much, the part of a request the row stands for), with times in Unix seconds.
//!
//! Why one shape: the three formats carry the same facts with different granularity (a gateway
//! CSV row per provider call; LiteLLM's standard logging payload a row for a request's first
//! failed attempt and one for the attempt that answered; its spend logs a row per request), and
//! everything after the parsers (the error series, the latency fits, the requests, the report)
//! reads them through [`Call`] and its [`Scope`].

use std::sync::Arc;

use routersim_engine::failure::FailureKind;

/// What a row says about the call it stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The provider answered (a stream that completed).
    Ok,
    /// The provider failed the call before any content (an HTTP error, a connection failure).
    Failed(FailureKind),
    /// A stream that broke after content reached the caller: `tokens` were delivered first.
    StreamCut {
        /// The failure it broke with.
        kind: FailureKind,
        /// Output tokens delivered before the break.
        tokens: u32,
    },
    /// No provider was called: the router found every deployment of the group cooling (LiteLLM's
    /// `RouterRateLimitError`, "No deployments available").
    NoDeployment,
}

impl Outcome {
    /// The failure kind, `None` for a success.
    pub fn failure(self) -> Option<FailureKind> {
        match self {
            Outcome::Ok => None,
            Outcome::Failed(kind) | Outcome::StreamCut { kind, .. } => Some(kind),
            Outcome::NoDeployment => Some(FailureKind::RouterRateLimit),
        }
    }

    /// Whether a provider was called.
    pub fn reached_a_provider(self) -> bool {
        !matches!(self, Outcome::NoDeployment)
    }
}

/// Which part of its request a row stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// One provider call (a gateway CSV row).
    Attempt,
    /// LiteLLM's failure row: the request's first failed attempt (later failed attempts of the
    /// same request write no row).
    FirstFailure,
    /// LiteLLM's success row: the attempt that answered.
    Final,
    /// A spend-log row: the whole request, dated and attributed by its final attempt.
    Request,
}

/// One row, normalized.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The line it was read from (1-based; for a JSON array, the line its object starts on).
    pub line: u64,
    /// When the call started, Unix seconds.
    pub start: f64,
    /// When it ended (its row was written then), Unix seconds.
    pub end: f64,
    /// When its first token arrived (streams), Unix seconds.
    pub first_token: Option<f64>,
    /// The model group the call served.
    pub model_group: Arc<str>,
    /// The deployment called, when the row names one.
    pub deployment: Option<Arc<str>>,
    /// The row's model (`openai/gpt-4o`), when it names one: for inferring a router.
    pub model: Option<Arc<str>>,
    /// The deployment's `api_base`, when the row names one: for matching the `--config`'s
    /// deployments that have no `model_info.id`.
    pub api_base: Option<Arc<str>>,
    /// What happened.
    pub outcome: Outcome,
    /// The HTTP status, when there was one.
    pub status: Option<u16>,
    /// The failure's Retry-After, seconds.
    pub retry_after: Option<f64>,
    /// Joins the rows of one request (a hash of the request id), when the row has one.
    pub request: Option<u64>,
    /// The model group the caller asked for, when the row says and it differs from
    /// `model_group` (a fallback's row).
    pub requested: Option<Arc<str>>,
    /// Whether the call streamed, when the row says.
    pub stream: Option<bool>,
    /// Prompt tokens.
    pub input_tokens: Option<u32>,
    /// Output tokens produced (delivered, for a stream that broke).
    pub output_tokens: Option<u32>,
    /// The `max_tokens` the caller asked for.
    pub max_tokens: Option<u32>,
    /// The request's tags.
    pub tags: Vec<Arc<str>>,
    /// The router's count of the request's retries (LiteLLM's `x-litellm-attempted-retries`).
    pub attempted_retries: Option<u32>,
    /// The router's count of the request's fallback hops (`x-litellm-attempted-fallbacks`).
    pub attempted_fallbacks: Option<u32>,
    /// Which part of its request the row stands for.
    pub scope: Scope,
}

impl Call {
    /// A row with the required fields and nothing else.
    pub fn new(line: u64, start: f64, end: f64, model_group: Arc<str>, scope: Scope) -> Self {
        Self {
            line,
            start,
            end,
            first_token: None,
            model_group,
            deployment: None,
            model: None,
            api_base: None,
            outcome: Outcome::Ok,
            status: None,
            retry_after: None,
            request: None,
            requested: None,
            stream: None,
            input_tokens: None,
            output_tokens: None,
            max_tokens: None,
            tags: Vec::new(),
            attempted_retries: None,
            attempted_fallbacks: None,
            scope,
        }
    }

    /// The call's latency, seconds (never negative).
    pub fn latency(&self) -> f64 {
        (self.end - self.start).max(0.0)
    }

    /// The model group the request asked for.
    pub fn requested_group(&self) -> &Arc<str> {
        self.requested.as_ref().unwrap_or(&self.model_group)
    }
}

/// A stable 64-bit hash of a request id (FNV-1a): rows are joined by it, and the id itself is
/// never kept (it may be a user's).
pub fn request_key(id: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in id.as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}
