//! The config reader's tests: LiteLLM YAML, includes, inputs, keys.
//!
//! One test binary for the crate (each file below was a binary of its own): the crate and
//! its dependencies are linked once, not once per file.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "tests fail loudly, read as one story, and drive tokio's paused clock directly"
)]

mod config_inputs;
mod config_keys;
mod config_load;
mod include_merge;
