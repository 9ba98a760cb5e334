//! The loop that reads a log a row at a time, in any of the formats, and hands each row that
//! passes the filters (`--since`, `--until`, `--model-group`) to its caller as a [`Call`].

use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read};
use std::path::Path;

use serde::de::{self, SeqAccess, Visitor};

use super::gateway::GatewayColumns;
use super::intern::Interner;
use super::name::Format;
use super::payload::{LineProblem, PayloadLine};
use super::spend::{SpendColumns, SpendRow};
use crate::call::Call;
use crate::error::ImportError;

/// Which rows to keep, and the format when it is not to be detected.
#[derive(Clone, Debug, Default)]
pub struct ReadOptions {
    /// `--format`: read as this format (detection still checks it fits).
    pub format: Option<Format>,
    /// Rows that started before this (Unix seconds) are left out.
    pub since: Option<f64>,
    /// Rows that started at or after this (Unix seconds) are left out.
    pub until: Option<f64>,
    /// When not empty: only rows of these model groups (served or asked for).
    pub model_groups: Vec<String>,
}

/// What reading found.
#[derive(Clone, Debug, Default)]
pub struct ReadSummary {
    /// The format read.
    pub format: Option<Format>,
    /// Rows read.
    pub rows: u64,
    /// Rows kept by the filters.
    pub kept: u64,
    /// The last line, cut short and skipped.
    pub cut_last_line: Option<u64>,
    /// CSV columns not read.
    pub ignored_columns: Vec<String>,
}

/// Reads `path`, calling `visit` with every row kept; the summary.
pub fn read_calls(
    path: &Path,
    options: &ReadOptions,
    names: &mut Interner,
    visit: &mut dyn FnMut(Call) -> Result<(), ImportError>,
) -> Result<ReadSummary, ImportError> {
    let mut reader = open(path)?;
    let (first, first_line) = first_line(path, &mut reader)?;
    let text = String::from_utf8_lossy(&first).into_owned();
    let head = text.trim_start_matches('\u{feff}').trim_start();
    let mut state = State {
        path,
        options,
        names,
        visit,
        summary: ReadSummary::default(),
    };
    if head.starts_with('{') {
        let format = json_format(path, head, first_line, options.format)?;
        state.summary.format = Some(format);
        state.json_lines(format, first, first_line, reader)?;
    } else if head.starts_with('[') {
        state.json_array(Cursor::new(first).chain(reader))?;
    } else {
        state.csv(head, Cursor::new(first).chain(reader), first_line)?;
    }
    Ok(state.summary)
}

/// The log, decompressed when it is gzipped (its first bytes say so, whatever its name).
fn open(path: &Path) -> Result<Box<dyn BufRead>, ImportError> {
    let file = File::open(path).map_err(|e| ImportError::read(path, e))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let magic = reader.fill_buf().map_err(|e| ImportError::read(path, e))?;
    if magic.starts_with(&[0x1f, 0x8b]) {
        let gz = flate2::bufread::MultiGzDecoder::new(reader);
        return Ok(Box::new(BufReader::with_capacity(1 << 20, gz)));
    }
    Ok(Box::new(reader))
}

/// The first line that is not blank (its bytes, its number).
fn first_line(path: &Path, reader: &mut impl BufRead) -> Result<(Vec<u8>, u64), ImportError> {
    let mut line = 0;
    loop {
        let mut buf = Vec::new();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| ImportError::read(path, e))?;
        line += 1;
        if n == 0 {
            return Err(ImportError::Empty {
                path: path.to_path_buf(),
                message: "the log is empty".into(),
            });
        }
        if !String::from_utf8_lossy(&buf)
            .trim()
            .trim_start_matches('\u{feff}')
            .is_empty()
        {
            return Ok((buf, line));
        }
    }
}

