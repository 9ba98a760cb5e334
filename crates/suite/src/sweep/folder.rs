//! The sweep's output folder: the names of its files and where each run's report goes.
//!
//! Its own module because the runs, the files, the merge and the CLI all name these paths;
//! kept below them, it knows nothing of what the files hold.

use std::path::{Path, PathBuf};

use super::args::Shard;

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

/// A run's report directory in a sweep: `out/runs/c<NNN>/seed-<S>/`.
pub fn run_dir(out: &Path, combo: usize, seed: u64) -> PathBuf {
    out.join(RUNS_DIR)
        .join(format!("c{:03}", combo + 1))
        .join(format!("seed-{seed}"))
}

/// Whether a folder name is a shard's default folder, `shard-K-of-N`: shards run on one
/// machine sit inside the whole sweep's default folder, and survive its replacement.
pub fn is_shard_folder(name: &str) -> bool {
    let number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    name.strip_prefix("shard-")
        .and_then(|rest| rest.split_once("-of-"))
        .is_some_and(|(k, n)| number(k) && number(n))
}

/// The default output directory: `reports/sweep/<name>/`, or
/// `reports/sweep/<name>/shard-K-of-N/` for a shard (so shards on one machine do not collide).
pub fn default_out_dir(name: &str, shard: Option<Shard>) -> PathBuf {
    let dir = Path::new("reports").join("sweep").join(name);
    match shard {
        None => dir,
        Some(s) => dir.join(format!("shard-{}-of-{}", s.index, s.count)),
    }
}
