//! Why an import failed: every error names the file and, where there is one, the line.

use std::path::{Path, PathBuf};

/// An import error.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The log cannot be opened or read.
    #[error("{}: {message}", .path.display())]
    Read {
        /// The log.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A line of the log is not what its format says.
    #[error("{}:{line}: {message}", .path.display())]
    Line {
        /// The log.
        path: PathBuf,
        /// The line (1-based).
        line: u64,
        /// What is wrong with it.
        message: String,
    },
    /// The log's format is not one `routersim import` reads, or not the one `--format` names.
    #[error("{}: {message}", .path.display())]
    Format {
        /// The log.
        path: PathBuf,
        /// What was found and what is read.
        message: String,
    },
    /// Nothing to import (an empty log, or every row filtered out).
    #[error("{}: {message}", .path.display())]
    Empty {
        /// The log.
        path: PathBuf,
        /// Why nothing is left.
        message: String,
    },
    /// The `--config` router config.
    #[error("{0}")]
    Config(String),
    /// An option's value.
    #[error("{0}")]
    Option(String),
    /// Writing the output folder.
    #[error("{0}")]
    Output(String),
    /// The scenario written does not load: a bug in the import, said plainly.
    #[error("{}: the imported scenario does not load ({message}); please report this", .path.display())]
    Scenario {
        /// The scenario file.
        path: PathBuf,
        /// The loader's error.
        message: String,
    },
}

impl ImportError {
    /// A read error on `path`.
    pub fn read(path: &Path, e: impl std::fmt::Display) -> Self {
        ImportError::Read {
            path: path.to_path_buf(),
            message: e.to_string(),
        }
    }

    /// An error on one line of `path`.
    pub fn line(path: &Path, line: u64, message: impl Into<String>) -> Self {
        ImportError::Line {
            path: path.to_path_buf(),
            line,
            message: message.into(),
        }
    }

    /// An output error on `path`.
    pub fn output(path: &Path, e: impl std::fmt::Display) -> Self {
        ImportError::Output(format!("{}: {e}", path.display()))
    }
}
