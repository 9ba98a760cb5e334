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
//! From the bottom up: `error` (why a sweep or merge failed) and `args` (`--set`, `--shard`);
//! `folder` (the output folder's file names and run folders) and `manifest` (what a sweep is,
//! a run's row, [`METRICS`]); `stats` (means and intervals), `verdict` (judging them) and
//! `table` (the terminal table); `plot` (`sweep.svg`) and `files` (writing and reading
//! `sweep.json`, `runs.csv` and `sweep.csv`); `effect` (keys that changed nothing); at the top
//! `run` (building the grid and running its jobs) and `merge` (joining shard folders), beside
//! `glob` (`merge`'s quoted patterns). Each imports only the modules below it; this file only
//! declares them and re-exports every public item.

mod args;
mod baseline;
pub mod effect;
mod error;
mod files;
mod folder;
mod glob;
mod index;
mod manifest;
mod merge;
pub mod plot;
mod run;
mod stats;
mod table;
mod verdict;

pub use self::args::{Shard, SweepKey, parse_set_arg, parse_set_args, parse_shard};
pub use self::baseline::BASELINE_LABEL;
pub use self::error::SweepError;
pub use self::files::{
    read_manifest, read_runs, runs_csv, runs_header, runs_index_csv, sweep_csv, sweep_header,
    write_outputs,
};
pub use self::folder::{
    RUNS_CSV, RUNS_DIR, RUNS_INDEX, SWEEP_CSV, SWEEP_JSON, SWEEP_SVG, default_out_dir,
    is_shard_folder, run_dir,
};
pub use self::glob::{expand as expand_glob, expand_all as expand_globs};
pub use self::index::sweep_index_html;
pub use self::manifest::{METRICS, Manifest, RunRow};
pub use self::merge::{Merged, merge};
pub use self::run::{Sweep, SweepOutput, prepare, worker_count};
pub use self::stats::{ComboStats, Interval, combo_stats, mean_ci95, t975};
pub use self::table::{format_table, table_cells};
pub use self::verdict::{
    DESCRIPTIVE, Mark, MetricVerdict, Standing, better_word, is_ranked, lower_is_better, marks,
    verdict_lines, verdict_text, verdicts,
};

#[cfg(test)]
mod tests;
