//! The suite's tests: bench, in-flight memory, a year of virtual time.
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

mod alone;
mod bench_median;
mod bench_profiles;
mod in_flight;
mod in_flight_footprint;
mod year_of_virtual_time;
