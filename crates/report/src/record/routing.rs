//! The per-request routing trace, like Multigrid's generation record (seed
//! `multigrid-failover-and-retries.md`, "Reading what happened": *"attempts"* and
//! *"routing": { "failures": [{ "provider", "status", "reason" }] }*): the `routing_failures`
//! column of `requests.csv` (every request) and one line of `routing.jsonl` per request with a
//! failed attempt (Multigrid's `attempts` says whether anything went wrong; the detail is
//! written only where something did).
//!
//! Built from `AttemptEnd` events only, so every profile gets it. Memory: one small list per
//! request *in flight* (dropped at its `RequestEnd`), so it stays flat in the number of requests.
//! The reason is Multigrid's: `http_<status>`, or the failure kind when no status came back
//! (`api_connection`, `timeout`), with ` (try n)` from the second try of the same deployment in
//! the request on (the try number is per candidate, as in the seed's example).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;

use routersim_engine::failure::FailureKind;

use crate::error::ReportError;

/// One request with a failed attempt per line: `{"id", "model", "attempts", "routing":
/// {"failures": [...]}, "final_deployment", "outcome"}`.
pub const ROUTING_JSONL: &str = "routing.jsonl";

/// One failed attempt of a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct RoutingFailure {
    provider: Arc<str>,
    status: Option<u16>,
    kind: FailureKind,
    /// The try on this deployment within the request (1 = first).
    try_number: u32,
}

impl RoutingFailure {
    /// Multigrid's reason: `http_503`, `http_503 (try 2)`, `api_connection (try 3)`.
    fn reason(&self, out: &mut String) {
        match self.status {
            Some(status) => {
                out.push_str("http_");
                push_u64(out, u64::from(status));
            }
            None => out.push_str(self.kind.as_str()),
        }
        if self.try_number > 1 {
            out.push_str(" (try ");
            push_u64(out, u64::from(self.try_number));
            out.push(')');
        }
    }
}

/// What is known of a request in flight: its tries per deployment and its failures so far.
#[derive(Debug, Default)]
pub(super) struct RequestTrace {
    tries: Vec<(Arc<str>, u32)>,
    failures: Vec<RoutingFailure>,
    /// A `give_up` with reason `deadline_exhausted` cut its walk short.
    pub(super) deadline_exhausted: bool,
    /// What is known of its operation's executions (see [`InFlight::ambiguous`]).
    executions: Executions,
    /// A client's send (`client_try`): (try number, the client's retries, provider calls of
    /// the earlier sends).
    pub(super) client: Option<(u32, u32, u32)>,
}

impl RequestTrace {
    /// Whether an attempt of the request failed (it has a `routing.jsonl` line).
    pub(super) fn has_failures(&self) -> bool {
        !self.failures.is_empty()
    }

    /// Whether the client sends the same user request again after this one fails.
    pub(super) fn client_retries_left(&self) -> bool {
        self.client.is_some_and(|(n, retries, _)| n < retries)
    }
}

/// One operation's executions, for `ambiguous_replays` and `duplicate_executions`.
#[derive(Clone, Copy, Debug, Default)]
struct Executions {
    /// Calls known to have run: successes, and ambiguous attempts the provider executed.
    /// (Under a client's retries, across its sends.)
    count: u32,
    /// An ambiguous attempt not yet followed by another attempt.
    ambiguous_pending: bool,
    /// Replays carry the operation id (`replay: dedupe`): the provider runs it once.
    deduplicated: bool,
}

impl Executions {
    /// One more known execution; true when it ran the operation again.
    fn ran(&mut self) -> bool {
        self.count += 1;
        self.count > 1 && !self.deduplicated
    }
}

/// Every request in flight, by id.
#[derive(Debug, Default)]
pub(super) struct InFlight {
    requests: BTreeMap<u64, RequestTrace>,
    /// Operations between a failed send and the client's next send of it: their executions
    /// so far (only until that send starts, so as many as sends in flight).
    carried: BTreeMap<u64, Executions>,
}

