//! `traffic_file: requests.csv`: a long replay's requests, read from a CSV as the run goes.
//!
//! An incident replayed from logs can have millions of requests; as YAML entries they would
//! all be parsed and held before the run starts. A CSV file is read twice instead, a row at a
//! time, so memory stays flat in its length: once when the scenario is loaded, to validate
//! every row (an error names the file, line and column before anything runs), and once during
//! the run, where [`RowReader`] hands the arrival stream one row at a time.
//!
//! ```csv
//! at,model,stream,input_tokens,output_tokens,tags
//! 0.5s,gpt-4o,false,1200,,eu
//! 1.25s,gpt-4o,true,800,300,eu;batch
//! ```
//!
//! The header names the columns, in any order: `at` and `model` are required; `stream`
//! (`true`/`false`), `input_tokens`, `output_tokens` (whole numbers) and `tags` (separated by
//! `;`) are optional, and an empty cell means the default (not streamed, 500 input tokens, the
//! provider's answer length, no tags). `at` is a duration with its unit, as in the scenario
//! (`1.5s`, `250ms`), no later than the scenario's `duration`, and rows are in time order
//! (equal times keep file order): a log is already sorted, and sorting would need every row in
//! memory. Lines starting with `#` are comments; a line longer than [`MAX_LINE_BYTES`] is an
//! error (so a file with no line ends, such as `/dev/zero`, stops at once).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use routersim_mock_providers::duration::{format_duration, parse_duration};

use crate::scenario::ScenarioError;
use crate::traffic::DEFAULT_INPUT_TOKENS;

/// Every column a traffic file may have, in the documented order.
pub const COLUMNS: [&str; 6] = [
    "at",
    "model",
    "stream",
    "input_tokens",
    "output_tokens",
    "tags",
];

/// The longest line of a traffic file: 64 KiB.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// A validated `traffic_file`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrafficFile {
    /// The file (resolved against the scenario's directory).
    pub path: PathBuf,
    /// Its rows (requests), counted when it was validated.
    pub rows: u64,
}

/// One row: a request arriving at `at`.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Arrival time from the start of the run.
    pub at: Duration,
    /// The model group (or alias); rows naming the same one share it.
    pub model: Arc<str>,
    /// `stream`.
    pub stream: bool,
    /// `input_tokens` (default 500).
    pub input_tokens: u32,
    /// `output_tokens`, when set.
    pub output_tokens: Option<u32>,
    /// `tags`.
    pub tags: Vec<String>,
}

/// Reads every row of `path` once and checks it: the columns, each cell, the time order,
/// `at` within `duration`, and each model with `model_known` (its error message lists
/// `models`). Returns the row count.
pub fn validate(
    path: &Path,
    duration: Duration,
    model_known: impl Fn(&str) -> bool,
    models: impl Fn() -> String,
) -> Result<TrafficFile, ScenarioError> {
    let mut reader = RowReader::open(path)?;
    let mut rows = 0u64;
    while let Some(row) = reader.next_row() {
        let row = row?;
        if row.at > duration {
            return Err(reader.error(
                "at",
                format!(
                    "at {} is after the scenario's duration ({})",
                    format_duration(row.at),
                    format_duration(duration)
                ),
            ));
        }
        // Each distinct name is checked once (the reader interns them).
        if reader.last_model_is_new() && !model_known(&row.model) {
            return Err(reader.error(
                "model",
                format!(
                    "no model group or alias {:?}; the router has: {}",
                    &*row.model,
                    models()
                ),
            ));
        }
        rows += 1;
    }
    Ok(TrafficFile {
        path: path.to_path_buf(),
        rows,
    })
}

/// Column positions in the header.
#[derive(Clone, Copy, Debug, Default)]
struct Columns {
    at: usize,
    model: usize,
    stream: Option<usize>,
    input_tokens: Option<usize>,
    output_tokens: Option<usize>,
    tags: Option<usize>,
}

