//! LiteLLM's standard logging payload (`kwargs["standard_logging_object"]`), one JSON object per
//! line, as a `CustomLogger` or a bucket logger writes it.
//!
//! What LiteLLM 1.110.2's proxy writes (recorded with `tools/litellm-import/`, docs/import.md has
//! sample lines): the success hook runs once per request, for the attempt that answered; the
//! failure hook once per request that had a failed attempt, for its *first* failed attempt
//! (later failed attempts of the same request write nothing). Both rows of a request share its
//! `litellm_call_id`. A request that found every deployment of its group cooling writes a
//! failure row of class `RouterRateLimitError` without any provider call. Retry-After survives
//! in `hidden_params.additional_headers` (`retry-after`), and so do the router's counts
//! (`x-litellm-attempted-retries`, `-fallbacks`) on success rows of non-streamed requests.
//!
//! Only the fields below are read; everything else (`messages`, `response`, `metadata` with the
//! key's hash and user and team ids, tracebacks) is skipped unread.

use serde::Deserialize;

use super::intern::Interner;
use super::litellm::{
    failure_kind, is_no_deployment, passed_model, retry_after_seconds, status_of_code,
};
use super::loose::{Loose, LooseList};
use crate::call::{Call, Outcome, Scope, request_key};

/// The fields read from a payload line.
#[derive(Debug, Default, Deserialize)]
pub(super) struct PayloadLine<'a> {
    #[serde(default, borrow)]
    status: Loose<'a>,
    #[serde(default, rename = "startTime", borrow)]
    start_time: Loose<'a>,
    #[serde(default, rename = "endTime", borrow)]
    end_time: Loose<'a>,
    #[serde(default, rename = "completionStartTime", borrow)]
    completion_start_time: Loose<'a>,
    #[serde(default, borrow)]
    model_group: Loose<'a>,
    #[serde(default, borrow)]
    model_id: Loose<'a>,
    #[serde(default, borrow)]
    model: Loose<'a>,
    #[serde(default, borrow)]
    api_base: Loose<'a>,
    #[serde(default, borrow)]
    stream: Loose<'a>,
    #[serde(default, borrow)]
    prompt_tokens: Loose<'a>,
    #[serde(default, borrow)]
    completion_tokens: Loose<'a>,
    #[serde(default, borrow)]
    litellm_call_id: Loose<'a>,
    #[serde(default, borrow)]
    trace_id: Loose<'a>,
    #[serde(default, borrow)]
    id: Loose<'a>,
    #[serde(default, borrow)]
    error_information: Option<ErrorInformation<'a>>,
    #[serde(default, borrow)]
    hidden_params: Option<HiddenParams<'a>>,
    #[serde(default, borrow)]
    model_parameters: Option<ModelParameters<'a>>,
    #[serde(default)]
    request_tags: LooseList,
    /// A spend-log row's key: present only when a spend log was mixed in.
    #[serde(default, borrow)]
    pub(super) request_id: Loose<'a>,
}

/// `error_information` (LiteLLM's `StandardLoggingPayloadErrorInformation`); also the spend
/// logs' `metadata.error_information`.
#[derive(Debug, Default, Deserialize)]
pub(super) struct ErrorInformation<'a> {
    #[serde(default, borrow)]
    pub(super) error_code: Loose<'a>,
    #[serde(default, borrow)]
    pub(super) error_class: Loose<'a>,
    #[serde(default, borrow)]
    pub(super) error_message: Loose<'a>,
}

#[derive(Debug, Default, Deserialize)]
struct HiddenParams<'a> {
    #[serde(default, borrow)]
    additional_headers: Option<Headers<'a>>,
}

/// The response headers LiteLLM keeps.
#[derive(Debug, Default, Deserialize)]
struct Headers<'a> {
    #[serde(default, rename = "retry-after", borrow)]
    retry_after: Loose<'a>,
    #[serde(default, rename = "retry-after-ms", borrow)]
    retry_after_ms: Loose<'a>,
    #[serde(default, rename = "llm_provider-retry-after", borrow)]
    provider_retry_after: Loose<'a>,
    #[serde(default, rename = "x-litellm-attempted-retries", borrow)]
    attempted_retries: Loose<'a>,
    #[serde(default, rename = "x-litellm-attempted-fallbacks", borrow)]
    attempted_fallbacks: Loose<'a>,
}

#[derive(Debug, Default, Deserialize)]
struct ModelParameters<'a> {
    #[serde(default, borrow)]
    stream: Loose<'a>,
    #[serde(default, borrow)]
    max_tokens: Loose<'a>,
    #[serde(default, borrow)]
    max_completion_tokens: Loose<'a>,
}

/// Why a payload line is not a call.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum LineProblem {
    /// A required field is missing or unreadable.
    Missing(&'static str),
}

/// What every LiteLLM row (a payload line, a spend log row) must carry: its start and end
/// (Unix seconds) and its model group, each named by LiteLLM's field when missing.
pub(super) fn span_and_group<'g>(
    start: &Loose,
    end: &Loose,
    group: &'g Loose,
) -> Result<(f64, f64, std::borrow::Cow<'g, str>), LineProblem> {
    let start = start.timestamp().ok_or(LineProblem::Missing("startTime"))?;
    let end = end.timestamp().ok_or(LineProblem::Missing("endTime"))?;
    let group = group.text().ok_or(LineProblem::Missing("model_group"))?;
    Ok((start, end, group))
}

impl Headers<'_> {
    /// Seconds, from `retry-after-ms` or `retry-after` (the provider's, as LiteLLM keeps it).
    fn retry_after(&self, answered: f64) -> Option<f64> {
        if let Some(ms) = self.retry_after_ms.number().filter(|ms| *ms >= 0.0) {
            return Some(ms / 1000.0);
        }
        [&self.retry_after, &self.provider_retry_after]
            .into_iter()
            .find_map(|v| retry_after_seconds(&v.text()?, answered))
    }
}

