//! `routersim sweep`: a grid of router settings, each run on the same seeds.
//!
//! A capacity planner asks "what would `allowed_fails` 0, 1, 3 or 5 have done to this
//! incident?". A sweep answers with every combination of the swept values (`--set
//! KEY=V1,V2,…`, one key per `--set`, any router config path [`apply_set`](routersim_sim::scenario::apply_set) accepts), each run on
//! the same seeds, so the differences between combinations come from the settings, not from
//! the traffic's noise.
//!
//! # The job list
//!
//! Combinations are in grid order: the first key varies slowest (nested loops, first key
//! outermost). Job `i` is combination `i / seeds` with seed `seeds[i % seeds]`. A shard `K/N`
//! runs the jobs with `i % N == K − 1`. Workers (`std::thread::scope`) pull jobs from a shared
//! counter; each run builds its own current-thread runtime, and the results are put back in job
//! order, so the files do not depend on the number of workers or on which finished first.
//!
//! # The output directory
//!
//! - `sweep.json`: what was swept (scenario name and file, keys and values, seeds, metrics,
//!   routersim version, shard); `routersim merge` checks shards against each other with it.
//! - `runs.csv`: one row per (combination, seed): one column per key (the value as written on
//!   the command line), `seed`, then [`METRICS`], printed as the shortest text that reads back
//!   to the same number (so a merge recomputes exactly what the sweep computed).
//! - `sweep.csv`: one row per combination (with at least one run): the keys, `runs`, then for
//!   each metric `<m>_mean,<m>_ci95_low,<m>_ci95_high`: the mean over seeds and the 95 %
//!   interval of that mean, `mean ± t(0.975, n−1)·s/√n` (`s` the sample standard deviation);
//!   with one seed the interval is the mean itself. Six decimals. The same for each count
//!   after the metrics, then `<m>_verdict` per metric (`verdict`).
//! - `runs.csv` and `sweep.csv` carry counts after the rates ([`Manifest::counts`]): failed
//!   requests, cooldowns set, fallback hops per target group.
//! - `sweep.json` also holds the verdict: per metric, the best combination and those whose
//!   95 % interval overlaps it ([`verdicts`]).
//! - `sweep.svg`: see [`sweep_plot`](crate::sweep::plot).
//! - `runs/index.csv`: which run folder holds which settings and seed.
//! - `runs/c<NNN>/seed-<S>/summary.json`: each run's summary (`NNN` is the combination's
//!   1-based grid position, zero-padded to 3). A run writes its report there with
//!   `no_trace`; everything but `summary.json` (and the completion marker) is deleted when the
//!   run ends, so a sweep of hundreds of runs stays small. Beside it, `facts.json`: counts
//!   from the run's events ([`RunFacts`](routersim_sim::facts::RunFacts)) that say why a key changed
//!   nothing ([`sweep_effect`](crate::sweep::effect)).
//!
//! The folder is written whole ([`ReportDir`](routersim_sim::report_dir::ReportDir)): into a staging folder renamed into place when
//! every run and file is done, replacing the previous sweep's folder as a whole (no run of an
//! earlier, larger grid survives); a failed sweep leaves the previous one untouched. `merge`
//! reads only complete shard folders and records, like a sweep, a content hash of the scenario
//! file (and its `router_file`) in `sweep.json`, so shards made from different contents are
//! refused.
//!
//! # Layout
//!
//! `args` parses `--set` and `--shard`; `run` builds the grid and runs its jobs; `stats`
//! computes the means and intervals; `verdict` judges them; `files` writes and reads
//! `sweep.json`, `runs.csv` and `sweep.csv`; `merge` joins shard folders; `glob` expands
//! `merge`'s quoted patterns. Every public item is re-exported here.

mod args;
pub mod effect;
mod files;
mod glob;
mod merge;
pub mod plot;
mod run;
mod stats;
mod verdict;

pub use self::args::{Shard, SweepKey, parse_set_arg, parse_set_args, parse_shard};
pub use self::files::{
    read_manifest, read_runs, runs_csv, runs_header, runs_index_csv, sweep_csv, sweep_header,
    write_outputs,
};
pub use self::glob::{expand as expand_glob, expand_all as expand_globs};
pub use self::merge::{Merged, merge};
pub use self::run::{
    Manifest, RunRow, Sweep, SweepOutput, default_out_dir, is_shard_folder, prepare, run_dir,
    worker_count,
};
pub use self::stats::{ComboStats, Interval, combo_stats, format_table, mean_ci95, t975};
pub use self::verdict::{
    Mark, MetricVerdict, Standing, lower_is_better, marks, verdict_lines, verdicts,
};

use std::fmt;
use std::path::{Path, PathBuf};

use routersim_sim::report_dir::ReportDirError;
use routersim_sim::run::RunError;
use routersim_sim::scenario::ScenarioError;

/// The metrics a sweep records per run, in column order (names of
/// [`Summary::metric`](routersim_report::Summary::metric)).
pub const METRICS: [&str; 9] = [
    "fallback_rate",
    "failed_rate",
    "retry_rate",
    "p50_latency_ms",
    "p99_latency_ms",
    "cooled_ms_total",
    "attempts_per_request_mean",
    "deadline_exhaustion_rate",
    "validation_rejection_rate",
];

/// The manifest's file name.
pub const SWEEP_JSON: &str = "sweep.json";
/// One row per run.
pub const RUNS_CSV: &str = "runs.csv";
/// One row per combination.
pub const SWEEP_CSV: &str = "sweep.csv";
/// The plot.
pub const SWEEP_SVG: &str = "sweep.svg";
/// Where the per-run summaries go.
pub const RUNS_DIR: &str = "runs";
/// In [`RUNS_DIR`]: which run folder holds which settings and seed.
pub const RUNS_INDEX: &str = "index.csv";

/// Why a sweep (or a merge) could not happen; every one is the user's input or an IO error.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// A bad argument (`--set`, `--seeds`, `--shard`, `--jobs`).
    #[error("{0}")]
    Usage(String),
    /// The scenario is invalid on its own.
    #[error("{0}")]
    Scenario(Box<ScenarioError>),
    /// A `--set` entry does not fit the scenario's router config.
    #[error("invalid --set {setting}: {source}")]
    Setting {
        /// `key=value`.
        setting: String,
        /// Where and why.
        source: Box<ScenarioError>,
    },
    /// A combination of settings is invalid together.
    #[error("with {settings}: {source}")]
    Combination {
        /// `key=value key=value`.
        settings: String,
        /// Where and why.
        source: Box<ScenarioError>,
    },
    /// A run failed.
    #[error("run with {settings}, seed {seed}: {source}")]
    Run {
        /// `key=value key=value`.
        settings: String,
        /// The seed.
        seed: u64,
        /// What went wrong.
        source: Box<RunError>,
    },
    /// Reading or writing a file.
    #[error("{}: {message}", .path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// Shards that do not belong together, or rows that do not fit their sweep.
    #[error("{0}")]
    Merge(String),
    /// The output folder cannot be written, or a shard folder is not complete.
    #[error("{0}")]
    Output(#[from] ReportDirError),
    /// The sweep failed after its folder was begun: nothing of it is kept.
    #[error("{source}; {note}")]
    NotWritten {
        /// Why it failed.
        source: Box<SweepError>,
        /// What became of the target folder.
        note: String,
    },
}

fn file_error(path: &Path, e: impl fmt::Display) -> SweepError {
    SweepError::File {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests;