/// Which JSON format the first object is.
fn json_format(
    path: &Path,
    head: &str,
    line: u64,
    wanted: Option<Format>,
) -> Result<Format, ImportError> {
    let keys: serde_json::Map<String, serde_json::Value> = serde_json::from_str(head.trim())
        .map_err(|e| ImportError::line(path, line, format!("not a JSON object: {e}")))?;
    let has = |k: &str| keys.contains_key(k);
    let found = if has("request_id") && !has("trace_id") && has("startTime") {
        Format::SpendLogs
    } else if has("startTime") && has("model_group") && has("status") {
        Format::LitellmPayload
    } else {
        return Err(ImportError::Format {
            path: path.to_path_buf(),
            message: format!(
                "line {line}: a JSON object that is neither LiteLLM's standard logging payload \
                 (startTime, model_group, status) nor a spend-log row (request_id, startTime)"
            ),
        });
    };
    check_wanted(path, found, wanted)
}

fn check_wanted(path: &Path, found: Format, wanted: Option<Format>) -> Result<Format, ImportError> {
    match wanted {
        Some(w) if w != found => Err(ImportError::Format {
            path: path.to_path_buf(),
            message: format!(
                "--format {} was given, but the log is {} (--format {})",
                w.name(),
                found.describe(),
                found.name()
            ),
        }),
        _ => Ok(found),
    }
}

/// The reading state shared by the containers.
struct State<'a> {
    path: &'a Path,
    options: &'a ReadOptions,
    names: &'a mut Interner,
    visit: &'a mut dyn FnMut(Call) -> Result<(), ImportError>,
    summary: ReadSummary,
}

