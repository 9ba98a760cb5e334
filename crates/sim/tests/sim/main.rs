//! The simulator's tests: scenario parsing, traffic, transports, virtual time.
//!
//! One test binary for the crate (each file below was a binary of its own): the crate and
//! its dependencies are linked once, not once per file.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "the tests drive tokio's paused clock directly, outside a simulated run"
)]

mod loader_properties;
mod retry_owner;
mod scenario_contract;
mod scenario_inputs;
mod scenario_multigrid;
mod scenario_number_shapes;
mod scenario_parse;
mod scenario_quota;
mod scenario_set;
mod scenario_stages;
mod scenario_streams;
mod scenario_traffic;
mod scenario_traffic_file;
mod stream_gap_limit;
mod stream_no_finish;
mod transport_parity;
mod virtual_time;
