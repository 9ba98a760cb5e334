//! Anthropic messages: the request body, the non-streamed `message` and the SSE events
//! (`message_start`, `content_block_start`, `content_block_delta`, `content_block_stop`,
//! `message_delta`, `message_stop`, `ping`, `error`).

use std::collections::VecDeque;
use std::time::Duration;

use serde_json::{Value, json};

use routersim_engine::provider::ProviderCall;
use routersim_engine::request::Completion;
use routersim_engine::stream::{Chunk, ChunkKind, FinishReason, StreamItem};

use crate::errors::classify_error_frame;
use crate::format::{
    MalformedEvent, WireFormat, estimate_tokens, routersim_extension, routersim_kind,
};
use crate::openai::client::{PREFILL_PLACEHOLDER, PROMPT_PLACEHOLDER};

/// `max_tokens` when the request sets none: Anthropic requires the field (LiteLLM fills in
/// its own default the same way).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// Request params sent on (see [`crate::openai::client::FORWARDED_PARAMS`]); `stop` becomes
/// Anthropic's `stop_sequences`, as LiteLLM maps it.
pub const FORWARDED_PARAMS: [&str; 4] = ["temperature", "top_p", "top_k", "stop"];

/// The messages body. JSON mode has no Anthropic field (LiteLLM rewrites it into a tool); it is
/// not sent, as a real Anthropic endpoint refuses unknown fields.
pub fn request_body(model: &str, call: &ProviderCall<'_>) -> Value {
    let request = call.request;
    let mut messages = vec![json!({"role": "user", "content": PROMPT_PLACEHOLDER})];
    if request.prefill_tokens > 0 {
        messages.push(json!({"role": "assistant", "content": PREFILL_PLACEHOLDER}));
    }
    let mut body = json!({
        "model": model,
        "max_tokens": request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        "messages": messages,
        "stream": request.stream,
    });
    let Some(map) = body.as_object_mut() else {
        return body;
    };
    if request.tools {
        map.insert(
            "tools".into(),
            json!([{
                "name": "routersim_tool",
                "description": "A placeholder tool.",
                "input_schema": {"type": "object", "properties": {}},
            }]),
        );
    }
    for key in FORWARDED_PARAMS {
        let Some(value) = request.params.get(key) else {
            continue;
        };
        match (key, value) {
            ("stop", Value::String(one)) => {
                map.insert("stop_sequences".into(), json!([one]));
            }
            ("stop", _) => {
                map.insert("stop_sequences".into(), value.clone());
            }
            _ => {
                map.insert(key.into(), value.clone());
            }
        }
    }
    body
}

/// Anthropic's stop reasons (`refusal` is its content filter).
pub fn stop_reason(name: &str) -> FinishReason {
    match name {
        "max_tokens" => FinishReason::Length,
        "tool_use" => FinishReason::ToolCalls,
        "refusal" => FinishReason::ContentFilter,
        _ => FinishReason::Stop,
    }
}

/// A non-streamed `message`.
pub fn decode_completion(value: &Value) -> Option<Completion> {
    let content = value.get("content")?.as_array()?;
    let finish = value
        .get("stop_reason")
        .and_then(Value::as_str)
        .map_or(FinishReason::Stop, stop_reason);
    let usage = value
        .pointer("/usage/output_tokens")
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok());
    let estimated = || {
        let text: Vec<&str> = content
            .iter()
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect();
        let text = text.join(" ");
        if text.trim().is_empty() {
            0
        } else {
            estimate_tokens(&text)
        }
    };
    Some(Completion {
        output_tokens: usage.unwrap_or_else(estimated),
        finish_reason: finish,
        empty_choices: content.is_empty(),
        body: None,
    })
}