impl State<'_> {
    /// Counts a row and passes it on if the filters keep it.
    fn row(&mut self, mut call: Call) -> Result<(), ImportError> {
        self.summary.rows += 1;
        check_times(&mut call).map_err(|m| ImportError::line(self.path, call.line, m))?;
        let o = self.options;
        if o.since.is_some_and(|s| call.start < s) || o.until.is_some_and(|u| call.start >= u) {
            return Ok(());
        }
        if !o.model_groups.is_empty()
            && !o
                .model_groups
                .iter()
                .any(|g| **g == *call.model_group || **g == **call.requested_group())
        {
            return Ok(());
        }
        self.summary.kept += 1;
        (self.visit)(call)
    }

    fn problem(&self, line: u64, problem: LineProblem) -> ImportError {
        let LineProblem::Missing(field) = problem;
        ImportError::line(self.path, line, format!("{field} is missing or unreadable"))
    }

    /// One JSON object of `format`, from `bytes`.
    fn json_row(
        &mut self,
        format: Format,
        bytes: &[u8],
        line: u64,
    ) -> Result<(), serde_json::Error> {
        let call = match format {
            Format::LitellmPayload => {
                let row: PayloadLine = serde_json::from_slice(bytes)?;
                if row.request_id.text().is_some() {
                    return Err(de::Error::custom(
                        "a spend-log row (it has request_id) in a log of LiteLLM standard logging \
                         payloads: mixed formats",
                    ));
                }
                row.into_call(line, self.names)
            }
            _ => {
                let row: SpendRow = serde_json::from_slice(bytes)?;
                if row.trace_id.text().is_some() {
                    return Err(de::Error::custom(
                        "a standard logging payload (it has trace_id) in a spend log: mixed formats",
                    ));
                }
                row.into_call(line, self.names)
            }
        };
        match call {
            Ok(call) => self.row(call).map_err(de::Error::custom),
            Err(problem) => Err(de::Error::custom(self.problem(line, problem).to_string())),
        }
    }

    fn json_lines(
        &mut self,
        format: Format,
        first: Vec<u8>,
        first_line: u64,
        mut reader: impl BufRead,
    ) -> Result<(), ImportError> {
        let (mut buf, mut line) = (first, first_line);
        loop {
            let text = trim_bytes(&buf);
            if !text.is_empty() {
                let ends = buf.ends_with(b"\n");
                if text[0] != b'{' {
                    return Err(ImportError::line(
                        self.path,
                        line,
                        format!(
                            "not a JSON object in a log of {}: mixed formats?",
                            format.describe()
                        ),
                    ));
                }
                if let Err(e) = self.json_row(format, text, line) {
                    let mut next = Vec::new();
                    let more = reader
                        .read_until(b'\n', &mut next)
                        .map_err(|e| ImportError::read(self.path, e))?;
                    if e.is_eof() && !ends && more == 0 {
                        self.summary.cut_last_line = Some(line);
                        return Ok(());
                    }
                    return Err(json_error(self.path, line, &e));
                }
            }
            buf.clear();
            line += 1;
            if reader
                .read_until(b'\n', &mut buf)
                .map_err(|e| ImportError::read(self.path, e))?
                == 0
            {
                return Ok(());
            }
        }
    }

    fn json_array(&mut self, reader: impl Read) -> Result<(), ImportError> {
        let mut de = serde_json::Deserializer::from_reader(reader);
        let mut failure = None;
        let visitor = ArrayVisitor {
            state: self,
            failure: &mut failure,
        };
        let result = de::Deserializer::deserialize_seq(&mut de, visitor);
        if let Some(error) = failure {
            return Err(error);
        }
        result.map_err(|e| json_error(self.path, e.line() as u64, &e))?;
        de.end()
            .map_err(|e| json_error(self.path, e.line() as u64, &e))
    }

    fn csv(&mut self, head: &str, reader: impl Read, first_line: u64) -> Result<(), ImportError> {
        let mut csv = csv::ReaderBuilder::new()
            .has_headers(true)
            .from_reader(reader);
        let header = csv
            .headers()
            .map_err(|e| {
                ImportError::line(self.path, first_line, format!("not a CSV header: {e}"))
            })?
            .clone();
        let has = |name: &str| header.iter().any(|h| h.trim() == name);
        let format = if has("timestamp") && has("latency_ms") {
            Format::Csv
        } else if has("request_id") && has("startTime") {
            Format::SpendLogs
        } else {
            return Err(ImportError::Format {
                path: self.path.to_path_buf(),
                message: format!(
                    "line {first_line}: not a log routersim import reads: expected JSON lines \
                     (LiteLLM's standard logging payload or spend logs) or a CSV header with \
                     {} (the plain CSV) or request_id,startTime (a spend-log export); found {:?}",
                    super::gateway::REQUIRED.join(","),
                    head.lines()
                        .next()
                        .unwrap_or("")
                        .chars()
                        .take(120)
                        .collect::<String>()
                ),
            });
        };
        let format = check_wanted(self.path, format, self.options.format)?;
        self.summary.format = Some(format);
        match format {
            Format::Csv => self.gateway_rows(&mut csv, &header, first_line),
            _ => self.spend_rows(&mut csv, &header, first_line),
        }
    }

    fn gateway_rows(
        &mut self,
        csv: &mut csv::Reader<impl Read>,
        header: &csv::StringRecord,
        first_line: u64,
    ) -> Result<(), ImportError> {
        let (columns, ignored) = GatewayColumns::new(header).map_err(|missing| {
            ImportError::line(
                self.path,
                first_line,
                format!("the header has no {missing} column"),
            )
        })?;
        self.summary.ignored_columns = ignored;
        let mut record = csv::StringRecord::new();
        loop {
            match csv.read_record(&mut record) {
                Ok(false) => return Ok(()),
                Ok(true) => {}
                Err(e) => return Err(self.csv_error(first_line, &e)),
            }
            let line = record.position().map_or(0, |p| p.line()) + first_line - 1;
            let call = columns
                .call(&record, line, self.names)
                .map_err(|m| ImportError::line(self.path, line, m))?;
            self.row(call)?;
        }
    }

    fn spend_rows(
        &mut self,
        csv: &mut csv::Reader<impl Read>,
        header: &csv::StringRecord,
        first_line: u64,
    ) -> Result<(), ImportError> {
        let (columns, ignored) = SpendColumns::new(header);
        if let Some(missing) = SpendColumns::REQUIRED
            .iter()
            .find(|c| !header.iter().any(|h| h.trim() == **c))
        {
            return Err(ImportError::line(
                self.path,
                first_line,
                format!("the header has no {missing} column"),
            ));
        }
        self.summary.ignored_columns = ignored;
        let mut record = csv::StringRecord::new();
        loop {
            match csv.read_record(&mut record) {
                Ok(false) => return Ok(()),
                Ok(true) => {}
                Err(e) => return Err(self.csv_error(first_line, &e)),
            }
            let line = record.position().map_or(0, |p| p.line()) + first_line - 1;
            let call = SpendRow::from_csv(&columns, &record)
                .into_call(line, self.names)
                .map_err(|p| self.problem(line, p))?;
            self.row(call)?;
        }
    }

    fn csv_error(&self, first_line: u64, e: &csv::Error) -> ImportError {
        let line = e.position().map_or(0, |p| p.line()) + first_line - 1;
        let message = match e.kind() {
            csv::ErrorKind::UnequalLengths {
                expected_len, len, ..
            } => format!(
                "{len} fields where the header has {expected_len} (a cut-short line, or mixed formats?)"
            ),
            _ => e.to_string(),
        };
        ImportError::line(self.path, line, message)
    }
}

