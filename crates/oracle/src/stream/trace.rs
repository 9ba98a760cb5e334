//! The decisions of one streamed request, read from a stream oracle trace
//! (`crates/oracle/tests/fixtures/litellm-oracle/streams/*.json`) or from routersim's run.

use serde_json::Value;

use crate::decisions::{Attempt, Decisions, End};
use crate::error::OracleError;
use crate::provider::kind_of_class;

/// One request's decisions: the non-stream harness's, plus what streams add.
#[derive(Clone, Debug, Default)]
pub struct StreamDecisions {
    /// Attempts, waits, hops, the end, the header counts (cooldowns are compared as the
    /// set cooling after the request, in `cooling_after`).
    pub base: Decisions,
    /// The `max_tokens` each attempt asked for.
    pub max_tokens: Vec<Option<u64>>,
    /// The text the caller received.
    pub caller_text: String,
    /// The finish reason the caller's stream ended with (`None` when it failed).
    pub finish: Option<String>,
    /// Deployments cooling after the request.
    pub cooling_after: Vec<String>,
    /// A stream raised `httpx.ReadTimeout` after content and the next attempt continued it
    /// (the custom-provider path; see `super` for why routersim does not mirror it).
    pub timeout_continued: bool,
    /// A failed request: the completion tokens LiteLLM logged for its failed attempts (a
    /// broken stream's partial usage).
    pub billed_on_failure: Option<u64>,
    /// LiteLLM's stream named another deployment than the one that finished it (after a
    /// second continuation it keeps the first continuation's model id); the end compared is
    /// the deployment that finished it.
    pub model_id_quirk: bool,
}

fn text(v: &Value, key: &str) -> Result<String, String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| format!("an entry lacks `{key}`"))
}

fn status(v: &Value) -> Option<u16> {
    v.get("status")
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok())
}

/// The exception class a stream raised as the engine's kind (`httpx.ReadTimeout` is LiteLLM's
/// `Timeout`, `httpx.ReadError` its `APIConnectionError`).
fn raised_kind(class: &str, status: Option<u16>) -> String {
    let class = match class {
        "httpx.ReadTimeout" => "Timeout",
        "httpx.ReadError" => "APIConnectionError",
        other => other,
    };
    kind_of_class(class, status).as_str().to_string()
}

/// An attempt's outcome, from what its stream did (the first pass of its log: the in-memory
/// transport may read a body twice).
fn attempt_outcome(e: &Value) -> String {
    let outcome = e.get("outcome");
    let wire = e.get("wire").is_some();
    let mut yielded = false;
    for s in e
        .get("stream_log")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if s.get("yield").is_some() {
            yielded = true;
        } else if let Some(class) = s.get("raised").and_then(Value::as_str) {
            return raised_kind(class, outcome.and_then(status));
        } else if s.get("error_frame").is_some() {
            // LiteLLM 1.110.2 raises an error frame as APIConnectionError, whatever its code.
            return raised_kind("APIConnectionError", None);
        } else if let Some(code) = s.get("http_status").and_then(Value::as_u64) {
            return raised_kind("", u16::try_from(code).ok());
        } else if let Some(end) = s.get("end").and_then(Value::as_str) {
            let chunks = outcome
                .and_then(|o| o.get("chunks"))
                .and_then(Value::as_u64)
                .unwrap_or(10);
            let no_finish = outcome
                .and_then(|o| o.get("no_finish"))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            // The OpenAI SDK ends at `[DONE]` and at a cut body alike: without a finish
            // reason, LiteLLM fails a stream that sent something and answers an empty one.
            let no_finish_reason =
                end == "truncated" || (end == "done" && (chunks == 0 || no_finish));
            return if wire && yielded && no_finish_reason {
                raised_kind("APIConnectionError", None)
            } else {
                "ok".to_string()
            };
        }
    }
    // A non-stream entry's error, raised up front.
    match outcome.and_then(|o| o.get("error")).and_then(Value::as_str) {
        Some(class) => raised_kind(class, outcome.and_then(status)),
        None => "ok".to_string(),
    }
}