/// One SSE event.
pub fn decode_event(
    event: Option<&str>,
    data: &str,
    out: &mut VecDeque<StreamItem>,
) -> Result<(), MalformedEvent> {
    let value: Value = serde_json::from_str(data).map_err(|_| MalformedEvent)?;
    // The event name and the data's `type` agree on a real stream; trust `type` when present.
    let kind = value.get("type").and_then(Value::as_str).or(event);
    match kind {
        Some("error") => {
            let failure = classify_error_frame(WireFormat::Anthropic, &value);
            out.push_back(StreamItem::ErrorFrame(failure));
        }
        Some("content_block_delta") => out.push_back(StreamItem::Chunk(delta_chunk(&value))),
        Some("message_delta") => {
            if let Some(reason) = value.pointer("/delta/stop_reason").and_then(Value::as_str) {
                out.push_back(StreamItem::Done(stop_reason(reason)));
            }
        }
        // A stop reason ends the stream at `message_delta`: a `message_stop` read here came
        // without one.
        Some("message_stop") => out.push_back(StreamItem::Done(FinishReason::Missing)),
        // A `message_start` marked with the contract's extension is the fake provider's
        // role-only chunk; a real one is framing, like content_block_start/stop and ping.
        Some("message_start") => {
            if let Some((tokens, span)) = routersim_extension(&value) {
                out.push_back(StreamItem::Chunk(Chunk {
                    kind: ChunkKind::RoleOnly,
                    tokens,
                    span,
                }));
            }
        }
        Some(_) => {}
        None => return Err(MalformedEvent),
    }
    Ok(())
}

/// A `content_block_delta`'s chunk: `text_delta` → text, `thinking_delta` → thinking,
/// `input_json_delta` → a tool call; an empty text delta is role-only (no content).
fn delta_chunk(value: &Value) -> Chunk {
    let delta = value.get("delta").unwrap_or(&Value::Null);
    let field = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or("");
    let (kind, text) = match delta.get("type").and_then(Value::as_str) {
        Some("thinking_delta") => (ChunkKind::Thinking, field("thinking")),
        Some("signature_delta") => (ChunkKind::Thinking, ""),
        Some("input_json_delta") => (ChunkKind::ToolCall, field("partial_json")),
        _ => {
            let text = field("text");
            let kind = if text.is_empty() {
                ChunkKind::RoleOnly
            } else {
                ChunkKind::Text
            };
            (kind, text)
        }
    };
    let (tokens, span) = routersim_extension(value).unwrap_or_else(|| {
        let tokens = if kind == ChunkKind::RoleOnly || text.is_empty() {
            0
        } else {
            estimate_tokens(text)
        };
        (tokens, Duration::ZERO)
    });
    let kind = routersim_kind(value).unwrap_or(kind);
    Chunk { kind, tokens, span }
}

#[cfg(test)]
mod tests {
    use super::*;
    use routersim_engine::failure::FailureKind;

    fn decode(event: &str, data: &str) -> Vec<StreamItem> {
        let mut out = VecDeque::new();
        decode_event(Some(event), data, &mut out).unwrap();
        out.into_iter().collect()
    }

    #[test]
    fn events() {
        assert_eq!(
            decode("message_start", r#"{"type":"message_start","message":{}}"#),
            vec![]
        );
        assert_eq!(
            decode(
                "message_start",
                r#"{"type":"message_start","message":{},"x_routersim":{"tokens":0,"span_us":0}}"#
            ),
            vec![StreamItem::Chunk(Chunk {
                kind: ChunkKind::RoleOnly,
                tokens: 0,
                span: Duration::ZERO
            })],
            "the contract's role-only chunk"
        );
        assert_eq!(
            decode(
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"tok tok"}}"#
            ),
            vec![StreamItem::Chunk(Chunk {
                kind: ChunkKind::Text,
                tokens: 2,
                span: Duration::ZERO
            })]
        );
        assert_eq!(
            decode(
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":9}}"#
            ),
            vec![StreamItem::Done(FinishReason::Length)]
        );
        let items = decode(
            "error",
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        );
        let [StreamItem::ErrorFrame(f)] = items.as_slice() else {
            panic!("{items:?}")
        };
        assert_eq!((f.kind, f.status), (FailureKind::Overloaded, Some(529)));
    }

    /// The fake provider's extension names what Anthropic's events cannot carry.
    #[test]
    fn the_extension_names_the_kind_and_the_error_status() {
        assert_eq!(
            decode(
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"tok tok"},"x_routersim":{"tokens":2,"span_us":10,"kind":"audio"}}"#
            ),
            vec![StreamItem::Chunk(Chunk {
                kind: ChunkKind::Audio,
                tokens: 2,
                span: Duration::from_micros(10)
            })]
        );
        let items = decode(
            "error",
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"x_routersim":{"status":503}}"#,
        );
        let [StreamItem::ErrorFrame(f)] = items.as_slice() else {
            panic!("{items:?}")
        };
        assert_eq!((f.kind, f.status), (FailureKind::Overloaded, Some(503)));
    }
}
