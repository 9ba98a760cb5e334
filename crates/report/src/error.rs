//! The report's one error type: every failure names the file it concerns, so a user sees
//! which output could not be written.

use std::io;
use std::path::PathBuf;

/// Writing a report failed.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Creating, writing or flushing a file (or the output directory) failed.
    #[error("cannot write {}: {source}", .path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// The CSV writer failed (its IO error or a malformed record).
    #[error("cannot write {}: {source}", .path.display())]
    Csv {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: csv::Error,
    },
    /// `summary.json` could not be serialised or written.
    #[error("cannot write {}: {source}", .path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
    /// The recorder's own thread stopped before the end of the run (it panicked; the panic's
    /// message was printed when it happened): the run has no report.
    #[error("the recorder's thread stopped before the end of the run; no report was written")]
    RecorderLost,
    /// The latency histogram could not be created.
    #[error("cannot create the latency histogram: {0}")]
    Histogram(String),
}

impl ReportError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        ReportError::Io {
            path: path.into(),
            source,
        }
    }
}
