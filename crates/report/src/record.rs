//! The event sink that writes the run's reports as it goes.
//!
//! Why streaming: a run may have millions of requests, so nothing is kept per request. Trace rows
//! go straight to buffered CSV writers (`requests.csv`, `attempts.csv`, `events.csv`); what the
//! summary needs is folded into counters, three HdrHistograms (latency, TTFT, inter-token gap),
//! per-deployment cooldown state and one small row per virtual second with activity (see
//! `timeseries`: memory follows the activity, never the virtual duration).
//! [`Recorder::finish`] flushes the traces and writes `timeseries.csv`, `latency.hgrm`,
//! `ttft.hgrm`, `inter_token.hgrm` and `summary.json`, then the plots (`deployments.svg`,
//! `timeline.svg`, `latency.svg`, `attempts.svg`; see [`crate::plot`]) unless
//! [`Recorder::without_plots`] turned them off. For the plots the recorder also keeps each
//! deployment's cooling and half-open intervals (capped, see
//! [`crate::plot::MAX_INTERVALS_PER_DEPLOYMENT`]), a fixed array of attempt counts and one
//! counter per fallback pair; [`Recorder::with_plot_context`] names every deployment (so a
//! lane shows even for one that never cooled) and the fault windows.
//!
//! Streams: `requests.csv` ends with `stream,stream_outcome,ttft_ms,tokens_delivered,
//! tokens_billed`; a non-streamed request prints `false` and leaves the other four empty, a
//! streamed one prints `true`, its outcome (empty if no stream ever opened), its TTFT (empty
//! without a first token) and both token counts. `StreamBreak` and `StreamContinued` get
//! `events.csv` rows; `StreamChunk` does not (there may be thousands per request): it only
//! feeds `inter_token.hgrm`. A chunk of `n` tokens contributes `n` gaps: `gap_before` (absent
//! for a stream's first chunk) and `n − 1` times `inner_gap`; a chunk of 0 tokens contributes
//! none. `ttft.hgrm` has one sample per streamed request that received a token. Both
//! histogram files are always written, empty in a run without streams, so the set of files
//! does not depend on the scenario.
//!
//! [`EventSink::emit`] takes `&self` and cannot fail, so the state sits behind a `Mutex`
//! (uncontended, so cheap; it also makes the recorder `Send + Sync`, usable as `&Recorder`, `Arc<Recorder>`,
//! or `&*rc` for an `Rc<Recorder>`: the orphan rule forbids an `EventSink` impl for `Rc` here), and the first IO error is kept and returned by `finish`. After an error
//! the failing file stops being written; aggregation goes on.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hdrhistogram::Histogram;
use routersim_engine::event::{EventKind, EventSink, RoutingEvent};
use routersim_engine::stream::{StreamOutcome, StreamStats};
use routersim_engine::sync::{lock_unpoisoned, unpoisoned};
use tokio::time::Instant;

use crate::error::ReportError;
use crate::hgrm::write_hgrm;
use crate::plot::collect::RenderInput;
use crate::plot::{Distribution, PlotContext, PlotRecorder};
use crate::streams::{BREAKS, OUTCOMES, break_index, outcome_index};
use crate::summary::{
    AttemptStats, CooldownStats, DeploymentCooldownStats, DeploymentHalfOpenStats, HalfOpenStats,
    InterTokenStats, LatencyStats, StreamSummary, Summary, TtftStats,
};
use crate::timeseries::{Count, DeploymentCooldowns, Lane, Timeseries};
use crate::units::{Ms, micros, micros_since, ms_f64, round6, second_of};

/// One row per finished request.
pub const REQUESTS_CSV: &str = "requests.csv";
/// One row per provider attempt.
pub const ATTEMPTS_CSV: &str = "attempts.csv";
/// Every routing decision (all events but attempts, request ends and stream chunks).
pub const EVENTS_CSV: &str = "events.csv";
/// One row per virtual second.
pub const TIMESERIES_CSV: &str = "timeseries.csv";
/// End-to-end latency distribution.
pub const LATENCY_HGRM: &str = "latency.hgrm";
/// Time-to-first-token distribution of streamed requests.
pub const TTFT_HGRM: &str = "ttft.hgrm";
/// Distribution of the gaps between consecutive streamed tokens.
pub const INTER_TOKEN_HGRM: &str = "inter_token.hgrm";
/// The run in numbers.
pub const SUMMARY_JSON: &str = "summary.json";

/// A trace file's column: its header name beside the code that writes its one field, so the
/// header and the rows are the same list (a new column is one line here;
/// `every_column_writes_one_field` checks each writer).
struct Column<F> {
    name: &'static str,
    field: F,
}

const fn col<F>(name: &'static str, field: F) -> Column<F> {
    Column { name, field }
}

/// The header row of a column table.
fn header<F>(columns: &[Column<F>]) -> Vec<&'static str> {
    columns.iter().map(|c| c.name).collect()
}

