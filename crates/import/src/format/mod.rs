//! The three log formats `routersim import` reads, told apart by their first bytes, and the
//! one loop that reads any of them a row at a time (memory never grows with the log).
//!
//! - [`payload`]: LiteLLM's standard logging payload, one JSON object per line (or a JSON
//!   array of them).
//! - [`spend`]: LiteLLM's spend logs (`LiteLLM_SpendLogs` rows) as JSON lines, a JSON array or
//!   CSV.
//! - [`gateway`]: the plain CSV, one row per provider call.
//!
//! A gzipped log is read as it is (its first two bytes say so). Detection reads the first line: `{` is JSON lines (a payload has `trace_id` and
//! `hidden_params`, a spend row `request_id`), `[` a JSON array (its first element decides),
//! anything else a CSV header (`timestamp` … `latency_ms` is the plain CSV, `request_id` and
//! `startTime` a spend-log export). A row of another format further down is an error naming its
//! line ("mixed formats"). A last line cut short (a log still being written) is skipped and
//! said; a bad line elsewhere is an error naming it.

mod gateway;
pub mod intern;
mod litellm;
pub mod loose;
mod name;
mod payload;
mod read;
mod spend;
pub mod time;

pub use name::Format;
pub use read::{ReadOptions, ReadSummary, read_calls};
