//! The scenario file's provider section: how each fake deployment behaves, and timed faults.
//!
//! These are plain serde types (`deny_unknown_fields` everywhere) so a scenario file is read in
//! one pass with exact YAML paths in errors; cross-checks against the router config (does the
//! deployment id exist?) happen in [`crate::provider::validate_targets`].
//!
//! ```yaml
//! providers:
//!   gpt-a:
//!     latency: {p50: 800ms, p99: 4s}   # or 300ms, or {uniform: [200ms, 900ms]}; default 200ms
//!     context_window: 8000
//!     script: [ok, rate_limit, {error: rate_limit, retry_after: 2s, retry_after_format: http-date}]
//!     then: ok                          # after the script; default ok
//!     ttft: {p50: 400ms, p99: 2s}       # streams: time to first token; default: latency
//!     inter_token: 20ms                 # streams: between tokens (drawn once per stream)
//!     output_tokens: 100..400           # the answer's length when the request sets none
//!     emits: [thinking, tool_calls]     # non-text chunks a stream starts with
//!     rpm_limit: 120                    # the provider's own quota (token buckets; see quota)
//!     tpm_limit: 200000
//!     quota_retry_after_format: seconds # default; or ms, http-date
//!   gpt-b:
//!     script:                           # stream faults: only streamed calls see them
//!       - {stream_break: {after_tokens: 20}}           # or {after: 1.5s}, error: <kind>
//!       - {stream_error_frame: {after_tokens: 5, error: overloaded}}
//!       - {stream_truncated: {after_tokens: 5}}
//!       - {stream_stall: {after_tokens: 5, for: 30s}}
//!       - {stream_empty: role_only}                    # or true: no chunk at all
//!       - {stream_no_finish: role_only}                # the same, ended without finish_reason
//! faults:
//!   - {deployment: gpt-a, from: 2m, to: 5m, error: rate_limit, probability: 0.8, retry_after: 20s}
//!   - {model_group: gpt-4o, from: 1m, to: 3m, latency: {p50: 6s, p99: 20s}}
//!   - {model_group: gpt-4o, from: 4m, to: 5m, probability: 0.3, stream_break: {after: 1.5s}}
//! ```
//!
//! Layout: `latency` (latency distributions), `error` (an injected error and its
//! `Retry-After`), `outcome` (what one call does: ok, a failure, a degenerate answer),
//! `deployment` (a `providers.<id>` entry, its emits and token ranges),
//! `stream_fault` (the stream fault keys) and `fault` (timed faults). Every public item is
//! re-exported here.

mod deployment;
mod error;
mod fault;
mod latency;
mod outcome;
mod stream_fault;

pub use self::deployment::{
    DEFAULT_INTER_TOKEN, Emit, ProviderSpec, TokenRange, parse_token_range,
};
pub use self::error::{ErrorSpec, RetryAfterFormat};
pub use self::fault::{FaultEffect, FaultSpec, FaultTarget};
pub use self::latency::{DEFAULT_LATENCY, LatencySpec, PreparedLatency};
pub use self::outcome::{Degenerate, OutcomeSpec};
pub use self::stream_fault::{EmptyStream, StreamCut, StreamFault};
