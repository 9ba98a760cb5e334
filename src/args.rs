//! Argument types and value parsers more than one command takes.

use std::time::Duration;

use clap::ValueEnum;
use routersim_suite::seeds::Seeds;

/// Which per-request traces to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Trace {
    /// Write requests.csv and attempts.csv.
    All,
    /// Skip the per-request and per-attempt CSVs (huge runs).
    None,
}

/// Which runtime runs a simulation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum RuntimeArg {
    /// The virtual-time executor: exact deadlines, 1.4-1.9x tokio's speed on the bench workload (the default).
    #[default]
    Virtual,
    /// tokio's paused current-thread runtime: timers rounded up to whole milliseconds.
    Tokio,
}

impl From<RuntimeArg> for routersim_runtime::RuntimeKind {
    fn from(arg: RuntimeArg) -> Self {
        match arg {
            RuntimeArg::Virtual => Self::Virtual,
            RuntimeArg::Tokio => Self::Tokio,
        }
    }
}

/// Which extra faults `explore` adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Faults {
    /// A seed-chosen mix of fault windows and provider quotas on top of the scenario's own.
    Random,
    /// None: only the seed changes.
    None,
}

/// `--tolerance N%`.
pub fn parse_tolerance(text: &str) -> Result<f64, String> {
    routersim_suite::check::golden::parse_tolerance(text)
}

/// A duration as scenarios write it (`300ms`, `1.5s`, `2m`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    routersim_mock_providers::duration::parse_duration(text).map_err(|e| e.to_string())
}

/// `--seeds` for every command, in the one grammar of [`Seeds`]. A bad value is clap's usage
/// error (exit 2, nothing runs) worded `error: --seeds "TEXT": why`.
#[derive(Clone, Copy, Debug)]
pub struct SeedsParser;

impl clap::builder::TypedValueParser for SeedsParser {
    type Value = Seeds;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Seeds, clap::Error> {
        let text = value.to_string_lossy();
        Seeds::parse(&text).map_err(|e| {
            let flag = arg.and_then(clap::Arg::get_long).unwrap_or("seeds");
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("--{flag} {text:?}: {e}\n"),
            )
        })
    }
}