/// Whether an attempt's stream raised a read timeout after yielding content.
fn timeout_after_content(e: &Value) -> bool {
    let log = e.get("stream_log").and_then(Value::as_array);
    let yielded = log.is_some_and(|l| {
        l.iter()
            .any(|s| s.get("yield").and_then(Value::as_u64).is_some())
    });
    let timed_out = log.is_some_and(|l| {
        l.iter()
            .any(|s| s.get("raised").and_then(Value::as_str) == Some("httpx.ReadTimeout"))
    });
    yielded && timed_out
}

/// Reads each request of a stream trace.
pub fn from_trace(scenario: &str, trace: &Value) -> Result<Vec<StreamDecisions>, OracleError> {
    let err = |m: &str| OracleError::new(scenario, format!("trace: {m}"));
    trace
        .get("requests")
        .and_then(Value::as_array)
        .ok_or_else(|| err("`requests` must be a list"))?
        .iter()
        .filter(|r| r.get("wait").is_none())
        .map(|r| request(r).map_err(|m| err(&m)))
        .collect()
}

fn request(r: &Value) -> Result<StreamDecisions, String> {
    let mut d = StreamDecisions::default();
    let mut last_finish = None;
    let mut timed_out_after_content = false;
    for e in r
        .get("timeline")
        .and_then(Value::as_array)
        .ok_or("a request lacks `timeline`")?
    {
        match e.get("type").and_then(Value::as_str) {
            Some("attempt") => {
                let continues = e
                    .get("received")
                    .and_then(|r| r.get("messages"))
                    .and_then(Value::as_array)
                    .is_some_and(|m| m.iter().any(|m| m.get("role") == Some(&"assistant".into())));
                d.timeout_continued |= timed_out_after_content && continues;
                timed_out_after_content = e.get("wire").is_none() && timeout_after_content(e);
                d.base.attempts.push(Attempt {
                    deployment: text(e, "deployment_id")?,
                    group: text(e, "model_group")?,
                    outcome: attempt_outcome(e),
                });
                let ceiling = |key: &str| {
                    e.get("received")
                        .and_then(|r| r.get(key))
                        .and_then(Value::as_u64)
                };
                d.max_tokens
                    .push(ceiling("max_tokens").or_else(|| ceiling("max_completion_tokens")));
            }
            Some("sleep") => {
                let seconds = e.get("seconds").and_then(Value::as_f64).unwrap_or(0.0);
                let base = e.get("base_seconds").and_then(Value::as_f64);
                if seconds > 0.0 {
                    d.base.waits.push(base.unwrap_or(seconds));
                }
            }
            Some("fallback") => d.base.hops.push((text(e, "from")?, text(e, "to")?)),
            Some("caller_chunk") => {
                if let Some(t) = e.get("text").and_then(Value::as_str) {
                    d.caller_text.push_str(t);
                }
                if let Some(f) = e.get("finish_reason").and_then(Value::as_str) {
                    last_finish = Some(f.to_string());
                }
            }
            _ => {}
        }
    }
    let result = r.get("result").ok_or("a request lacks `result`")?;
    if result.get("ok").and_then(Value::as_bool) == Some(true) {
        let reported =
            text(result, "stream_model_id").or_else(|_| text(result, "deployment_id"))?;
        let finished = d.base.attempts.last().map(|a| a.deployment.clone());
        d.model_id_quirk = finished.as_ref().is_some_and(|f| *f != reported);
        d.base.end = Some(End::Ok(finished.unwrap_or(reported)));
        d.finish = last_finish;
    } else {
        let class = text(result, "exception")?;
        d.base.end = Some(End::Failed(raised_kind(&class, status(result))));
        d.billed_on_failure = r.get("logged").and_then(Value::as_array).map(|logged| {
            logged
                .iter()
                .filter(|l| l.get("event").and_then(Value::as_str) == Some("failure"))
                .filter_map(|l| {
                    l.pointer("/usage/completion_tokens")
                        .and_then(Value::as_u64)
                })
                .sum()
        });
    }
    d.base.attempted_retries = result
        .get("x-litellm-attempted-retries")
        .and_then(Value::as_u64);
    d.base.attempted_fallbacks = result
        .get("x-litellm-attempted-fallbacks")
        .and_then(Value::as_u64);
    let mut cooling: Vec<String> = r
        .get("cooldowns_after")
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    cooling.sort();
    d.cooling_after = cooling;
    Ok(d)
}
