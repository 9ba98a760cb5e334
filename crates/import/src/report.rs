//! `DIR/imported/`: the log itself as a routersim report folder, from the same `Recorder` as a
//! run's (so `routersim diff DIR/imported REPLAY` compares the incident with its replay, window
//! by window), marked `"source": "imported"` in `summary.json`; beside the usual files,
//! `import.json` (what was read and assumed) and `error_series.csv` (each deployment's calls and
//! failures per bucket).
//!
//! Requests come from the assembler in arrival order but end in another order; the recorder
//! wants events in time order, so a request's events wait in a queue until no later request
//! can have earlier ones (every later request arrives after the one just added).

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::fmt::Write as _;
use std::path::Path;

use routersim_engine::event::{EventSink, RoutingEvent};
use routersim_report::record::{Recorder, RecorderOptions, RunMeta, SUMMARY_JSON};
use routersim_report::summary::Summary;
use routersim_report::{PageTitle, write_report_html};
use routersim_sim::run::{VERSION, plot_context, summary_context};
use routersim_sim::scenario::Scenario;
use tokio::time::Instant;

use crate::error::ImportError;
use crate::events::{Timeline, request_events};
use crate::requests::Request;
use crate::series::Series;

/// The `source` of an imported report.
pub const SOURCE_IMPORTED: &str = "imported";
/// What was read and assumed.
pub const IMPORT_JSON: &str = "import.json";
/// Each deployment's calls and failures per bucket.
pub const ERROR_SERIES_CSV: &str = "error_series.csv";

/// An event waiting its turn: earliest first, then in the order made.
struct Waiting(Instant, u64, RoutingEvent);

impl PartialEq for Waiting {
    fn eq(&self, other: &Self) -> bool {
        (self.0, self.1) == (other.0, other.1)
    }
}
impl Eq for Waiting {}
impl PartialOrd for Waiting {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Waiting {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.0, self.1).cmp(&(other.0, other.1))
    }
}

/// The imported report being written.
pub struct ImportedReport {
    recorder: Recorder,
    time: Timeline,
    queue: BinaryHeap<Reverse<Waiting>>,
    seq: u64,
    /// Requests recorded.
    pub requests: u64,
    last: Instant,
}

impl ImportedReport {
    /// Starts the report in `dir`, with `scenario`'s deployments and fault windows.
    pub fn new(dir: &Path, scenario: &Scenario, t0: f64) -> Result<Self, ImportError> {
        let base = Instant::now();
        let recorder = Recorder::new(dir, base, RecorderOptions::default())
            .and_then(|r| {
                r.with_plot_context(plot_context(scenario))
                    .with_summary_context(summary_context(scenario))
            })
            .map_err(|e| ImportError::Output(e.to_string()))?;
        Ok(Self {
            recorder,
            time: Timeline { base, t0 },
            queue: BinaryHeap::new(),
            seq: 0,
            requests: 0,
            last: base,
        })
    }

    /// Records a request (they come in arrival order).
    pub fn add(&mut self, request: &Request) {
        let id = self.requests;
        self.requests += 1;
        for event in request_events(self.time, id, request) {
            self.seq += 1;
            self.queue.push(Reverse(Waiting(event.at, self.seq, event)));
        }
        self.flush(Some(self.time.at(request.arrival)));
    }

    fn flush(&mut self, until: Option<Instant>) {
        while let Some(Reverse(top)) = self.queue.peek() {
            if until.is_some_and(|u| top.0 > u) {
                break;
            }
            let Some(Reverse(Waiting(at, _, event))) = self.queue.pop() else {
                break;
            };
            self.last = self.last.max(at);
            self.recorder.emit(&event);
        }
    }

    /// Ends the report: the summary (marked imported), `summary.json`, `report.html`.
    pub fn finish(
        mut self,
        dir: &Path,
        scenario: &Scenario,
        end: f64,
    ) -> Result<Summary, ImportError> {
        self.flush(None);
        let end = self.last.max(self.time.at(end));
        let out = |e: routersim_report::ReportError| ImportError::Output(e.to_string());
        let mut summary = self
            .recorder
            .finish(RunMeta {
                scenario: scenario.name.clone(),
                seed: scenario.seed,
                version: VERSION.to_string(),
                end,
            })
            .map_err(out)?;
        summary.source = Some(SOURCE_IMPORTED.to_string());
        let path = dir.join(SUMMARY_JSON);
        let mut text =
            serde_json::to_string_pretty(&summary).map_err(|e| ImportError::output(&path, e))?;
        text.push('\n');
        std::fs::write(&path, text).map_err(|e| ImportError::output(&path, e))?;
        write_report_html(
            dir,
            &summary,
            &[],
            PageTitle {
                title: &scenario.name,
                description: &scenario.description,
            },
        )
        .map_err(out)?;
        Ok(summary)
    }
}

/// Writes `error_series.csv`: per deployment and bucket (`width` seconds, from `t0`), the calls,
/// streams, successes and failures by kind.
pub fn write_error_series(
    dir: &Path,
    series: &Series,
    t0: f64,
    width: f64,
) -> Result<(), ImportError> {
    let path = dir.join(ERROR_SERIES_CSV);
    let mut text =
        String::from("deployment,from_s,to_s,calls,streams,ok,failed,failures_by_kind\n");
    for (deployment, buckets) in &series.deployments {
        let mut rows: std::collections::BTreeMap<
            i64,
            (u64, u64, u64, std::collections::BTreeMap<String, u64>),
        > = Default::default();
        for (index, bucket) in buckets {
            let start = (*index as f64 * series.width).max(t0);
            let row = rows
                .entry(((start - t0) / width).floor() as i64)
                .or_default();
            row.0 += u64::from(bucket.calls);
            row.1 += u64::from(bucket.streams);
            row.2 += u64::from(bucket.ok);
            for (kind, counts) in &bucket.kinds {
                *row.3.entry(kind.name()).or_default() += u64::from(counts.failures);
            }
        }
        for (b, (calls, streams, ok, kinds)) in rows {
            let failed: u64 = kinds.values().sum();
            let by_kind: Vec<String> = kinds.iter().map(|(k, n)| format!("{k}:{n}")).collect();
            let _ = writeln!(
                text,
                "{},{:.3},{:.3},{calls},{streams},{ok},{failed},{}",
                csv_cell(deployment),
                (b as f64 * width).max(0.0),
                (b + 1) as f64 * width,
                by_kind.join(";")
            );
        }
    }
    std::fs::write(&path, text).map_err(|e| ImportError::output(&path, e))
}

fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
