//! OpenAI chat completions (Azure OpenAI shares these bodies): the request body, the
//! non-streamed response and the SSE `chat.completion.chunk` frames.

use std::collections::VecDeque;
use std::time::Duration;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::{Value, json};

use routersim_engine::provider::ProviderCall;
use routersim_engine::request::{Completion, ResponseFormat};
use routersim_engine::stream::{Chunk, ChunkKind, FinishReason, StreamItem};

use crate::errors::classify_error_frame;
use crate::format::{
    MalformedEvent, WireFormat, estimate_tokens, routersim_extension, routersim_kind,
};

/// The user message's text: a placeholder (the prompt's size travels in
/// `x-routersim-input-tokens`; a real provider bills what it receives).
pub const PROMPT_PLACEHOLDER: &str = "routersim request";
/// The assistant prefill's text (a continuation's already-delivered tokens).
pub const PREFILL_PLACEHOLDER: &str = "routersim prefill";

/// A minimal tool, sent when the request offers tools.
pub fn minimal_tool() -> Value {
    json!({
        "type": "function",
        "function": {
            "name": "routersim_tool",
            "description": "A placeholder tool.",
            "parameters": {"type": "object", "properties": {}},
        },
    })
}

/// Request params (`Request::params`: a fallback target's overrides, say) sent on as body
/// fields. Others — the router's own (`num_retries`, …) and anything this list does not
/// name — stay out of the body: a real endpoint refuses fields it does not know.
pub const FORWARDED_PARAMS: [&str; 10] = [
    "temperature",
    "top_p",
    "stop",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "user",
    "logit_bias",
    "parallel_tool_calls",
    "reasoning_effort",
];

/// The chat-completions body, written field by field in the order a `Value` built with
/// `json!` and `serde_json`'s `preserve_order` would keep (the bytes are that `Value`'s, a test
/// holds them equal), without building one: a map with owned keys per attempt was one of the
/// proxy's costs per request.
pub fn request_body<'a>(model: &'a str, call: &'a ProviderCall<'_>) -> RequestBody<'a> {
    RequestBody {
        model,
        request: call.request,
    }
}

/// What [`request_body`] writes.
pub struct RequestBody<'a> {
    model: &'a str,
    request: &'a routersim_engine::request::Request,
}

/// One message of the body.
#[derive(Serialize)]
struct Message {
    role: &'static str,
    content: &'static str,
}

/// `{"type": …}` (`response_format`).
#[derive(Serialize)]
struct Typed {
    #[serde(rename = "type")]
    kind: &'static str,
}

/// `{"include_usage": …}` (`stream_options`).
#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

