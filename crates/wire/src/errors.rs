//! Classifying an HTTP error response: status + body + headers → [`ProviderFailure`].
//!
//! The order (the wire contract, `WIRE_CONTRACT.md` "Errors"):
//! 1. the body's code — OpenAI/Azure `error.code` (then `error.type`), Anthropic `error.type` —
//!    when it names one kind unambiguously, whatever the status (so a scenario's status
//!    override round-trips);
//! 2. LiteLLM 1.110.2's string rules over the body text, so real providers' messages classify
//!    as LiteLLM would classify them (`litellm/litellm_core_utils/exception_mapping_utils.py`:
//!    `ExceptionCheckers.is_error_str_context_window_exceeded` l. 89–127,
//!    `is_azure_content_policy_violation_error` l. 130–147, the OpenAI content-policy and
//!    `model_not_found` checks in `_map_openai_exception` l. 382–410, Anthropic's
//!    `"content filtering policy"` / `"overloaded_error"` in `_map_anthropic_exception`
//!    l. 614–660, Azure's `inner_error.code == "ResponsibleAIPolicyViolation"` and
//!    "context window only at 400" in `_map_azure_exception` l. 2061–2160);
//! 3. [`FailureKind::from_status`].
//!
//! The reported status is always the HTTP status.
//!
//! `Retry-After` (the contract; LiteLLM itself reads only `retry-after`, in
//! `litellm/utils.py` `_get_retry_after_from_exception_header` l. 8560–8591, as integer seconds
//! or an RFC 2822 date): `retry-after-ms` wins (the `openai` SDK's extension, a float of
//! milliseconds); `retry-after` integer seconds → [`RetryAfter::Delay`]; any other value →
//! [`RetryAfter::HttpDate`] verbatim — the engine resolves it against its own clock, and an
//! unparseable one resolves to nothing, as LiteLLM's `-1` does.
//! `x-ratelimit-reset-*` is informational and deliberately ignored: it says when a quota
//! window refills, not when to retry, and LiteLLM 1.110.2 never reads it for a retry.

use std::time::Duration;

use http::HeaderMap;
use serde_json::Value;

use routersim_engine::failure::{FailureKind, ProviderFailure, RetryAfter};

use crate::format::WireFormat;

/// The most of an error body read (real ones are well under 1 KiB; memory stays flat).
pub const MAX_ERROR_BODY: usize = 64 * 1024;

/// Classifies a non-2xx response.
pub fn classify(
    format: WireFormat,
    status: u16,
    headers: &HeaderMap,
    body: &[u8],
) -> ProviderFailure {
    let text = String::from_utf8_lossy(body);
    let json: Option<Value> = serde_json::from_slice(body).ok();
    let kind = json
        .as_ref()
        .and_then(|v| kind_from_body_codes(format, v))
        .or_else(|| kind_from_text(format, status, &text, json.as_ref()))
        .unwrap_or_else(|| FailureKind::from_status(status));
    let failure = ProviderFailure::new(kind).with_status(Some(status));
    match retry_after(headers) {
        Some(retry_after) => failure.with_retry_after(retry_after),
        None => failure,
    }
}

/// Classifies an error object carried inside a 200 stream (`data: {"error": …}` or Anthropic's
/// `event: error`): code first, then the same string rules, then the `status` field (the
/// contract's extension) or the kind's default status.
pub fn classify_error_frame(format: WireFormat, frame: &Value) -> ProviderFailure {
    // OpenAI-shaped frames carry the status in the error object; Anthropic's error object has
    // no such field, so the fake provider sends it in the `x_routersim` extension.
    let status = frame
        .get("error")
        .and_then(|e| e.get("status"))
        .or_else(|| frame.get("x_routersim").and_then(|x| x.get("status")))
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok());
    let kind = kind_from_body_codes(format, frame)
        .or_else(|| kind_from_text(format, status.unwrap_or(0), &frame.to_string(), Some(frame)))
        .or(status.map(FailureKind::from_status))
        // An unclassified error event inside a 200 stream: the provider failed mid-answer.
        .unwrap_or(FailureKind::InternalServer);
    ProviderFailure::new(kind).with_status(status.or(kind.default_status()))
}