/// One `requests.csv` row, read off a `RequestEnd` event (times in µs since the run start).
struct RequestRow<'a> {
    request_id: Option<u64>,
    arrival_us: u64,
    model: &'a str,
    final_model_group: &'a str,
    final_deployment_id: &'a str,
    outcome: &'a str,
    status: Option<u16>,
    attempts: u32,
    retries: u32,
    fallbacks: u32,
    attempted_fallbacks: u32,
    latency_us: u64,
    stream: Option<StreamStats>,
    ttft_us: Option<u64>,
}

type RequestField = fn(&mut CsvOut, &RequestRow<'_>) -> io::Result<()>;

/// `requests.csv`, in column order. New columns go at the end: scripts index these by
/// position.
const REQUESTS_COLUMNS: &[Column<RequestField>] = &[
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
];

/// One `attempts.csv` row, read off an `AttemptEnd` event (times in µs since the run start).
struct AttemptRow<'a> {
    request_id: Option<u64>,
    attempt: u32,
    start_us: u64,
    end_us: u64,
    model_group: &'a str,
    deployment_id: &'a str,
    outcome: &'a str,
    status: Option<u16>,
    retry_after: Option<Duration>,
    wait: Duration,
    fallback_depth: u32,
}

type AttemptField = fn(&mut CsvOut, &AttemptRow<'_>) -> io::Result<()>;

/// `attempts.csv`, in column order (new columns at the end).
const ATTEMPTS_COLUMNS: &[Column<AttemptField>] = &[
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

const EVENTS_HEADER: &[&str] = &["at_ms", "event", "model_group", "deployment_id", "detail"];

/// Every histogram is recorded in microseconds; the report prints milliseconds.
const MICROS_PER_MS: f64 = 1000.0;
/// Significant digits of every histogram.
const HISTOGRAM_SIGFIG: u8 = 3;
/// Buffer of each trace writer.
const CSV_BUFFER: usize = 64 * 1024;

/// How much the recorder writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecorderOptions {
    /// Write `requests.csv` and `attempts.csv` (`--trace none` turns this off for huge runs).
    pub trace: bool,
}

impl Default for RecorderOptions {
    fn default() -> Self {
        Self { trace: true }
    }
}

/// What the summary needs to know about the run besides its events.
#[derive(Clone, Debug)]
pub struct RunMeta {
    /// Scenario name.
    pub scenario: String,
    /// Scenario seed.
    pub seed: u64,
    /// routersim's version.
    pub version: String,
    /// When the run ended (cooldowns still open are clipped here).
    pub end: Instant,
}

/// Streams a run's routing events into its report files. See the module docs.
#[derive(Debug)]
pub struct Recorder {
    state: Mutex<State>,
}

impl Recorder {
    /// Creates `dir` (and parents) and the trace files with their header rows. Times in every
    /// file are virtual milliseconds since `start`.
    pub fn new(
        dir: impl AsRef<Path>,
        start: Instant,
        options: RecorderOptions,
    ) -> Result<Self, ReportError> {
        let dir = dir.as_ref().to_path_buf();
        fs::create_dir_all(&dir).map_err(|e| ReportError::io(&dir, e))?;
        let (requests, attempts) = if options.trace {
            (
                Some(CsvOut::create(
                    dir.join(REQUESTS_CSV),
                    &header(REQUESTS_COLUMNS),
                )?),
                Some(CsvOut::create(
                    dir.join(ATTEMPTS_CSV),
                    &header(ATTEMPTS_COLUMNS),
                )?),
            )
        } else {
            (None, None)
        };
        let events = Some(CsvOut::create(dir.join(EVENTS_CSV), EVENTS_HEADER)?);
        let latency = new_histogram()?;
        let ttft = new_histogram()?;
        let inter_token = new_histogram()?;
        Ok(Self {
            state: Mutex::new(State {
                dir,
                start,
                requests,
                attempts,
                events,
                error: None,
                detail: String::new(),
                agg: Aggregates::default(),
                series: Timeseries::default(),
                cooldowns: BTreeMap::new(),
                half_open: BTreeMap::new(),
                latency,
                ttft,
                inter_token,
                plots: PlotRecorder::default(),
                transport: None,
            }),
        })
    }

    /// Names every deployment (in `model_list` order, with its model group) and the fault
    /// windows, for the plots. Without it the lanes are the deployments seen cooling.
    pub fn with_plot_context(mut self, context: PlotContext) -> Self {
        self.state_mut().plots.set_context(context);
        self
    }

    /// Names the transport in `summary.json` (`transport`; see [`Summary::transport`]).
    pub fn with_transport(mut self, transport: impl Into<String>) -> Self {
        self.state_mut().transport = Some(transport.into());
        self
    }

    /// Skips the SVG plots in [`finish`](Self::finish) (the other files are unchanged).
    pub fn without_plots(mut self) -> Self {
        self.state_mut().plots.enabled = false;
        self
    }

    fn state_mut(&mut self) -> &mut State {
        unpoisoned(self.state.get_mut())
    }

    /// Flushes the traces, writes `timeseries.csv`, `latency.hgrm`, `ttft.hgrm`,
    /// `inter_token.hgrm`, `summary.json` and the four SVG plots (unless
    /// [`without_plots`](Self::without_plots)), and returns the summary. The first error of
    /// the whole run, if any, is returned instead.
    pub fn finish(self, meta: RunMeta) -> Result<Summary, ReportError> {
        unpoisoned(self.state.into_inner()).finish(meta)
    }
}

impl EventSink for Recorder {
    fn emit(&self, event: &RoutingEvent) {
        // A poisoned lock can only follow a panic elsewhere; keep recording what we can.
        lock_unpoisoned(&self.state).record(event);
    }
}

/// A trace file being written: rows are built in a scratch buffer and written through a
/// `BufWriter`. Fields are quoted exactly as the `csv` crate's default writer quotes them
/// (only when they contain `,`, `"`, `\r` or `\n`), without its per-byte state machine: this
/// is the hot path of every traced run.
#[derive(Debug)]
struct CsvOut {
    path: PathBuf,
    out: BufWriter<File>,
    row: Vec<u8>,
    fields: usize,
}

impl CsvOut {
    fn create(path: PathBuf, header: &[&str]) -> Result<Self, ReportError> {
        let file = File::create(&path).map_err(|e| ReportError::io(&path, e))?;
        let mut csv = Self {
            path,
            out: BufWriter::with_capacity(CSV_BUFFER, file),
            row: Vec::with_capacity(256),
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
            self.row.push(b',');
        }
        self.fields += 1;
    }

    fn str(&mut self, value: &str) -> io::Result<()> {
        self.separate();
        if value
            .bytes()
            .any(|b| matches!(b, b',' | b'"' | b'\r' | b'\n'))
        {
            self.row.push(b'"');
            for b in value.bytes() {
                if b == b'"' {
                    self.row.push(b'"');
                }
                self.row.push(b);
            }
            self.row.push(b'"');
        } else {
            self.row.extend_from_slice(value.as_bytes());
        }
        Ok(())
    }

    fn fmt(&mut self, value: impl Field) -> io::Result<()> {
        self.separate();
        let mut buf = [0u8; 32];
        let text = value.write_into(&mut buf);
        self.row.extend_from_slice(text);
        Ok(())
    }

    fn opt(&mut self, value: Option<impl Field>) -> io::Result<()> {
        match value {
            Some(value) => self.fmt(value),
            None => self.str(""),
        }
    }

    /// A `requests.csv` row: every column of [`REQUESTS_COLUMNS`], then the line end.
    fn request(&mut self, row: &RequestRow<'_>) -> io::Result<()> {
        for column in REQUESTS_COLUMNS {
            (column.field)(self, row)?;
        }
        self.end()
    }

    /// An `attempts.csv` row: every column of [`ATTEMPTS_COLUMNS`], then the line end.
    fn attempt(&mut self, row: &AttemptRow<'_>) -> io::Result<()> {
        for column in ATTEMPTS_COLUMNS {
            (column.field)(self, row)?;
        }
        self.end()
    }

    fn end(&mut self) -> io::Result<()> {
        if self.fields == 1 && self.row.is_empty() {
            // A record of one empty field is written `""` (as the csv crate does).
            self.row.extend_from_slice(b"\"\"");
        }
        self.row.push(b'\n');
        let written = self.out.write_all(&self.row);
        self.row.clear();
        self.fields = 0;
        written
    }
}

/// A number the trace files print; formatted by hand because this is the hot path of every run
/// (`core::fmt` was a quarter of the harness's time).
trait Field {
    /// Writes the value's text into the end of `buf` and returns it.
    fn write_into(self, buf: &mut [u8; 32]) -> &[u8];
}

/// Writes `n`'s decimal digits so that they end at `end`; returns where they start.
fn digits(buf: &mut [u8; 32], end: usize, mut n: u64) -> usize {
    let mut at = end;
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return at;
        }
    }
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
        let frac = self.0 % 1000;
        buf[31] = b'0' + (frac % 10) as u8;
        buf[30] = b'0' + ((frac / 10) % 10) as u8;
        buf[29] = b'0' + (frac / 100) as u8;
        buf[28] = b'.';
        let start = digits(buf, 28, self.0 / 1000);
        &buf[start..]
    }
}

