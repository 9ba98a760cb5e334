//! routersim's version, in one place below everything that writes it.
//!
//! Separate because both the runner (every `summary.json`) and the report folder (its lock
//! and completion marker) write it, and neither should depend on the other for a constant.

/// routersim's version, written into every summary.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
