//! The differential tests: routersim's litellm-1.110 profile against traces of the real LiteLLM 1.110.2.
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

mod litellm_oracle_calls;
mod litellm_oracle_streams;
