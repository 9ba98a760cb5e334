//! End-to-end tests of the `routersim` command (and the library paths it drives).
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

mod bench_wire;
mod check;
mod check_discovery;
mod check_jobs;
mod ci_outputs;
mod cli;
mod cli_inputs;
mod common;
mod config_keys;
mod determinism;
mod diff;
mod diff_rates;
mod docs;
mod drive;
mod drive_bench;
mod drive_clock;
mod drive_connections;
mod drive_hostile;
mod drive_proxy;
mod drive_replicas;
mod emit_config;
mod explore;
mod fleet;
mod fleet_agreement;
mod fleet_calibration;
mod golden_windows;
mod grafana;
mod hostile_redis;
mod hostile_serve;
mod import;
mod index_html;
mod init;
mod install;
mod limits;
mod litellm_proxy;
mod live_metrics;
mod loads;
mod portkey;
mod proxy;
mod proxy_redis;
mod report_html;
mod reports;
mod scenarios;
mod serve;
mod signals;
mod stream_billing;
mod suggestions;
mod summary_numbers;
mod sweep;
mod sweep_baseline;
mod sweep_examples;
mod sweep_no_effect;
mod sweep_verdict;
mod transport;
mod wall_clock;
