//! Anthropic messages: what the engine's HTTP adapter sends and reads ([`client`]), and what
//! the fake-provider server answers ([`server`]).

pub mod client;
pub mod server;
