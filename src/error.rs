//! The binary's one error type: every command returns `Result<ExitCode, CliError>` and `main`
//! prints `error: {e}` and exits 2 in one place.
//!
//! An `Ok` exit code is a verdict (0 passed, 1 an `expect` failed, 2 when `check` had an
//! error case after printing its table); an `Err` is input or IO the command could not get
//! past.

use std::io;

use routersim_sim::run::RunError;
use routersim_sim::scenario::{PROFILE_SET_PATH, ScenarioError};
use routersim_suite::check::CheckError;
use routersim_suite::diff::DiffError;
use routersim_suite::explore::ExploreError;
use routersim_suite::sweep::SweepError;

/// Why a command could not do its work (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The scenario does not load.
    #[error("{0}")]
    Scenario(#[from] ScenarioError),
    /// `--strict`: every router key routersim does not use, one `error:` line each (the
    /// first line's `error: ` is `main`'s).
    #[error("{}", strict_lines(.0))]
    Strict(Vec<ScenarioError>),
    /// A run (or the benchmark) failed.
    #[error("{0}")]
    Run(#[from] RunError),
    /// `check` could not start or finish.
    #[error("{0}")]
    Check(#[from] CheckError),
    /// A bad `sweep`/`merge` argument or a sweep that failed.
    #[error("{0}")]
    Sweep(#[from] SweepError),
    /// `diff` could not read a report.
    #[error("{0}")]
    Diff(#[from] DiffError),
    /// `explore` could not load or prepare its scenario.
    #[error("{0}")]
    Explore(#[from] ExploreError),
    /// `serve` (or `bench --serve`) could not start or finish.
    #[error("{0}")]
    Serve(#[from] routersim_live::serve::ServeError),
    /// `proxy` could not start or finish.
    #[error("{0}")]
    Proxy(#[from] routersim_live::proxy::ProxyError),
    /// `drive` could not run or write its report.
    #[error("{0}")]
    Drive(#[from] routersim_live::drive::DriveError),
    /// `import` could not read the log or write its folder.
    #[error("{0}")]
    Import(#[from] routersim_import::ImportError),
    /// `init` would overwrite a file, or could not write one.
    #[error("{0}")]
    Init(String),
    /// A command-line combination the argument parser cannot refuse by itself.
    #[error("{0}")]
    Usage(&'static str),
    /// A `--profile` the loader refused (what it said of the `router_settings.profile` the
    /// flag stands for, said of the flag).
    #[error("--profile (router_settings.profile): {0}")]
    Profile(String),
    /// Writing the results to stdout failed (a closed pipe is not an error: see `out`).
    #[error("cannot write to stdout: {0}")]
    Stdout(#[from] io::Error),
}

fn strict_lines(errors: &[ScenarioError]) -> String {
    let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
    lines.join("\nerror: ")
}

/// A scenario error, or — when it is about the `router_settings.profile` that `--profile`
/// set (`set.router_settings.profile` under `run`, `router.router_settings.profile` in
/// `bench`'s scenario) — the flag's own error.
pub fn from_profile_flag(e: ScenarioError) -> CliError {
    let path = e.path.as_str();
    let the_flags = [
        format!("set.{PROFILE_SET_PATH}"),
        format!("router.{PROFILE_SET_PATH}"),
    ];
    if the_flags.iter().any(|p| p == path) {
        CliError::Profile(e.message)
    } else {
        CliError::Scenario(e)
    }
}

/// `Err(Strict)` when `--strict` found router keys routersim does not use.
pub fn strict(errors: Vec<ScenarioError>) -> Result<(), CliError> {
    if errors.is_empty() {
        Ok(())
    } else {
        Err(CliError::Strict(errors))
    }
}
