//! OpenAI chat completions (and Azure OpenAI, which shares the shapes): bodies, error bodies,
//! SSE frames.
//!
//! Text is one short word per output token (`tok`, at most 4 bytes a token with its space), so
//! a client that counts whitespace-separated words counts tokens. Each SSE chunk also carries
//! the extension `"x_routersim": {"tokens": N, "span_us": S, "kind": K}`: the chunk's exact tokens and
//! span (the fake providers coalesce steady runs of tokens into one chunk), which real clients
//! ignore.

use routersim_engine::failure::{FailureKind, ProviderFailure};
use routersim_engine::request::Completion;
use routersim_engine::stream::{Chunk, ChunkKind, FinishReason};
use serde_json::{Value, json};

use super::frames;
use crate::format::WireFormat as Format;

/// What every body of one call shares.
#[derive(Clone, Debug)]
pub struct Meta {
    /// The response id (`chatcmpl-…`, `msg_…`).
    pub id: String,
    /// The model named in the request.
    pub model: String,
    /// Unix seconds when the call started.
    pub created: i64,
    /// Prompt tokens, for `usage`.
    pub input_tokens: u32,
}

/// `n` words of text, one a token. Callers check `n` against
/// [`MAX_OUTPUT_TOKENS`](crate::limits::MAX_OUTPUT_TOKENS) where it arrives; the text stops
/// there regardless, so no count can allocate more than 4 MB here.
pub fn words(n: u32) -> String {
    let n = n.min(crate::limits::MAX_OUTPUT_TOKENS);
    let mut text = String::with_capacity(n as usize * 4);
    for i in 0..n {
        if i > 0 {
            text.push(' ');
        }
        text.push_str("tok");
    }
    text
}

/// `n` more words of a text that already has `before` words: a leading space unless it is the
/// text's first, so the deltas of a stream concatenate into words.
pub fn more_words(before: u32, n: u32) -> String {
    let words = words(n);
    if before > 0 && n > 0 {
        format!(" {words}")
    } else {
        words
    }
}

/// OpenAI's name of a finish reason (a stream with none sends no finish chunk; a whole
/// response always has one: `stop`).
pub fn finish_reason_name(reason: FinishReason) -> &'static str {
    match reason {
        FinishReason::Stop | FinishReason::Missing => "stop",
        FinishReason::Length => "length",
        FinishReason::ToolCalls => "tool_calls",
        FinishReason::ContentFilter => "content_filter",
    }
}

/// A non-streamed success (`choices: []` when the completion has none).
pub fn completion_body(meta: &Meta, completion: &Completion) -> Vec<u8> {
    let content = if completion.empty_choices {
        String::new()
    } else {
        words(completion.output_tokens)
    };
    let choice = [frames::Choice {
        index: 0,
        message: frames::Message {
            role: "assistant",
            content: &content,
        },
        finish_reason: finish_reason_name(completion.finish_reason),
    }];
    let (choices, output): (&[frames::Choice], u32) = if completion.empty_choices {
        (&[], 0)
    } else {
        (&choice, completion.output_tokens)
    };
    serde_json::to_vec(&frames::CompletionBody {
        id: &meta.id,
        object: "chat.completion",
        created: meta.created,
        model: &meta.model,
        choices,
        usage: frames::Usage::new(meta.input_tokens, output),
    })
    .unwrap_or_default()
}

