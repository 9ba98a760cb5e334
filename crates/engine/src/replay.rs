//! Ambiguous execution (the contracts seed: *"Connection lost after the provider may have
//! accepted the request — Deduplicate before replaying"*): what the router does after an
//! attempt whose connection was lost after the request was sent
//! ([`ProviderFailure::ambiguous`](crate::failure::ProviderFailure::ambiguous)).
//!
//! `router_settings.replay` picks it; the attempt's settlement (`router/attempt.rs`) reads it,
//! the one place every attempt of every profile passes, and reports the outcome as an
//! [`AmbiguousOutcome`](crate::event::EventKind::AmbiguousOutcome) event. The operation id
//! is the request's id (a client's own retries of the same user request keep it).

pub use crate::config::Replay;
