//! The HTTP provider adapter against wiremock over real loopback sockets: what each format's
//! request carries (path, headers, body), and how every failure kind, every `Retry-After` form
//! and each success shape reads back — then what the classifiers decide from it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "tests fail loudly and read as one story"
)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use routersim_engine::classify::{
    DeltaLlmClassifier, FailureClassifier, LiteLlmClassifier, RecoveryScope,
};
use routersim_engine::config::Deployment;
use routersim_engine::failure::{FailureKind as K, ProviderFailure, RetryAfter};
use routersim_engine::provider::{Provider, ProviderCall, ProviderResponse};
use routersim_engine::request::{Completion, Request, ResponseFormat};
use routersim_engine::retry_after;
use routersim_engine::stream::{Chunk, ChunkKind, FinishReason, ProviderStream, StreamItem};
use routersim_wire::client::{HttpProvider, HttpStream, TcpConnector};
use serde_json::{Value, json};
use tokio::task::LocalSet;
use wiremock::matchers::{header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn deployment(id: &str, model: &str, api_base: &str, api_key: Option<&str>) -> Deployment {
    let mut params = BTreeMap::new();
    params.insert("api_base".to_string(), json!(api_base));
    if let Some(key) = api_key {
        params.insert("api_key".to_string(), json!(key));
    }
    Deployment {
        id: Arc::from(id),
        model_name: Arc::from("group"),
        model: model.to_string(),
        params,
        ..Deployment::default()
    }
}

/// One call through a fresh provider for `d` (inside a LocalSet, as the adapter requires).
async fn call(
    d: &Deployment,
    request: &Request,
) -> Result<ProviderResponse<HttpStream>, ProviderFailure> {
    let provider = HttpProvider::new(TcpConnector, std::slice::from_ref(d)).unwrap();
    let call = ProviderCall {
        deployment: d,
        deployment_index: 0,
        request,
        attempt: 3,
    };
    LocalSet::new().run_until(provider.call(call)).await
}

async fn complete(d: &Deployment, request: &Request) -> Completion {
    match call(d, request).await {
        Ok(ProviderResponse::Complete(c)) => c,
        other => panic!("expected a completion, got {other:?}"),
    }
}

async fn fail(d: &Deployment, request: &Request) -> ProviderFailure {
    match call(d, request).await {
        Err(f) => f,
        Ok(other) => panic!("expected a failure, got {other:?}"),
    }
}

fn openai_ok(tokens: u32, finish: &str) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "tok tok"},
                     "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": tokens, "total_tokens": 10 + tokens},
    })
}

fn header_of(req: &wiremock::Request, name: &str) -> Option<String> {
    req.headers
        .get(name)
        .map(|v| v.to_str().unwrap().to_string())
}

