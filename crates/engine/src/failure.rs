//! Failure kinds: the one vocabulary for config, events and reports.
//!
//! Seed (LiteLLM, "Retries, fallbacks and cooldowns"): *"Every decision reads three facts
//! about the failure: its kind (rate limit, context window, content policy, auth, not found,
//! timeout, ...), its status code and its `Retry-After`. The router takes these from the
//! provider's exception and decides from them alone."* [`ProviderFailure`] carries exactly those
//! three facts.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What went wrong with one attempt (or with the pick itself, for [`FailureKind::RouterRateLimit`]).
///
/// The snake_case names (`rate_limit`, `context_window_exceeded`, ...) are the names used in
/// config files, events and reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// 429 from the provider.
    RateLimit,
    /// 400: the prompt does not fit the model's context window.
    ContextWindowExceeded,
    /// 400: the provider's content filter refused the request.
    ContentPolicyViolation,
    /// 400, any other bad request.
    BadRequest,
    /// 401.
    Authentication,
    /// 403.
    PermissionDenied,
    /// 404.
    NotFound,
    /// 408, or the router's own deadline.
    Timeout,
    /// 409.
    Conflict,
    /// 422.
    UnprocessableEntity,
    /// 500.
    InternalServer,
    /// 502.
    BadGateway,
    /// 503.
    ServiceUnavailable,
    /// 529 (Anthropic's "overloaded").
    Overloaded,
    /// The connection failed; no status.
    ApiConnection,
    /// The router's own: every candidate deployment is cooling down.
    RouterRateLimit,
    /// A success with empty choices (DeltaLLM's classification; LiteLLM passes it through).
    MalformedResponse,
}

impl FailureKind {
    /// Every kind, in declaration order.
    pub const ALL: [FailureKind; 17] = [
        FailureKind::RateLimit,
        FailureKind::ContextWindowExceeded,
        FailureKind::ContentPolicyViolation,
        FailureKind::BadRequest,
        FailureKind::Authentication,
        FailureKind::PermissionDenied,
        FailureKind::NotFound,
        FailureKind::Timeout,
        FailureKind::Conflict,
        FailureKind::UnprocessableEntity,
        FailureKind::InternalServer,
        FailureKind::BadGateway,
        FailureKind::ServiceUnavailable,
        FailureKind::Overloaded,
        FailureKind::ApiConnection,
        FailureKind::RouterRateLimit,
        FailureKind::MalformedResponse,
    ];