impl Serialize for RequestBody<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let request = self.request;
        let user = Message {
            role: "user",
            content: PROMPT_PLACEHOLDER,
        };
        let prefill = Message {
            role: "assistant",
            content: PREFILL_PLACEHOLDER,
        };
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("model", self.model)?;
        if request.prefill_tokens > 0 {
            map.serialize_entry("messages", &[user, prefill])?;
        } else {
            map.serialize_entry("messages", &[user])?;
        }
        map.serialize_entry("stream", &request.stream)?;
        if let Some(max) = request.max_tokens {
            map.serialize_entry("max_tokens", &max)?;
        }
        if request.response_format == ResponseFormat::Json {
            map.serialize_entry(
                "response_format",
                &Typed {
                    kind: "json_object",
                },
            )?;
        }
        if request.tools {
            map.serialize_entry("tools", &[minimal_tool()])?;
        }
        if request.stream {
            map.serialize_entry(
                "stream_options",
                &StreamOptions {
                    include_usage: true,
                },
            )?;
        }
        for key in FORWARDED_PARAMS {
            if let Some(value) = request.params.get(key) {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

/// OpenAI's finish reasons (unknown ones read as `stop`: the answer ended normally).
pub fn finish_reason(name: &str) -> FinishReason {
    match name {
        "length" => FinishReason::Length,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "content_filter" => FinishReason::ContentFilter,
        _ => FinishReason::Stop,
    }
}

/// A non-streamed `chat.completion`: tokens from `usage.completion_tokens` (authoritative),
/// else the words of the first choice's content.
pub fn decode_completion(value: &Value) -> Option<Completion> {
    let choices = value.get("choices")?.as_array()?;
    let first = choices.first();
    Some(completion_of(
        first
            .and_then(|c| c.get("finish_reason"))
            .and_then(Value::as_str),
        value
            .get("usage")
            .and_then(|u| u.get("completion_tokens"))
            .and_then(Value::as_u64),
        || {
            first
                .and_then(|c| c.pointer("/message/content"))
                .and_then(Value::as_str)
        },
        choices.is_empty(),
    ))
}

/// A completion from the fields a `chat.completion` body gives, however it was read: the
/// first choice's finish reason, `usage.completion_tokens` (authoritative when it fits a
/// `u32`), else the words of the first choice's content (asked for only then).
pub(crate) fn completion_of<'a>(
    finish: Option<&str>,
    completion_tokens: Option<u64>,
    content: impl FnOnce() -> Option<&'a str>,
    empty_choices: bool,
) -> Completion {
    let estimated = || {
        content().map_or(0, |text| {
            if text.trim().is_empty() {
                0
            } else {
                estimate_tokens(text)
            }
        })
    };
    Completion {
        output_tokens: completion_tokens
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or_else(estimated),
        finish_reason: finish.map_or(FinishReason::Stop, finish_reason),
        empty_choices,
        body: None,
    }
}

/// One `data:` frame: a chunk, a finish, `[DONE]`, or an error object (classified as
/// `format`'s: OpenAI's or Azure's).
pub fn decode_event(
    format: WireFormat,
    data: &str,
    out: &mut VecDeque<StreamItem>,
) -> Result<(), MalformedEvent> {
    // A finish chunk ends the stream before `[DONE]`: `[DONE]` read here came without one.
    if data.trim() == "[DONE]" {
        out.push_back(StreamItem::Done(FinishReason::Missing));
        return Ok(());
    }
    if super::chunk_fast::read(data, out).is_some() {
        return Ok(());
    }
    decode_value_event(format, data, out)
}

/// [`decode_event`] reading the frame as a `Value`: every frame the typed first reading
/// declines.
pub(super) fn decode_value_event(
    format: WireFormat,
    data: &str,
    out: &mut VecDeque<StreamItem>,
) -> Result<(), MalformedEvent> {
    let value: Value = serde_json::from_str(data).map_err(|_| MalformedEvent)?;
    if value.get("error").is_some_and(Value::is_object) {
        let failure = classify_error_frame(format, &value);
        out.push_back(StreamItem::ErrorFrame(failure));
        return Ok(());
    }
    let choices = value
        .get("choices")
        .and_then(Value::as_array)
        .ok_or(MalformedEvent)?;
    // `choices: []` is the usage chunk (`include_usage`): nothing for the caller.
    let Some(choice) = choices.first() else {
        return Ok(());
    };
    let finish = choice
        .get("finish_reason")
        .and_then(Value::as_str)
        .map(finish_reason);
    let delta = choice.get("delta").unwrap_or(&Value::Null);
    if let Some(chunk) = delta_chunk(delta, &value, finish.is_some()) {
        out.push_back(StreamItem::Chunk(chunk));
    }
    if let Some(reason) = finish {
        out.push_back(StreamItem::Done(reason));
    }
    Ok(())
}

/// The chunk a delta carries: content of some kind, or a role-only delta (none for the empty
/// delta of a finish frame).
fn delta_chunk(delta: &Value, frame: &Value, finishing: bool) -> Option<Chunk> {
    let text = |key: &str| {
        delta
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let present = |key: &str| delta.get(key).is_some_and(|v| !v.is_null());
    let (kind, words) = if let Some(content) = text("content") {
        (ChunkKind::Text, Some(content.to_string()))
    } else if present("tool_calls") {
        let args = delta["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|call| call.pointer("/function/arguments").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" ");
        (ChunkKind::ToolCall, Some(args))
    } else if let Some(reasoning) = text("reasoning_content") {
        (ChunkKind::Thinking, Some(reasoning.to_string()))
    } else if present("audio") {
        (ChunkKind::Audio, Some(String::new()))
    } else if present("images") {
        (ChunkKind::Image, Some(String::new()))
    } else if finishing && !present("role") {
        return None;
    } else {
        (ChunkKind::RoleOnly, None)
    };
    let (tokens, span) = routersim_extension(frame).unwrap_or_else(|| {
        let tokens = words.as_deref().map_or(0, estimate_tokens);
        (tokens, Duration::ZERO)
    });
    let kind = routersim_kind(frame).unwrap_or(kind);
    Some(Chunk { kind, tokens, span })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The body as it was built before: a `json!` `Value`, keys in insertion order.
    fn body_as_value(model: &str, request: &routersim_engine::request::Request) -> Value {
        let mut messages = vec![json!({"role": "user", "content": PROMPT_PLACEHOLDER})];
        if request.prefill_tokens > 0 {
            messages.push(json!({"role": "assistant", "content": PREFILL_PLACEHOLDER}));
        }
        let mut body = json!({"model": model, "messages": messages, "stream": request.stream});
        let map = body.as_object_mut().unwrap();
        if let Some(max) = request.max_tokens {
            map.insert("max_tokens".into(), json!(max));
        }
        if request.response_format == ResponseFormat::Json {
            map.insert("response_format".into(), json!({"type": "json_object"}));
        }
        if request.tools {
            map.insert("tools".into(), json!([minimal_tool()]));
        }
        if request.stream {
            map.insert("stream_options".into(), json!({"include_usage": true}));
        }
        for key in FORWARDED_PARAMS {
            if let Some(value) = request.params.get(key) {
                map.insert(key.into(), value.clone());
            }
        }
        body
    }

    #[test]
    fn the_request_body_is_the_bytes_of_the_value_it_replaced() {
        use routersim_engine::config::Deployment;
        use routersim_engine::request::Request;
        let deployment = Deployment::default();
        for bits in 0..64u32 {
            let mut request = Request::new(7, "group");
            request.prefill_tokens = bits & 1;
            request.stream = bits & 2 != 0;
            request.max_tokens = (bits & 4 != 0).then_some(4_000_000_000);
            if bits & 8 != 0 {
                request.response_format = ResponseFormat::Json;
            }
            request.tools = bits & 16 != 0;
            if bits & 32 != 0 {
                // Every forwarded param, inserted in another order, and one that is not sent.
                for (i, key) in FORWARDED_PARAMS.iter().rev().enumerate() {
                    request
                        .params
                        .insert((*key).into(), json!({"v": i, "s": "é\"\n"}));
                }
                request.params.insert("num_retries".into(), json!(3));
            }
            let call = ProviderCall {
                deployment: &deployment,
                deployment_index: 0,
                request: &request,
                attempt: 1,
            };
            let typed = serde_json::to_vec(&request_body("gpt-4o \"x\"", &call)).unwrap();
            let value = serde_json::to_vec(&body_as_value("gpt-4o \"x\"", &request)).unwrap();
            assert_eq!(
                String::from_utf8(typed).unwrap(),
                String::from_utf8(value).unwrap()
            );
        }
    }

    fn decode(data: &str) -> Vec<StreamItem> {
        let mut out = VecDeque::new();
        decode_event(WireFormat::OpenAi, data, &mut out).unwrap();
        out.into_iter().collect()
    }

    fn chunk(kind: ChunkKind, tokens: u32, span_us: u64) -> StreamItem {
        StreamItem::Chunk(Chunk {
            kind,
            tokens,
            span: Duration::from_micros(span_us),
        })
    }

    #[test]
    fn chunks_finishes_and_usage() {
        assert_eq!(
            decode(r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#),
            vec![chunk(ChunkKind::RoleOnly, 0, 0)]
        );
        assert_eq!(
            decode(r#"{"choices":[{"index":0,"delta":{"content":"tok tok tok"}}]}"#),
            vec![chunk(ChunkKind::Text, 3, 0)],
            "words when there is no extension"
        );
        assert_eq!(
            decode(
                r#"{"choices":[{"index":0,"delta":{"content":"tok tok"}}],"x_routersim":{"tokens":5,"span_us":40000}}"#
            ),
            vec![chunk(ChunkKind::Text, 5, 40_000)],
            "the extension wins"
        );
        assert_eq!(
            decode(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#),
            vec![StreamItem::Done(FinishReason::Length)]
        );
        assert_eq!(
            decode(r#"{"choices":[],"usage":{"completion_tokens":3}}"#),
            vec![]
        );
        assert_eq!(
            decode(
                r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}"#
            ),
            vec![chunk(ChunkKind::ToolCall, 1, 0)]
        );
        assert_eq!(
            decode(" [DONE]"),
            vec![StreamItem::Done(FinishReason::Missing)]
        );
        let mut out = VecDeque::new();
        assert_eq!(
            decode_event(WireFormat::OpenAi, "{not json", &mut out),
            Err(MalformedEvent)
        );
    }
}
