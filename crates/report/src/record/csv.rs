//! The trace files' writer: the column tables of `requests.csv` and `attempts.csv`, the
//! `events.csv` header, and `CsvOut`, which quotes and formats fields by hand.
//!
//! Separate from the event folding because this is the hot path of every traced run and its
//! byte format is the contract scripts read; it knows nothing of events or the summary.

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Duration;

use routersim_engine::stream::StreamStats;

use crate::error::ReportError;
use crate::units::{Ms, micros};

/// A trace file's column: its header name beside the code that writes its one field, so the
/// header and the rows are the same list (a new column is one line here;
/// `every_column_writes_one_field` checks each writer).
pub(super) struct Column<F> {
    name: &'static str,
    field: F,
}

const fn col<F>(name: &'static str, field: F) -> Column<F> {
    Column { name, field }
}

/// The header row of a column table.
pub(super) fn header<F>(columns: &[Column<F>]) -> Vec<&'static str> {
    columns.iter().map(|c| c.name).collect()
}

/// One `requests.csv` row, read off a `RequestEnd` event (times in µs since the run start).
pub(super) struct RequestRow<'a> {
    pub(super) request_id: Option<u64>,
    pub(super) arrival_us: u64,
    pub(super) model: &'a str,
    pub(super) final_model_group: &'a str,
    pub(super) final_deployment_id: &'a str,
    pub(super) outcome: &'a str,
    pub(super) status: Option<u16>,
    pub(super) attempts: u32,
    pub(super) retries: u32,
    pub(super) fallbacks: u32,
    pub(super) attempted_fallbacks: u32,
    pub(super) latency_us: u64,
    pub(super) stream: Option<StreamStats>,
    pub(super) ttft_us: Option<u64>,
    /// `provider:status:reason;…` (see `routing`).
    pub(super) routing_failures: &'a str,
    /// A client's send number (`client_retries`); `None` without client retries.
    pub(super) client_try: Option<u32>,
    /// The router replica (fleet runs only: the column exists only then).
    pub(super) replica: Option<u32>,
}

pub(super) type RequestField = fn(&mut CsvOut, &RequestRow<'_>) -> io::Result<()>;

/// `requests.csv`, in column order. New columns go at the end: scripts index these by
/// position.
pub(super) const REQUESTS_COLUMNS: &[Column<RequestField>] = &[
    col("request_id", |w, r| w.opt(r.request_id)),
    col("arrival_ms", |w, r| w.fmt(Ms(r.arrival_us))),
    col("model", |w, r| w.str(r.model)),
    col("final_model_group", |w, r| w.str(r.final_model_group)),
    col("final_deployment_id", |w, r| w.str(r.final_deployment_id)),
    col("outcome", |w, r| w.str(r.outcome)),
    col("status", |w, r| w.opt(r.status)),
    col("attempts", |w, r| w.fmt(r.attempts)),
    col("retries", |w, r| w.fmt(r.retries)),
    col("fallbacks", |w, r| w.fmt(r.fallbacks)),
    col("latency_ms", |w, r| w.fmt(Ms(r.latency_us))),
    // Streams: `false` and four empty fields for a request that did not stream.
    col("stream", |w, r| {
        w.str(if r.stream.is_some() { "true" } else { "false" })
    }),
    col("stream_outcome", |w, r| {
        w.str(
            r.stream
                .and_then(|st| st.outcome)
                .map_or("", |o| o.as_str()),
        )
    }),
    col("ttft_ms", |w, r| w.opt(r.ttft_us.map(Ms))),
    col("tokens_delivered", |w, r| {
        w.opt(r.stream.map(|st| st.tokens_delivered))
    }),
    col("tokens_billed", |w, r| {
        w.opt(r.stream.map(|st| st.tokens_billed))
    }),
    col("attempted_fallbacks", |w, r| w.fmt(r.attempted_fallbacks)),
    col("routing_failures", |w, r| w.str(r.routing_failures)),
    col("client_try", |w, r| w.opt(r.client_try)),
];

/// One `attempts.csv` row, read off an `AttemptEnd` event (times in µs since the run start).
pub(super) struct AttemptRow<'a> {
    pub(super) request_id: Option<u64>,
    pub(super) attempt: u32,
    pub(super) start_us: u64,
    pub(super) end_us: u64,
    pub(super) model_group: &'a str,
    pub(super) deployment_id: &'a str,
    pub(super) outcome: &'a str,
    pub(super) status: Option<u16>,
    pub(super) retry_after: Option<Duration>,
    pub(super) wait: Duration,
    pub(super) fallback_depth: u32,
    /// The router replica (fleet runs only: the column exists only then).
    pub(super) replica: Option<u32>,
}

