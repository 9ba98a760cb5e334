//! Dependency-free building blocks below the engine, each usable alone: the date formats of
//! HTTP and logs ([`dates`]), LiteLLM's wildcard model names ([`pattern`]) and small inline sets
//! of indices ([`small`]). Nothing here knows of routing, simulation or the wire.

pub mod dates;
pub mod pattern;
pub mod small;
