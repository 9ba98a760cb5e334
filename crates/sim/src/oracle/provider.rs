//! The scripted provider: each deployment answers with the next outcome of its script (the
//! last one repeats), at once, as the oracle's `ScriptedLLM` does; a LiteLLM exception class
//! with its status and Retry-After header becomes the engine's [`ProviderFailure`].

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::Duration;

use routersim_engine::failure::{FailureKind, ProviderFailure, RetryAfter};
use routersim_engine::provider::{NoStream, Provider, ProviderCall, ProviderResponse};
use routersim_engine::request::Completion;

use super::scenario::Outcome;

/// The engine's kind for a LiteLLM exception class (`APIError` and unknown classes by status).
pub fn kind_of_class(class: &str, status: Option<u16>) -> FailureKind {
    match class {
        "RateLimitError" => FailureKind::RateLimit,
        "RouterRateLimitError" => FailureKind::RouterRateLimit,
        "ServiceUnavailableError" => FailureKind::ServiceUnavailable,
        "InternalServerError" => FailureKind::InternalServer,
        "BadGatewayError" => FailureKind::BadGateway,
        "ContextWindowExceededError" => FailureKind::ContextWindowExceeded,
        "ContentPolicyViolationError" => FailureKind::ContentPolicyViolation,
        "BadRequestError" => FailureKind::BadRequest,
        "AuthenticationError" => FailureKind::Authentication,
        "PermissionDeniedError" => FailureKind::PermissionDenied,
        "NotFoundError" => FailureKind::NotFound,
        "Timeout" => FailureKind::Timeout,
        "UnprocessableEntityError" => FailureKind::UnprocessableEntity,
        "APIConnectionError" => FailureKind::ApiConnection,
        _ => FailureKind::from_status(status.unwrap_or(500)),
    }
}

/// The failure a scripted error stands for.
pub fn failure_of(class: &str, status: Option<u16>, retry_after: Option<&str>) -> ProviderFailure {
    let kind = kind_of_class(class, status);
    let mut failure = ProviderFailure::new(kind);
    if status.is_some() {
        failure = failure.with_status(status);
    }
    // As LiteLLM reads the header: seconds (a float too); a value that is not a number of
    // seconds (`soon`) is no Retry-After at all.
    if let Some(secs) = retry_after
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0 && *s < 1e9)
    {
        failure = failure.with_retry_after(RetryAfter::Delay(Duration::from_secs_f64(secs)));
    }
    failure
}

/// Per deployment id: its script and how many calls it has had.
#[derive(Debug, Default)]
pub struct ScriptedProvider {
    scripts: BTreeMap<String, Vec<Outcome>>,
    calls: RefCell<BTreeMap<String, usize>>,
}

impl ScriptedProvider {
    /// A provider playing `scripts`.
    pub fn new(scripts: BTreeMap<String, Vec<Outcome>>) -> Self {
        Self {
            scripts,
            calls: RefCell::default(),
        }
    }

    fn next(&self, id: &str) -> Outcome {
        let mut calls = self.calls.borrow_mut();
        let n = calls.entry(id.to_string()).or_default();
        let outcome = self
            .scripts
            .get(id)
            .and_then(|s| s.get(*n).or(s.last()))
            .cloned()
            .unwrap_or(Outcome::Ok);
        *n += 1;
        outcome
    }
}

impl Provider for ScriptedProvider {
    type Stream = NoStream;

    fn call(
        &self,
        call: ProviderCall<'_>,
    ) -> impl Future<Output = Result<ProviderResponse<NoStream>, ProviderFailure>> {
        let result = match self.next(&call.deployment.id) {
            Outcome::Ok => Ok(ProviderResponse::Complete(Completion::default())),
            Outcome::Error {
                class,
                status,
                retry_after,
            } => Err(failure_of(&class, status, retry_after.as_deref())),
        };
        async move { result }
    }
}
