//! What a run gives back: its report, or why it could not happen.
//!
//! Separate because every entry point and the simulation return them, and callers (`check`,
//! `sweep`, `explore`, the CLI) read them without the runner's internals.

use std::path::PathBuf;

use routersim_report::summary::Summary;
use routersim_runtime::RuntimeError;

use crate::expect::ExpectationResult;
use crate::facts::RunFacts;
use crate::report_dir::ReportDirError;
use crate::scenario::ScenarioError;

/// What a run produced.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// The summary (also in `summary.json`).
    pub summary: Summary,
    /// Where the report files are.
    pub out_dir: PathBuf,
    /// The seed used.
    pub seed: u64,
    /// Every `expect` line, checked.
    pub expectations: Vec<ExpectationResult>,
    /// Router config keys the engine does not model (listed once, never an error).
    pub ignored_keys: Vec<String>,
    /// Router config lines that load but look wrong.
    pub warnings: Vec<String>,
    /// What writing the report folder had to tidy up first (an interrupted run's leftovers,
    /// a dead writer's lock), for the user.
    pub notes: Vec<String>,
    /// What the run's events say about which settings could have mattered.
    pub facts: RunFacts,
}

impl RunReport {
    /// True when every `expect` line holds.
    pub fn passed(&self) -> bool {
        self.expectations.iter().all(|e| e.passed)
    }

    /// The lines that failed.
    pub fn failures(&self) -> impl Iterator<Item = &ExpectationResult> {
        self.expectations.iter().filter(|e| !e.passed)
    }
}

/// Why a run could not happen.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The scenario is invalid.
    #[error("{0}")]
    Scenario(#[from] ScenarioError),
    /// The fake providers could not be built from it.
    #[error("{file}: {source}")]
    Providers {
        /// The scenario file.
        file: PathBuf,
        /// What was wrong.
        source: routersim_mock_providers::provider::SpecError,
    },
    /// Writing the report failed.
    #[error("{0}")]
    Report(#[from] routersim_report::ReportError),
    /// The report folder cannot be written (another process writes it, it is not a report).
    #[error("{0}")]
    Output(#[from] ReportDirError),
    /// The run failed after its report was begun: nothing of it is kept.
    #[error("{source}; {note}")]
    NotWritten {
        /// Why it failed.
        source: Box<RunError>,
        /// What became of the target folder.
        note: String,
    },
    /// A task still held the recorder when the run ended (a bug: the report cannot be
    /// finished).
    #[error("the recorder is still shared when the run ends (a routersim bug)")]
    RecorderShared,
    /// Request tasks panicked: a report without their requests would lie.
    #[error("{0} request task(s) panicked (see above); no report is written")]
    TaskPanicked(usize),
    /// `transport: http` could not address a deployment (an `api_key` that cannot be an HTTP
    /// header).
    #[error("{file}: transport: http: {message}")]
    Transport {
        /// The scenario file.
        file: PathBuf,
        /// What was wrong.
        message: String,
    },
    /// The runtime could not start, or stalled.
    #[error("{0}")]
    Runtime(#[from] RuntimeError),
    /// More requests would be in flight at once than routersim holds
    /// ([`crate::traffic::MAX_IN_FLIGHT`]); the run stopped there.
    #[error("{file}: {message}")]
    InFlight {
        /// The scenario file.
        file: PathBuf,
        /// Which traffic entry, when, and the arithmetic.
        message: String,
    },
}
