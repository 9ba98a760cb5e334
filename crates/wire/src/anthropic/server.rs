//! Anthropic messages: bodies, error bodies (`{"type":"error","error":{"type","message"}}`),
//! SSE events (`message_start`, `content_block_start`, `content_block_delta`,
//! `content_block_stop`, `message_delta`, `message_stop`, and `event: error` inside a 200
//! stream).
//!
//! `message_start` goes out with the stream's first item (not with the headers), so the first
//! bytes arrive when the fake provider's first item does. A role-only chunk (an empty
//! stream's) is a `message_start` alone, marked `"x_routersim":{"tokens":0,"span_us":0}`;
//! content chunks are `content_block_delta`s carrying the same extension as OpenAI's chunks.
//! Audio and image chunks have no Anthropic event: they go out as text deltas, their kind in
//! the extension (`"kind": "audio"`). An `event: error` frame carries its status in
//! `"x_routersim": {"status": S}` (Anthropic's error object has none).

use routersim_engine::failure::{FailureKind, ProviderFailure};
use routersim_engine::request::Completion;
use routersim_engine::stream::{Chunk, ChunkKind, FinishReason};
use serde_json::{Value, json};

use crate::openai::server::{Meta, extension, more_words, words};

/// Anthropic's `stop_reason` for a finish reason (a stream with none sends no
/// `message_delta`; a whole response always has one: `end_turn`).
pub fn stop_reason_name(reason: FinishReason) -> &'static str {
    match reason {
        FinishReason::Stop | FinishReason::Missing => "end_turn",
        FinishReason::Length => "max_tokens",
        FinishReason::ToolCalls => "tool_use",
        FinishReason::ContentFilter => "refusal",
    }
}

/// A non-streamed success (`content: []` when the completion has no choices).
pub fn completion_body(meta: &Meta, completion: &Completion) -> Vec<u8> {
    let (content, output) = if completion.empty_choices {
        (json!([]), 0)
    } else {
        (
            json!([{"type": "text", "text": words(completion.output_tokens)}]),
            completion.output_tokens,
        )
    };
    serde_json::to_vec(&json!({
        "id": meta.id,
        "type": "message",
        "role": "assistant",
        "model": meta.model,
        "content": content,
        "stop_reason": stop_reason_name(completion.finish_reason),
        "stop_sequence": null,
        "usage": {"input_tokens": meta.input_tokens, "output_tokens": output},
    }))
    .unwrap_or_default()
}

/// Anthropic's `error.type` and a message for a failure kind.
pub fn error_fields(kind: FailureKind) -> (&'static str, String) {
    let fake = "(routersim fake provider)";
    match kind {
        FailureKind::RateLimit | FailureKind::RouterRateLimit => (
            "rate_limit_error",
            format!("Number of requests has exceeded your rate limit {fake}."),
        ),
        FailureKind::ContextWindowExceeded => (
            "invalid_request_error",
            format!("prompt is too long: the prompt exceeds the model's context window {fake}."),
        ),
        FailureKind::ContentPolicyViolation => (
            "invalid_request_error",
            format!("Output blocked by content filtering policy {fake}."),
        ),
        FailureKind::BadRequest | FailureKind::Conflict | FailureKind::UnprocessableEntity => (
            "invalid_request_error",
            format!("{} {fake}.", kind.as_str()),
        ),
        FailureKind::Authentication => {
            ("authentication_error", format!("invalid x-api-key {fake}."))
        }
        FailureKind::PermissionDenied => (
            "permission_error",
            format!("Your API key does not have permission to use the specified resource {fake}."),
        ),
        FailureKind::NotFound => ("not_found_error", format!("model not found {fake}.")),
        FailureKind::Timeout => ("timeout_error", format!("Request timed out {fake}.")),
        FailureKind::Overloaded => ("overloaded_error", format!("Overloaded {fake}.")),
        FailureKind::InternalServer
        | FailureKind::BadGateway
        | FailureKind::ServiceUnavailable
        | FailureKind::ApiConnection
        | FailureKind::MalformedResponse => ("api_error", format!("{} {fake}.", kind.as_str())),
    }
}