/// An empty histogram of microseconds that grows as needed.
fn new_histogram() -> Result<Histogram<u64>, ReportError> {
    Histogram::new(HISTOGRAM_SIGFIG).map_err(|e| ReportError::Histogram(e.to_string()))
}

/// Records `count` samples of `us`. `record_n` grows the (auto-resizing) histogram;
/// `saturating_record_n` would clamp instead, so it is only the fallback.
fn record_us(hist: &mut Histogram<u64>, us: u64, count: u64) {
    if hist.record_n(us, count).is_err() {
        hist.saturating_record_n(us, count);
    }
}

/// A percentile in ms. Percentiles are bucket-highest values; cap them at the exact maximum.
fn percentile_ms(hist: &Histogram<u64>, q: f64, max_us: u64) -> f64 {
    if hist.is_empty() {
        0.0
    } else {
        ms_f64(hist.value_at_quantile(q).min(max_us))
    }
}

/// Adds one to `name`'s count.
fn count_event(events: &mut Vec<(&'static str, u64)>, name: &'static str) {
    if let Some(entry) = events
        .iter_mut()
        .find(|(n, _)| std::ptr::eq(n.as_ptr(), name.as_ptr()) || *n == name)
    {
        entry.1 += 1;
    } else {
        events.push((name, 1));
    }
}

/// Runs `write` against a trace file; on failure keeps the first error and stops that file.
fn write_row(
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

/// Counters for the summary.
#[derive(Debug, Default)]
struct Aggregates {
    requests: u64,
    ok: u64,
    failed_by_kind: BTreeMap<&'static str, u64>,
    with_fallback: u64,
    with_retry: u64,
    attempts: u64,
    attempts_max: u64,
    retries: u64,
    fallbacks: u64,
    /// Summed `attempted_fallbacks`, and whether any request's differed from its hops.
    attempted_fallbacks: u64,
    attempted_differs: bool,
    all_cooled: u64,
    cooldowns: u64,
    recovered: u64,
    probe_failed: u64,
    latency_sum_us: u128,
    latency_max_us: u64,
    last_event_us: u64,
    /// Events counted by name, in first-seen order (a short list: a linear scan by pointer is
    /// far cheaper than a map lookup by string on every event).
    events: Vec<(&'static str, u64)>,
    /// Streamed requests.
    streamed: u64,
    /// Streamed requests by outcome, indexed by `streams::outcome_index`.
    stream_outcomes: [u64; OUTCOMES.len()],
    tokens_delivered: u64,
    tokens_billed: u64,
    ttft_max_us: u64,
    inter_token_max_us: u64,
    /// `StreamBreak` events by how, indexed by `streams::break_index`.
    stream_breaks: [u64; BREAKS.len()],
}

#[derive(Debug)]
struct State {
    dir: PathBuf,
    start: Instant,
    requests: Option<CsvOut>,
    attempts: Option<CsvOut>,
    events: Option<CsvOut>,
    /// The first error; `finish` returns it.
    error: Option<ReportError>,
    /// Scratch for the `detail` column.
    detail: String,
    agg: Aggregates,
    series: Timeseries,
    cooldowns: BTreeMap<Arc<str>, DeploymentCooldowns>,
    /// Half-open periods per deployment: from `HalfOpen` to `Recovered` or the next
    /// `CooldownSet` (the trial failed).
    half_open: BTreeMap<Arc<str>, DeploymentCooldowns>,
    /// End-to-end latency, µs.
    latency: Histogram<u64>,
    /// Time to first token of streamed requests, µs.
    ttft: Histogram<u64>,
    /// Gaps between consecutive streamed tokens, µs.
    inter_token: Histogram<u64>,
    /// What the plots need beyond the above.
    plots: PlotRecorder,
    /// `summary.json`'s `transport`, when not the default.
    transport: Option<String>,
}

impl State {
    fn us(&self, at: Instant) -> u64 {
        micros_since(self.start, at)
    }

    fn record(&mut self, event: &RoutingEvent) {
        let at = self.us(event.at);
        let name = event.kind.name();
        self.agg.last_event_us = self.agg.last_event_us.max(at);
        count_event(&mut self.agg.events, name);
        let second = second_of(at);
        self.series.touch(second);

        match &event.kind {
            EventKind::AttemptStart { .. } => {}
            EventKind::AttemptEnd { .. } => self.attempt_row(event, at),
            EventKind::RequestEnd { .. } => self.request_end(event, at),
            EventKind::Retry { .. } => {
                self.agg.retries += 1;
                self.series.count(second, Count::Retry);
            }
            EventKind::Fallback { source, target, .. } => {
                self.agg.fallbacks += 1;
                self.series.count(second, Count::Fallback);
                self.plots.fallback(source, target);
            }
            EventKind::CooldownSet {
                model_group,
                deployment_id,
                until,
                ..
            } => {
                self.agg.cooldowns += 1;
                if let Some(h) = self.half_open.get_mut(deployment_id) {
                    h.end(at, &mut self.series);
                }
                let until = self.us(*until);
                self.plots
                    .cooldown_set(model_group, deployment_id, at, until);
                self.cooldowns
                    .entry(deployment_id.clone())
                    .or_default()
                    .set(at, until, &mut self.series);
            }
            EventKind::CooldownEnd { deployment_id, .. } => {
                if let Some(d) = self.cooldowns.get_mut(deployment_id) {
                    d.end(at, &mut self.series);
                }
                self.plots.cooldown_end(deployment_id, at);
            }
            EventKind::AllCooled { .. } => self.agg.all_cooled += 1,
            EventKind::HalfOpen {
                model_group,
                deployment_id,
            } => {
                self.plots.half_open(model_group, deployment_id, at);
                self.half_open
                    .entry(deployment_id.clone())
                    .or_insert_with(|| DeploymentCooldowns::in_lane(Lane::HalfOpen))
                    .open_until_closed(at);
            }
            EventKind::Recovered { deployment_id, .. } => {
                self.agg.recovered += 1;
                self.plots.recovered(deployment_id, at);
                if let Some(h) = self.half_open.get_mut(deployment_id) {
                    h.end(at, &mut self.series);
                }
                if let Some(d) = self.cooldowns.get_mut(deployment_id) {
                    d.end(at, &mut self.series);
                }
            }
            EventKind::ProbeOk { .. } => {}
            EventKind::ProbeFailed { .. } => self.agg.probe_failed += 1,
            EventKind::StreamBreak { how, .. } => self.agg.stream_breaks[break_index(*how)] += 1,
            EventKind::StreamChunk {
                tokens,
                gap_before,
                inner_gap,
            } => self.stream_chunk(*tokens, *gap_before, *inner_gap),
            EventKind::Wait { .. }
            | EventKind::GiveUp { .. }
            | EventKind::OrderFallback { .. }
            | EventKind::WeightedFailover { .. }
            | EventKind::StreamContinued { .. } => {}
        }

        if !matches!(
            event.kind,
            EventKind::AttemptStart { .. }
                | EventKind::AttemptEnd { .. }
                | EventKind::RequestEnd { .. }
                | EventKind::StreamChunk { .. }
        ) {
            self.event_row(event, at);
        }
    }

    /// A chunk of `tokens` tokens: `gap_before` before its first, `inner_gap` between the rest.
    fn stream_chunk(&mut self, tokens: u32, gap_before: Option<Duration>, inner_gap: Duration) {
        if tokens == 0 {
            return;
        }
        if let Some(gap) = gap_before {
            let us = micros(gap);
            record_us(&mut self.inter_token, us, 1);
            self.agg.inter_token_max_us = self.agg.inter_token_max_us.max(us);
        }
        if tokens > 1 {
            let us = micros(inner_gap);
            record_us(&mut self.inter_token, us, u64::from(tokens - 1));
            self.agg.inter_token_max_us = self.agg.inter_token_max_us.max(us);
        }
    }

    fn request_end(&mut self, event: &RoutingEvent, at: u64) {
        let EventKind::RequestEnd {
            model,
            final_model_group,
            final_deployment_id,
            failure,
            status,
            attempts,
            retries,
            fallbacks,
            attempted_fallbacks,
            start,
            stream,
        } = &event.kind
        else {
            return;
        };
        let arrival = self.us(*start);
        let latency = at.saturating_sub(arrival);

        let agg = &mut self.agg;
        agg.requests += 1;
        match failure {
            None => agg.ok += 1,
            Some(kind) => *agg.failed_by_kind.entry(kind.as_str()).or_default() += 1,
        }
        agg.with_fallback += u64::from(*fallbacks > 0);
        agg.attempted_fallbacks += u64::from(*attempted_fallbacks);
        agg.attempted_differs |= attempted_fallbacks != fallbacks;
        agg.with_retry += u64::from(*retries > 0);
        agg.attempts += u64::from(*attempts);
        agg.attempts_max = agg.attempts_max.max(u64::from(*attempts));
        self.plots.request_end(*attempts);
        agg.latency_sum_us += u128::from(latency);
        agg.latency_max_us = agg.latency_max_us.max(latency);
        record_us(&mut self.latency, latency, 1);

        let ttft = stream.and_then(|st| st.ttft).map(micros);
        if let Some(st) = stream {
            agg.streamed += 1;
            if let Some(outcome) = st.outcome {
                agg.stream_outcomes[outcome_index(outcome)] += 1;
            }
            agg.tokens_delivered += u64::from(st.tokens_delivered);
            agg.tokens_billed += u64::from(st.tokens_billed);
            if let Some(us) = ttft {
                agg.ttft_max_us = agg.ttft_max_us.max(us);
                record_us(&mut self.ttft, us, 1);
            }
        }

        self.series.count(second_of(arrival), Count::Arrival);
        let outcome_count = if failure.is_none() {
            Count::Ok
        } else {
            Count::Failed
        };
        self.series.count(second_of(at), outcome_count);

        let row = RequestRow {
            request_id: event.request_id,
            arrival_us: arrival,
            model,
            final_model_group,
            final_deployment_id: final_deployment_id.as_deref().unwrap_or(""),
            outcome: failure.map_or("ok", |k| k.as_str()),
            status: *status,
            attempts: *attempts,
            retries: *retries,
            fallbacks: *fallbacks,
            attempted_fallbacks: *attempted_fallbacks,
            latency_us: latency,
            stream: *stream,
            ttft_us: ttft,
        };
        write_row(&mut self.requests, &mut self.error, |w| w.request(&row));
    }

    fn attempt_row(&mut self, event: &RoutingEvent, at: u64) {
        let EventKind::AttemptEnd {
            attempt,
            start,
            model_group,
            deployment_id,
            failure,
            status,
            retry_after,
            wait,
            fallback_depth,
        } = &event.kind
        else {
            return;
        };
        let row = AttemptRow {
            request_id: event.request_id,
            attempt: *attempt,
            start_us: self.us(*start),
            end_us: at,
            model_group,
            deployment_id,
            outcome: failure.map_or("ok", |k| k.as_str()),
            status: *status,
            retry_after: *retry_after,
            wait: *wait,
            fallback_depth: *fallback_depth,
        };
        write_row(&mut self.attempts, &mut self.error, |w| w.attempt(&row));
    }

    fn event_row(&mut self, event: &RoutingEvent, at: u64) {
        let detail = &mut self.detail;
        detail.clear();
        // Writing into a String cannot fail; the results are ignored.
        let (group, deployment): (&str, &str) = match &event.kind {
            EventKind::Wait { duration, reason } => {
                let _ = write!(
                    detail,
                    "reason={} duration_ms={}",
                    reason.as_str(),
                    Ms(micros(*duration))
                );
                ("", "")
            }
            EventKind::Retry {
                model_group,
                failure,
                retry,
                budget,
            } => {
                let _ = write!(detail, "failure={failure} retry={retry} budget={budget}");
                (model_group, "")
            }
            EventKind::GiveUp {
                model_group,
                failure,
                reason,
            } => {
                let _ = write!(detail, "failure={failure} reason={}", reason.as_str());
                (model_group, "")
            }
            EventKind::OrderFallback {
                model_group,
                from_order,
                to_order,
            } => {
                let _ = write!(
                    detail,
                    "from_order={} to_order={}",
                    OptOrNone(*from_order),
                    OptOrNone(*to_order)
                );
                (model_group, "")
            }
            EventKind::WeightedFailover {
                model_group,
                excluded,
            } => {
                let _ = write!(detail, "excluded={excluded}");
                (model_group, excluded)
            }
            EventKind::Fallback {
                source,
                target,
                order,
                depth,
                level,
                failure,
            } => {
                let _ = write!(
                    detail,
                    "from={source} to={target} depth={depth} order={order} level={} failure={failure}",
                    level.as_str()
                );
                (source, "")
            }
            EventKind::CooldownSet {
                model_group,
                deployment_id,
                reason,
                failure,
                duration,
                until,
                // Not in events.csv: its bytes stay as they were (the sweep reads the source
                // from the event itself).
                source: _,
            } => {
                let _ = write!(
                    detail,
                    "reason={} failure={failure} duration_ms={} until_ms={}",
                    reason.as_str(),
                    Ms(micros(*duration)),
                    Ms(micros_since(self.start, *until))
                );
                (model_group, deployment_id)
            }
            EventKind::CooldownEnd {
                model_group,
                deployment_id,
            } => (model_group, deployment_id),
            EventKind::AllCooled {
                model_group,
                retry_after,
            } => {
                let _ = write!(detail, "retry_after_ms={}", Ms(micros(*retry_after)));
                (model_group, "")
            }
            EventKind::HalfOpen {
                model_group,
                deployment_id,
            }
            | EventKind::ProbeOk {
                model_group,
                deployment_id,
            } => (model_group, deployment_id),
            EventKind::Recovered {
                model_group,
                deployment_id,
                via,
            } => {
                let _ = write!(detail, "via={}", via.as_str());
                (model_group, deployment_id)
            }
            EventKind::ProbeFailed {
                model_group,
                deployment_id,
                failure,
            } => {
                let _ = write!(detail, "failure={failure}");
                (model_group, deployment_id)
            }
            EventKind::StreamBreak {
                model_group,
                deployment_id,
                failure,
                how,
                tokens_so_far,
                after_content,
            } => {
                let _ = write!(
                    detail,
                    "failure={failure} how={} tokens_so_far={tokens_so_far} after_content={after_content}",
                    how.as_str()
                );
                (model_group, deployment_id)
            }
            EventKind::StreamContinued {
                from_group,
                from_deployment,
                to_group,
                to_deployment,
                prefill_tokens,
            } => {
                let _ = write!(
                    detail,
                    "to_group={to_group} to_deployment={to_deployment} prefill_tokens={prefill_tokens}"
                );
                (from_group, from_deployment)
            }
            EventKind::AttemptStart { .. }
            | EventKind::AttemptEnd { .. }
            | EventKind::RequestEnd { .. }
            | EventKind::StreamChunk { .. } => return,
        };
        if let Some(id) = event.request_id {
            let sep = if detail.is_empty() { "" } else { " " };
            let _ = write!(detail, "{sep}request={id}");
        }
        let detail = &self.detail;
        let name = event.kind.name();
        write_row(&mut self.events, &mut self.error, |w| {
            w.fmt(Ms(at))?;
            w.str(name)?;
            w.str(group)?;
            w.str(deployment)?;
            w.str(detail)?;
            w.end()
        });
    }

    fn finish(mut self, meta: RunMeta) -> Result<Summary, ReportError> {
        let traces = [&mut self.requests, &mut self.attempts, &mut self.events];
        for csv in traces.into_iter().flatten() {
            if let Err(e) = csv.out.flush() {
                self.error.get_or_insert(ReportError::io(&csv.path, e));
            }
        }
        if let Some(error) = self.error.take() {
            return Err(error);
        }

        // A run end before the last event would be a caller's slip; never end before it.
        let run_end = self.us(meta.end).max(self.agg.last_event_us);
        for d in self
            .cooldowns
            .values_mut()
            .chain(self.half_open.values_mut())
        {
            d.finish(run_end, &mut self.series);
        }

        let path = self.dir.join(TIMESERIES_CSV);
        // Kept in memory too: the timeline plot draws exactly these rows (its size follows the
        // activity: long runs leave quiet seconds out).
        let mut timeseries_csv = Vec::new();
        self.series
            .write_csv(&mut timeseries_csv)
            .map_err(|e| ReportError::io(&path, e))?;
        write_file(&path, |w| w.write_all(&timeseries_csv))?;
        for (file, hist) in [
            (LATENCY_HGRM, &self.latency),
            (TTFT_HGRM, &self.ttft),
            (INTER_TOKEN_HGRM, &self.inter_token),
        ] {
            let path = self.dir.join(file);
            write_file(&path, |w| write_hgrm(hist, MICROS_PER_MS, w))?;
        }

        let summary = self.summary(meta, run_end);
        let path = self.dir.join(SUMMARY_JSON);
        let file = File::create(&path).map_err(|e| ReportError::io(&path, e))?;
        let mut w = BufWriter::new(file);
        serde_json::to_writer_pretty(&mut w, &summary).map_err(|source| ReportError::Json {
            path: path.clone(),
            source,
        })?;
        w.write_all(b"\n")
            .and_then(|()| w.flush())
            .map_err(|e| ReportError::io(&path, e))?;

        let plots = std::mem::take(&mut self.plots);
        if plots.enabled {
            let input = RenderInput {
                run_end_us: run_end,
                timeseries_csv: &timeseries_csv,
                latency: Distribution::from_histogram(
                    &self.latency,
                    self.agg.latency_max_us,
                    vec![
                        ("p50", summary.latency_ms.p50, 0.5),
                        ("p90", summary.latency_ms.p90, 0.9),
                        ("p99", summary.latency_ms.p99, 0.99),
                        ("p99.9", summary.latency_ms.p99_9, 0.999),
                    ],
                ),
                ttft: Distribution::from_histogram(
                    &self.ttft,
                    self.agg.ttft_max_us,
                    vec![
                        ("p50", summary.streams.ttft_ms.p50, 0.5),
                        ("p90", summary.streams.ttft_ms.p90, 0.9),
                        ("p99", summary.streams.ttft_ms.p99, 0.99),
                    ],
                ),
            };
            plots.render(&self.dir, &input)?;
        }
        Ok(summary)
    }

    fn summary(&self, meta: RunMeta, run_end: u64) -> Summary {
        let agg = &self.agg;
        let requests = agg.requests;
        let rate = |n: u64| {
            if requests == 0 {
                0.0
            } else {
                round6(n as f64 / requests as f64)
            }
        };
        let pct = |q: f64| percentile_ms(&self.latency, q, agg.latency_max_us);
        let mean_ms = if requests == 0 {
            0.0
        } else {
            round6(agg.latency_sum_us as f64 / requests as f64 / 1000.0)
        };
        let by_deployment: BTreeMap<String, DeploymentCooldownStats> = self
            .cooldowns
            .iter()
            .map(|(id, d)| {
                (
                    id.to_string(),
                    DeploymentCooldownStats {
                        count: d.count,
                        total_cooled_ms: ms_f64(d.cooled_us),
                    },
                )
            })
            .collect();
        let cooled_us_total = self
            .cooldowns
            .values()
            .fold(0_u64, |sum, d| sum.saturating_add(d.cooled_us));
        let failed: u64 = agg.failed_by_kind.values().sum();
        Summary {
            scenario: meta.scenario,
            seed: meta.seed,
            routersim_version: meta.version,
            transport: self.transport.clone(),
            requests,
            ok: agg.ok,
            failed,
            failed_by_kind: agg
                .failed_by_kind
                .iter()
                .map(|(k, n)| ((*k).to_string(), *n))
                .collect(),
            fallback_rate: rate(agg.with_fallback),
            retry_rate: rate(agg.with_retry),
            retries: agg.retries,
            fallbacks: agg.fallbacks,
            attempted_fallbacks: agg.attempted_differs.then_some(agg.attempted_fallbacks),
            attempts: agg.attempts,
            attempts_per_request: AttemptStats {
                mean: rate(agg.attempts),
                max: agg.attempts_max,
            },
            latency_ms: LatencyStats {
                p50: pct(0.5),
                p90: pct(0.9),
                p99: pct(0.99),
                p99_9: pct(0.999),
                max: ms_f64(agg.latency_max_us),
                mean: mean_ms,
            },
            cooldowns: CooldownStats {
                total: agg.cooldowns,
                cooled_ms_total: ms_f64(cooled_us_total),
                by_deployment,
            },
            all_cooled: agg.all_cooled,
            half_open: HalfOpenStats {
                total: self.half_open.values().map(|h| h.count).sum(),
                half_open_ms_total: ms_f64(
                    self.half_open
                        .values()
                        .fold(0_u64, |sum, h| sum.saturating_add(h.cooled_us)),
                ),
                recovered: agg.recovered,
                probe_failed: agg.probe_failed,
                by_deployment: self
                    .half_open
                    .iter()
                    .map(|(id, h)| {
                        (
                            id.to_string(),
                            DeploymentHalfOpenStats {
                                count: h.count,
                                total_half_open_ms: ms_f64(h.cooled_us),
                            },
                        )
                    })
                    .collect(),
            },
            streams: self.stream_summary(),
            stream_breaks: BREAKS
                .iter()
                .map(|how| {
                    (
                        how.as_str().to_string(),
                        agg.stream_breaks[break_index(*how)],
                    )
                })
                .collect(),
            duration_ms: ms_f64(agg.last_event_us),
            run_end_ms: ms_f64(run_end),
            events: agg.events.iter().fold(BTreeMap::new(), |mut map, (k, n)| {
                *map.entry((*k).to_string()).or_insert(0) += *n;
                map
            }),
            source: None,
            live: None,
        }
    }
}

impl State {
    fn stream_summary(&self) -> StreamSummary {
        let agg = &self.agg;
        let count = |o: StreamOutcome| agg.stream_outcomes[outcome_index(o)];
        let continued = count(StreamOutcome::Continued);
        let rescuable = continued + count(StreamOutcome::BrokenAfterContent);
        let continuation_rate = if rescuable == 0 {
            0.0
        } else {
            round6(continued as f64 / rescuable as f64)
        };
        StreamSummary {
            requests: agg.streamed,
            outcomes: OUTCOMES
                .iter()
                .map(|o| (o.as_str().to_string(), count(*o)))
                .collect(),
            continuation_rate,
            tokens_delivered: agg.tokens_delivered,
            tokens_billed: agg.tokens_billed,
            ttft_ms: TtftStats {
                p50: percentile_ms(&self.ttft, 0.5, agg.ttft_max_us),
                p90: percentile_ms(&self.ttft, 0.9, agg.ttft_max_us),
                p99: percentile_ms(&self.ttft, 0.99, agg.ttft_max_us),
                max: ms_f64(agg.ttft_max_us),
            },
            inter_token_ms: InterTokenStats {
                p50: percentile_ms(&self.inter_token, 0.5, agg.inter_token_max_us),
                p99: percentile_ms(&self.inter_token, 0.99, agg.inter_token_max_us),
                max: ms_f64(agg.inter_token_max_us),
            },
        }
    }
}

/// Creates `path`, lets `write` fill it through a buffer, and flushes; errors name the file.
fn write_file(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> Result<(), ReportError> {
    let file = File::create(path).map_err(|e| ReportError::io(path, e))?;
    let mut w = BufWriter::new(file);
    write(&mut w)
        .and_then(|()| w.flush())
        .map_err(|e| ReportError::io(path, e))
}

/// An optional number, `none` when absent.
struct OptOrNone(Option<u32>);

impl std::fmt::Display for OptOrNone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(n) => write!(f, "{n}"),
            None => f.write_str("none"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use routersim_engine::stream::StreamOutcome;

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
            w.row.clear();
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
                "7,1.500,gpt-4o,gpt-4o,\"a,b\",ok,200,2,1,0,2000.001,false,,,,,0",
                ",1.500,gpt-4o,gpt-4o,,ok,,2,1,0,2000.001,true,completed,3.000,10,12,0",
                "7,1.500,gpt-4o,gpt-4o,\"a,b\",ok,200,2,1,0,2000.001,true,,,0,0,0",
            ]
        );
        // The csv crate refuses a record whose length differs from the header's.
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        assert_eq!(reader.headers()?.len(), REQUESTS_COLUMNS.len());
        assert_eq!(reader.records().collect::<Result<Vec<_>, _>>()?.len(), 3);
        Ok(())
    }
}
