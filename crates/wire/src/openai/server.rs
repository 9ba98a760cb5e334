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

fn usage(meta: &Meta, output_tokens: u32) -> Value {
    json!({
        "prompt_tokens": meta.input_tokens,
        "completion_tokens": output_tokens,
        "total_tokens": u64::from(meta.input_tokens) + u64::from(output_tokens),
    })
}

/// A non-streamed success (`choices: []` when the completion has none).
pub fn completion_body(meta: &Meta, completion: &Completion) -> Vec<u8> {
    let choices = if completion.empty_choices {
        json!([])
    } else {
        json!([{
            "index": 0,
            "message": {"role": "assistant", "content": words(completion.output_tokens)},
            "finish_reason": finish_reason_name(completion.finish_reason),
        }])
    };
    let output = if completion.empty_choices {
        0
    } else {
        completion.output_tokens
    };
    serde_json::to_vec(&json!({
        "id": meta.id,
        "object": "chat.completion",
        "created": meta.created,
        "model": meta.model,
        "choices": choices,
        "usage": usage(meta, output),
    }))
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

    fn chunk_object(&self, choices: Value) -> serde_json::Map<String, Value> {
        let mut map = serde_json::Map::new();
        map.insert("id".into(), json!(self.meta.id));
        map.insert("object".into(), json!("chat.completion.chunk"));
        map.insert("created".into(), json!(self.meta.created));
        map.insert("model".into(), json!(self.meta.model));
        map.insert("choices".into(), choices);
        map
    }

    /// A chunk: one `data:` frame with its delta and the `x_routersim` extension.
    pub fn chunk(&mut self, chunk: &Chunk, out: &mut Vec<u8>) {
        self.tokens_sent = self.tokens_sent.saturating_add(chunk.tokens);
        let delta = match chunk.kind {
            ChunkKind::RoleOnly => json!({"role": "assistant", "content": ""}),
            ChunkKind::Text => {
                let text = more_words(self.text_words, chunk.tokens);
                self.text_words = self.text_words.saturating_add(chunk.tokens);
                json!({"content": text})
            }
            ChunkKind::ToolCall => json!({"tool_calls": [{
                "index": 0, "id": "call_routersim", "type": "function",
                "function": {"name": "routersim_tool", "arguments": "{}"},
            }]}),
            ChunkKind::Thinking => {
                let text = more_words(self.thinking_words, chunk.tokens);
                self.thinking_words = self.thinking_words.saturating_add(chunk.tokens);
                json!({"reasoning_content": text})
            }
            ChunkKind::Audio => json!({"audio": {"id": "audio_routersim", "data": "AAAA"}}),
            ChunkKind::Image => json!({"images": [{
                "type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"},
            }]}),
        };
        let mut map =
            self.chunk_object(json!([{"index": 0, "delta": delta, "finish_reason": null}]));
        map.insert("x_routersim".into(), extension(chunk));
        data_frame(out, &Value::Object(map));
    }

    /// The terminal marker: a `finish_reason` chunk, the usage chunk, `data: [DONE]`; without
    /// a finish reason ([`FinishReason::Missing`], the `stream_no_finish` fault) no finish
    /// chunk.
    pub fn done(&mut self, reason: FinishReason, out: &mut Vec<u8>) {
        if reason != FinishReason::Missing {
            let map = self.chunk_object(json!([{
                "index": 0, "delta": {}, "finish_reason": finish_reason_name(reason),
            }]));
            data_frame(out, &Value::Object(map));
        }
        if self.include_usage {
            let mut map = self.chunk_object(json!([]));
            map.insert("usage".into(), usage(&self.meta, self.tokens_sent));
            data_frame(out, &Value::Object(map));
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
    json!({
        "tokens": chunk.tokens,
        "span_us": chunk.span.as_micros() as u64,
        "kind": chunk.kind.as_str(),
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn meta() -> Meta {
        Meta {
            id: "chatcmpl-1".into(),
            model: "gpt-4o".into(),
            created: 1_767_225_600,
            input_tokens: 10,
        }
    }

    #[test]
    fn completion_has_openai_shape_and_usage() {
        let body = completion_body(
            &meta(),
            &Completion {
                output_tokens: 3,
                finish_reason: FinishReason::Length,
                empty_choices: false,
                body: None,
            },
        );
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["object"], "chat.completion");
        assert_eq!(v["choices"][0]["message"]["content"], "tok tok tok");
        assert_eq!(v["choices"][0]["finish_reason"], "length");
        assert_eq!(v["usage"]["completion_tokens"], 3);
        assert_eq!(v["usage"]["total_tokens"], 13);
        let empty = completion_body(
            &meta(),
            &Completion {
                empty_choices: true,
                ..Completion::default()
            },
        );
        let v: Value = serde_json::from_slice(&empty).unwrap();
        assert_eq!(v["choices"], json!([]));
    }

    #[test]
    fn error_bodies_carry_the_codes_of_the_contract() {
        let body = |kind, format| {
            let v: Value =
                serde_json::from_slice(&error_body(&ProviderFailure::new(kind), format)).unwrap();
            (v["error"]["type"].clone(), v["error"]["code"].clone())
        };
        assert_eq!(
            body(FailureKind::RateLimit, Format::OpenAi),
            (json!("requests"), json!("rate_limit_exceeded"))
        );
        assert_eq!(
            body(FailureKind::ContextWindowExceeded, Format::OpenAi),
            (
                json!("invalid_request_error"),
                json!("context_length_exceeded")
            )
        );
        assert_eq!(
            body(FailureKind::ContentPolicyViolation, Format::Azure).1,
            json!("content_filter")
        );
        assert_eq!(
            body(FailureKind::ContentPolicyViolation, Format::OpenAi).1,
            json!("content_policy_violation")
        );
        assert_eq!(body(FailureKind::BadRequest, Format::OpenAi).1, Value::Null);
        assert_eq!(
            body(FailureKind::Overloaded, Format::OpenAi),
            (json!("server_error"), json!("overloaded"))
        );
        assert_eq!(
            body(FailureKind::Timeout, Format::OpenAi),
            (json!("timeout"), json!("request_timeout"))
        );
    }

    #[test]
    fn sse_frames_render_chunks_done_and_errors() {
        let mut frames = SseFrames::new(meta(), Format::OpenAi, true);
        let mut out = Vec::new();
        frames.chunk(
            &Chunk {
                kind: ChunkKind::RoleOnly,
                tokens: 0,
                span: Duration::ZERO,
            },
            &mut out,
        );
        frames.chunk(
            &Chunk {
                kind: ChunkKind::Text,
                tokens: 2,
                span: Duration::from_millis(20),
            },
            &mut out,
        );
        frames.done(FinishReason::Stop, &mut out);
        let text = String::from_utf8(out).unwrap();
        let frames_text: Vec<&str> = text.split("\n\n").filter(|f| !f.is_empty()).collect();
        assert_eq!(frames_text.len(), 5, "{text}");
        let v: Value = serde_json::from_str(&frames_text[1]["data: ".len()..]).unwrap();
        assert_eq!(v["choices"][0]["delta"]["content"], "tok tok");
        assert_eq!(
            more_words(2, 2),
            " tok tok",
            "later deltas concatenate into words"
        );
        assert_eq!(
            v["x_routersim"],
            json!({"tokens": 2, "span_us": 20_000, "kind": "text"})
        );
        let v: Value = serde_json::from_str(&frames_text[2]["data: ".len()..]).unwrap();
        assert_eq!(v["choices"][0]["finish_reason"], "stop");
        let v: Value = serde_json::from_str(&frames_text[3]["data: ".len()..]).unwrap();
        assert_eq!(v["choices"], json!([]));
        assert_eq!(v["usage"]["completion_tokens"], 2);
        assert_eq!(frames_text[4], "data: [DONE]");

        let mut out = Vec::new();
        let failure = ProviderFailure::new(FailureKind::ServiceUnavailable);
        frames.error_frame(&failure, &mut out);
        let text = String::from_utf8(out).unwrap();
        let v: Value = serde_json::from_str(text.trim()["data: ".len()..].trim()).unwrap();
        assert_eq!(v["error"]["code"], "service_unavailable");
        assert_eq!(v["error"]["status"], 503);
    }
}