fn error_value(kind: FailureKind) -> Value {
    let (kind_type, message) = error_fields(kind);
    json!({"type": "error", "error": {"type": kind_type, "message": message}})
}

/// An error response's body.
pub fn error_body(failure: &ProviderFailure) -> Vec<u8> {
    serde_json::to_vec(&error_value(failure.kind)).unwrap_or_default()
}

/// One `event: NAME` + `data: …` frame.
fn event(out: &mut Vec<u8>, name: &str, data: &Value) {
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\ndata: ");
    let _ = serde_json::to_writer(&mut *out, data);
    out.extend_from_slice(b"\n\n");
}

/// The content block type a chunk kind goes in.
fn block_type(kind: ChunkKind) -> &'static str {
    match kind {
        ChunkKind::Thinking => "thinking",
        ChunkKind::ToolCall => "tool_use",
        _ => "text",
    }
}

/// The SSE events of one Anthropic stream.
#[derive(Debug)]
pub struct SseFrames {
    meta: Meta,
    started: bool,
    /// The open content block: its index and type.
    open: Option<(u32, &'static str)>,
    next_index: u32,
    /// Words sent in the open block.
    block_words: u32,
    /// Output tokens sent so far.
    pub tokens_sent: u32,
}

impl SseFrames {
    /// The events of a stream for `meta`.
    pub fn new(meta: Meta) -> Self {
        Self {
            meta,
            started: false,
            open: None,
            next_index: 0,
            block_words: 0,
            tokens_sent: 0,
        }
    }

    /// `message_start`, once; `mark` adds the role-only extension.
    fn start(&mut self, out: &mut Vec<u8>, mark: bool) {
        if self.started {
            return;
        }
        self.started = true;
        let mut data = json!({
            "type": "message_start",
            "message": {
                "id": self.meta.id, "type": "message", "role": "assistant",
                "model": self.meta.model, "content": [], "stop_reason": null,
                "stop_sequence": null,
                "usage": {"input_tokens": self.meta.input_tokens, "output_tokens": 0},
            },
        });
        if mark && let Value::Object(map) = &mut data {
            map.insert("x_routersim".into(), json!({"tokens": 0, "span_us": 0}));
        }
        event(out, "message_start", &data);
    }

    fn stop_block(&mut self, out: &mut Vec<u8>) {
        if let Some((index, _)) = self.open.take() {
            event(
                out,
                "content_block_stop",
                &json!({"type": "content_block_stop", "index": index}),
            );
        }
    }

    /// A chunk: a `content_block_delta` (opening its block first when needed).
    pub fn chunk(&mut self, chunk: &Chunk, out: &mut Vec<u8>) {
        if chunk.kind == ChunkKind::RoleOnly {
            self.start(out, true);
            return;
        }
        self.start(out, false);
        self.tokens_sent = self.tokens_sent.saturating_add(chunk.tokens);
        let wanted = block_type(chunk.kind);
        let index = match self.open {
            Some((index, open)) if open == wanted => index,
            _ => {
                self.stop_block(out);
                let index = self.next_index;
                self.next_index += 1;
                self.open = Some((index, wanted));
                self.block_words = 0;
                let block = match wanted {
                    "thinking" => json!({"type": "thinking", "thinking": ""}),
                    "tool_use" => json!({
                        "type": "tool_use", "id": "toolu_routersim", "name": "routersim_tool",
                        "input": {},
                    }),
                    _ => json!({"type": "text", "text": ""}),
                };
                event(
                    out,
                    "content_block_start",
                    &json!({"type": "content_block_start", "index": index, "content_block": block}),
                );
                index
            }
        };
        let text = more_words(self.block_words, chunk.tokens);
        self.block_words = self.block_words.saturating_add(chunk.tokens);
        let delta = match wanted {
            "thinking" => json!({"type": "thinking_delta", "thinking": text}),
            "tool_use" => json!({"type": "input_json_delta", "partial_json": "{}"}),
            _ => json!({"type": "text_delta", "text": text}),
        };
        event(
            out,
            "content_block_delta",
            &json!({
                "type": "content_block_delta", "index": index, "delta": delta,
                "x_routersim": extension(chunk),
            }),
        );
    }

