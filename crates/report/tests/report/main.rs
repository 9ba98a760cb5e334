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

mod cooldowns_and_details;
mod own_thread;
mod plots;
mod recorder;
mod served;
mod sparse_timeseries;
mod streams;
