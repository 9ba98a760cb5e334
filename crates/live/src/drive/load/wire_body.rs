//! Drive's per-request JSON, without a `serde_json::Value` per request: the request body
//! written straight into bytes, and a non-streamed answer read into a small typed shape.
//! Both give exactly what the `Value` route gives (the same bytes out; the same tokens and
//! verdicts in): a request body is what `serde_json` writes for the same object, and an
//! answer the typed shape cannot read exactly (not an object, a duplicate key, a count that
//! is not a plain unsigned integer…) goes the `Value` route instead.

use serde::Deserialize;
use serde::de::IgnoredAny;

/// The request body of `model`'s request `id`: `{"model", "messages", "stream",
/// ["max_tokens"], ["stream_options"]}`, in that order, compact, as `serde_json` writes it.
pub fn request_body(model: &str, id: u64, stream: bool, max_tokens: Option<u32>) -> Vec<u8> {
    let mut out = Vec::with_capacity(160 + model.len());
    out.extend_from_slice(b"{\"model\":");
    // A string's escaping is serde_json's own; writing to a Vec cannot fail.
    let _ = serde_json::to_writer(&mut out, model);
    out.extend_from_slice(
        b",\"messages\":[{\"role\":\"user\",\"content\":\"routersim drive request ",
    );
    out.extend_from_slice(id.to_string().as_bytes());
    out.extend_from_slice(b"\"}],\"stream\":");
    out.extend_from_slice(if stream { b"true" } else { b"false" });
    if let Some(n) = max_tokens {
        out.extend_from_slice(b",\"max_tokens\":");
        out.extend_from_slice(n.to_string().as_bytes());
    }
    if stream {
        out.extend_from_slice(b",\"stream_options\":{\"include_usage\":true}");
    }
    out.push(b'}');
    out
}

/// A chat completion as drive reads it: `choices` (an array of anything) and
/// `usage.completion_tokens`.
#[derive(Deserialize)]
struct Answer {
    #[expect(dead_code, reason = "read only to require an array")]
    choices: Vec<IgnoredAny>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    completion_tokens: Option<u64>,
}

/// The answer's `usage.completion_tokens` (`Some(None)`: none given), when `body` is a JSON
/// object with a `choices` array the typed shape reads exactly; `None`: read it as a `Value`.
pub fn answer_completion_tokens(body: &[u8]) -> Option<Option<u64>> {
    // serde reads a struct from an array too; only an object is read this way.
    let first = body.iter().find(|b| !b" \t\n\r".contains(b))?;
    if *first != b'{' {
        return None;
    }
    let answer: Answer = serde_json::from_slice(body).ok()?;
    Some(answer.usage.and_then(|u| u.completion_tokens))
}
