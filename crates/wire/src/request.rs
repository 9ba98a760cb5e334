//! An HTTP request's body and headers to the engine [`Request`] the fake providers decide on.
//!
//! The engine's HTTP adapter sends the exact counts in `x-routersim-*` headers (its message
//! text is a short placeholder); a real client (curl, the `openai` SDK, LiteLLM's proxy) sends
//! none, and the counts are estimated from the body: `input_tokens = ceil(chars of every
//! message content / 4)` (Anthropic's `system` included), `prefill_tokens` the same of a
//! trailing assistant message, `max_tokens` from `max_tokens` or `max_completion_tokens`.
//!
//! A count that sets the answer's length (`max_tokens`, `max_completion_tokens`,
//! `x-routersim-output-tokens`) over [`MAX_OUTPUT_TOKENS`](crate::limits::MAX_OUTPUT_TOKENS)
//! is refused (the server answers 400): its text would not fit in memory. An empty body is
//! refused too: a chat request is a JSON object.

use http::HeaderMap;
use routersim_engine::request::{Request, ResponseFormat};
use serde_json::Value;

use crate::headers::{ATTEMPT, INPUT_TOKENS, OUTPUT_TOKENS, PREFILL_TOKENS, REQUEST_ID};
use crate::limits::check_output_tokens;

/// A request as the fake providers see it, with what the renderer needs besides.
#[derive(Clone, Debug)]
pub struct WireRequest {
    /// The engine request.
    pub request: Request,
    /// `x-routersim-attempt`, else 1.
    pub attempt: u32,
    /// The body's `model`, echoed in the answer.
    pub model: String,
    /// `stream_options.include_usage` (OpenAI/Azure streams end with a usage chunk).
    pub include_usage: bool,
    /// The client's `x-routersim-request-id`, when it sent one (`routersim drive` does, and a
    /// router that forwards client headers passes it on): joins a call to its request.
    pub client_request_id: Option<u64>,
}

/// What the fake providers read of a request body.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct BodyFields {
    /// Characters of every message content (`system` included).
    pub chars: usize,
    /// Characters of a trailing assistant message.
    pub prefill_chars: usize,
    /// `response_format.type` is `json_object` or `json_schema`.
    pub json_mode: bool,
    /// A non-empty `tools` or `functions` list.
    pub tools: bool,
    pub max_tokens: Option<u64>,
    pub max_completion_tokens: Option<u64>,
    pub stream: bool,
    pub model: Option<String>,
    /// `stream_options.include_usage`.
    pub include_usage: bool,
}

/// Reads a request body (JSON) and its headers. `Err` says why the body is not a request.
pub fn parse_request(
    body: &[u8],
    headers: &HeaderMap,
    model_group: &str,
    next_id: u64,
) -> Result<WireRequest, String> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err("the body is empty: a chat request is a JSON object".to_string());
    }
    let fields = match crate::request_fast::read(body) {
        Some(fields) => fields,
        None => body_fields(body)?,
    };
    let header = |name: &str| -> Option<u64> {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|s| s.trim().parse().ok())
    };
    let header32 = |name: &str| header(name).map(|n| u32::try_from(n).unwrap_or(u32::MAX));
    // The answer's length: capped, since the answer's text is made from it.
    let length = |key: &str, n: Option<u64>| -> Result<Option<u32>, String> {
        n.map(|n| check_output_tokens(&format!("`{key}`"), n))
            .transpose()
    };
    let tokens_of = |chars: usize| u32::try_from(chars.div_ceil(4)).unwrap_or(u32::MAX);
    let mut request = Request::new(header(REQUEST_ID).unwrap_or(next_id), model_group);
    request.input_tokens = header32(INPUT_TOKENS).unwrap_or_else(|| tokens_of(fields.chars));
    request.prefill_tokens =
        header32(PREFILL_TOKENS).unwrap_or_else(|| tokens_of(fields.prefill_chars));
    request.output_tokens = header(OUTPUT_TOKENS)
        .map(|n| check_output_tokens(OUTPUT_TOKENS, n))
        .transpose()?;
    let max_completion_tokens = length("max_completion_tokens", fields.max_completion_tokens)?;
    request.max_tokens = length("max_tokens", fields.max_tokens)?.or(max_completion_tokens);
    request.stream = fields.stream;
    request.response_format = if fields.json_mode {
        ResponseFormat::Json
    } else {
        ResponseFormat::Text
    };
    request.tools = fields.tools;
    Ok(WireRequest {
        client_request_id: header(REQUEST_ID),
        request,
        attempt: header32(ATTEMPT).unwrap_or(1).max(1),
        model: fields.model.unwrap_or_else(|| model_group.to_string()),
        include_usage: fields.include_usage,
    })
}