impl<'a> PayloadLine<'a> {
    /// The row as a [`Call`].
    pub(super) fn into_call(self, line: u64, names: &mut Interner) -> Result<Call, LineProblem> {
        let (start, end, group) =
            span_and_group(&self.start_time, &self.end_time, &self.model_group)?;
        let success = match self.status.text().as_deref() {
            Some("success") => true,
            Some("failure") => false,
            _ => return Err(LineProblem::Missing("status (success or failure)")),
        };
        let scope = if success {
            Scope::Final
        } else {
            Scope::FirstFailure
        };
        let mut call = Call::new(line, start, end, names.get(&group), scope);
        call.deployment = self.model_id.text().map(|d| names.get(&d));
        call.model = self.model.text().map(|m| names.get(&m));
        call.api_base = self.api_base.text().map(|a| names.get(&a));
        let params = self.model_parameters.unwrap_or_default();
        call.stream = self.stream.flag().or_else(|| params.stream.flag());
        call.max_tokens = params
            .max_tokens
            .count()
            .or(params.max_completion_tokens.count());
        call.input_tokens = self.prompt_tokens.count();
        call.output_tokens = self.completion_tokens.count();
        call.first_token = self
            .completion_start_time
            .timestamp()
            .filter(|t| call.stream == Some(true) && *t >= start);
        call.request = [&self.litellm_call_id, &self.trace_id, &self.id]
            .into_iter()
            .find_map(|v| v.text().map(|id| request_key(&id)));
        call.tags = self
            .request_tags
            .0
            .iter()
            .filter(|t| !t.starts_with("User-Agent:"))
            .map(|t| names.get(t))
            .collect();
        let headers = self
            .hidden_params
            .and_then(|h| h.additional_headers)
            .unwrap_or_default();
        call.attempted_retries = headers.attempted_retries.count();
        call.attempted_fallbacks = headers.attempted_fallbacks.count();
        if !success {
            let error = self.error_information.unwrap_or_default();
            read_failure(&mut call, &error, headers.retry_after(end), names);
        }
        Ok(call)
    }
}

/// Fills a failure row's outcome, status, Retry-After and (for "No deployments available") the
/// group asked for.
pub(super) fn read_failure(
    call: &mut Call,
    error: &ErrorInformation,
    retry_after: Option<f64>,
    names: &mut Interner,
) {
    let class = error.error_class.text();
    let message = error.error_message.text();
    if is_no_deployment(class.as_deref(), message.as_deref()) {
        call.outcome = Outcome::NoDeployment;
        call.status = Some(429);
        call.deployment = None;
        if let Some(model) = message.as_deref().and_then(passed_model) {
            call.requested = Some(names.get(model));
        }
        return;
    }
    let status = status_of_code(error.error_code.number());
    let kind = failure_kind(class.as_deref(), status);
    call.status = status.filter(|_| kind != routersim_engine::failure::FailureKind::ApiConnection);
    call.retry_after = retry_after;
    call.outcome = match call.output_tokens.filter(|t| *t > 0) {
        // Content was produced before the failure: a stream cut after content.
        Some(tokens) => {
            call.stream = Some(true);
            Outcome::StreamCut { kind, tokens }
        }
        None => Outcome::Failed(kind),
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use routersim_engine::failure::FailureKind;

    fn call(json: &str) -> Call {
        let line: PayloadLine = serde_json::from_str(json).unwrap();
        line.into_call(1, &mut Interner::default()).unwrap()
    }

    #[test]
    fn a_429_row_keeps_its_retry_after_and_a_cut_stream_its_tokens() {
        let c = call(
            r#"{"status":"failure","startTime":10.0,"endTime":10.1,"completionStartTime":10.1,
            "model_group":"gpt-4o","model_id":"gpt-a","litellm_call_id":"x","messages":[{"content":"secret"}],
            "error_information":{"error_code":"429","error_class":"RateLimitError"},
            "hidden_params":{"additional_headers":{"retry-after":"4"}},"completion_tokens":0}"#,
        );
        assert_eq!(c.outcome, Outcome::Failed(FailureKind::RateLimit));
        assert_eq!((c.status, c.retry_after), (Some(429), Some(4.0)));
        assert_eq!(c.scope, Scope::FirstFailure);
        assert_eq!(c.request, Some(request_key("x")));
        let cut = call(
            r#"{"status":"failure","startTime":1,"endTime":2,"model_group":"chat","model_id":"s",
            "model_parameters":{"stream":true,"max_tokens":30},"completion_tokens":8,
            "error_information":{"error_code":"","error_class":"APIConnectionError"}}"#,
        );
        assert_eq!(
            cut.outcome,
            Outcome::StreamCut {
                kind: FailureKind::ApiConnection,
                tokens: 8
            }
        );
        assert_eq!(
            (cut.status, cut.max_tokens, cut.stream),
            (None, Some(30), Some(true))
        );
    }

    #[test]
    fn a_cooling_group_is_no_provider_call() {
        let c = call(
            r#"{"status":"failure","startTime":1,"endTime":1.01,"model_group":"backup","model_id":"backup-1",
            "error_information":{"error_code":"429","error_class":"RouterRateLimitError",
            "error_message":"No deployments available for selected model, Try again in 4 seconds. Passed model=gpt-4o. pre-call"}}"#,
        );
        assert_eq!(c.outcome, Outcome::NoDeployment);
        assert_eq!(c.deployment, None);
        assert_eq!(c.requested.as_deref(), Some("gpt-4o"));
    }
}
