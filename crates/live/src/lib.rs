//! # routersim-live
//!
//! Live mode: routersim on real sockets and the wall clock, so a real router can be
//! chaos-tested with the same scenario file the simulator runs.
//!
//! - [`serve`]: the scenario's fake providers over HTTP (OpenAI, Anthropic, Azure), in real
//!   time, with a LiteLLM proxy config for them.
//! - [`proxy`]: routersim's engine as an OpenAI-compatible router (a LiteLLM proxy config in),
//!   per process or sharing its cooldowns over Redis ([`redis`]).
//! - [`drive`]: the scenario's traffic in real time to a router under test, and the same report
//!   a simulated run writes, joined with what the providers saw.
//!
//! Everything here binds and connects to loopback only unless told otherwise. The simulator
//! (`routersim-sim`) never links this crate.

pub mod drive;
pub mod proxy;
pub mod redis;
pub mod serve;
pub mod stop;