#[tokio::test]
async fn openai_request_carries_path_headers_and_body() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/d/dep-1/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(openai_ok(7, "length")))
        .expect(1)
        .mount(&server)
        .await;
    let d = deployment(
        "dep-1",
        "openai/gpt-4o",
        &format!("{}/d/dep-1/v1", server.uri()),
        Some("sk-test"),
    );
    let mut request = Request::new(42, "group");
    request.input_tokens = 1200;
    request.max_tokens = Some(300);
    request.output_tokens = Some(7);
    request.prefill_tokens = 5;
    request.tools = true;
    request.response_format = ResponseFormat::Json;
    // A fallback's overrides: sampling params go on, the router's own never do.
    request.params.insert("temperature".into(), json!(0.2));
    request.params.insert("num_retries".into(), json!(4));
    request.params.insert("mock_response".into(), json!("hi"));
    let c = complete(&d, &request).await;
    assert_eq!(
        c,
        Completion {
            output_tokens: 7,
            finish_reason: FinishReason::Length,
            empty_choices: false,
            body: None,
        },
        "usage.completion_tokens is authoritative (the content has 2 words)"
    );
    let received = server.received_requests().await.unwrap();
    let req = &received[0];
    assert_eq!(
        header_of(req, "authorization").as_deref(),
        Some("Bearer sk-test")
    );
    assert_eq!(header_of(req, "x-api-key"), None);
    assert_eq!(
        header_of(req, "content-type").as_deref(),
        Some("application/json")
    );
    assert_eq!(
        header_of(req, "x-routersim-request-id").as_deref(),
        Some("42")
    );
    assert_eq!(header_of(req, "x-routersim-attempt").as_deref(), Some("3"));
    assert_eq!(
        header_of(req, "x-routersim-input-tokens").as_deref(),
        Some("1200")
    );
    assert_eq!(
        header_of(req, "x-routersim-prefill-tokens").as_deref(),
        Some("5")
    );
    assert_eq!(
        header_of(req, "x-routersim-output-tokens").as_deref(),
        Some("7")
    );
    assert!(header_of(req, "host").unwrap().starts_with("127.0.0.1:"));
    let body: Value = serde_json::from_slice(&req.body).unwrap();
    assert_eq!(body["model"], "gpt-4o", "the prefix is stripped");
    assert_eq!(body["stream"], false);
    assert_eq!(body["max_tokens"], 300);
    assert_eq!(body["response_format"], json!({"type": "json_object"}));
    assert_eq!(body["tools"].as_array().unwrap().len(), 1);
    assert_eq!(body.get("stream_options"), None, "only on streams");
    assert_eq!(body["temperature"], 0.2);
    assert_eq!(body.get("num_retries"), None);
    assert_eq!(body.get("mock_response"), None);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0]["role"], "user");
    assert_eq!(
        messages[1]["role"], "assistant",
        "a prefill ends the messages"
    );
    assert!(
        req.body.len() < 1024,
        "the prompt is a placeholder, not 1200 tokens of text"
    );

    // Without output tokens, prefill, tools or JSON mode, none of them is sent; a stream asks
    // for usage.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(openai_ok(1, "stop")))
        .mount(&server)
        .await;
    let d = deployment("d", "gpt-4o", &format!("{}/v1", server.uri()), None);
    let mut request = Request::new(1, "group");
    request.stream = true;
    let _ = call(&d, &request).await;
    let received = server.received_requests().await.unwrap();
    let req = &received[0];
    assert_eq!(req.url.path(), "/v1/chat/completions", "no prefix: OpenAI");
    assert_eq!(header_of(req, "authorization"), None);
    assert_eq!(header_of(req, "x-routersim-output-tokens"), None);
    assert_eq!(
        header_of(req, "accept").as_deref(),
        Some("text/event-stream")
    );
    let body: Value = serde_json::from_slice(&req.body).unwrap();
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    for absent in ["max_tokens", "response_format", "tools"] {
        assert_eq!(body.get(absent), None, "{absent}");
    }
    assert_eq!(body["messages"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn anthropic_request_and_response_shapes() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/d/claude/v1/messages"))
        .and(header("x-api-key", "sk-ant"))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
            "content": [], "stop_reason": "refusal",
            "usage": {"input_tokens": 10, "output_tokens": 0},
        })))
        .expect(1)
        .mount(&server)
        .await;
    let d = deployment(
        "claude",
        "anthropic/claude-sonnet-4",
        &format!("{}/d/claude", server.uri()),
        Some("sk-ant"),
    );
    let mut request = Request::new(9, "group");
    request.tools = true;
    request.params.insert("stop".into(), json!("END"));
    request.response_format = ResponseFormat::Json;
    let c = complete(&d, &request).await;
    assert_eq!(
        c,
        Completion {
            output_tokens: 0,
            finish_reason: FinishReason::ContentFilter,
            empty_choices: true,
            body: None,
        }
    );
    let received = server.received_requests().await.unwrap();
    let req = &received[0];
    assert_eq!(header_of(req, "authorization"), None);
    let body: Value = serde_json::from_slice(&req.body).unwrap();
    assert_eq!(body["model"], "claude-sonnet-4");
    assert_eq!(
        body["max_tokens"], 4096,
        "Anthropic requires max_tokens: the default"
    );
    assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
    assert_eq!(
        body.get("response_format"),
        None,
        "Anthropic refuses unknown fields"
    );
    assert_eq!(body.get("stream_options"), None);
    assert_eq!(
        body["stop_sequences"],
        json!(["END"]),
        "LiteLLM's mapping of stop"
    );
    assert_eq!(body.get("stop"), None);

    // Both classifiers on that success: DeltaLLM calls empty content malformed; LiteLLM passes it.
    assert_eq!(
        DeltaLlmClassifier.judge_success(&c).map(|f| f.kind),
        Some(K::MalformedResponse)
    );
    assert_eq!(LiteLlmClassifier.judge_success(&c), None);
}

