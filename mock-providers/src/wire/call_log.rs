//! `provider_calls.csv`: the provider-side truth of what a router under test did, one row per
//! call, written when the call ends (a streamed call ends with its body), so memory stays flat
//! however long the server runs.
//!
//! Columns: `at_ms` (when the request arrived, ms since the server started),
//! `deployment_id`, `path` (without the query), `stream` (`true`/`false`), `outcome`,
//! `status` (empty when the connection was closed without a response), `retry_after_ms`
//! (the Retry-After sent, in ms; empty when none), `latency_ms` (arrival to the call's end:
//! the response for a non-streamed call, the body's end for a stream; 3 decimals), `tokens`
//! (output tokens sent), `request_id` (the client's `x-routersim-request-id`, when it sent one:
//! `routersim drive` joins calls to its requests with it; empty otherwise).
//!
//! `outcome`: `ok`; a failure kind (`rate_limit`, `service_unavailable`, …) for a call that
//! failed up front; for a stream that opened with 200, `ok` when it completed (an empty stream
//! too), `break:<kind>` (abrupt close), `error_frame:<kind>`, `truncated` (clean end without
//! the terminal marker), or `client_closed` (the client hung up first); `bad_request` for a
//! body the server could not read (no fake provider was called).
//!
//! Every row is also counted (by deployment and outcome, with a latency histogram) for the
//! server's `GET /metrics`: [`CallLog::metrics`].

use std::cell::{Cell, RefCell};
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use routersim_report::provider_metrics::ProviderCallMetrics;

use super::error::WireError;

/// The header row.
pub const HEADER: [&str; 10] = [
    "at_ms",
    "deployment_id",
    "path",
    "stream",
    "outcome",
    "status",
    "retry_after_ms",
    "latency_ms",
    "tokens",
    "request_id",
];

/// One call.
#[derive(Clone, Debug, PartialEq)]
pub struct CallRow {
    /// When the request arrived, since the server started.
    pub at: Duration,
    /// The deployment called.
    pub deployment_id: Arc<str>,
    /// The request's path, without the query.
    pub path: String,
    /// Whether the client asked for a stream.
    pub stream: bool,
    /// See the module doc.
    pub outcome: String,
    /// The HTTP status sent.
    pub status: Option<u16>,
    /// The Retry-After sent, in milliseconds.
    pub retry_after_ms: Option<u64>,
    /// Arrival to the call's end.
    pub latency: Duration,
    /// Output tokens sent.
    pub tokens: u32,
    /// The client's `x-routersim-request-id`, when it sent one.
    pub request_id: Option<u64>,
}

/// Where rows go: a CSV writer, or nowhere.
pub struct CallLog {
    writer: RefCell<Option<csv::Writer<Box<dyn Write>>>>,
    /// Every row, for an in-process reader (`routersim drive`); `None`: not kept.
    kept: RefCell<Option<Vec<CallRow>>>,
    rows: Cell<u64>,
    error: RefCell<Option<String>>,
    /// Every row counted again for `GET /metrics`: counters, never rows.
    metrics: Arc<ProviderCallMetrics>,
}

impl std::fmt::Debug for CallLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallLog")
            .field("rows", &self.rows.get())
            .finish_non_exhaustive()
    }
}

impl CallLog {
    /// A log that keeps nothing (counts rows only).
    pub fn disabled() -> Self {
        Self {
            writer: RefCell::new(None),
            kept: RefCell::new(None),
            rows: Cell::new(0),
            error: RefCell::new(None),
            metrics: Arc::default(),
        }
    }

    /// A log writing CSV to `out` (the header at once).
    pub fn new(out: impl Write + 'static) -> Self {
        let mut writer = csv::Writer::from_writer(Box::new(out) as Box<dyn Write>);
        let error = writer.write_record(HEADER).err().map(|e| e.to_string());
        Self {
            writer: RefCell::new(Some(writer)),
            kept: RefCell::new(None),
            rows: Cell::new(0),
            error: RefCell::new(error),
            metrics: Arc::default(),
        }
    }

    /// Also keeps every row in memory for [`CallLog::take_rows`] (one row per call: the caller
    /// bounds the run).
    pub fn keeping_rows(self) -> Self {
        *self.kept.borrow_mut() = Some(Vec::new());
        self
    }

    /// The rows kept so far (empty unless [`CallLog::keeping_rows`]), in the order calls ended.
    pub fn take_rows(&self) -> Vec<CallRow> {
        self.kept
            .borrow_mut()
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Rows recorded.
    pub fn rows(&self) -> u64 {
        self.rows.get()
    }

    /// The rows so far as counters by deployment and outcome, for `GET /metrics`.
    pub fn metrics(&self) -> &ProviderCallMetrics {
        &self.metrics
    }

    /// The same counters, shared (for a scrape answered outside the server).
    pub fn shared_metrics(&self) -> Arc<ProviderCallMetrics> {
        self.metrics.clone()
    }

    /// Writes one row (a write error is kept and reported by [`CallLog::finish`]).
    pub fn record(&self, row: &CallRow) {
        self.rows.set(self.rows.get() + 1);
        self.metrics
            .record_call(&row.deployment_id, &row.outcome, row.latency);
        if let Some(kept) = self.kept.borrow_mut().as_mut() {
            kept.push(row.clone());
        }
        let mut writer = self.writer.borrow_mut();
        let Some(writer) = writer.as_mut() else {
            return;
        };
        let opt = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
        let result = writer.write_record([
            row.at.as_millis().to_string().as_str(),
            &row.deployment_id,
            &row.path,
            if row.stream { "true" } else { "false" },
            &row.outcome,
            &opt(row.status.map(u64::from)),
            &opt(row.retry_after_ms),
            &format!("{:.3}", row.latency.as_secs_f64() * 1000.0),
            &row.tokens.to_string(),
            &opt(row.request_id),
        ]);
        if let Err(e) = result {
            self.error.borrow_mut().get_or_insert(e.to_string());
        }
    }

    /// Pushes buffered rows to the underlying writer.
    pub fn flush(&self) {
        if let Some(writer) = self.writer.borrow_mut().as_mut()
            && let Err(e) = writer.flush()
        {
            self.error.borrow_mut().get_or_insert(e.to_string());
        }
    }

    /// Flushes and reports the first write error, if any; the rows written otherwise.
    pub fn finish(&self) -> Result<u64, WireError> {
        self.flush();
        match self.error.borrow_mut().take() {
            Some(e) => Err(WireError::CallLog(e)),
            None => Ok(self.rows.get()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use super::*;

    /// A `Write` the test can read back.
    #[derive(Clone, Default)]
    struct Shared(Rc<RefCell<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn rows_have_the_documented_columns() {
        let out = Shared::default();
        let log = CallLog::new(out.clone());
        log.record(&CallRow {
            at: Duration::from_millis(1500),
            deployment_id: Arc::from("gpt-a"),
            path: "/d/gpt-a/v1/chat/completions".into(),
            stream: false,
            outcome: "rate_limit".into(),
            status: Some(429),
            retry_after_ms: Some(2000),
            latency: Duration::from_micros(20_250),
            tokens: 0,
            request_id: Some(7),
        });
        assert_eq!(log.finish().unwrap(), 1);
        assert_eq!(
            String::from_utf8(out.0.borrow().clone()).unwrap(),
            "at_ms,deployment_id,path,stream,outcome,status,retry_after_ms,latency_ms,tokens,request_id\n\
             1500,gpt-a,/d/gpt-a/v1/chat/completions,false,rate_limit,429,2000,20.250,0,7\n"
        );
    }
}
