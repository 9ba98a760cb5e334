//! Streams: what a provider's open stream yields, and how the router judges a broken one.
//!
//! Seed (LiteLLM, "Streams"): *"A streamed attempt succeeds as soon as the provider opens the
//! stream, but it can still fail while the caller reads it. The router wraps every stream it
//! returns. When the stream breaks before the caller has received any content, the router
//! takes over with a retry in the same group or the next fallback, as if the attempt had
//! failed up front. Once content has reached the caller, a retry would repeat output, so the
//! stream fails, unless `enable_mid_stream_fallback_continuation` is set. […] A stream that
//! has already emitted tool calls, thinking blocks, audio or images, or constrained output
//! such as JSON mode, is never continued. Without an eligible deployment, the original error
//! is raised."*
//!
//! The alternative policy (Multigrid, `multigrid-failover-and-retries.md`): *"Retry and
//! failover apply right up until the first byte reaches you. After that […] what you get
//! instead is an event: error on the same stream, plus every token produced before the break,
//! which are logged and billed."* Select it with `router_settings.stream_recovery: multigrid`.
//!
//! A [`Chunk`] may stand for several tokens that arrived at a steady pace (`span` is the time
//! from its first token to its last): a real SSE client yields one frame at a time, while the
//! simulator's fake providers coalesce steady runs so a 500-token answer costs a few timers,
//! not 500.

use std::future::Future;
use std::time::Duration;

use crate::failure::ProviderFailure;

pub use crate::config::StreamRecovery;

/// What a chunk carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkKind {
    /// Plain assistant text.
    Text,
    /// A role-only or otherwise empty delta: a byte on the wire, but no content.
    RoleOnly,
    /// Tool-call deltas.
    ToolCall,
    /// A thinking (reasoning) block.
    Thinking,
    /// Audio.
    Audio,
    /// An image.
    Image,
}

impl ChunkKind {
    /// Every kind, in declaration order.
    pub const ALL: [ChunkKind; 6] = [
        ChunkKind::Text,
        ChunkKind::RoleOnly,
        ChunkKind::ToolCall,
        ChunkKind::Thinking,
        ChunkKind::Audio,
        ChunkKind::Image,
    ];

    /// The kind's name on the wire (the `x_routersim.kind` of a streamed chunk):
    /// `text`, `role_only`, `tool_call`, `thinking`, `audio`, `image`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChunkKind::Text => "text",
            ChunkKind::RoleOnly => "role_only",
            ChunkKind::ToolCall => "tool_call",
            ChunkKind::Thinking => "thinking",
            ChunkKind::Audio => "audio",
            ChunkKind::Image => "image",
        }
    }

    /// The kind [`as_str`](Self::as_str) names.
    pub fn from_name(name: &str) -> Option<ChunkKind> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// Whether the caller received content (anything but a role-only delta).
    pub fn is_content(self) -> bool {
        self != ChunkKind::RoleOnly
    }

    /// Whether a stream that emitted this may still be continued elsewhere.
    pub fn allows_continuation(self) -> bool {
        matches!(self, ChunkKind::Text | ChunkKind::RoleOnly)
    }
}

/// One delivery on an open stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// What it carries.
    pub kind: ChunkKind,
    /// Output tokens in it (0 for a role-only delta).
    pub tokens: u32,
    /// Time from its first token to its last (zero for a single SSE frame).
    pub span: Duration,
}

/// Why a response or a stream finished.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FinishReason {
    /// `stop`.
    #[default]
    Stop,
    /// `length`.
    Length,
    /// `tool_calls`.
    ToolCalls,
    /// `content_filter`.
    ContentFilter,
    /// None: the stream's end marker came without a finish reason (`[DONE]` alone,
    /// Anthropic's `message_stop` without a stop reason). The documented rules read it as
    /// `stop`; LiteLLM 1.110.2's OpenAI path fails a stream that sent something first
    /// (see [`StreamRules::unfinished_end`](crate::stream_rules::StreamRules::unfinished_end)).
    Missing,
}

/// What an open stream yields next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamItem {
    /// Data.
    Chunk(Chunk),
    /// An error event inside a stream that opened with 200.
    ErrorFrame(ProviderFailure),
    /// The terminal marker (`finish_reason`, `[DONE]`).
    Done(FinishReason),
}

/// A provider's open stream. `next_item` resolves when the next item arrives (on the clock):
/// `Some(Ok(item))`, `Some(Err(failure))` when the connection breaks, `None` when it closes
/// without a terminal marker (a truncated stream).
pub trait ProviderStream {
    /// The next item.
    fn next_item(&mut self) -> impl Future<Output = Option<Result<StreamItem, ProviderFailure>>>;
}

/// How the stream a caller received ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum StreamOutcome {
    /// Completed with its terminal marker.
    Completed,
    /// Broke before any content reached the caller (and nothing recovered it).
    BrokenBeforeContent,
    /// Broke after content reached the caller.
    BrokenAfterContent,
    /// Broke after content and was continued on another deployment.
    Continued,
    /// Stopped sending past the stall timeout (or the first-token timeout).
    Stalled,
    /// Completed with no content at all (role-only or empty): a malformed success.
    Empty,
}

impl StreamOutcome {
    /// Its name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            StreamOutcome::Completed => "completed",
            StreamOutcome::BrokenBeforeContent => "broken_before_content",
            StreamOutcome::BrokenAfterContent => "broken_after_content",
            StreamOutcome::Continued => "continued",
            StreamOutcome::Stalled => "stalled",
            StreamOutcome::Empty => "empty",
        }
    }
}

/// How a stream broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BreakKind {
    /// The connection dropped.
    Connection,
    /// An error event inside the stream.
    ErrorFrame,
    /// The stream closed without its terminal marker.
    Truncated,
    /// No chunk within the stall timeout.
    Stall,
    /// No first token within `stream_timeout`.
    FirstTokenTimeout,
    /// Finished with `finish_reason: content_filter` (DeltaLLM: a content-policy failure).
    ContentFilter,
    /// Finished with no content at all (DeltaLLM: a `malformed_response`).
    EmptyResponse,
}

impl BreakKind {
    /// Its name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            BreakKind::Connection => "connection",
            BreakKind::ErrorFrame => "error_frame",
            BreakKind::Truncated => "truncated",
            BreakKind::Stall => "stall",
            BreakKind::FirstTokenTimeout => "first_token_timeout",
            BreakKind::ContentFilter => "content_filter",
            BreakKind::EmptyResponse => "empty_response",
        }
    }
}

/// What the caller got from a streamed request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamStats {
    /// How the stream ended (`None` until a stream opened).
    pub outcome: Option<StreamOutcome>,
    /// Time from the request's arrival to the first content token the caller received.
    pub ttft: Option<Duration>,
    /// Output tokens the caller received.
    pub tokens_delivered: u32,
    /// Output tokens the caller is billed for.
    pub tokens_billed: u32,
}
