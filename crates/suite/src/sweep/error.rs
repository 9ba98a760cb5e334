//! Why a sweep or a merge could not happen.
//!
//! Its own module because every other part of the sweep (argument parsing, the runs, the
//! files, the merge) returns it: kept below them all, it imports nothing of theirs.

use std::fmt;
use std::path::{Path, PathBuf};

use routersim_sim::report_dir::ReportDirError;
use routersim_sim::run::RunError;
use routersim_sim::scenario::ScenarioError;

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

/// A file that could not be read or written, with why.
pub(super) fn file_error(path: &Path, e: impl fmt::Display) -> SweepError {
    SweepError::File {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}
