//! Dependency-free building blocks below the engine, each usable alone: the date formats of
//! HTTP and logs ([`dates`]), LiteLLM's wildcard model names ([`pattern`]), small inline sets
//! of indices ([`small`]), JavaScript's readings of a number and a weighted draw ([`js`]) and
//! poison-tolerant locking ([`sync`]). Nothing here knows of routing, simulation or the wire.

pub mod dates;
pub mod js;
pub mod pattern;
pub mod small;
pub mod sync;
