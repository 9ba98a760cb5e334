//! The OpenAI server bodies and frames.
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

// The typed frames write the bytes the `serde_json::Value` builders they replaced wrote (key
// order included), with an id and model that need escaping.

fn escaped_meta() -> Meta {
    Meta {
        id: "chatcmpl-\"q\"\\é\u{1}".into(),
        model: "gpt-4o\n".into(),
        created: -3,
        input_tokens: u32::MAX,
    }
}

#[test]
fn typed_chunks_write_the_bytes_of_the_value_builders_for_every_kind() {
    let meta = escaped_meta();
    let value_chunk = |delta: Value, chunk: &Chunk| {
        let frame = json!({
            "id": meta.id, "object": "chat.completion.chunk", "created": meta.created,
            "model": meta.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": null}],
            "x_routersim": {"tokens": chunk.tokens, "span_us": chunk.span.as_micros() as u64,
                "kind": chunk.kind.as_str()},
        });
        format!("data: {}\n\n", serde_json::to_string(&frame).unwrap())
    };
    let mut frames = SseFrames::new(meta.clone(), Format::OpenAi, false);
    let kinds = [
        (
            ChunkKind::RoleOnly,
            json!({"role": "assistant", "content": ""}),
        ),
        (ChunkKind::Text, json!({"content": "tok tok"})),
        (ChunkKind::Text, json!({"content": " tok"})),
        (
            ChunkKind::ToolCall,
            json!({"tool_calls": [{
                "index": 0, "id": "call_routersim", "type": "function",
                "function": {"name": "routersim_tool", "arguments": "{}"},
            }]}),
        ),
        (ChunkKind::Thinking, json!({"reasoning_content": "tok tok"})),
        (
            ChunkKind::Audio,
            json!({"audio": {"id": "audio_routersim", "data": "AAAA"}}),
        ),
        (
            ChunkKind::Image,
            json!({"images": [{
                "type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"},
            }]}),
        ),
    ];
    for (kind, delta) in kinds {
        let tokens = match &delta["content"] {
            Value::String(s) if !s.is_empty() => s.split_whitespace().count() as u32,
            _ if kind == ChunkKind::Thinking => 2,
            _ => 0,
        };
        let chunk = Chunk {
            kind,
            tokens,
            span: Duration::from_micros(1_234_567),
        };
        let mut out = Vec::new();
        frames.chunk(&chunk, &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), value_chunk(delta, &chunk));
    }
}

#[test]
fn typed_stream_ends_write_the_bytes_of_the_value_builders() {
    let meta = escaped_meta();
    for (reason, include_usage) in [
        (FinishReason::Stop, true),
        (FinishReason::ContentFilter, false),
        (FinishReason::Missing, true),
        (FinishReason::Missing, false),
    ] {
        let mut frames = SseFrames::new(meta.clone(), Format::OpenAi, include_usage);
        frames.tokens_sent = 41;
        let mut out = Vec::new();
        frames.done(reason, &mut out);
        let head = |choices: Value| {
            let mut map = serde_json::Map::new();
            map.insert("id".into(), json!(meta.id));
            map.insert("object".into(), json!("chat.completion.chunk"));
            map.insert("created".into(), json!(meta.created));
            map.insert("model".into(), json!(meta.model));
            map.insert("choices".into(), choices);
            map
        };
        let mut expected = String::new();
        if reason != FinishReason::Missing {
            let map = head(json!([{
                "index": 0, "delta": {}, "finish_reason": finish_reason_name(reason),
            }]));
            expected += &format!("data: {}\n\n", Value::Object(map));
        }
        if include_usage {
            let mut map = head(json!([]));
            map.insert(
                "usage".into(),
                json!({"prompt_tokens": meta.input_tokens, "completion_tokens": 41,
                    "total_tokens": u64::from(meta.input_tokens) + 41}),
            );
            expected += &format!("data: {}\n\n", Value::Object(map));
        }
        expected += "data: [DONE]\n\n";
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }
}

#[test]
fn typed_completions_write_the_bytes_of_the_value_builder() {
    let meta = escaped_meta();
    for (empty, finish) in [(false, FinishReason::Length), (true, FinishReason::Stop)] {
        let completion = Completion {
            output_tokens: 3,
            finish_reason: finish,
            empty_choices: empty,
            body: None,
        };
        let choices = if empty {
            json!([])
        } else {
            json!([{"index": 0, "message": {"role": "assistant", "content": "tok tok tok"},
                "finish_reason": finish_reason_name(finish)}])
        };
        let output = if empty { 0 } else { 3 };
        let expected = json!({
            "id": meta.id, "object": "chat.completion", "created": meta.created,
            "model": meta.model, "choices": choices,
            "usage": {"prompt_tokens": meta.input_tokens, "completion_tokens": output,
                "total_tokens": u64::from(meta.input_tokens) + output},
        });
        assert_eq!(
            String::from_utf8(completion_body(&meta, &completion)).unwrap(),
            serde_json::to_string(&expected).unwrap()
        );
    }
}
