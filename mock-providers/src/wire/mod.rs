//! The fake providers over real HTTP: one description of what a provider does
//! ([`FakeProviders`]), a second transport.
//!
//! [`WireServer`] answers each HTTP request by building an engine
//! [`Request`](routersim_engine::request::Request) from it, calling [`FakeProviders`] with the
//! deployment's index (the same fault model and the same draws as the in-memory transport),
//! and rendering the outcome in the request path's wire format: OpenAI chat completions,
//! Anthropic messages or Azure OpenAI, as JSON or SSE, with the providers' own error bodies,
//! statuses and `Retry-After` forms, and every stream fault at the byte level (a break is an
//! abrupt close, a stall is silence). The exact shapes are the wire contract shared with the
//! engine's HTTP adapter (documented in the README's `routersim serve` section).
//!
//! The shapes themselves (paths, request parsing, bodies, error shapes, SSE frames) are the
//! wire contract in `routersim_wire`, shared with the engine's HTTP adapter.
//!
//! - [`body`]: the response body, streamed from a [`FakeStream`](crate::FakeStream).
//! - [`call_log`]: `provider_calls.csv`, one row per call as it ends.
//! - `error`: [`WireError`], what the server and the call log fail with.
//! - [`guard`]: what a real listener bounds for each client (header and idle timeouts, the
//!   connection cap, the request body's size and deadline).
//! - [`server`]: [`WireServer`], [`serve_connection`] over any byte pipe, [`listen`] on TCP.
//!
//! [`FakeProviders`] is `!Send` (`Cell`/`RefCell`), so the server is single-threaded: a
//! current-thread runtime, a `LocalSet`, one `spawn_local` task per connection.
//!
//! [`FakeProviders`]: crate::FakeProviders

pub mod body;
pub mod call_log;
mod error;
pub mod guard;
pub mod server;

pub use call_log::{CallLog, CallRow};
pub use error::WireError;
pub use guard::{ConnGate, ConnLimits};
pub use routersim_wire::route::{Format, Mount};
pub use server::{
    WireServer, listen, listen_with, serve_client, serve_connection, serve_connection_at,
};