    /// The end: `content_block_stop`, `message_delta` (stop reason, usage), `message_stop`;
    /// without a finish reason ([`FinishReason::Missing`], the `stream_no_finish` fault) no
    /// `message_delta`.
    pub fn done(&mut self, reason: FinishReason, out: &mut Vec<u8>) {
        self.start(out, false);
        self.stop_block(out);
        if reason == FinishReason::Missing {
            event(out, "message_stop", &json!({"type": "message_stop"}));
            return;
        }
        event(
            out,
            "message_delta",
            &json!({
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason_name(reason), "stop_sequence": null},
                "usage": {"output_tokens": self.tokens_sent},
            }),
        );
        event(out, "message_stop", &json!({"type": "message_stop"}));
    }

    /// `event: error` inside the 200 stream (the stream then ends cleanly). Anthropic's error
    /// object has no status; the frame's status (a spec may override the kind's) rides in
    /// `"x_routersim": {"status": S}`.
    pub fn error_frame(&mut self, failure: &ProviderFailure, out: &mut Vec<u8>) {
        let mut value = error_value(failure.kind);
        if let (Some(status), Value::Object(map)) = (failure.effective_status(), &mut value) {
            map.insert("x_routersim".into(), json!({"status": status}));
        }
        event(out, "error", &value);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn meta() -> Meta {
        Meta {
            id: "msg_1".into(),
            model: "claude".into(),
            created: 0,
            input_tokens: 7,
        }
    }

    #[test]
    fn bodies_have_anthropic_shapes() {
        let v: Value = serde_json::from_slice(&completion_body(
            &meta(),
            &Completion {
                output_tokens: 2,
                finish_reason: FinishReason::ToolCalls,
                empty_choices: false,
                body: None,
            },
        ))
        .unwrap();
        assert_eq!(v["type"], "message");
        assert_eq!(v["content"][0]["text"], "tok tok");
        assert_eq!(v["stop_reason"], "tool_use");
        assert_eq!(v["usage"], json!({"input_tokens": 7, "output_tokens": 2}));
        let v: Value =
            serde_json::from_slice(&error_body(&ProviderFailure::new(FailureKind::Overloaded)))
                .unwrap();
        assert_eq!(
            v,
            json!({"type": "error", "error": {"type": "overloaded_error",
                "message": "Overloaded (routersim fake provider)."}})
        );
        assert!(
            error_fields(FailureKind::ContextWindowExceeded)
                .1
                .starts_with("prompt is too long")
        );
    }

    #[test]
    fn stream_events_in_order() {
        let mut frames = SseFrames::new(meta());
        let mut out = Vec::new();
        let text = |tokens| Chunk {
            kind: ChunkKind::Text,
            tokens,
            span: Duration::ZERO,
        };
        frames.chunk(&text(1), &mut out);
        frames.chunk(&text(3), &mut out);
        frames.done(FinishReason::Stop, &mut out);
        let text = String::from_utf8(out).unwrap();
        let names: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("event: "))
            .collect();
        assert_eq!(
            names,
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        assert!(text.contains(r#""usage":{"output_tokens":4}"#), "{text}");
        assert!(
            text.contains(r#""x_routersim":{"tokens":3,"span_us":0,"kind":"text"}"#),
            "{text}"
        );
        let mut out = Vec::new();
        frames.error_frame(&ProviderFailure::new(FailureKind::Overloaded), &mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with(
            "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\""
        ));
        assert!(text.contains(r#""x_routersim":{"status":529}"#), "{text}");
        let mut out = Vec::new();
        let overridden = ProviderFailure::new(FailureKind::Overloaded).with_status(Some(503));
        frames.error_frame(&overridden, &mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains(r#""x_routersim":{"status":503}"#), "{text}");
    }

    /// Audio has no Anthropic delta: it goes out as text, its kind in the extension.
    #[test]
    fn audio_chunks_name_their_kind() {
        let mut frames = SseFrames::new(meta());
        let mut out = Vec::new();
        let audio = Chunk {
            kind: ChunkKind::Audio,
            tokens: 2,
            span: Duration::ZERO,
        };
        frames.chunk(&audio, &mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains(r#""x_routersim":{"tokens":2,"span_us":0,"kind":"audio"}"#),
            "{text}"
        );
    }
}