/// The body read as a `serde_json::Value`: every body the typed first reading
/// ([`request_fast`](crate::request_fast)) declines.
pub(crate) fn body_fields(body: &[u8]) -> Result<BodyFields, String> {
    let json: Value =
        serde_json::from_slice(body).map_err(|e| format!("the body is not valid JSON: {e}"))?;
    let Value::Object(obj) = &json else {
        return Err("the body must be a JSON object".to_string());
    };
    let messages = obj.get("messages").and_then(Value::as_array);
    let mut chars = obj.get("system").map_or(0, content_chars);
    let mut prefill_chars = 0;
    if let Some(messages) = messages {
        for m in messages {
            chars += m.get("content").map_or(0, content_chars);
        }
        if let Some(last) = messages.last()
            && last.get("role").and_then(Value::as_str) == Some("assistant")
        {
            prefill_chars = last.get("content").map_or(0, content_chars);
        }
    }
    let has_list = |key: &str| {
        obj.get(key)
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
    };
    Ok(BodyFields {
        chars,
        prefill_chars,
        json_mode: obj
            .get("response_format")
            .and_then(|f| f.get("type"))
            .and_then(Value::as_str)
            .is_some_and(is_json_mode),
        tools: has_list("tools") || has_list("functions"),
        max_tokens: obj.get("max_tokens").and_then(Value::as_u64),
        max_completion_tokens: obj.get("max_completion_tokens").and_then(Value::as_u64),
        stream: obj.get("stream").and_then(Value::as_bool).unwrap_or(false),
        model: obj.get("model").and_then(Value::as_str).map(str::to_string),
        include_usage: obj
            .get("stream_options")
            .and_then(|o| o.get("include_usage"))
            .and_then(Value::as_bool)
            .unwrap_or(false),
    })
}

/// A `response_format.type` asking for JSON.
pub(crate) fn is_json_mode(kind: &str) -> bool {
    kind == "json_object" || kind == "json_schema"
}

/// Characters of a message content: a string, or the text of each part of a list.
fn content_chars(content: &Value) -> usize {
    match content {
        Value::String(s) => s.chars().count(),
        Value::Array(parts) => parts
            .iter()
            .map(|p| match p {
                Value::String(s) => s.chars().count(),
                other => other
                    .get("text")
                    .and_then(Value::as_str)
                    .map_or(0, |s| s.chars().count()),
            })
            .sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_win_over_estimates() {
        let body = br#"{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,
            "stream_options":{"include_usage":true},"max_tokens":50,"tools":[{"type":"function"}],
            "response_format":{"type":"json_object"}}"#;
        let mut headers = HeaderMap::new();
        headers.insert(INPUT_TOKENS, "1200".parse().unwrap());
        headers.insert(OUTPUT_TOKENS, "30".parse().unwrap());
        headers.insert(ATTEMPT, "3".parse().unwrap());
        headers.insert(REQUEST_ID, "77".parse().unwrap());
        let w = parse_request(body, &headers, "group", 1).unwrap();
        assert_eq!(w.request.input_tokens, 1200);
        assert_eq!(w.request.output_tokens, Some(30));
        assert_eq!(w.request.max_tokens, Some(50));
        assert_eq!(w.request.id, 77);
        assert_eq!(w.attempt, 3);
        assert!(w.request.stream && w.request.tools && w.include_usage);
        assert_eq!(w.request.response_format, ResponseFormat::Json);
        assert_eq!(w.model, "m");
    }

    #[test]
    fn without_headers_counts_are_estimated_from_text() {
        let body = br#"{"messages":[{"role":"user","content":"123456789"},
            {"role":"assistant","content":[{"type":"text","text":"abcde"}]}],
            "max_completion_tokens":9}"#;
        let w = parse_request(body, &HeaderMap::new(), "group", 5).unwrap();
        assert_eq!(w.request.input_tokens, 4); // 14 chars
        assert_eq!(w.request.prefill_tokens, 2); // 5 chars
        assert_eq!(w.request.max_tokens, Some(9));
        assert_eq!(w.request.output_tokens, None);
        assert_eq!(w.request.id, 5);
        assert!(!w.request.stream);
        assert_eq!(w.model, "group");
        assert!(parse_request(b"[1]", &HeaderMap::new(), "g", 1).is_err());
        assert!(parse_request(b" \n", &HeaderMap::new(), "g", 1).is_err());
        assert!(parse_request(b"{", &HeaderMap::new(), "g", 1).is_err());
    }

    #[test]
    fn lengths_over_the_cap_are_refused_before_any_text_is_made() {
        let h = HeaderMap::new();
        let refused = |body: &[u8], headers: &HeaderMap| parse_request(body, headers, "g", 1);
        let e = refused(br#"{"max_tokens":4294967295}"#, &h).unwrap_err();
        assert!(e.contains("`max_tokens` is 4294967295"), "{e}");
        let e = refused(br#"{"max_completion_tokens":100000000}"#, &h).unwrap_err();
        assert!(e.contains("`max_completion_tokens`"), "{e}");
        let mut headers = HeaderMap::new();
        headers.insert(OUTPUT_TOKENS, "4294967295".parse().unwrap());
        let e = refused(b"{}", &headers).unwrap_err();
        assert!(e.contains(OUTPUT_TOKENS), "{e}");
        let at_cap = refused(br#"{"max_tokens":1000000}"#, &h).unwrap();
        assert_eq!(at_cap.request.max_tokens, Some(1_000_000));
    }
}
