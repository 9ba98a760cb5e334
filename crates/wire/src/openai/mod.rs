//! OpenAI chat completions (and Azure OpenAI, which shares its bodies): what the engine's
//! HTTP adapter sends and reads ([`client`]), and what the fake-provider server reads and
//! answers ([`server`]).

mod chunk_fast;
pub mod client;
pub(crate) mod completion_fast;
mod frames;
pub mod server;
