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

/// Declares a trace file's columns once, so the header and the rows are the same list (a new
/// column is one line): `$names` is the header; `$write` writes a row's fields in that order,
/// straight-line (a loop over `fn` pointers cost a call per field on the hottest path); tests
/// get `$fields`, each column's writer alone (`every_column_writes_one_field`).
macro_rules! columns {
    (
        $(#[$doc:meta])*
        const $names:ident, fn $write:ident, test $fields:ident: $row:ty = [
            $($name:literal => |$w:ident, $r:ident| $body:expr),+ $(,)?
        ];
    ) => {
        $(#[$doc])*
        pub(super) const $names: &[&str] = &[$($name),+];

        /// Writes one row's fields, in header order (no line end).
        fn $write(out: &mut CsvOut, row: &$row) -> io::Result<()> {
            $({
                let ($w, $r) = (&mut *out, row);
                $body?;
            })+
            Ok(())
        }

        #[cfg(test)]
        const $fields: &[(&str, fn(&mut CsvOut, &$row) -> io::Result<()>)] =
            &[$(($name, |$w, $r| $body)),+];
    };
}

/// The header row of a column table.
pub(super) fn header(columns: &[&'static str]) -> Vec<&'static str> {
    columns.to_vec()
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

columns! {
    /// `requests.csv`, in column order. New columns go at the end: scripts index these by
    /// position.
    const REQUESTS_COLUMNS, fn write_request, test REQUESTS_FIELDS: RequestRow<'_> = [
        "request_id" => |w, r| w.opt(r.request_id),
        "arrival_ms" => |w, r| w.fmt(Ms(r.arrival_us)),
        "model" => |w, r| w.str(r.model),
        "final_model_group" => |w, r| w.str(r.final_model_group),
        "final_deployment_id" => |w, r| w.str(r.final_deployment_id),
        "outcome" => |w, r| w.str(r.outcome),
        "status" => |w, r| w.opt(r.status),
        "attempts" => |w, r| w.fmt(r.attempts),
        "retries" => |w, r| w.fmt(r.retries),
        "fallbacks" => |w, r| w.fmt(r.fallbacks),
        "latency_ms" => |w, r| w.fmt(Ms(r.latency_us)),
        // Streams: `false` and four empty fields for a request that did not stream.
        "stream" => |w, r| w.str(if r.stream.is_some() { "true" } else { "false" }),
        "stream_outcome" => |w, r| {
            w.str(r.stream.and_then(|st| st.outcome).map_or("", |o| o.as_str()))
        },
        "ttft_ms" => |w, r| w.opt(r.ttft_us.map(Ms)),
        "tokens_delivered" => |w, r| w.opt(r.stream.map(|st| st.tokens_delivered)),
        "tokens_billed" => |w, r| w.opt(r.stream.map(|st| st.tokens_billed)),
        "attempted_fallbacks" => |w, r| w.fmt(r.attempted_fallbacks),
        "routing_failures" => |w, r| w.str(r.routing_failures),
        "client_try" => |w, r| w.opt(r.client_try),
    ];
}

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

columns! {
    /// `attempts.csv`, in column order (new columns at the end).
    const ATTEMPTS_COLUMNS, fn write_attempt, test ATTEMPTS_FIELDS: AttemptRow<'_> = [
        "request_id" => |w, r| w.opt(r.request_id),
        "attempt" => |w, r| w.fmt(r.attempt),
        "start_ms" => |w, r| w.fmt(Ms(r.start_us)),
        "end_ms" => |w, r| w.fmt(Ms(r.end_us)),
        "model_group" => |w, r| w.str(r.model_group),
        "deployment_id" => |w, r| w.str(r.deployment_id),
        "outcome" => |w, r| w.str(r.outcome),
        "status" => |w, r| w.opt(r.status),
        "retry_after_ms" => |w, r| w.opt(r.retry_after.map(|d| Ms(micros(d)))),
        "wait_ms" => |w, r| w.fmt(Ms(micros(r.wait))),
        "fallback_depth" => |w, r| w.fmt(r.fallback_depth),
    ];
}

/// The column a fleet run appends to `requests.csv` and `attempts.csv`.
pub(super) const REPLICA_COLUMN: &str = "replica";

pub(super) const EVENTS_HEADER: &[&str] =
    &["at_ms", "event", "model_group", "deployment_id", "detail"];

/// Buffer of each trace writer.
const CSV_BUFFER: usize = 64 * 1024;

/// `0x01` in every byte of a word.
const ONES: u64 = u64::from_le_bytes([1; 8]);
/// `0x80` in every byte of a word.
const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);

/// Whether any byte of `word` is zero (exact: a borrow can only flag a byte above a real zero).
const fn has_zero(word: u64) -> bool {
    word.wrapping_sub(ONES) & !word & HIGHS != 0
}

/// Whether any byte of `word` is `,`, `"`, `\r` or `\n`: eight bytes per test.
const fn has_special(word: u64) -> bool {
    has_zero(word ^ (ONES * b',' as u64))
        | has_zero(word ^ (ONES * b'"' as u64))
        | has_zero(word ^ (ONES * b'\r' as u64))
        | has_zero(word ^ (ONES * b'\n' as u64))
}

/// Whether a field must be quoted, a word at a time; the short fields most are take one word
/// built from overlapping loads (zero padding is never special).
fn needs_quotes(bytes: &[u8]) -> bool {
    if let Some(tail) = bytes.last_chunk::<8>() {
        let (words, _) = bytes.as_chunks::<8>();
        return words.iter().any(|w| has_special(u64::from_le_bytes(*w)))
            || has_special(u64::from_le_bytes(*tail));
    }
    let word = match (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
        (Some(head), Some(tail)) => {
            u64::from(u32::from_le_bytes(*head)) | u64::from(u32::from_le_bytes(*tail)) << 32
        }
        // Three bytes at most.
        _ => bytes.iter().fold(0, |word, &b| word << 8 | u64::from(b)),
    };
    has_special(word)
}

/// Appends `bytes` (`N <= len <= 2N <= 16`) from two overlapping `N`-byte copies into a
/// 16-byte block: fixed-size moves instead of a `memcpy` call, for the short fields most are.
fn push_two<const N: usize>(out: &mut Vec<u8>, head: &[u8; N], tail: &[u8; N], len: usize) {
    let mut block = [0; 16];
    block[..N].copy_from_slice(head);
    block[len - N..len].copy_from_slice(tail);
    let start = out.len();
    out.extend_from_slice(&block);
    out.truncate(start + len);
}

/// Appends a field that needs no quotes.
fn push_plain(out: &mut Vec<u8>, bytes: &[u8]) {
    let len = bytes.len();
    if len <= 16 {
        if let (Some(head), Some(tail)) = (bytes.first_chunk::<8>(), bytes.last_chunk::<8>()) {
            return push_two(out, head, tail, len);
        }
        if let (Some(head), Some(tail)) = (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
            return push_two(out, head, tail, len);
        }
    }
    out.extend_from_slice(bytes);
}

/// Appends a field quoted, its `"` doubled (rare: kept out of line).
#[cold]
#[inline(never)]
fn push_quoted(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'"');
    for &b in bytes {
        if b == b'"' {
            out.push(b'"');
        }
        out.push(b);
    }
    out.push(b'"');
}

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

    #[inline]
    pub(super) fn str(&mut self, value: &str) -> io::Result<()> {
        self.separate();
        let bytes = value.as_bytes();
        if bytes.is_empty() {
            return Ok(());
        }
        if needs_quotes(bytes) {
            push_quoted(&mut self.out.buf, bytes);
        } else {
            push_plain(&mut self.out.buf, bytes);
        }
        Ok(())
    }

    #[inline]
    pub(super) fn fmt(&mut self, value: impl Field) -> io::Result<()> {
        self.separate();
        value.push_to(&mut self.out.buf);
        Ok(())
    }

    /// A number, or an empty field for `None` (only the separator).
    #[inline]
    pub(super) fn opt(&mut self, value: Option<impl Field>) -> io::Result<()> {
        match value {
            Some(value) => self.fmt(value),
            None => {
                self.separate();
                Ok(())
            }
        }
    }

    /// A `requests.csv` row: every column of [`REQUESTS_COLUMNS`], then the line end.
    pub(super) fn request(&mut self, row: &RequestRow<'_>) -> io::Result<()> {
        write_request(self, row)?;
        if let Some(replica) = row.replica {
            self.fmt(replica)?;
        }
        self.end()
    }

    /// An `attempts.csv` row: every column of [`ATTEMPTS_COLUMNS`], then the line end.
    pub(super) fn attempt(&mut self, row: &AttemptRow<'_>) -> io::Result<()> {
        write_attempt(self, row)?;
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
    /// Appends the value's text to `out`.
    fn push_to(self, out: &mut Vec<u8>);
}

/// `00` to `99`: two digits per division (as `itoa` does).
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Writes `n`'s decimal digits so that they end at `end`; returns where they start.
#[inline]
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

/// A number's text is built in the first half, ending at 32; the second half is padding.
type NumberBuf = [[u8; 32]; 2];

/// Appends the text `buf` holds from `start` to 32: a fixed 32-byte copy cut back to size,
/// instead of a `memcpy` call per number.
#[inline]
fn push_number(out: &mut Vec<u8>, buf: &NumberBuf, start: usize) {
    if let Some(text) = buf
        .as_flattened()
        .get(start..)
        .and_then(|t| t.first_chunk::<32>())
    {
        let at = out.len();
        out.extend_from_slice(text);
        out.truncate(at + 32 - start);
    }
}

impl Field for u64 {
    #[inline]
    fn push_to(self, out: &mut Vec<u8>) {
        let mut buf: NumberBuf = [[0; 32]; 2];
        let start = digits(&mut buf[0], 32, self);
        push_number(out, &buf, start);
    }
}

impl Field for u32 {
    #[inline]
    fn push_to(self, out: &mut Vec<u8>) {
        u64::from(self).push_to(out);
    }
}

impl Field for u16 {
    #[inline]
    fn push_to(self, out: &mut Vec<u8>) {
        u64::from(self).push_to(out);
    }
}

impl Field for &u64 {
    #[inline]
    fn push_to(self, out: &mut Vec<u8>) {
        (*self).push_to(out);
    }
}

impl Field for &u32 {
    #[inline]
    fn push_to(self, out: &mut Vec<u8>) {
        (*self).push_to(out);
    }
}

impl Field for &u16 {
    #[inline]
    fn push_to(self, out: &mut Vec<u8>) {
        (*self).push_to(out);
    }
}

impl Field for Ms {
    /// `1234567` µs → `1234.567`, the same bytes as `Ms`'s `Display`.
    #[inline]
    fn push_to(self, out: &mut Vec<u8>) {
        let mut buf: NumberBuf = [[0; 32]; 2];
        let text = &mut buf[0];
        let frac = (self.0 % 1000) as usize;
        text[29] = b'0' + (frac / 100) as u8;
        let pair = (frac % 100) * 2;
        text[30..32].copy_from_slice(&PAIRS[pair..pair + 2]);
        text[28] = b'.';
        let start = digits(text, 28, self.0 / 1000);
        push_number(out, &buf, start);
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
mod tests;