    /// The snake_case name used in configs, events and reports.
    pub const fn as_str(self) -> &'static str {
        match self {
            FailureKind::RateLimit => "rate_limit",
            FailureKind::ContextWindowExceeded => "context_window_exceeded",
            FailureKind::ContentPolicyViolation => "content_policy_violation",
            FailureKind::BadRequest => "bad_request",
            FailureKind::Authentication => "authentication",
            FailureKind::PermissionDenied => "permission_denied",
            FailureKind::NotFound => "not_found",
            FailureKind::Timeout => "timeout",
            FailureKind::Conflict => "conflict",
            FailureKind::UnprocessableEntity => "unprocessable_entity",
            FailureKind::InternalServer => "internal_server",
            FailureKind::BadGateway => "bad_gateway",
            FailureKind::ServiceUnavailable => "service_unavailable",
            FailureKind::Overloaded => "overloaded",
            FailureKind::ApiConnection => "api_connection",
            FailureKind::RouterRateLimit => "router_rate_limit",
            FailureKind::MalformedResponse => "malformed_response",
        }
    }

    /// Parses a snake_case name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// Whether failures of this kind have a fallback list of their own
    /// (`context_window_fallbacks`, `content_policy_fallbacks`): they skip order fallbacks and
    /// weighted failover, and the walk looks for their own list first.
    pub const fn has_dedicated_fallback_list(self) -> bool {
        matches!(
            self,
            FailureKind::ContextWindowExceeded | FailureKind::ContentPolicyViolation
        )
    }

    /// The HTTP status a provider answers with for this kind (`None` for connection failures).
    pub const fn default_status(self) -> Option<u16> {
        match self {
            FailureKind::RateLimit | FailureKind::RouterRateLimit => Some(429),
            FailureKind::ContextWindowExceeded
            | FailureKind::ContentPolicyViolation
            | FailureKind::BadRequest => Some(400),
            FailureKind::Authentication => Some(401),
            FailureKind::PermissionDenied => Some(403),
            FailureKind::NotFound => Some(404),
            FailureKind::Timeout => Some(408),
            FailureKind::Conflict => Some(409),
            FailureKind::UnprocessableEntity => Some(422),
            FailureKind::InternalServer => Some(500),
            FailureKind::BadGateway => Some(502),
            FailureKind::ServiceUnavailable => Some(503),
            FailureKind::Overloaded => Some(529),
            FailureKind::ApiConnection | FailureKind::MalformedResponse => None,
        }
    }

    /// Classifies a bare status code (no body to tell context window from other 400s).
    pub const fn from_status(status: u16) -> Self {
        match status {
            401 => FailureKind::Authentication,
            403 => FailureKind::PermissionDenied,
            404 => FailureKind::NotFound,
            408 => FailureKind::Timeout,
            409 => FailureKind::Conflict,
            422 => FailureKind::UnprocessableEntity,
            429 => FailureKind::RateLimit,
            500 => FailureKind::InternalServer,
            502 => FailureKind::BadGateway,
            503 => FailureKind::ServiceUnavailable,
            529 => FailureKind::Overloaded,
            400..=499 => FailureKind::BadRequest, // 400 and any other 4xx
            _ => FailureKind::InternalServer,
        }
    }

    /// The stem of LiteLLM's policy field names for this kind, most specific first:
    /// `retry_policy` uses `<stem>Retries`, `allowed_fails_policy` uses `<stem>AllowedFails`.
    ///
    /// From LiteLLM's code: a context-window error uses the `BadRequest…` field; a
    /// content-policy error uses its own field, else `BadRequest…`. Kinds LiteLLM has no field
    /// for get a field of their own name (an extension) and then fall to `Default…`.
    pub const fn policy_stems(self) -> &'static [&'static str] {
        match self {
            FailureKind::RateLimit => &["RateLimitError"],
            FailureKind::ContextWindowExceeded => {
                &["ContextWindowExceededError", "BadRequestError"]
            }
            FailureKind::ContentPolicyViolation => {
                &["ContentPolicyViolationError", "BadRequestError"]
            }
            FailureKind::BadRequest => &["BadRequestError"],
            FailureKind::Authentication => &["AuthenticationError"],
            FailureKind::PermissionDenied => &["PermissionDeniedError"],
            FailureKind::NotFound => &["NotFoundError"],
            FailureKind::Timeout => &["TimeoutError"],
            FailureKind::Conflict => &["ConflictError"],
            FailureKind::UnprocessableEntity => &["UnprocessableEntityError"],
            FailureKind::InternalServer => &["InternalServerError"],
            FailureKind::BadGateway => &["BadGatewayError"],
            FailureKind::ServiceUnavailable => &["ServiceUnavailableError"],
            FailureKind::Overloaded => &["OverloadedError"],
            FailureKind::ApiConnection => &["APIConnectionError"],
            FailureKind::RouterRateLimit => &["RouterRateLimitError", "RateLimitError"],
            FailureKind::MalformedResponse => &["MalformedResponseError"],
        }
    }

    /// The kinds whose policy value a failure of this kind falls back to, after its own.
    /// (A context-window error reads `bad_request`'s count when it has none of its own.)
    pub const fn policy_chain(self) -> &'static [FailureKind] {
        match self {
            FailureKind::ContextWindowExceeded => {
                &[FailureKind::ContextWindowExceeded, FailureKind::BadRequest]
            }
            FailureKind::ContentPolicyViolation => {
                &[FailureKind::ContentPolicyViolation, FailureKind::BadRequest]
            }
            FailureKind::RouterRateLimit => &[FailureKind::RouterRateLimit, FailureKind::RateLimit],
            FailureKind::RateLimit => &[FailureKind::RateLimit],
            FailureKind::BadRequest => &[FailureKind::BadRequest],
            FailureKind::Authentication => &[FailureKind::Authentication],
            FailureKind::PermissionDenied => &[FailureKind::PermissionDenied],
            FailureKind::NotFound => &[FailureKind::NotFound],
            FailureKind::Timeout => &[FailureKind::Timeout],
            FailureKind::Conflict => &[FailureKind::Conflict],
            FailureKind::UnprocessableEntity => &[FailureKind::UnprocessableEntity],
            FailureKind::InternalServer => &[FailureKind::InternalServer],
            FailureKind::BadGateway => &[FailureKind::BadGateway],
            FailureKind::ServiceUnavailable => &[FailureKind::ServiceUnavailable],
            FailureKind::Overloaded => &[FailureKind::Overloaded],
            FailureKind::ApiConnection => &[FailureKind::ApiConnection],
            FailureKind::MalformedResponse => &[FailureKind::MalformedResponse],
        }
    }

    /// Rate limits as the fallback walk sees them (the router's all-cooled error counts too).
    pub const fn is_rate_limit(self) -> bool {
        matches!(self, FailureKind::RateLimit | FailureKind::RouterRateLimit)
    }
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `Retry-After` as the provider sent it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RetryAfter {
    /// `Retry-After: <integer seconds>` or `retry-after-ms`.
    Delay(Duration),
    /// `Retry-After: <HTTP-date>` (IMF-fixdate), read against the router's wall clock.
    HttpDate(String),
}