impl InFlight {
    /// Request `id` is the client's send `try_number` of `retries`: its operation's
    /// executions so far carry over from the earlier send.
    pub(super) fn client_try(&mut self, id: u64, client: (u32, u32, u32)) {
        let carried = self.carried.remove(&id);
        let trace = self.requests.entry(id).or_default();
        trace.client = Some(client);
        if let Some(executions) = carried {
            trace.executions = executions;
        }
    }

    /// Request `id` failed and its client sends it again: keep what its operation did.
    pub(super) fn carry(&mut self, id: Option<u64>, trace: &RequestTrace) {
        if let Some(id) = id {
            // A pending ambiguous attempt stays pending: the client's send replays it.
            self.carried.insert(id, trace.executions);
        }
    }

    /// An attempt of request `id` starts: true when it replays an ambiguous one.
    pub(super) fn attempt_start(&mut self, id: u64) -> bool {
        self.requests
            .get_mut(&id)
            .is_some_and(|trace| std::mem::take(&mut trace.executions.ambiguous_pending))
    }

    /// An attempt of request `id` was ambiguous (`ambiguous_outcome`): the provider `executed`
    /// it or not (unknown counts as not); true when that ran the operation a second time.
    /// (An operation is a request: its id.)
    pub(super) fn ambiguous(&mut self, id: u64, deduplicated: bool, executed: bool) -> bool {
        let ops = &mut self.requests.entry(id).or_default().executions;
        ops.ambiguous_pending = true;
        ops.deduplicated |= deduplicated;
        executed && ops.ran()
    }

    /// An attempt of request `id` on `deployment` ended, failed with `failure` when `Some`;
    /// true when its success ran the operation again (after an ambiguous execution).
    pub(super) fn attempt_end(
        &mut self,
        id: u64,
        deployment: &Arc<str>,
        failure: Option<FailureKind>,
        status: Option<u16>,
    ) -> bool {
        // The common case, a first try that succeeds, keeps nothing: the request ends next.
        if failure.is_none() && !self.requests.contains_key(&id) {
            return false;
        }
        let trace = self.requests.entry(id).or_default();
        let try_number = match trace.tries.iter_mut().find(|(d, _)| d == deployment) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                trace.tries.push((deployment.clone(), 1));
                1
            }
        };
        match failure {
            Some(kind) => {
                trace.failures.push(RoutingFailure {
                    provider: deployment.clone(),
                    status,
                    kind,
                    try_number,
                });
                false
            }
            None => trace.executions.ran(),
        }
    }

    /// Request `id` gave up on a candidate because of its deadline.
    pub(super) fn deadline_exhausted(&mut self, id: u64) {
        self.requests.entry(id).or_default().deadline_exhausted = true;
    }

    /// The request ended: its trace, no longer kept.
    pub(super) fn take(&mut self, id: Option<u64>) -> RequestTrace {
        id.and_then(|id| self.requests.remove(&id))
            .unwrap_or_default()
    }
}

impl RequestTrace {
    /// The `routing_failures` column: `provider:status:reason` per failure, `;` between them
    /// (`east:503:http_503;east:503:http_503 (try 2)`; the status is empty when none came back:
    /// `east::api_connection`). Ids are written as they are: one with `:` or `;` reads ambiguously
    /// here (`routing.jsonl` has the same list unambiguously).
    pub(super) fn failures_field(&self, out: &mut String) {
        out.clear();
        for (i, f) in self.failures.iter().enumerate() {
            if i > 0 {
                out.push(';');
            }
            out.push_str(&f.provider);
            out.push(':');
            if let Some(status) = f.status {
                let _ = write!(out, "{status}");
            }
            out.push(':');
            f.reason(out);
        }
    }
}

/// One `routing.jsonl` line.
pub(super) struct RoutingLine<'a> {
    pub(super) id: Option<u64>,
    pub(super) model: &'a str,
    pub(super) attempts: u32,
    pub(super) trace: &'a RequestTrace,
    pub(super) final_deployment: Option<&'a str>,
    pub(super) outcome: &'a str,
}

impl RoutingLine<'_> {
    fn client_try(&self) -> Option<u32> {
        self.trace.client.map(|(n, _, _)| n)
    }
}