/// The kind an error body's code names, when it names exactly one.
fn kind_from_body_codes(format: WireFormat, body: &Value) -> Option<FailureKind> {
    let error = body.get("error")?;
    let field = |name: &str| error.get(name).and_then(Value::as_str);
    match format {
        WireFormat::Anthropic => anthropic_type(field("type")?),
        WireFormat::OpenAi | WireFormat::Azure => field("code")
            .and_then(openai_code)
            .or_else(|| field("type").and_then(openai_type)),
    }
}

/// OpenAI / Azure `error.code` values (the contract's table, plus real providers' spellings).
fn openai_code(code: &str) -> Option<FailureKind> {
    Some(match code {
        "rate_limit_exceeded" | "429" => FailureKind::RateLimit,
        "context_length_exceeded" => FailureKind::ContextWindowExceeded,
        // Azure sends `content_filter` (with `inner_error.code: ResponsibleAIPolicyViolation`).
        "content_policy_violation" | "content_filter" => FailureKind::ContentPolicyViolation,
        "invalid_api_key" | "invalid_authentication" => FailureKind::Authentication,
        "permission_denied" | "unsupported_country_region_territory" => {
            FailureKind::PermissionDenied
        }
        "model_not_found" | "DeploymentNotFound" => FailureKind::NotFound,
        "request_timeout" | "timeout" => FailureKind::Timeout,
        "conflict" => FailureKind::Conflict,
        "unprocessable_entity" => FailureKind::UnprocessableEntity,
        "internal_server_error" => FailureKind::InternalServer,
        "bad_gateway" => FailureKind::BadGateway,
        "service_unavailable" => FailureKind::ServiceUnavailable,
        "overloaded" | "overloaded_error" => FailureKind::Overloaded,
        _ => return None,
    })
}

/// OpenAI `error.type` values that name one kind (`invalid_request_error` and `server_error`
/// name several, so the status decides those).
fn openai_type(kind: &str) -> Option<FailureKind> {
    match kind {
        "insufficient_quota" => Some(FailureKind::RateLimit),
        _ => None,
    }
}

/// Anthropic `error.type` values (`invalid_request_error` names several: the message decides).
fn anthropic_type(kind: &str) -> Option<FailureKind> {
    Some(match kind {
        "rate_limit_error" => FailureKind::RateLimit,
        "authentication_error" => FailureKind::Authentication,
        "permission_error" => FailureKind::PermissionDenied,
        "not_found_error" => FailureKind::NotFound,
        "timeout_error" => FailureKind::Timeout,
        "overloaded_error" => FailureKind::Overloaded,
        // `api_error` is Anthropic's 500 and any other 5xx: the status decides.
        _ => return None,
    })
}

/// LiteLLM's string rules, for bodies whose code did not decide.
fn kind_from_text(
    format: WireFormat,
    status: u16,
    text: &str,
    json: Option<&Value>,
) -> Option<FailureKind> {
    let lower = text.to_lowercase();
    match format {
        WireFormat::Anthropic => {
            if text.contains("prompt is too long")
                || text.contains("prompt: length")
                || is_context_window_text(&lower)
            {
                Some(FailureKind::ContextWindowExceeded)
            } else if text.contains("overloaded_error") || text.contains("Overloaded") {
                Some(FailureKind::Overloaded)
            } else if lower.contains("content filtering policy") || lower.contains("content policy")
            {
                // LiteLLM matches "content filtering policy"; the contract's fake says
                // "content policy" — both are the same refusal.
                Some(FailureKind::ContentPolicyViolation)
            } else {
                None
            }
        }
        WireFormat::OpenAi => {
            if is_rate_limit_text(&lower) || text.contains("Request too large") {
                Some(FailureKind::RateLimit)
            } else if is_context_window_text(&lower) {
                Some(FailureKind::ContextWindowExceeded)
            } else if text.contains("invalid_request_error") && text.contains("model_not_found") {
                Some(FailureKind::NotFound)
            } else if (text.contains("invalid_request_error")
                && text.contains("content_policy_violation"))
                || (text.contains("Invalid prompt") && text.contains("violating our usage policy"))
                || lower.contains("request was rejected as a result of the safety system")
            {
                Some(FailureKind::ContentPolicyViolation)
            } else {
                None
            }
        }
        WireFormat::Azure => {
            if text.contains("DeploymentNotFound") {
                Some(FailureKind::NotFound)
            } else if azure_inner_policy(json) || is_azure_content_policy_text(&lower) {
                Some(FailureKind::ContentPolicyViolation)
            } else if status == 400 && is_context_window_text(&lower) {
                Some(FailureKind::ContextWindowExceeded)
            } else {
                None
            }
        }
    }
}