/// A traffic file's rows, one at a time, in order.
pub struct RowReader {
    path: PathBuf,
    reader: csv::Reader<LineLimit<BufReader<File>>>,
    columns: Columns,
    record: csv::StringRecord,
    /// The line of the last row read.
    line: u64,
    previous_at: Duration,
    /// Model names seen so far, each once.
    models: BTreeMap<Box<str>, Arc<str>>,
    /// Whether the last row's model was seen for the first time.
    new_model: bool,
}

impl RowReader {
    /// Opens `path` and reads its header.
    pub fn open(path: &Path) -> Result<Self, ScenarioError> {
        let file = File::open(path).map_err(|e| error_at(path, None, "", cannot_read(&e)))?;
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .comment(Some(b'#'))
            .trim(csv::Trim::All)
            .from_reader(LineLimit::new(BufReader::new(file)));
        let header = reader.headers().map_err(|e| csv_error(path, &e))?.clone();
        let columns = header_columns(path, &header)?;
        Ok(Self {
            path: path.to_path_buf(),
            reader,
            columns,
            record: csv::StringRecord::new(),
            line: 1,
            previous_at: Duration::ZERO,
            models: BTreeMap::new(),
            new_model: false,
        })
    }

    /// The next row, `None` at the end.
    pub fn next_row(&mut self) -> Option<Result<Row, ScenarioError>> {
        match self.reader.read_record(&mut self.record) {
            Ok(false) => None,
            Ok(true) => {
                self.line = self.record.position().map_or(self.line + 1, |p| p.line());
                Some(self.parse_row())
            }
            Err(e) => Some(Err(csv_error(&self.path, &e))),
        }
    }

    /// An error at the last row read, in `column`.
    pub fn error(&self, column: &str, message: impl Into<String>) -> ScenarioError {
        error_at(&self.path, Some(self.line), column, message.into())
    }

    fn last_model_is_new(&self) -> bool {
        self.new_model
    }

    fn cell(&self, index: Option<usize>) -> &str {
        index.and_then(|i| self.record.get(i)).unwrap_or("")
    }

    fn parse_row(&mut self) -> Result<Row, ScenarioError> {
        let c = self.columns;
        let at_text = self.cell(Some(c.at));
        let at = parse_duration(at_text).map_err(|e| {
            let hint = if !at_text.is_empty() && at_text.chars().all(|ch| ch.is_ascii_digit()) {
                format!("; write the unit too ({at_text}s or {at_text}ms)")
            } else {
                String::new()
            };
            self.error("at", format!("{e}{hint}"))
        })?;
        if at < self.previous_at {
            return Err(self.error(
                "at",
                format!(
                    "at {} is before the previous row's {}: rows must be in time order \
                     (sort the file by `at`; equal times keep file order)",
                    format_duration(at),
                    format_duration(self.previous_at)
                ),
            ));
        }
        let stream = match self.cell(c.stream) {
            "" | "false" => false,
            "true" => true,
            other => {
                return Err(self.error(
                    "stream",
                    format!("expected true or false (or nothing), found {other:?}"),
                ));
            }
        };
        let input_tokens = self
            .tokens(c.input_tokens, "input_tokens")?
            .unwrap_or(DEFAULT_INPUT_TOKENS);
        let output_tokens = self.tokens(c.output_tokens, "output_tokens")?;
        let tags = self
            .cell(c.tags)
            .split(';')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect();
        let name = self.record.get(c.model).unwrap_or("");
        if name.is_empty() {
            return Err(self.error("model", "expected a model group or alias, found nothing"));
        }
        self.new_model = !self.models.contains_key(name);
        let model = match self.models.get(name) {
            Some(model) => model.clone(),
            None => {
                let model: Arc<str> = Arc::from(name);
                self.models.insert(Box::from(name), model.clone());
                model
            }
        };
        self.previous_at = at;
        Ok(Row {
            at,
            model,
            stream,
            input_tokens,
            output_tokens,
            tags,
        })
    }

