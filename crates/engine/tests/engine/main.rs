//! The engine's tests: routing rules, strategies, profiles, streams, seams.
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

mod alias_shapes;
mod alternatives;
mod common;
mod contract;
mod cooldown_source;
mod deltallm;
mod litellm110;
mod multigrid;
mod number_shapes;
mod portkey;
mod portkey_strategies;
mod replay;
mod rules;
mod seams;
mod strategies;
mod streams;
mod streams_litellm110;