#[tokio::test]
async fn azure_path_query_key_and_content_filter_finish() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/d/az/openai/deployments/gpt4o-prod/chat/completions"))
        .and(query_param("api-version", "2024-10-21"))
        .and(header("api-key", "az-key"))
        .respond_with(ResponseTemplate::new(200).set_body_json(openai_ok(3, "content_filter")))
        .expect(1)
        .mount(&server)
        .await;
    let mut d = deployment(
        "az",
        "azure/gpt4o-prod",
        &format!("{}/d/az", server.uri()),
        Some("az-key"),
    );
    d.params.insert("api_version".into(), json!("2024-10-21"));
    let c = complete(&d, &Request::new(1, "group")).await;
    assert_eq!(c.finish_reason, FinishReason::ContentFilter);
    assert_eq!(c.output_tokens, 3);
    // DeltaLLM: a content-filter finish is a content-policy failure; LiteLLM: a success.
    assert_eq!(
        DeltaLlmClassifier.judge_success(&c).map(|f| f.kind),
        Some(K::ContentPolicyViolation)
    );
    assert_eq!(LiteLlmClassifier.judge_success(&c), None);
    let received = server.received_requests().await.unwrap();
    assert_eq!(header_of(&received[0], "authorization"), None);

    // Without api_version: LiteLLM 1.110.2's default.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(query_param("api-version", "2025-02-01-preview"))
        .respond_with(ResponseTemplate::new(200).set_body_json(openai_ok(1, "stop")))
        .expect(1)
        .mount(&server)
        .await;
    let d = deployment("az", "azure/x", &server.uri(), None);
    assert_eq!(
        complete(&d, &Request::new(1, "group")).await.output_tokens,
        1
    );
}

/// (status, body, expected kind) for one format; each case is served on its own request id.
type Case = (u16, Value, K);

async fn check_cases(model: &str, base_suffix: &str, cases: Vec<Case>) {
    let server = MockServer::start().await;
    for (i, (status, body, _)) in cases.iter().enumerate() {
        Mock::given(method("POST"))
            .and(header("x-routersim-request-id", i.to_string()))
            .respond_with(ResponseTemplate::new(*status).set_body_json(body.clone()))
            .expect(1)
            .mount(&server)
            .await;
    }
    let d = deployment("d", model, &format!("{}{base_suffix}", server.uri()), None);
    for (i, (status, body, kind)) in cases.into_iter().enumerate() {
        let f = fail(&d, &Request::new(i as u64, "group")).await;
        assert_eq!(
            (f.kind, f.status),
            (kind, Some(status)),
            "{model} case {i}: {status} {body}"
        );
        assert_eq!(f.retry_after, None);
        assert_eq!(f.tokens_delivered, 0);
    }
}

fn openai_error(kind: &str, code: Option<&str>, message: &str) -> Value {
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
}

#[tokio::test]
async fn openai_failure_kinds_from_real_shaped_bodies() {
    let e = openai_error;
    let invalid = "invalid_request_error";
    check_cases(
        "openai/gpt-4o",
        "/v1",
        vec![
            (429, e("requests", Some("rate_limit_exceeded"), "Rate limit reached for gpt-4o"), K::RateLimit),
            (429, e("insufficient_quota", Some("insufficient_quota"), "You exceeded your current quota"), K::RateLimit),
            (400, e(invalid, Some("context_length_exceeded"), "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens."), K::ContextWindowExceeded),
            // The message alone (no code), as older deployments word it: LiteLLM's string rule.
            (400, e(invalid, None, "This model's maximum context length is 8192 tokens."), K::ContextWindowExceeded),
            (400, e(invalid, Some("content_policy_violation"), "Your request was rejected as a result of our safety system."), K::ContentPolicyViolation),
            (400, e(invalid, None, "Invalid prompt: your prompt was flagged as potentially violating our usage policy."), K::ContentPolicyViolation),
            (400, e(invalid, None, "Invalid 'temperature': decimal above maximum value."), K::BadRequest),
            (401, e(invalid, Some("invalid_api_key"), "Incorrect API key provided: sk-***."), K::Authentication),
            (403, e(invalid, Some("unsupported_country_region_territory"), "Country, region, or territory not supported"), K::PermissionDenied),
            (403, e("permission_error", Some("permission_denied"), "You are not allowed to use this model."), K::PermissionDenied),
            (404, e(invalid, Some("model_not_found"), "The model `gpt-5` does not exist or you do not have access to it."), K::NotFound),
            (408, e("timeout", Some("request_timeout"), "Request timed out."), K::Timeout),
            (409, e(invalid, Some("conflict"), "Conflict."), K::Conflict),
            (422, e(invalid, Some("unprocessable_entity"), "Unprocessable."), K::UnprocessableEntity),
            (500, e("server_error", None, "The server had an error processing your request."), K::InternalServer),
            (500, e("server_error", Some("internal_server_error"), "Internal error."), K::InternalServer),
            (502, e("server_error", Some("bad_gateway"), "Bad gateway."), K::BadGateway),
            (503, e("server_error", Some("service_unavailable"), "The engine is currently overloaded."), K::ServiceUnavailable),
            (529, e("server_error", Some("overloaded"), "Overloaded."), K::Overloaded),
            // A code names its kind whatever the status (a scenario's status override).
            (503, e("requests", Some("rate_limit_exceeded"), "Rate limit reached."), K::RateLimit),
            (500, e(invalid, Some("context_length_exceeded"), "too long"), K::ContextWindowExceeded),
            // A body that is not JSON: the status decides.
            (418, json!("I'm a teapot"), K::BadRequest),
        ],
    )
    .await;
}