    fn tokens(&self, index: Option<usize>, column: &str) -> Result<Option<u32>, ScenarioError> {
        match self.cell(index) {
            "" => Ok(None),
            text => text.parse::<u32>().map(Some).map_err(|_| {
                self.error(
                    column,
                    format!(
                        "expected a whole number from 0 to {}, found {text:?}",
                        u32::MAX
                    ),
                )
            }),
        }
    }
}

fn header_columns(path: &Path, header: &csv::StringRecord) -> Result<Columns, ScenarioError> {
    let at_header = |message: String| error_at(path, Some(1), "", message);
    let expected = format!(
        "the columns are {} (at and model are required)",
        COLUMNS.join(", ")
    );
    if header.iter().all(str::is_empty) {
        return Err(at_header(format!(
            "expected a header line naming the columns; {expected}"
        )));
    }
    let mut found: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, name) in header.iter().enumerate() {
        if !COLUMNS.contains(&name) {
            return Err(at_header(format!("unknown column {name:?}; {expected}")));
        }
        if found.insert(name, i).is_some() {
            return Err(at_header(format!("column {name:?} appears twice")));
        }
    }
    let required = |name: &str| {
        found
            .get(name)
            .copied()
            .ok_or_else(|| at_header(format!("missing the column {name:?}; {expected}")))
    };
    Ok(Columns {
        at: required("at")?,
        model: required("model")?,
        stream: found.get("stream").copied(),
        input_tokens: found.get("input_tokens").copied(),
        output_tokens: found.get("output_tokens").copied(),
        tags: found.get("tags").copied(),
    })
}

fn error_at(path: &Path, line: Option<u64>, column: &str, message: String) -> ScenarioError {
    ScenarioError {
        file: path.to_path_buf(),
        line,
        column: None,
        path: column.to_string(),
        message,
    }
}

fn cannot_read(e: &io::Error) -> String {
    format!("cannot read the file: {e}")
}

fn csv_error(path: &Path, e: &csv::Error) -> ScenarioError {
    let line = e.position().map(csv::Position::line);
    match e.kind() {
        csv::ErrorKind::Io(io) => {
            // An over-long line stops the reader before csv knows the line: the adapter
            // counted it.
            match io
                .get_ref()
                .and_then(|inner| inner.downcast_ref::<LongLine>())
            {
                Some(long) => error_at(path, Some(long.line), "", long.to_string()),
                None => error_at(path, line, "", cannot_read(io)),
            }
        }
        csv::ErrorKind::Utf8 { .. } => error_at(path, line, "", "not UTF-8 text".to_string()),
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => error_at(
            path,
            line,
            "",
            format!("expected {expected_len} cells (as the header has), found {len}"),
        ),
        _ => error_at(path, line, "", e.to_string()),
    }
}

/// The error of a line longer than [`MAX_LINE_BYTES`].
#[derive(Debug, thiserror::Error)]
#[error("a line longer than 64 KiB: is this a CSV file of requests?")]
struct LongLine {
    line: u64,
}

/// A reader that fails on a line longer than [`MAX_LINE_BYTES`], so a file without line ends
/// cannot grow one CSV record without end.
struct LineLimit<R> {
    inner: R,
    since_newline: usize,
    lines: u64,
}

impl<R> LineLimit<R> {
    fn new(inner: R) -> Self {
        Self {
            inner,
            since_newline: 0,
            lines: 1,
        }
    }
}

impl<R: Read> Read for LineLimit<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        for &byte in &buf[..n] {
            if byte == b'\n' {
                self.since_newline = 0;
                self.lines += 1;
            } else {
                self.since_newline += 1;
                if self.since_newline > MAX_LINE_BYTES {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        LongLine { line: self.lines },
                    ));
                }
            }
        }
        Ok(n)
    }
}
