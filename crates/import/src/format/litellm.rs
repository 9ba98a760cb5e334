//! What LiteLLM's two row formats share: its exception classes as failure kinds, the response
//! headers it keeps (Retry-After, its attempt counts), and the model a "No deployments
//! available" error names.
//!
//! The classes are LiteLLM's exception mapping (`litellm/exceptions.py`, 1.110.2); a class this
//! list does not know falls back to the row's status code.

use routersim_engine::failure::FailureKind;
use routersim_engine::retry_after::parse_http_date;

/// A LiteLLM exception class as a failure kind; `None` for a class not listed here.
pub fn kind_of_class(class: &str) -> Option<FailureKind> {
    Some(match class {
        "RateLimitError" => FailureKind::RateLimit,
        "ContextWindowExceededError" => FailureKind::ContextWindowExceeded,
        "ContentPolicyViolationError" => FailureKind::ContentPolicyViolation,
        "BadRequestError" | "UnsupportedParamsError" => FailureKind::BadRequest,
        "AuthenticationError" => FailureKind::Authentication,
        "PermissionDeniedError" => FailureKind::PermissionDenied,
        "NotFoundError" => FailureKind::NotFound,
        "Timeout" | "APITimeoutError" => FailureKind::Timeout,
        "UnprocessableEntityError" => FailureKind::UnprocessableEntity,
        "InternalServerError" => FailureKind::InternalServer,
        "BadGatewayError" => FailureKind::BadGateway,
        "ServiceUnavailableError" => FailureKind::ServiceUnavailable,
        "APIConnectionError" | "APIError" => FailureKind::ApiConnection,
        "RouterRateLimitError" => FailureKind::RouterRateLimit,
        _ => return None,
    })
}

/// An HTTP status read from an error code (`"429"`, `503`); `None` outside 400–599.
pub fn status_of_code(code: Option<f64>) -> Option<u16> {
    let code = code?;
    (code.fract() == 0.0 && (400.0..=599.0).contains(&code)).then_some(code as u16)
}

/// The failure kind of an error row: its class when known, else its status, else a connection
/// failure (no status at all).
pub fn failure_kind(class: Option<&str>, status: Option<u16>) -> FailureKind {
    class
        .and_then(kind_of_class)
        .unwrap_or_else(|| status.map_or(FailureKind::ApiConnection, FailureKind::from_status))
}

/// Whether an error message is the router's own "every deployment is cooling" (LiteLLM raises
/// it as `RouterRateLimitError`, "No deployments available for selected model").
pub fn is_no_deployment(class: Option<&str>, message: Option<&str>) -> bool {
    class == Some("RouterRateLimitError")
        || message.is_some_and(|m| m.contains("No deployments available"))
}

/// The model group a "No deployments available" message names (`… Passed model=gpt-4o.
/// pre-call`).
pub fn passed_model(message: &str) -> Option<&str> {
    let rest = message.split_once("Passed model=")?.1;
    let end = rest.find(". ").unwrap_or(rest.len());
    let model = rest[..end].trim().trim_end_matches('.');
    (!model.is_empty()).then_some(model)
}

/// A Retry-After header value as seconds: a number of seconds, or an HTTP-date read against
/// the moment the answer came (`answered`, Unix seconds).
pub fn retry_after_seconds(value: &str, answered: f64) -> Option<f64> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then_some(secs);
    }
    let at_ms = parse_http_date(value)?;
    Some((at_ms as f64 / 1000.0 - answered).max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_statuses_and_messages_map_to_kinds() {
        assert_eq!(
            failure_kind(Some("RateLimitError"), Some(429)),
            FailureKind::RateLimit
        );
        assert_eq!(
            failure_kind(Some("APIConnectionError"), Some(500)),
            FailureKind::ApiConnection
        );
        assert_eq!(
            failure_kind(Some("SomethingNew"), Some(503)),
            FailureKind::ServiceUnavailable
        );
        assert_eq!(failure_kind(None, None), FailureKind::ApiConnection);
        assert_eq!(status_of_code(Some(429.0)), Some(429));
        assert_eq!(status_of_code(Some(200.0)), None);
        let message = "No deployments available for selected model, Try again in 4 seconds. \
                       Passed model=gpt-4.1. pre-call";
        assert!(is_no_deployment(None, Some(message)));
        assert_eq!(passed_model(message), Some("gpt-4.1"));
        assert_eq!(retry_after_seconds("4", 0.0), Some(4.0));
        assert_eq!(
            retry_after_seconds("Thu, 01 Jan 1970 00:00:10 GMT", 4.0),
            Some(6.0)
        );
        assert_eq!(retry_after_seconds("soon", 0.0), None);
    }
}
