//! How a run is asked for: its options, what it draws, and an extra event sink.
//!
//! Separate (and below the rest of the runner) because both the entry points and the
//! simulation read them.

use std::path::PathBuf;
use std::sync::Arc;

use routersim_engine::event::EventSink;
use tokio::time::Instant;

/// How to run a scenario.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Overrides the scenario's seed.
    pub seed: Option<u64>,
    /// Where to write (default `reports/<name>/seed-<N>/`).
    pub out_dir: Option<PathBuf>,
    /// Skip `requests.csv` and `attempts.csv` (for huge runs).
    pub no_trace: bool,
    /// Fold the report on a thread of its own, beside the run's (see
    /// [`Recorder::on_own_thread`](routersim_report::record::Recorder::on_own_thread)): for
    /// one run on a machine with a core to spare, not for many runs at once. Same files.
    pub recorder_thread: bool,
}

/// Whether this machine has more than one core: a single run's recorder can then have a
/// thread of its own ([`RunOptions::recorder_thread`]).
pub fn spare_core() -> bool {
    std::thread::available_parallelism().is_ok_and(|cores| cores.get() > 1)
}

/// Which of the report's pictures a run draws.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Rendering {
    /// The SVG plots and `report.html` (what `routersim run` writes).
    #[default]
    Full,
    /// Only the data files (traces, histograms, `timeseries.csv`, `summary.json`): for callers
    /// that time the harness or only read the summary.
    DataOnly,
}

/// How a run's recorder is set up (from [`RunOptions`] and the entry point).
#[derive(Clone, Copy, Debug)]
pub(super) struct Recording {
    /// Skip the per-request traces.
    pub(super) no_trace: bool,
    /// Which pictures to draw.
    pub(super) rendering: Rendering,
    /// Fold on a thread of its own.
    pub(super) own_thread: bool,
}

/// Builds an extra event sink once the run's virtual clock has started (it is given the
/// run's start instant), for each router replica in turn (`0..replicas`; one call for a
/// single router): replica `r`'s events go to the sink of call `r`, so a consumer can tell
/// the replicas' events apart (each replica keeps its own cooldowns).
pub type SinkFactory<'a> = &'a dyn Fn(Instant, usize) -> Arc<dyn EventSink + Send + Sync>;