/// `ExceptionCheckers.is_error_str_rate_limit`'s phrase branches (l. 52–86): `rate[\s_-]*limit`
/// or Mistral's "service tier capacity exceeded". (Its bare-`429` branch only fires at status
/// 429, which the status already classifies.)
fn is_rate_limit_text(lower: &str) -> bool {
    let phrase = lower.match_indices("rate").any(|(at, _)| {
        lower[at + 4..]
            .trim_start_matches(|c: char| c.is_whitespace() || c == '_' || c == '-')
            .starts_with("limit")
    });
    phrase || lower.contains("service tier capacity exceeded")
}

/// `ExceptionCheckers.is_error_str_context_window_exceeded` (over the lowercased text).
fn is_context_window_text(lower: &str) -> bool {
    if lower.contains("string_above_max_length")
        || (lower.contains("invalid 'user'") && lower.contains("string too long"))
    {
        return false;
    }
    const KNOWN: [&str; 12] = [
        "exceed context limit",
        "this model's maximum context length is",
        "requested token count exceeds the model's maximum context length",
        "string too long. expected a string with maximum length",
        "model's maximum context limit",
        "is longer than the model's context length",
        "input tokens exceed the configured limit",
        "`inputs` tokens + `max_new_tokens` must be",
        "exceeds the available context size",
        "exceeds the maximum number of tokens allowed",
        "\"code\": \"context_length_exceeded\"",
        "prompt is too long",
    ];
    KNOWN.iter().any(|s| lower.contains(s))
        || (lower.contains("current length is") && lower.contains("while limit is"))
        || (lower.contains("maximum input length is") && lower.contains("tokens"))
        || (lower.contains("input too long:") && lower.contains("input tokens, limit is"))
}

/// `ExceptionCheckers.is_azure_content_policy_violation_error` (over the lowercased text).
fn is_azure_content_policy_text(lower: &str) -> bool {
    const KNOWN: [&str; 7] = [
        "content_policy_violation",
        "responsibleaipolicyviolation",
        "the response was filtered due to the prompt triggering azure openai's content management",
        "your task failed as a result of our safety system",
        "the model produced invalid content",
        "content_filter_policy",
        "your request was rejected as a result of our safety system",
    ];
    KNOWN.iter().any(|s| lower.contains(s))
}

/// Azure's `error.inner_error.code` (or `innererror`) `ResponsibleAIPolicyViolation`.
fn azure_inner_policy(json: Option<&Value>) -> bool {
    let Some(error) = json.and_then(|v| v.get("error")) else {
        return false;
    };
    ["inner_error", "innererror"].iter().any(|key| {
        error
            .get(*key)
            .and_then(|inner| inner.get("code"))
            .and_then(Value::as_str)
            == Some("ResponsibleAIPolicyViolation")
    })
}