/// One failed provider call: the three facts the router decides from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderFailure {
    /// The failure's kind.
    pub kind: FailureKind,
    /// The HTTP status, when there was one.
    pub status: Option<u16>,
    /// The provider's `Retry-After`, when it sent one.
    pub retry_after: Option<RetryAfter>,
    /// Output tokens already delivered to the caller before the failure (streams).
    pub tokens_delivered: u32,
    /// The connection was lost after the request was sent: the provider may have executed it
    /// (see [`crate::replay`]); `None` for every other failure.
    pub ambiguous: Option<Ambiguity>,
}

/// What is known of an ambiguous attempt (a connection lost after the request was sent).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ambiguity {
    /// Whether the provider did execute it, when the provider can say (a simulated one
    /// knows; over a real connection nobody does: `None`). Reported, never decided on.
    pub executed: Option<bool>,
}

impl ProviderFailure {
    /// A failure of `kind` with that kind's usual status and no Retry-After.
    pub fn new(kind: FailureKind) -> Self {
        Self {
            kind,
            status: kind.default_status(),
            retry_after: None,
            tokens_delivered: 0,
            ambiguous: None,
        }
    }

    /// Marks it ambiguous: the connection was lost after the request was sent.
    pub fn with_ambiguity(mut self, ambiguity: Ambiguity) -> Self {
        self.ambiguous = Some(ambiguity);
        self
    }

    /// Sets the status.
    pub fn with_status(mut self, status: Option<u16>) -> Self {
        self.status = status;
        self
    }

    /// Sets the Retry-After.
    pub fn with_retry_after(mut self, retry_after: RetryAfter) -> Self {
        self.retry_after = Some(retry_after);
        self
    }

    /// Status for decisions: the one sent, else the kind's usual one.
    pub fn effective_status(&self) -> Option<u16> {
        self.status.or(self.kind.default_status())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_statuses_match_the_issue() {
        for kind in FailureKind::ALL {
            assert_eq!(FailureKind::from_name(kind.as_str()), Some(kind));
        }
        assert_eq!(FailureKind::RateLimit.default_status(), Some(429));
        assert_eq!(FailureKind::Overloaded.default_status(), Some(529));
        assert_eq!(FailureKind::ApiConnection.default_status(), None);
        assert_eq!(
            FailureKind::from_status(503),
            FailureKind::ServiceUnavailable
        );
        assert_eq!(FailureKind::from_status(418), FailureKind::BadRequest);
        assert_eq!(
            serde_json::to_string(&FailureKind::ContextWindowExceeded).ok(),
            Some("\"context_window_exceeded\"".to_string())
        );
    }
}
