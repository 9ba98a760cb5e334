//! The plain CSV any gateway can write: one row per provider call, with a header.
//!
//! ```csv
//! timestamp,model_group,deployment,status,latency_ms,retry_after_s,request_id,stream,ttft_ms,output_tokens
//! 2026-12-02T07:06:49.101Z,gpt-4o,gpt-a,429,118,4,req-50,false,,
//! 1796195209.250,gpt-4o,gpt-b,200,164,,req-50,false,,20
//! ```
//!
//! - Required: `timestamp` (when the call started: RFC 3339, or Unix seconds), `model_group`,
//!   `deployment`, `status` (the HTTP status; 0 for a connection failure or a timeout),
//!   `latency_ms` (start to end: the row's call ended at `timestamp + latency_ms`).
//! - Optional: `retry_after_s`, `request_id` (joins a request's attempts: without it each row
//!   is a request of its own), `stream` (`true`/`false`), `ttft_ms`, `output_tokens`,
//!   `input_tokens`, `tags` (`;`-separated), and `error`: a routersim failure kind naming what
//!   the status cannot (`context_window_exceeded`, `timeout`); on a 200 it marks a stream that
//!   broke after `output_tokens` tokens reached the caller.
//! - Other columns are ignored (and named once). Rows may come in any order.

use routersim_engine::failure::FailureKind;

use super::intern::Interner;
use super::loose::parse_list_text;
use super::time::parse_timestamp;
use crate::call::{Call, Outcome, Scope, request_key};

/// Where each column is.
#[derive(Debug, Default)]
pub(super) struct GatewayColumns {
    timestamp: usize,
    model_group: usize,
    deployment: usize,
    status: usize,
    latency_ms: usize,
    retry_after_s: Option<usize>,
    request_id: Option<usize>,
    stream: Option<usize>,
    ttft_ms: Option<usize>,
    output_tokens: Option<usize>,
    input_tokens: Option<usize>,
    tags: Option<usize>,
    error: Option<usize>,
}

/// The required columns.
pub(super) const REQUIRED: [&str; 5] = [
    "timestamp",
    "model_group",
    "deployment",
    "status",
    "latency_ms",
];

impl GatewayColumns {
    /// Finds the columns in the header: the columns, and the names ignored; or the first
    /// required column missing.
    pub(super) fn new(header: &csv::StringRecord) -> Result<(Self, Vec<String>), &'static str> {
        let find = |name: &str| header.iter().position(|h| h.trim() == name);
        let mut required = [0; 5];
        for (slot, name) in required.iter_mut().zip(REQUIRED) {
            *slot = find(name).ok_or(name)?;
        }
        const OPTIONAL: [&str; 8] = [
            "retry_after_s",
            "request_id",
            "stream",
            "ttft_ms",
            "output_tokens",
            "input_tokens",
            "tags",
            "error",
        ];
        let ignored = header
            .iter()
            .map(str::trim)
            .filter(|h| !REQUIRED.contains(h) && !OPTIONAL.contains(h))
            .map(str::to_string)
            .collect();
        Ok((
            Self {
                timestamp: required[0],
                model_group: required[1],
                deployment: required[2],
                status: required[3],
                latency_ms: required[4],
                retry_after_s: find("retry_after_s"),
                request_id: find("request_id"),
                stream: find("stream"),
                ttft_ms: find("ttft_ms"),
                output_tokens: find("output_tokens"),
                input_tokens: find("input_tokens"),
                tags: find("tags"),
                error: find("error"),
            },
            ignored,
        ))
    }

    /// A row as a [`Call`]; the message says which cell is wrong.
    pub(super) fn call(
        &self,
        record: &csv::StringRecord,
        line: u64,
        names: &mut Interner,
    ) -> Result<Call, String> {
        let cell = |i: usize| record.get(i).map(str::trim).unwrap_or("");
        let optional = |i: Option<usize>| i.map(cell).filter(|s| !s.is_empty());
        let number = |name: &str, i: Option<usize>| -> Result<Option<f64>, String> {
            optional(i)
                .map(|s| {
                    s.parse::<f64>()
                        .ok()
                        .filter(|n| n.is_finite() && *n >= 0.0)
                        .ok_or_else(|| format!("{name}: {s:?} is not a number of 0 or more"))
                })
                .transpose()
        };
        let whole = |name: &str, i: Option<usize>| -> Result<Option<u32>, String> {
            optional(i)
                .map(|s| {
                    s.parse::<u32>()
                        .map_err(|_| format!("{name}: {s:?} is not a whole number"))
                })
                .transpose()
        };
        let at = cell(self.timestamp);
        let start = parse_timestamp(at)
            .ok_or_else(|| format!("timestamp: {at:?} is neither RFC 3339 nor Unix seconds"))?;
        let latency =
            number("latency_ms", Some(self.latency_ms))?.ok_or("latency_ms: empty")? / 1000.0;
        let group = cell(self.model_group);
        if group.is_empty() {
            return Err("model_group: empty".into());
        }
        let deployment = cell(self.deployment);
        if deployment.is_empty() {
            return Err("deployment: empty".into());
        }
        let status_text = cell(self.status);
        let status: u16 = status_text
            .parse()
            .ok()
            .filter(|s| *s == 0 || (100..=599).contains(s))
            .ok_or_else(|| format!("status: {status_text:?} is not an HTTP status (or 0)"))?;
        let mut call = Call::new(
            line,
            start,
            start + latency,
            names.get(group),
            Scope::Attempt,
        );
        call.deployment = Some(names.get(deployment));
        call.status = (status != 0).then_some(status);
        call.retry_after = number("retry_after_s", self.retry_after_s)?;
        call.request = optional(self.request_id).map(request_key);
        call.stream = optional(self.stream)
            .map(|s| match s {
                "true" | "True" | "1" => Ok(true),
                "false" | "False" | "0" => Ok(false),
                other => Err(format!("stream: {other:?} is not true or false")),
            })
            .transpose()?;
        call.first_token = number("ttft_ms", self.ttft_ms)?.map(|t| start + t / 1000.0);
        call.output_tokens = whole("output_tokens", self.output_tokens)?;
        call.input_tokens = whole("input_tokens", self.input_tokens)?;
        call.tags = optional(self.tags)
            .map(parse_list_text)
            .unwrap_or_default()
            .iter()
            .map(|t| names.get(t))
            .collect();
        let named = optional(self.error)
            .map(|e| {
                FailureKind::from_name(e)
                    .ok_or_else(|| format!("error: {e:?} is not a failure kind"))
            })
            .transpose()?;
        call.outcome = match (status, named) {
            (200..=299, None) => Outcome::Ok,
            (200..=299, Some(kind)) => Outcome::StreamCut {
                kind,
                tokens: call.output_tokens.unwrap_or(0),
            },
            (0, kind) => Outcome::Failed(kind.unwrap_or(FailureKind::ApiConnection)),
            (s, kind) => Outcome::Failed(kind.unwrap_or(FailureKind::from_status(s))),
        };
        if matches!(call.outcome, Outcome::StreamCut { .. }) {
            call.stream = Some(true);
        }
        Ok(call)
    }
}
