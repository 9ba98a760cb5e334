//! Why a live run failed: one enum for the drive module (a small module below its users, so
//! every part of drive can name it without an import circle).

use std::path::{Path, PathBuf};
use std::time::Duration;

use routersim_report::ReportError;
use routersim_sim::report_dir::ReportDirError;

use crate::serve::ServeError;

/// Why a live run failed.
#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    /// A URL that cannot be used.
    #[error("{0}")]
    Url(String),
    /// A non-loopback URL without `--allow-remote`.
    #[error(
        "{0}: not a loopback address; drive sends chaos traffic only to this machine unless \
         --allow-remote is given"
    )]
    Remote(String),
    /// A non-loopback `--metrics-addr` without `--allow-remote`.
    #[error(
        "--metrics-addr {0}: not a loopback address; drive's metrics must not be reachable by \
         accident (add --allow-remote to serve them anyway)"
    )]
    RemoteMetrics(std::net::SocketAddr),
    /// The target never answered.
    #[error("{target}: no HTTP answer within {waited:?}")]
    NotReady {
        /// The target.
        target: String,
        /// How long drive waited.
        waited: Duration,
    },
    /// Ctrl-C or SIGTERM before any request was sent: nothing written, the report folder as
    /// it was.
    #[error(
        "stopped by {signal} before any request was sent: nothing written, {} left as it was",
        .out.display()
    )]
    Interrupted {
        /// `ctrl-c` or `sigterm`.
        signal: &'static str,
        /// The report folder.
        out: PathBuf,
    },
    /// The target routes to deployments that are not the scenario's (a router started from
    /// another config): refused before any request was sent.
    #[error("{0}")]
    NotTheScenario(String),
    /// The fake providers.
    #[error("{0}")]
    Serve(#[from] ServeError),
    /// The report folder.
    #[error("{0}")]
    Output(#[from] ReportDirError),
    /// Writing the report.
    #[error("{0}")]
    Report(#[from] ReportError),
    /// The caller's ready hook (writing a LiteLLM config).
    #[error("{0}")]
    Ready(String),
    /// The runtime.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A report file drive writes itself.
    #[error("{}: {message}", .path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
}

/// A [`DriveError::File`].
pub fn file_error(path: &Path, e: impl std::fmt::Display) -> DriveError {
    DriveError::File {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}