fn anthropic_error(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

#[tokio::test]
async fn anthropic_failure_kinds_from_real_shaped_bodies() {
    let e = anthropic_error;
    let invalid = "invalid_request_error";
    check_cases(
        "anthropic/claude-sonnet-4",
        "",
        vec![
            (
                429,
                e(
                    "rate_limit_error",
                    "Number of request tokens has exceeded your per-minute rate limit",
                ),
                K::RateLimit,
            ),
            (
                400,
                e(
                    invalid,
                    "prompt is too long: 210000 tokens > 200000 maximum",
                ),
                K::ContextWindowExceeded,
            ),
            (
                400,
                e(invalid, "Output blocked by content filtering policy"),
                K::ContentPolicyViolation,
            ),
            (
                400,
                e(invalid, "The request violates the content policy."),
                K::ContentPolicyViolation,
            ),
            (
                400,
                e(invalid, "messages: roles must alternate"),
                K::BadRequest,
            ),
            (
                401,
                e("authentication_error", "invalid x-api-key"),
                K::Authentication,
            ),
            (
                403,
                e("permission_error", "Your API key does not have permission"),
                K::PermissionDenied,
            ),
            (404, e("not_found_error", "model: claude-9"), K::NotFound),
            (408, e("timeout_error", "Request timed out"), K::Timeout),
            (504, e("timeout_error", "Request timed out"), K::Timeout),
            (409, e(invalid, "conflict"), K::Conflict),
            (422, e(invalid, "unprocessable"), K::UnprocessableEntity),
            (
                500,
                e("api_error", "Internal server error"),
                K::InternalServer,
            ),
            (502, e("api_error", "Bad gateway"), K::BadGateway),
            (
                503,
                e("api_error", "Service unavailable"),
                K::ServiceUnavailable,
            ),
            (529, e("overloaded_error", "Overloaded"), K::Overloaded),
        ],
    )
    .await;
}

#[tokio::test]
async fn azure_failure_kinds_from_real_shaped_bodies() {
    let invalid = "invalid_request_error";
    let content_filter = json!({"error": {
        "message": "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
        "type": null, "param": "prompt", "code": "content_filter", "status": 400,
        "innererror": {"code": "ResponsibleAIPolicyViolation",
                       "content_filter_result": {"hate": {"filtered": true, "severity": "high"}}}}});
    let inner_only = json!({"error": {"message": "filtered", "type": invalid, "param": null,
        "code": "invalid_request_error", "inner_error": {"code": "ResponsibleAIPolicyViolation"}}});
    check_cases(
        "azure/gpt4o-prod",
        "",
        vec![
            (400, content_filter, K::ContentPolicyViolation),
            (400, inner_only, K::ContentPolicyViolation),
            (400, openai_error(invalid, Some("context_length_exceeded"), "This model's maximum context length is 8192 tokens."), K::ContextWindowExceeded),
            (404, json!({"error": {"code": "DeploymentNotFound", "message": "The API deployment for this resource does not exist."}}), K::NotFound),
            (429, json!({"error": {"code": "429", "message": "Requests to the ChatCompletions_Create Operation have exceeded call rate limit."}}), K::RateLimit),
            (400, openai_error(invalid, None, "Invalid value for 'n'."), K::BadRequest),
            (500, json!({"error": {"code": "InternalServerError", "message": "Backend returned unexpected response."}}), K::InternalServer),
        ],
    )
    .await;
}

/// Response headers, as (name, value) pairs.
type Headers = Vec<(&'static str, &'static str)>;

#[tokio::test]
async fn retry_after_in_every_form() {
    let date = "Wed, 21 Oct 2026 07:28:00 GMT";
    let date_ms = retry_after::parse_http_date(date).unwrap();
    let cases: Vec<(Headers, Option<RetryAfter>)> = vec![
        (
            vec![("retry-after", "7")],
            Some(RetryAfter::Delay(Duration::from_secs(7))),
        ),
        (
            vec![("retry-after", date)],
            Some(RetryAfter::HttpDate(date.to_string())),
        ),
        (
            vec![("retry-after-ms", "1500"), ("retry-after", "2")],
            Some(RetryAfter::Delay(Duration::from_millis(1500))),
        ),
        (vec![], None),
        (
            vec![("retry-after", "soon")],
            Some(RetryAfter::HttpDate("soon".to_string())),
        ),
        // Informational quota headers are no Retry-After.
        (
            vec![
                ("x-ratelimit-limit-requests", "60"),
                ("x-ratelimit-remaining-requests", "0"),
                ("x-ratelimit-reset-requests", "6m0s"),
            ],
            None,
        ),
    ];
    let server = MockServer::start().await;
    for (i, (headers, _)) in cases.iter().enumerate() {
        let mut response = ResponseTemplate::new(429).set_body_json(openai_error(
            "requests",
            Some("rate_limit_exceeded"),
            "Rate limit reached.",
        ));
        for (name, value) in headers {
            response = response.insert_header(*name, *value);
        }
        Mock::given(header("x-routersim-request-id", i.to_string()))
            .respond_with(response)
            .mount(&server)
            .await;
    }
    let d = deployment("d", "gpt-4o", &format!("{}/v1", server.uri()), None);
    for (i, (headers, want)) in cases.into_iter().enumerate() {
        let f = fail(&d, &Request::new(i as u64, "group")).await;
        assert_eq!(f.kind, K::RateLimit);
        assert_eq!(f.retry_after, want, "{headers:?}");
    }
    // The engine resolves a date against its own clock: 5 s before it, 5 s; an unparseable
    // value, nothing (LiteLLM's -1: back off normally).
    assert_eq!(
        retry_after::resolve(&RetryAfter::HttpDate(date.into()), date_ms - 5_000),
        Some(Duration::from_secs(5))
    );
    assert_eq!(
        retry_after::resolve(&RetryAfter::HttpDate("soon".into()), 0),
        None
    );

    // Azure's 429 with retry-after-ms, Anthropic's with seconds.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after-ms", "250")
                .insert_header("retry-after", "1")
                .set_body_json(
                    json!({"error": {"code": "429", "message": "exceeded call rate limit"}}),
                ),
        )
        .mount(&server)
        .await;
    let d = deployment("az", "azure/x", &server.uri(), None);
    let f = fail(&d, &Request::new(1, "group")).await;
    assert_eq!(
        (f.kind, f.retry_after),
        (
            K::RateLimit,
            Some(RetryAfter::Delay(Duration::from_millis(250)))
        )
    );
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(529)
                .insert_header("retry-after", "30")
                .set_body_json(anthropic_error("overloaded_error", "Overloaded")),
        )
        .mount(&server)
        .await;
    let d = deployment("a", "anthropic/claude", &server.uri(), None);
    let f = fail(&d, &Request::new(1, "group")).await;
    assert_eq!(
        (f.kind, f.status, f.retry_after),
        (
            K::Overloaded,
            Some(529),
            Some(RetryAfter::Delay(Duration::from_secs(30)))
        )
    );
}