/// `routing.jsonl` being written, one line per finished request.
#[derive(Debug)]
pub(super) struct JsonlOut {
    pub(super) path: PathBuf,
    pub(super) out: BufWriter<File>,
    /// Scratch for one line.
    line: String,
}

impl JsonlOut {
    pub(super) fn create(path: PathBuf) -> Result<Self, ReportError> {
        let file = File::create(&path).map_err(|e| ReportError::io(&path, e))?;
        Ok(Self {
            path,
            out: BufWriter::with_capacity(64 * 1024, file),
            line: String::with_capacity(256),
        })
    }

    /// One line, written by hand into a reused buffer (this runs once per request: serde's
    /// per-line structs and strings cost a tenth of the harness's speed). Key order as in
    /// [`ROUTING_JSONL`].
    pub(super) fn line(&mut self, line: &RoutingLine<'_>) -> io::Result<()> {
        let out = &mut self.line;
        out.clear();
        out.push_str("{\"id\":");
        match line.id {
            Some(id) => push_u64(out, id),
            None => out.push_str("null"),
        }
        out.push_str(",\"model\":");
        json_str(out, line.model);
        let _ = write!(
            out,
            ",\"attempts\":{},\"routing\":{{\"failures\":[",
            line.attempts
        );
        for (i, f) in line.trace.failures.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"provider\":");
            json_str(out, &f.provider);
            out.push_str(",\"status\":");
            match f.status {
                Some(status) => push_u64(out, u64::from(status)),
                None => out.push_str("null"),
            }
            out.push_str(",\"reason\":\"");
            // A reason is `http_<digits>` or a kind name, then ` (try n)`: nothing to escape.
            f.reason(out);
            out.push_str("\"}");
        }
        out.push_str("]},\"final_deployment\":");
        match line.final_deployment {
            Some(d) => json_str(out, d),
            None => out.push_str("null"),
        }
        out.push_str(",\"outcome\":");
        json_str(out, line.outcome);
        if let Some(n) = line.client_try() {
            out.push_str(",\"client_try\":");
            push_u64(out, u64::from(n));
        }
        out.push_str("}\n");
        self.out.write_all(out.as_bytes())
    }
}

/// `n` in decimal, without `core::fmt` (once per request and failure: see `csv::Field`).
fn push_u64(out: &mut String, n: u64) {
    let mut buf = [0u8; 32];
    let start = super::csv::digits(&mut buf, 32, n);
    // Digits are ASCII.
    out.extend(buf[start..].iter().map(|&b| char::from(b)));
}

/// `text` as a JSON string: as is when nothing needs escaping (ids and names almost never
/// do), else through serde_json.
fn json_str(out: &mut String, text: &str) {
    if text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push('"');
        out.push_str(text);
        out.push('"');
    } else if let Ok(quoted) = serde_json::to_string(text) {
        out.push_str(&quoted);
    }
}

/// Runs `write` against `routing.jsonl`; on failure keeps the first error and stops the file.
pub(super) fn write_line(
    out: &mut Option<JsonlOut>,
    error: &mut Option<ReportError>,
    write: impl FnOnce(&mut JsonlOut) -> io::Result<()>,
) {
    let Some(file) = out.as_mut() else { return };
    if let Err(source) = write(file) {
        if error.is_none() {
            *error = Some(ReportError::io(&file.path, source));
        }
        *out = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_carry_the_try_number_per_deployment() {
        let mut flight = InFlight::default();
        let (east, west) = (Arc::from("east"), Arc::from("west"));
        flight.attempt_end(1, &east, Some(FailureKind::ServiceUnavailable), Some(503));
        flight.attempt_end(1, &east, Some(FailureKind::ServiceUnavailable), Some(503));
        flight.attempt_end(1, &west, Some(FailureKind::ApiConnection), None);
        flight.attempt_end(1, &east, Some(FailureKind::Timeout), None);
        flight.attempt_end(1, &west, None, Some(200));
        let trace = flight.take(Some(1));
        let mut field = String::new();
        trace.failures_field(&mut field);
        assert_eq!(
            field,
            "east:503:http_503;east:503:http_503 (try 2);west::api_connection;east::timeout (try 3)"
        );
        assert!(flight.requests.is_empty(), "an ended request is not kept");
    }
}