/// OpenAI's `error.type`, `error.code` and a message for a failure kind, as the real API words
/// them where LiteLLM reads the words (context length, safety system).
pub fn error_fields(
    kind: FailureKind,
    format: Format,
) -> (&'static str, Option<&'static str>, String) {
    let invalid = "invalid_request_error";
    match kind {
        FailureKind::RateLimit | FailureKind::RouterRateLimit => (
            "requests",
            Some("rate_limit_exceeded"),
            "Rate limit reached for requests (routersim fake provider). Please try again later."
                .into(),
        ),
        FailureKind::ContextWindowExceeded => (
            invalid,
            Some("context_length_exceeded"),
            "This model's maximum context length is exceeded by this request; please reduce \
             the length of the messages (routersim fake provider)."
                .into(),
        ),
        FailureKind::ContentPolicyViolation => match format {
            Format::Azure => (
                invalid,
                Some("content_filter"),
                "The response was filtered due to the prompt triggering Azure OpenAI's content \
                 management policy (routersim fake provider)."
                    .into(),
            ),
            _ => (
                invalid,
                Some("content_policy_violation"),
                "Your request was rejected as a result of our safety system (content policy; \
                 routersim fake provider)."
                    .into(),
            ),
        },
        FailureKind::BadRequest => (
            invalid,
            None,
            "Bad request (routersim fake provider).".into(),
        ),
        FailureKind::Authentication => (
            invalid,
            Some("invalid_api_key"),
            "Incorrect API key provided (routersim fake provider).".into(),
        ),
        FailureKind::PermissionDenied => (
            invalid,
            Some("permission_denied"),
            "You are not allowed to use this model (routersim fake provider).".into(),
        ),
        FailureKind::NotFound => (
            invalid,
            Some("model_not_found"),
            "The model does not exist or you do not have access to it (routersim fake provider)."
                .into(),
        ),
        FailureKind::Timeout => (
            "timeout",
            Some("request_timeout"),
            "Request timed out (routersim fake provider).".into(),
        ),
        FailureKind::Conflict => (
            invalid,
            Some("conflict"),
            "Conflict (routersim fake provider).".into(),
        ),
        FailureKind::UnprocessableEntity => (
            invalid,
            Some("unprocessable_entity"),
            "Unprocessable entity (routersim fake provider).".into(),
        ),
        FailureKind::InternalServer => (
            "server_error",
            Some("internal_server_error"),
            "The server had an error while processing your request (routersim fake provider)."
                .into(),
        ),
        FailureKind::BadGateway => (
            "server_error",
            Some("bad_gateway"),
            "Bad gateway (routersim fake provider).".into(),
        ),
        FailureKind::ServiceUnavailable => (
            "server_error",
            Some("service_unavailable"),
            "The server is overloaded or not ready yet (routersim fake provider).".into(),
        ),
        FailureKind::Overloaded => (
            "server_error",
            Some("overloaded"),
            "Overloaded (routersim fake provider).".into(),
        ),
        FailureKind::ApiConnection | FailureKind::MalformedResponse => (
            "server_error",
            Some(kind.as_str()),
            format!("{} (routersim fake provider).", kind.as_str()),
        ),
    }
}

/// The error object (`{"message","type","param","code"}`), with `status` when given (an
/// error frame inside a stream carries it).
fn error_object(kind: FailureKind, format: Format, status: Option<u16>) -> Value {
    let (kind_type, code, message) = error_fields(kind, format);
    let mut error = json!({"message": message, "type": kind_type, "param": null, "code": code});
    if let (Some(status), Value::Object(map)) = (status, &mut error) {
        map.insert("status".into(), json!(status));
    }
    error
}

/// An error response's body: `{"error": {"message","type","param","code"}}`.
pub fn error_body(failure: &ProviderFailure, format: Format) -> Vec<u8> {
    serde_json::to_vec(&json!({"error": error_object(failure.kind, format, None)}))
        .unwrap_or_default()
}

/// An error body for a request the server itself refuses (unknown path, bad JSON).
pub fn plain_error_body(message: &str, kind_type: &str, code: Option<&str>) -> Vec<u8> {
    serde_json::to_vec(
        &json!({"error": {"message": message, "type": kind_type, "param": null, "code": code}}),
    )
    .unwrap_or_default()
}

/// One `data: …` frame.
fn data_frame(out: &mut Vec<u8>, value: &Value) {
    out.extend_from_slice(b"data: ");
    let _ = serde_json::to_writer(&mut *out, value);
    out.extend_from_slice(b"\n\n");
}

