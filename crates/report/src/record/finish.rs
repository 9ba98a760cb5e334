//! The end of a run: flushing the traces, closing the streamed files, writing
//! `timeseries.csv`, the `.hgrm` files, `summary.json`, `metrics.prom` and the plots.
//!
//! Separate from `summary` (what the numbers are) because this is the writing: each step
//! stops at its first IO error, which names the file.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use super::files::{INTER_TOKEN_HGRM, LATENCY_HGRM, SUMMARY_JSON, TIMESERIES_CSV, TTFT_HGRM};
use super::recorder::RunMeta;
use super::state::State;
use crate::error::ReportError;
use crate::hgrm::write_hgrm;
use crate::plot::Distribution;
use crate::plot::RenderInput;
use crate::prom::{METRICS_PROM, write_prom};
use crate::summary::Summary;

/// Every histogram is recorded in microseconds; the report prints milliseconds.
const MICROS_PER_MS: f64 = 1000.0;

impl State {
    pub(super) fn finish(mut self, meta: RunMeta) -> Result<Summary, ReportError> {
        self.flush_traces();
        // A run end before the last event would be a caller's slip; never end before it.
        let run_end = self.us(meta.end).max(self.agg.last_event_us);
        self.per_deployment.finish(run_end, &mut self.error);
        self.latency_intervals
            .finish(&mut self.series, &mut self.error);
        if let Some(error) = self.error.take() {
            return Err(error);
        }
        for d in self
            .cooldowns
            .values_mut()
            .chain(self.half_open.values_mut())
        {
            d.finish(run_end, &mut self.series);
        }
        let timeseries_csv = self.write_timeseries_and_histograms()?;
        let summary = self.summary(meta, run_end);
        self.write_summary(&summary)?;
        self.render_plots(&summary, run_end, &timeseries_csv)?;
        Ok(summary)
    }

    /// Flushes the trace files; the first error is kept.
    fn flush_traces(&mut self) {
        let traces = [&mut self.requests, &mut self.attempts, &mut self.events];
        for csv in traces.into_iter().flatten() {
            if let Err(e) = csv.out.flush() {
                self.error.get_or_insert(ReportError::io(&csv.path, e));
            }
        }
        if let Some(jsonl) = self.routing.as_mut()
            && let Err(e) = jsonl.out.flush()
        {
            self.error.get_or_insert(ReportError::io(&jsonl.path, e));
        }
    }

    /// Writes `timeseries.csv` and the three `.hgrm` files; returns the CSV's bytes.
    fn write_timeseries_and_histograms(&self) -> Result<Vec<u8>, ReportError> {
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
        Ok(timeseries_csv)
    }

    /// Writes `summary.json` and `metrics.prom`.
    fn write_summary(&self, summary: &Summary) -> Result<(), ReportError> {
        let path = self.dir.join(SUMMARY_JSON);
        let file = File::create(&path).map_err(|e| ReportError::io(&path, e))?;
        let mut w = BufWriter::new(file);
        serde_json::to_writer_pretty(&mut w, summary).map_err(|source| ReportError::Json {
            path: path.clone(),
            source,
        })?;
        w.write_all(b"\n")
            .and_then(|()| w.flush())
            .map_err(|e| ReportError::io(&path, e))?;
        write_file(&self.dir.join(METRICS_PROM), |w| {
            write_prom(summary, &self.latency, self.agg.latency_sum_us, w)
        })
    }

    /// Draws the SVG plots, unless they were turned off.
    fn render_plots(
        &mut self,
        summary: &Summary,
        run_end: u64,
        timeseries_csv: &[u8],
    ) -> Result<(), ReportError> {
        let plots = std::mem::take(&mut self.plots);
        if !plots.enabled {
            return Ok(());
        }
        let input = RenderInput {
            run_end_us: run_end,
            timeseries_csv,
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
            served: &self.per_deployment.served,
            failing: &self.per_deployment.failing,
        };
        plots.render(&self.dir, &input)
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
