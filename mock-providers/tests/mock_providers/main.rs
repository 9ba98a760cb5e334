//! The fake providers' tests: fault model, quotas, streams, the wire server.
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

mod provider;
mod quota;
mod spec;
mod stream;
mod wire;