pub(super) type AttemptField = fn(&mut CsvOut, &AttemptRow<'_>) -> io::Result<()>;

/// `attempts.csv`, in column order (new columns at the end).
pub(super) const ATTEMPTS_COLUMNS: &[Column<AttemptField>] = &[
    col("request_id", |w, r| w.opt(r.request_id)),
    col("attempt", |w, r| w.fmt(r.attempt)),
    col("start_ms", |w, r| w.fmt(Ms(r.start_us))),
    col("end_ms", |w, r| w.fmt(Ms(r.end_us))),
    col("model_group", |w, r| w.str(r.model_group)),
    col("deployment_id", |w, r| w.str(r.deployment_id)),
    col("outcome", |w, r| w.str(r.outcome)),
    col("status", |w, r| w.opt(r.status)),
    col("retry_after_ms", |w, r| {
        w.opt(r.retry_after.map(|d| Ms(micros(d))))
    }),
    col("wait_ms", |w, r| w.fmt(Ms(micros(r.wait)))),
    col("fallback_depth", |w, r| w.fmt(r.fallback_depth)),
];

/// The column a fleet run appends to `requests.csv` and `attempts.csv`.
pub(super) const REPLICA_COLUMN: &str = "replica";

pub(super) const EVENTS_HEADER: &[&str] =
    &["at_ms", "event", "model_group", "deployment_id", "detail"];

/// Buffer of each trace writer.
const CSV_BUFFER: usize = 64 * 1024;

/// The bytes that make a field quoted: one load per byte instead of four compares.
static QUOTED: [bool; 256] = {
    let mut table = [false; 256];
    table[b',' as usize] = true;
    table[b'"' as usize] = true;
    table[b'\r' as usize] = true;
    table[b'\n' as usize] = true;
    table
};

/// A trace file being written: rows are built straight into the file's buffer (no scratch
/// row copied into a `BufWriter`: that copy and its call were a tenth of the writer's cost).
/// Fields are quoted exactly as the `csv` crate's default writer quotes them (only when they
/// contain `,`, `"`, `\r` or `\n`), without its per-byte state machine: this is the hot path of
/// every traced run.
#[derive(Debug)]
pub(super) struct CsvOut {
    pub(super) path: PathBuf,
    pub(super) out: RowBuffer,
    /// Where the row being built starts in `out`'s buffer.
    row_start: usize,
    fields: usize,
}

/// A file and the bytes not yet written to it, written once they pass [`CSV_BUFFER`], on
/// `flush` and on drop (like a `BufWriter`, whose buffer the rows could not be built in).
#[derive(Debug)]
pub(super) struct RowBuffer {
    file: File,
    buf: Vec<u8>,
}

impl RowBuffer {
    /// Writes the buffer out if it is full.
    fn spill(&mut self) -> io::Result<()> {
        if self.buf.len() >= CSV_BUFFER {
            self.write_out()?;
        }
        Ok(())
    }

    fn write_out(&mut self) -> io::Result<()> {
        // Cleared even on error: the file is abandoned after one (see `write_row`).
        let written = self.file.write_all(&self.buf);
        self.buf.clear();
        written
    }
}

impl Write for RowBuffer {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(bytes);
        self.spill()?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.write_out()?;
        self.file.flush()
    }
}

impl Drop for RowBuffer {
    fn drop(&mut self) {
        // As `BufWriter` does: a writer dropped without `flush` still writes what it holds
        // (errors are lost here; `finish` flushes first and reports them).
        let _ = self.write_out();
    }
}

impl CsvOut {
    pub(super) fn create(path: PathBuf, header: &[&str]) -> Result<Self, ReportError> {
        let file = File::create(&path).map_err(|e| ReportError::io(&path, e))?;
        let mut csv = Self {
            path,
            out: RowBuffer {
                file,
                // Room for a full buffer and the row that passes it.
                buf: Vec::with_capacity(CSV_BUFFER + 4096),
            },
            row_start: 0,
            fields: 0,
        };
        let written = header
            .iter()
            .try_for_each(|h| csv.str(h))
            .and_then(|()| csv.end());
        match written {
            Ok(()) => Ok(csv),
            Err(e) => Err(ReportError::io(&csv.path, e)),
        }
    }

    fn separate(&mut self) {
        if self.fields > 0 {
            self.out.buf.push(b',');
        }
        self.fields += 1;
    }

    pub(super) fn str(&mut self, value: &str) -> io::Result<()> {
        self.separate();
        let row = &mut self.out.buf;
        if value.bytes().any(|b| QUOTED[usize::from(b)]) {
            row.push(b'"');
            for b in value.bytes() {
                if b == b'"' {
                    row.push(b'"');
                }
                row.push(b);
            }
            row.push(b'"');
        } else {
            row.extend_from_slice(value.as_bytes());
        }
        Ok(())
    }

