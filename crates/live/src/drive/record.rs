//! What `routersim drive` saw of each request, from the client side: when it arrived (its
//! scheduled instant, not when the socket was ready: a slow router cannot hide its queueing),
//! when it ended, its status and error body, the stream's first token and token count, and the
//! router's own headers. Kept raw in `live_requests.csv`, translated into the engine's events by
//! [`super::report`].

use std::io::Write;
use std::time::Duration;

use http::HeaderMap;
use routersim_engine::failure::FailureKind;
use routersim_engine::stream::StreamOutcome;
use serde_json::Value;

/// `live_requests.csv` in the report folder.
pub const LIVE_REQUESTS_CSV: &str = "live_requests.csv";

/// A request sent but never answered (the run ended first): its calls join nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unfinished {
    /// Its id (`x-routersim-request-id`).
    pub id: u64,
    /// Its scheduled arrival, since the run started.
    pub arrival: Duration,
}

/// One request as the client saw it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RequestRecord {
    /// Arrival index (its `x-routersim-request-id`).
    pub id: u64,
    /// The model asked for.
    pub model: String,
    /// Whether it asked for a stream.
    pub stream: bool,
    /// When it was sent, since the run started: its scheduled arrival, or later by
    /// `connection_wait`.
    pub arrival: Duration,
    /// How long it waited for one of drive's connections (every one was busy): the load
    /// generator's wait, not the router's, left out of its latency.
    pub connection_wait: Duration,
    /// When the response (or the stream) ended.
    pub end: Duration,
    /// The HTTP status (`None`: no response, the connection failed).
    pub status: Option<u16>,
    /// The error body's `error.type`.
    pub error_type: Option<String>,
    /// The error body's `error.code` (LiteLLM puts the status there as a string).
    pub error_code: Option<String>,
    /// Why the transport failed, when it did.
    pub transport_error: Option<String>,
    /// Arrival to the first content token (streams).
    pub ttft: Option<Duration>,
    /// Output tokens received.
    pub tokens: u32,
    /// How a 200 stream ended.
    pub stream_outcome: Option<StreamOutcome>,
    /// The kind of an error frame inside a 200 stream.
    pub stream_error: Option<FailureKind>,
    /// `x-litellm-attempted-retries`.
    pub attempted_retries: Option<u32>,
    /// `x-litellm-attempted-fallbacks`.
    pub attempted_fallbacks: Option<u32>,
    /// `x-litellm-model-id`: the deployment that answered.
    pub model_id: Option<String>,
    /// `x-litellm-model-group`.
    pub model_group: Option<String>,
    /// `x-litellm-call-id`.
    pub call_id: Option<String>,
    /// The failure kind the error body names in routersim's extension
    /// (`error.x_routersim.kind`, as `routersim proxy` answers): it wins over codes and status.
    pub named_kind: Option<FailureKind>,
    /// Why a 2xx answer was not a usable one (not JSON, no `choices`, over the body limit, a
    /// stream request answered without a stream, a stream frame that is not JSON): the request
    /// failed with `malformed_response`.
    pub malformed: Option<String>,
}

impl RequestRecord {
    /// Reads the router's headers.
    pub fn read_headers(&mut self, headers: &HeaderMap) {
        let text = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        let number = |name: &str| text(name).and_then(|s| s.parse::<u32>().ok());
        self.attempted_retries = number("x-litellm-attempted-retries");
        self.attempted_fallbacks = number("x-litellm-attempted-fallbacks");
        self.model_id = text("x-litellm-model-id");
        self.model_group = text("x-litellm-model-group");
        self.call_id = text("x-litellm-call-id");
    }

