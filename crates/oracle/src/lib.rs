//! # routersim-oracle (dev-only: not shipped, used by its tests)
//!
//! The differential harness against real LiteLLM: runs an oracle scenario
//! (`tools/litellm-oracle/scenarios/*.json`) through routersim with a profile and compares
//! every decision with the trace the oracle recorded from the real `litellm.Router`
//! (`crates/oracle/tests/fixtures/litellm-oracle/calls/*.json`).
//!
//! One module per concern: [`scenario`] reads the input, [`config`] turns the Router kwargs
//! into a routersim config through the engine's loader, [`provider`] plays the scripts,
//! [`decisions`] reads the trace, [`replay`] runs the engine and reads its events,
//! [`compare`] names each disagreement.

pub mod check;
pub mod compare;
pub mod config;
pub mod decisions;
pub mod error;
pub mod provider;
pub mod replay;
pub mod scenario;
pub mod stream;

pub use check::{check, check_files};
pub use compare::Mismatch;
pub use error::OracleError;

/// The profile the harness checks.
pub const PROFILE: &str = "litellm-1.110";
