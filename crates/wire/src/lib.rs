//! # routersim-wire
//!
//! The wire contract both sides speak, in one place: the engine's HTTP provider adapter
//! ([`client`]) sends attempts in it, and the fake-provider server
//! (`routersim_mock_providers::wire`) answers in it. Keeping both directions of each format
//! side by side is what stops them drifting apart.
//!
//! - [`format`]: a deployment's format (from its model prefix, as LiteLLM picks its provider).
//! - [`endpoint`]: where a deployment is called, the request a client sends, and the dispatch
//!   of an answer to its format's decoder.
//! - [`openai`] (Azure included) and [`anthropic`]: bodies, error shapes and SSE frames, each
//!   with a `client` side (encode requests, decode answers) and a `server` side (render answers).
//! - [`request`]: a request as the server reads it (body and hints to an engine request).
//! - [`route`]: the server's paths (`/d/<deployment_id>/v1/chat/completions`, …).
//! - [`errors`]: a non-2xx answer to the engine's failure kinds (LiteLLM's rules).
//! - [`sse`]: server-sent events, and the `x-routersim-break` comment a stream break sends.
//! - [`headers`]: the `x-routersim-*` header names.
//! - [`limits`]: the cap on an answer's output tokens, checked before text is made from a count.
//! - [`client`]: [`HttpProvider`](client::HttpProvider), the engine's `Provider` over HTTP.

pub mod anthropic;
pub mod client;
pub mod endpoint;
pub mod errors;
pub mod format;
pub mod headers;
#[cfg(test)]
mod json_gen;
pub mod limits;
pub mod openai;
pub mod request;
mod request_fast;
pub mod route;
pub mod sse;
pub mod typed;

pub use client::{Connector, HttpProvider, HttpStream, TcpConnector};
pub use endpoint::Endpoint;
pub use format::WireFormat;