    /// Reads an OpenAI-shaped error body (`{"error": {"type", "code", …}}`).
    pub fn read_error_body(&mut self, body: &[u8]) {
        let Ok(json) = serde_json::from_slice::<Value>(body) else {
            return;
        };
        let error = json.get("error").unwrap_or(&json);
        let field = |key: &str| match error.get(key) {
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        self.error_type = field("type");
        self.error_code = field("code");
        self.named_kind = named_kind(&json);
    }

    /// The failure the caller received, `None` for a success. A 2xx is a success only when
    /// its whole answer arrived and reads as one: a body cut by the connection is an
    /// `api_connection` failure, an answer that is not a chat completion (or not the stream
    /// asked for) a `malformed_response`.
    pub fn failure(&self) -> Option<FailureKind> {
        let Some(status) = self.status else {
            return Some(FailureKind::ApiConnection);
        };
        if (200..300).contains(&status) {
            if let Some(kind) = self.stream_error {
                return Some(kind);
            }
            if self.transport_error.is_some() {
                return Some(FailureKind::ApiConnection);
            }
            if self.malformed.is_some() {
                return Some(FailureKind::MalformedResponse);
            }
            return match self.stream_outcome {
                None | Some(StreamOutcome::Completed | StreamOutcome::Empty) => None,
                Some(_) => Some(FailureKind::ApiConnection),
            };
        }
        let named = [self.error_code.as_deref(), self.error_type.as_deref()]
            .into_iter()
            .flatten()
            .find_map(kind_of_code);
        Some(
            self.named_kind
                .or(named)
                .unwrap_or(FailureKind::from_status(status)),
        )
    }
}

/// `x_routersim.kind` of an error body or frame (inside `error`, or beside it), when it names
/// a failure kind.
pub fn named_kind(json: &Value) -> Option<FailureKind> {
    [json.get("error"), Some(json)]
        .into_iter()
        .flatten()
        .find_map(|v| v.get("x_routersim")?.get("kind")?.as_str())
        .and_then(FailureKind::from_name)
}

/// An error code or type that names one failure kind whatever the status (the wire contract's
/// codes, and LiteLLM's).
pub fn kind_of_code(code: &str) -> Option<FailureKind> {
    Some(match code {
        "rate_limit_exceeded" | "rate_limit_error" | "throttling_error" => FailureKind::RateLimit,
        "context_length_exceeded" | "context_window_exceeded" => FailureKind::ContextWindowExceeded,
        "content_policy_violation" | "content_filter" => FailureKind::ContentPolicyViolation,
        "overloaded" | "overloaded_error" => FailureKind::Overloaded,
        _ => return None,
    })
}

/// Writes `live_requests.csv`: every field of every record, in arrival order.
pub fn write_live_requests(out: impl Write, records: &[RequestRecord]) -> Result<(), csv::Error> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "request_id",
        "model",
        "stream",
        "arrival_ms",
        "end_ms",
        "status",
        "error_type",
        "error_code",
        "transport_error",
        "ttft_ms",
        "tokens",
        "stream_outcome",
        "attempted_retries",
        "attempted_fallbacks",
        "model_id",
        "model_group",
        "call_id",
        "failure",
        "malformed",
        "connection_wait_ms",
    ])?;
    let ms = |d: Duration| format!("{:.3}", d.as_secs_f64() * 1000.0);
    let opt = |v: Option<String>| v.unwrap_or_default();
    for r in records {
        w.write_record([
            r.id.to_string(),
            r.model.clone(),
            r.stream.to_string(),
            ms(r.arrival),
            ms(r.end),
            opt(r.status.map(|s| s.to_string())),
            opt(r.error_type.clone()),
            opt(r.error_code.clone()),
            opt(r.transport_error.clone()),
            opt(r.ttft.map(ms)),
            r.tokens.to_string(),
            opt(r.stream_outcome.map(|o| o.as_str().to_string())),
            opt(r.attempted_retries.map(|n| n.to_string())),
            opt(r.attempted_fallbacks.map(|n| n.to_string())),
            opt(r.model_id.clone()),
            opt(r.model_group.clone()),
            opt(r.call_id.clone()),
            opt(r.failure().map(|k| k.as_str().to_string())),
            opt(r.malformed.clone()),
            ms(r.connection_wait),
        ])?;
    }
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn litellm_error_bodies_and_headers_are_read() {
        let mut r = RequestRecord {
            status: Some(429),
            ..RequestRecord::default()
        };
        r.read_error_body(
            br#"{"error":{"message":"litellm.RateLimitError: x","type":"throttling_error","param":null,"code":"429"}}"#,
        );
        assert_eq!(r.error_code.as_deref(), Some("429"));
        assert_eq!(r.failure(), Some(FailureKind::RateLimit));
        let mut headers = HeaderMap::new();
        headers.insert("x-litellm-attempted-retries", "2".parse().unwrap());
        headers.insert("x-litellm-model-id", "gpt-b".parse().unwrap());
        r.read_headers(&headers);
        assert_eq!(r.attempted_retries, Some(2));
        assert_eq!(r.model_id.as_deref(), Some("gpt-b"));
        assert_eq!(r.attempted_fallbacks, None);
    }

    #[test]
    fn statuses_without_a_known_code_map_by_status() {
        let r = RequestRecord {
            status: Some(503),
            ..RequestRecord::default()
        };
        assert_eq!(r.failure(), Some(FailureKind::ServiceUnavailable));
        let ok = RequestRecord {
            status: Some(200),
            ..RequestRecord::default()
        };
        assert_eq!(ok.failure(), None);
        let none = RequestRecord::default();
        assert_eq!(none.failure(), Some(FailureKind::ApiConnection));
    }

    #[test]
    fn a_broken_2xx_is_a_failure() {
        let ok = |f: fn(&mut RequestRecord)| {
            let mut r = RequestRecord {
                status: Some(200),
                ..RequestRecord::default()
            };
            f(&mut r);
            r.failure()
        };
        assert_eq!(ok(|_| {}), None);
        assert_eq!(
            ok(|r| r.transport_error = Some("connection closed before message completed".into())),
            Some(FailureKind::ApiConnection)
        );
        assert_eq!(
            ok(|r| r.malformed = Some("a body that is not JSON".into())),
            Some(FailureKind::MalformedResponse)
        );
    }

    #[test]
    fn the_kind_routersim_proxy_names_wins() {
        let mut r = RequestRecord {
            status: Some(429),
            ..RequestRecord::default()
        };
        r.read_error_body(
            br#"{"error":{"type":"rate_limit_error","code":"429","x_routersim":{"kind":"router_rate_limit","attempts":0}}}"#,
        );
        assert_eq!(r.failure(), Some(FailureKind::RouterRateLimit));
        let mut r = RequestRecord {
            status: Some(500),
            ..RequestRecord::default()
        };
        r.read_error_body(
            br#"{"error":{"type":"api_error","code":"500","x_routersim":{"kind":"api_connection","attempts":3}}}"#,
        );
        assert_eq!(r.failure(), Some(FailureKind::ApiConnection));
    }
}