/// One `data: …` frame of a typed record.
fn typed_frame(out: &mut Vec<u8>, frame: &impl serde::Serialize) {
    out.extend_from_slice(b"data: ");
    let _ = serde_json::to_writer(&mut *out, frame);
    out.extend_from_slice(b"\n\n");
}

/// The SSE frames of one OpenAI/Azure stream.
#[derive(Debug)]
pub struct SseFrames {
    meta: Meta,
    format: Format,
    include_usage: bool,
    /// Output tokens sent so far (for `usage`).
    pub tokens_sent: u32,
    /// Words sent in `content` and in `reasoning_content`.
    text_words: u32,
    thinking_words: u32,
}

impl SseFrames {
    /// The frames of a stream for `meta`; `include_usage` adds the usage chunk before `[DONE]`.
    pub fn new(meta: Meta, format: Format, include_usage: bool) -> Self {
        Self {
            meta,
            format,
            include_usage,
            tokens_sent: 0,
            text_words: 0,
            thinking_words: 0,
        }
    }

    /// A chunk: one `data:` frame with its delta and the `x_routersim` extension.
    pub fn chunk(&mut self, chunk: &Chunk, out: &mut Vec<u8>) {
        self.tokens_sent = self.tokens_sent.saturating_add(chunk.tokens);
        let text = match chunk.kind {
            ChunkKind::Text => {
                let text = more_words(self.text_words, chunk.tokens);
                self.text_words = self.text_words.saturating_add(chunk.tokens);
                text
            }
            ChunkKind::Thinking => {
                let text = more_words(self.thinking_words, chunk.tokens);
                self.thinking_words = self.thinking_words.saturating_add(chunk.tokens);
                text
            }
            _ => String::new(),
        };
        let frame = frames::ChunkFrame {
            id: &self.meta.id,
            object: "chat.completion.chunk",
            created: self.meta.created,
            model: &self.meta.model,
            choices: [frames::DeltaChoice {
                index: 0,
                delta: frames::Delta::of(chunk.kind, &text),
                finish_reason: None,
            }],
            x_routersim: frames::Extension::of(chunk),
        };
        typed_frame(out, &frame);
    }

    /// The terminal marker: a `finish_reason` chunk, the usage chunk, `data: [DONE]`; without
    /// a finish reason ([`FinishReason::Missing`], the `stream_no_finish` fault) no finish
    /// chunk.
    pub fn done(&mut self, reason: FinishReason, out: &mut Vec<u8>) {
        fn end<'a>(
            meta: &'a Meta,
            choices: &'a [frames::FinishChoice],
            usage: Option<frames::Usage>,
        ) -> frames::EndFrame<'a> {
            frames::EndFrame {
                id: &meta.id,
                object: "chat.completion.chunk",
                created: meta.created,
                model: &meta.model,
                choices,
                usage,
            }
        }
        if reason != FinishReason::Missing {
            let finish = [frames::FinishChoice {
                index: 0,
                delta: frames::EmptyDelta {},
                finish_reason: finish_reason_name(reason),
            }];
            typed_frame(out, &end(&self.meta, &finish, None));
        }
        if self.include_usage {
            let usage = frames::Usage::new(self.meta.input_tokens, self.tokens_sent);
            typed_frame(out, &end(&self.meta, &[], Some(usage)));
        }
        out.extend_from_slice(b"data: [DONE]\n\n");
    }

    /// An error event inside the 200 stream (the stream then ends cleanly, without `[DONE]`).
    pub fn error_frame(&mut self, failure: &ProviderFailure, out: &mut Vec<u8>) {
        let status = failure.effective_status();
        data_frame(
            out,
            &json!({"error": error_object(failure.kind, self.format, status)}),
        );
    }
}

/// A streamed chunk's `x_routersim` extension: its exact tokens, span and kind (the delta's
/// shape cannot always say: Anthropic has no audio or image delta).
pub fn extension(chunk: &Chunk) -> Value {
    serde_json::to_value(frames::Extension::of(chunk)).unwrap_or(Value::Null)
}

#[cfg(test)]
#[path = "server_tests.rs"]
mod tests;