    pub(super) fn fmt(&mut self, value: impl Field) -> io::Result<()> {
        self.separate();
        let mut buf = [0u8; 32];
        let text = value.write_into(&mut buf);
        self.out.buf.extend_from_slice(text);
        Ok(())
    }

    pub(super) fn opt(&mut self, value: Option<impl Field>) -> io::Result<()> {
        match value {
            Some(value) => self.fmt(value),
            None => self.str(""),
        }
    }

    /// A `requests.csv` row: every column of [`REQUESTS_COLUMNS`], then the line end.
    pub(super) fn request(&mut self, row: &RequestRow<'_>) -> io::Result<()> {
        for column in REQUESTS_COLUMNS {
            (column.field)(self, row)?;
        }
        if let Some(replica) = row.replica {
            self.fmt(replica)?;
        }
        self.end()
    }

    /// An `attempts.csv` row: every column of [`ATTEMPTS_COLUMNS`], then the line end.
    pub(super) fn attempt(&mut self, row: &AttemptRow<'_>) -> io::Result<()> {
        for column in ATTEMPTS_COLUMNS {
            (column.field)(self, row)?;
        }
        if let Some(replica) = row.replica {
            self.fmt(replica)?;
        }
        self.end()
    }

    pub(super) fn end(&mut self) -> io::Result<()> {
        let row = &mut self.out.buf;
        if self.fields == 1 && row.len() == self.row_start {
            // A record of one empty field is written `""` (as the csv crate does).
            row.extend_from_slice(b"\"\"");
        }
        row.push(b'\n');
        self.fields = 0;
        let written = self.out.spill();
        self.row_start = self.out.buf.len();
        written
    }
}

/// A number the trace files print; formatted by hand because this is the hot path of every run
/// (`core::fmt` was a quarter of the harness's time).
pub(super) trait Field {
    /// Writes the value's text into the end of `buf` and returns it.
    fn write_into(self, buf: &mut [u8; 32]) -> &[u8];
}

/// `00` to `99`: two digits per division (as `itoa` does).
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Writes `n`'s decimal digits so that they end at `end`; returns where they start.
pub(super) fn digits(buf: &mut [u8; 32], end: usize, mut n: u64) -> usize {
    let mut at = end;
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        let pair = n as usize * 2;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        buf[at] = b'0' + n as u8;
    }
    at
}

impl Field for u64 {
    fn write_into(self, buf: &mut [u8; 32]) -> &[u8] {
        let start = digits(buf, 32, self);
        &buf[start..]
    }
}

impl Field for u32 {
    fn write_into(self, buf: &mut [u8; 32]) -> &[u8] {
        u64::from(self).write_into(buf)
    }
}

impl Field for u16 {
    fn write_into(self, buf: &mut [u8; 32]) -> &[u8] {
        u64::from(self).write_into(buf)
    }
}

impl Field for &u64 {
    fn write_into(self, buf: &mut [u8; 32]) -> &[u8] {
        (*self).write_into(buf)
    }
}

impl Field for &u32 {
    fn write_into(self, buf: &mut [u8; 32]) -> &[u8] {
        (*self).write_into(buf)
    }
}

impl Field for &u16 {
    fn write_into(self, buf: &mut [u8; 32]) -> &[u8] {
        (*self).write_into(buf)
    }
}

impl Field for Ms {
    /// `1234567` µs → `1234.567`, the same bytes as `Ms`'s `Display`.
    fn write_into(self, buf: &mut [u8; 32]) -> &[u8] {
        let frac = (self.0 % 1000) as usize;
        buf[29] = b'0' + (frac / 100) as u8;
        let pair = (frac % 100) * 2;
        buf[30..32].copy_from_slice(&PAIRS[pair..pair + 2]);
        buf[28] = b'.';
        let start = digits(buf, 28, self.0 / 1000);
        &buf[start..]
    }
}