/// The latest instant a row may name: Unix seconds 10^10 (the year 2286).
const LATEST: f64 = 1e10;
/// The longest call a row may record: a day.
const LONGEST_CALL: f64 = 86_400.0;
/// A Retry-After longer than this (a day) is not read.
const LONGEST_RETRY_AFTER: f64 = 86_400.0;

/// A row's times are instants of this era, its end not before its start (a millisecond of
/// clock jitter is forgiven), its call at most a day long.
fn check_times(call: &mut Call) -> Result<(), String> {
    for (name, t) in [("the start", call.start), ("the end", call.end)] {
        if !(0.0..=LATEST).contains(&t) {
            return Err(format!(
                "{name} ({t:e}) is not an instant between 1970 and 2286"
            ));
        }
    }
    if call.end < call.start - 0.001 {
        return Err(format!(
            "the call ends ({}) before it starts ({})",
            call.end, call.start
        ));
    }
    call.end = call.end.max(call.start);
    if call.end - call.start > LONGEST_CALL {
        return Err(format!(
            "a call of {:.0} s: longer than a day",
            call.end - call.start
        ));
    }
    call.first_token = call
        .first_token
        .filter(|f| (call.start..=call.end).contains(f));
    call.retry_after = call
        .retry_after
        .filter(|r| (0.0..=LONGEST_RETRY_AFTER).contains(r));
    Ok(())
}

/// The bytes without surrounding ASCII whitespace (and a leading BOM).
fn trim_bytes(bytes: &[u8]) -> &[u8] {
    let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &bytes[start..end]
}

fn json_error(path: &Path, line: u64, e: &serde_json::Error) -> ImportError {
    let what = if e.is_eof() {
        "the JSON ends too soon (a cut-short line?)".to_string()
    } else {
        let text = e.to_string();
        // serde_json appends "at line L column C" of the text it was given: one log line.
        match text.rsplit_once(" at line ") {
            Some((message, _)) => message.to_string(),
            None => text,
        }
    };
    ImportError::line(path, line, what)
}

/// A JSON array's elements, each read as the format its first element shows.
struct ArrayVisitor<'s, 'a> {
    state: &'s mut State<'a>,
    failure: &'s mut Option<ImportError>,
}

impl<'de> Visitor<'de> for ArrayVisitor<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of log rows")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut format = None;
        let mut index = 0_u64;
        while let Some(value) = seq.next_element::<serde_json::Value>()? {
            index += 1;
            let text = value.to_string();
            let found = match format {
                Some(f) => f,
                None => {
                    let f = json_format(self.state.path, &text, index, self.state.options.format)
                        .map_err(|e| {
                        *self.failure = Some(e);
                        de::Error::custom("")
                    })?;
                    self.state.summary.format = Some(f);
                    format = Some(f);
                    f
                }
            };
            if let Err(e) = self.state.json_row(found, text.as_bytes(), index) {
                *self.failure = Some(ImportError::line(
                    self.state.path,
                    index,
                    format!("(array element {index}) {e}"),
                ));
                return Err(de::Error::custom(""));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_whitespace_and_a_bom() {
        assert_eq!(trim_bytes(b"  {\"a\":1}\r\n"), b"{\"a\":1}");
        assert_eq!(trim_bytes("\u{feff}{}".as_bytes()), b"{}");
        assert_eq!(trim_bytes(b" \n"), b"");
    }
}