#[tokio::test]
async fn classifiers_decide_from_the_adapters_failures() {
    let server = MockServer::start().await;
    let bodies = [
        (
            400,
            openai_error("invalid_request_error", None, "Invalid 'temperature'."),
        ),
        (
            401,
            openai_error(
                "invalid_request_error",
                Some("invalid_api_key"),
                "Incorrect API key.",
            ),
        ),
        (
            403,
            openai_error(
                "invalid_request_error",
                Some("permission_denied"),
                "Not allowed.",
            ),
        ),
        (
            400,
            openai_error(
                "invalid_request_error",
                Some("content_policy_violation"),
                "Rejected.",
            ),
        ),
        (
            529,
            openai_error("server_error", Some("overloaded"), "Overloaded."),
        ),
    ];
    for (i, (status, body)) in bodies.iter().enumerate() {
        Mock::given(header("x-routersim-request-id", i.to_string()))
            .respond_with(ResponseTemplate::new(*status).set_body_json(body.clone()))
            .mount(&server)
            .await;
    }
    let d = deployment("d", "gpt-4o", &format!("{}/v1", server.uri()), None);
    let mut failures = Vec::new();
    for i in 0..bodies.len() {
        failures.push(fail(&d, &Request::new(i as u64, "group")).await);
    }
    let (l, dl) = (LiteLlmClassifier, DeltaLlmClassifier);
    let [bad, auth, denied, policy, overloaded] = failures.as_slice() else {
        panic!()
    };
    // 400: neither counts it against the deployment; DeltaLLM skips same-deployment retries.
    assert!(!l.counts_against_health(bad) && !dl.counts_against_health(bad));
    assert_eq!(l.scope(bad), RecoveryScope::RetryPolicy);
    assert_eq!(dl.scope(bad), RecoveryScope::RemainingDeployments);
    // 401 counts under both; DeltaLLM goes straight to the general fallbacks.
    assert!(l.counts_against_health(auth) && dl.counts_against_health(auth));
    assert_eq!(dl.scope(auth), RecoveryScope::GeneralFallbacks);
    // 403: LiteLLM never cools on it, DeltaLLM does.
    assert!(!l.counts_against_health(denied) && dl.counts_against_health(denied));
    // A content-policy 400 never penalises the provider.
    assert!(!l.counts_against_health(policy) && !dl.counts_against_health(policy));
    // 529 counts under both.
    assert!(l.counts_against_health(overloaded) && dl.counts_against_health(overloaded));
}

