//! The report writers' tests: the recorder, timeseries, streams, plots.
//!
//! One test binary for the crate (each file below was a binary of its own): the crate and
//! its dependencies are linked once, not once per file.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    reason = "tests fail loudly and read as one story"
)]

use std::error::Error;
use std::fs;
use std::path::PathBuf;

mod cooldowns_and_details;
mod own_thread;
mod plots;
mod recorder;
mod served;
mod sparse_timeseries;
mod streams;

/// A fresh folder for one test's report, `{prefix}-{name}` in cargo's temporary folder for
/// tests (emptied if a run before left it).
fn out_dir(prefix: &str, name: &str) -> Result<PathBuf, Box<dyn Error>> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{prefix}-{name}"));
    if dir.exists() {
        fs::remove_dir_all(&dir)?;
    }
    Ok(dir)
}
