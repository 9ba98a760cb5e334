//! The scripted provider: each deployment answers with the next outcome of its script (the
//! last one repeats), at once, as the oracle's `ScriptedLLM` does; a LiteLLM exception class
//! with its status and Retry-After header becomes the engine's [`ProviderFailure`].

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::Duration;

use routersim_engine::failure::{FailureKind, ProviderFailure, RetryAfter};
use routersim_engine::provider::{NoStream, Provider, ProviderCall, ProviderResponse};
use routersim_engine::request::Completion;
use routersim_engine::router::DEFAULT_EPOCH_UNIX_MS;

use routersim_engine::retry_after::format_http_date;
use tokio::time::Instant;

use crate::scenario::{Outcome, Scripted};

/// The wall clock the router reads (for HTTP-date Retry-Afters) starts half-way through a
/// second, as the oracle's real clock does (almost surely) when it writes a date: the
/// header has whole seconds, so the router reads a date `n` s ahead as a little under `n` s.
pub const WALL_EPOCH_UNIX_MS: i64 = DEFAULT_EPOCH_UNIX_MS + 500;

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
    // As the engine's HTTP adapter reads the header: whole seconds, else an HTTP-date
    // (resolved by the router against its clock; one that does not parse is no Retry-After).
    if let Some(value) = retry_after.map(str::trim) {
        failure = failure.with_retry_after(match value.parse::<u64>() {
            Ok(secs) => RetryAfter::Delay(Duration::from_secs(secs)),
            Err(_) => RetryAfter::HttpDate(value.to_string()),
        });
    }
    failure
}

/// Per deployment id: its script and how many calls it has had.
#[derive(Debug)]
pub struct ScriptedProvider {
    scripts: BTreeMap<String, Vec<Scripted>>,
    calls: RefCell<BTreeMap<String, usize>>,
    /// When the router's wall clock read [`WALL_EPOCH_UNIX_MS`] (the router is
    /// built at the same virtual instant), for HTTP-date Retry-After headers.
    start: Instant,
}

impl ScriptedProvider {
    /// A provider playing `scripts`.
    pub fn new(scripts: BTreeMap<String, Vec<Scripted>>) -> Self {
        Self {
            scripts,
            calls: RefCell::default(),
            start: Instant::now(),
        }
    }

    fn next(&self, id: &str) -> Scripted {
        let mut calls = self.calls.borrow_mut();
        let n = calls.entry(id.to_string()).or_default();
        let outcome = self
            .scripts
            .get(id)
            .and_then(|s| s.get(*n).or(s.last()))
            .cloned()
            .unwrap_or(Scripted {
                outcome: Outcome::Ok,
                delay: 0.0,
            });
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
        let scripted = self.next(&call.deployment.id);
        let start = self.start;
        async move {
            if scripted.delay > 0.0 {
                tokio::time::sleep(Duration::from_secs_f64(scripted.delay)).await;
            }
            match scripted.outcome {
                Outcome::Ok => Ok(ProviderResponse::Complete(Completion::default())),
                Outcome::Error {
                    class,
                    status,
                    retry_after,
                    retry_after_date_in,
                } => {
                    let mut failure = failure_of(&class, status, retry_after.as_deref());
                    if let Some(secs) = retry_after_date_in {
                        // As `email.utils.formatdate`: whole seconds.
                        let now_ms = WALL_EPOCH_UNIX_MS
                            + i64::try_from(start.elapsed().as_millis()).unwrap_or(0);
                        let at = now_ms + (secs * 1000.0) as i64;
                        failure = failure.with_retry_after(RetryAfter::HttpDate(format_http_date(
                            at - at.rem_euclid(1000),
                        )));
                    }
                    Err(failure)
                }
            }
        }
    }
}