#[tokio::test]
async fn unreadable_success_refused_connection_and_https_without_tls() {
    // A 200 that is not a completion: malformed, with its status.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_string("{\"id\": \"x\""))
        .mount(&server)
        .await;
    let d = deployment("d", "gpt-4o", &format!("{}/v1", server.uri()), None);
    let f = fail(&d, &Request::new(1, "group")).await;
    assert_eq!((f.kind, f.status), (K::MalformedResponse, Some(200)));

    // Nobody listening: a connection failure, no status.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let d = deployment("d", "gpt-4o", &format!("http://127.0.0.1:{port}/v1"), None);
    let f = fail(&d, &Request::new(1, "group")).await;
    assert_eq!((f.kind, f.status), (K::ApiConnection, None));

    // TcpConnector refuses https rather than sending in clear (no socket is opened).
    let d = deployment("d", "gpt-4o", "https://127.0.0.1:9/v1", None);
    let f = fail(&d, &Request::new(1, "group")).await;
    assert_eq!((f.kind, f.status), (K::ApiConnection, None));

    // A missing Azure api_base is a config error naming the YAML path.
    let mut azure = deployment("az", "azure/x", "", None);
    azure.params.clear();
    let err = HttpProvider::new(TcpConnector, &[d.clone(), azure]).unwrap_err();
    assert_eq!(err.path, "model_list[1].litellm_params.api_base");
}

#[tokio::test]
async fn a_whole_sse_body_over_a_real_socket() {
    let frames = [
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "tok tok"}}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "tok"}}], "x_routersim": {"tokens": 4, "span_us": 3000}}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 6, "total_tokens": 7}}),
    ];
    let mut body: String = frames.iter().map(|f| format!("data: {f}\n\n")).collect();
    body.push_str("data: [DONE]\n\n");
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(body),
        )
        .mount(&server)
        .await;
    let d = deployment("d", "gpt-4o", &format!("{}/v1", server.uri()), None);
    let mut request = Request::new(1, "group");
    request.stream = true;
    let provider = HttpProvider::new(TcpConnector, std::slice::from_ref(&d)).unwrap();
    let items = LocalSet::new()
        .run_until(async {
            let call = ProviderCall {
                deployment: &d,
                deployment_index: 0,
                request: &request,
                attempt: 1,
            };
            let Ok(ProviderResponse::Stream(mut stream)) = provider.call(call).await else {
                panic!("expected a stream")
            };
            let mut items = Vec::new();
            while let Some(item) = stream.next_item().await {
                items.push(item);
            }
            items
        })
        .await;
    let chunk = |kind, tokens, span_us| {
        Ok(StreamItem::Chunk(Chunk {
            kind,
            tokens,
            span: Duration::from_micros(span_us),
        }))
    };
    assert_eq!(
        items,
        vec![
            chunk(ChunkKind::RoleOnly, 0, 0),
            chunk(ChunkKind::Text, 2, 0),
            chunk(ChunkKind::Text, 4, 3000),
            Ok(StreamItem::Done(FinishReason::Stop)),
        ]
    );
}
