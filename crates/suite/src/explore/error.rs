//! Why `explore` could not start (bad input, exit 2) or write its findings.
//!
//! Its own module because the explorer, the scenario trees and the shrunk files all return it:
//! kept below them, it imports none of theirs.

use std::fmt;
use std::path::{Path, PathBuf};

use routersim_sim::scenario::ScenarioError;

/// Why `explore` could not start (bad input, exit 2) or write its findings.
#[derive(Debug, thiserror::Error)]
pub enum ExploreError {
    /// A bad argument.
    #[error("{0}")]
    Usage(String),
    /// The scenario does not load.
    #[error("{0}")]
    Scenario(Box<ScenarioError>),
    /// Reading or writing a file.
    #[error("{}: {message}", .path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// A file that could not be read or written, with why.
pub(super) fn file_error(path: &Path, e: impl fmt::Display) -> ExploreError {
    ExploreError::File {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}