/// Runs `write` against a trace file; on failure keeps the first error and stops that file.
pub(super) fn write_row(
    out: &mut Option<CsvOut>,
    error: &mut Option<ReportError>,
    write: impl FnOnce(&mut CsvOut) -> io::Result<()>,
) {
    let Some(csv) = out.as_mut() else { return };
    if let Err(source) = write(csv) {
        if error.is_none() {
            *error = Some(ReportError::io(&csv.path, source));
        }
        *out = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use routersim_engine::stream::StreamOutcome;
    use std::fs;

    /// A trace file in the temp dir, removed when dropped.
    struct Scratch(PathBuf);

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_file(&self.0);
        }
    }

    fn scratch(name: &str, header: &[&str]) -> Result<(Scratch, CsvOut), ReportError> {
        let path = std::env::temp_dir().join(format!(
            "routersim-schema-{name}-{}.csv",
            std::process::id()
        ));
        let csv = CsvOut::create(path.clone(), header)?;
        Ok((Scratch(path), csv))
    }

    type Writer<R> = fn(&mut CsvOut, &R) -> io::Result<()>;

    /// Runs each column's writer alone: it must write exactly one field, or the header and
    /// the rows of the file would disagree from that column on.
    fn one_field_each<R>(columns: &[Column<Writer<R>>], row: &R) -> io::Result<()> {
        let (_scratch, mut w) = scratch("fields", &["x"]).map_err(io::Error::other)?;
        for column in columns {
            w.out.buf.truncate(w.row_start);
            w.fields = 0;
            (column.field)(&mut w, row)?;
            assert_eq!(
                w.fields, 1,
                "column {} wrote {} fields",
                column.name, w.fields
            );
        }
        Ok(())
    }

    fn requests() -> [RequestRow<'static>; 3] {
        let plain = RequestRow {
            request_id: Some(7),
            arrival_us: 1_500,
            model: "gpt-4o",
            final_model_group: "gpt-4o",
            final_deployment_id: "a,b",
            outcome: "ok",
            status: Some(200),
            attempts: 2,
            retries: 1,
            fallbacks: 0,
            attempted_fallbacks: 0,
            latency_us: 2_000_001,
            stream: None,
            ttft_us: None,
            routing_failures: "a:429:http_429",
            client_try: None,
            replica: None,
        };
        let streamed = RequestRow {
            request_id: None,
            status: None,
            final_deployment_id: "",
            stream: Some(StreamStats {
                outcome: Some(StreamOutcome::Completed),
                ttft: Some(Duration::from_millis(3)),
                tokens_delivered: 10,
                tokens_billed: 12,
            }),
            ttft_us: Some(3_000),
            ..plain
        };
        let never_opened = RequestRow {
            stream: Some(StreamStats::default()),
            ..plain
        };
        [plain, streamed, never_opened]
    }

    fn attempts() -> [AttemptRow<'static>; 2] {
        let ok = AttemptRow {
            request_id: Some(1),
            attempt: 1,
            start_us: 0,
            end_us: 250_000,
            model_group: "A",
            deployment_id: "a1",
            outcome: "ok",
            status: Some(200),
            retry_after: None,
            wait: Duration::ZERO,
            fallback_depth: 0,
            replica: None,
        };
        let failed = AttemptRow {
            request_id: None,
            outcome: "rate_limit",
            status: None,
            retry_after: Some(Duration::from_micros(1_234_567)),
            ..ok
        };
        [ok, failed]
    }

    #[test]
    fn digits_match_display() {
        let mut buf = [0u8; 32];
        for n in (0..2_000u64).chain([9_999, 10_000, 99_999, 123_456_789, u64::MAX]) {
            let start = digits(&mut buf, 32, n);
            assert_eq!(&buf[start..], n.to_string().as_bytes());
            for us in [n, n.saturating_mul(1000).saturating_add(7)] {
                let text = Ms(us).write_into(&mut buf).to_vec();
                assert_eq!(text, Ms(us).to_string().as_bytes());
            }
        }
    }

    #[test]
    fn every_column_writes_one_field() -> io::Result<()> {
        for row in &requests() {
            one_field_each(REQUESTS_COLUMNS, row)?;
        }
        for row in &attempts() {
            one_field_each(ATTEMPTS_COLUMNS, row)?;
        }
        Ok(())
    }

    #[test]
    fn rows_read_back_under_their_header() -> Result<(), Box<dyn std::error::Error>> {
        let (scratch, mut w) = scratch("rows", &header(REQUESTS_COLUMNS))?;
        for row in &requests() {
            w.request(row)?;
        }
        w.out.flush()?;
        let text = fs::read_to_string(&scratch.0)?;
        let lines: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(
            lines,
            [
                "7,1.500,gpt-4o,gpt-4o,\"a,b\",ok,200,2,1,0,2000.001,false,,,,,0,a:429:http_429,",
                ",1.500,gpt-4o,gpt-4o,,ok,,2,1,0,2000.001,true,completed,3.000,10,12,0,a:429:http_429,",
                "7,1.500,gpt-4o,gpt-4o,\"a,b\",ok,200,2,1,0,2000.001,true,,,0,0,0,a:429:http_429,",
            ]
        );
        // The csv crate refuses a record whose length differs from the header's.
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        assert_eq!(reader.headers()?.len(), REQUESTS_COLUMNS.len());
        assert_eq!(reader.records().collect::<Result<Vec<_>, _>>()?.len(), 3);
        Ok(())
    }
}