/// The response's Retry-After, per the contract (see the module docs).
pub fn retry_after(headers: &HeaderMap) -> Option<RetryAfter> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(delay) = header("retry-after-ms").and_then(parse_millis) {
        return Some(RetryAfter::Delay(delay));
    }
    let value = header("retry-after")?;
    match value.parse::<u64>() {
        Ok(secs) => Some(RetryAfter::Delay(Duration::from_secs(secs))),
        Err(_) => Some(RetryAfter::HttpDate(value.to_string())),
    }
}

/// `retry-after-ms`: integer milliseconds exactly (so a Retry-After round-trips to the
/// nanosecond), else a non-negative float of milliseconds, as the `openai` SDK reads it.
fn parse_millis(value: &str) -> Option<Duration> {
    if let Ok(ms) = value.parse::<u64>() {
        return Some(Duration::from_millis(ms));
    }
    let ms = value.parse::<f64>().ok()?;
    (ms.is_finite() && ms >= 0.0).then(|| Duration::from_secs_f64(ms / 1000.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, value.parse().unwrap());
        }
        map
    }

    #[test]
    fn retry_after_forms() {
        assert_eq!(retry_after(&headers(&[])), None);
        assert_eq!(
            retry_after(&headers(&[("retry-after", "7")])),
            Some(RetryAfter::Delay(Duration::from_secs(7)))
        );
        assert_eq!(
            retry_after(&headers(&[
                ("retry-after", "2"),
                ("retry-after-ms", "1500")
            ])),
            Some(RetryAfter::Delay(Duration::from_millis(1500)))
        );
        for ms in [1, 999, 1234, 59_999, 123_456_789] {
            assert_eq!(
                retry_after(&headers(&[("retry-after-ms", &ms.to_string())])),
                Some(RetryAfter::Delay(Duration::from_millis(ms))),
                "exact for {ms}"
            );
        }
        assert_eq!(
            retry_after(&headers(&[("retry-after-ms", "2.5")])),
            Some(RetryAfter::Delay(Duration::from_micros(2500)))
        );
        let date = "Wed, 21 Oct 2026 07:28:00 GMT";
        assert_eq!(
            retry_after(&headers(&[("retry-after", date)])),
            Some(RetryAfter::HttpDate(date.into()))
        );
        // A bad retry-after-ms falls back to retry-after; x-ratelimit-reset is no Retry-After.
        assert_eq!(
            retry_after(&headers(&[
                ("retry-after-ms", "soon"),
                ("retry-after", "3")
            ])),
            Some(RetryAfter::Delay(Duration::from_secs(3)))
        );
        assert_eq!(
            retry_after(&headers(&[("x-ratelimit-reset-requests", "1s")])),
            None
        );
    }

    #[test]
    fn rate_limit_phrases() {
        assert!(is_rate_limit_text("rate limit reached for requests"));
        assert!(is_rate_limit_text("x rate_limit y"));
        assert!(is_rate_limit_text("rate -  limit"));
        // LiteLLM's regex has no word boundary: it matches inside "accurate limits" too.
        assert!(is_rate_limit_text("accurate limits"));
        assert!(!is_rate_limit_text("the rate was fine; no limit"));
    }

    #[test]
    fn codes_beat_statuses_and_strings_beat_statuses() {
        let h = HeaderMap::new();
        let body = br#"{"error":{"message":"m","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#;
        let f = classify(WireFormat::OpenAi, 503, &h, body);
        assert_eq!(
            (f.kind, f.status),
            (FailureKind::RateLimit, Some(503)),
            "the code wins over the status"
        );
        let body = br#"{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","param":"messages","code":null}}"#;
        assert_eq!(
            classify(WireFormat::OpenAi, 400, &h, body).kind,
            FailureKind::ContextWindowExceeded
        );
        let body = br#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#;
        assert_eq!(
            classify(WireFormat::Anthropic, 400, &h, body).kind,
            FailureKind::ContextWindowExceeded
        );
        assert_eq!(
            classify(WireFormat::OpenAi, 502, &h, b"<html>bad gateway</html>").kind,
            FailureKind::BadGateway
        );
    }
}
