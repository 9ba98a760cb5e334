//! routersim-import's integration tests: one binary, one module per topic.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    reason = "tests fail loudly and read as one story"
)]

mod bad_input;
mod closes_loop;
mod common;
mod formats;
mod secrets;
