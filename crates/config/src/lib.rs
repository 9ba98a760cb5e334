//! # routersim-config
//!
//! Reads LiteLLM's proxy `config.yaml` into the engine's validated
//! [`RouterConfig`](routersim_engine::config::RouterConfig), in two phases (as TensorZero
//! does): the YAML text becomes a raw tree, and the tree is walked into the engine's types,
//! naming the YAML path of anything wrong. Reading a config is a job apart from routing: the
//! engine only ever sees the validated settings.
//!
//! - [`load`]: the two phases; `router_settings` is one table of keys and their readers
//!   (`ROUTER_SETTINGS` in `load/settings.rs`: a new key is one entry there).
//! - [`include`]: LiteLLM's `include:` files, merged as LiteLLM merges them.
//! - [`input`]: reading a file with a size limit and a YAML budget, and their messages.
//! - [`keys`]: which keys LiteLLM knows, which routersim models, and spelling suggestions.
//! - [`duration`]: durations as every file routersim reads writes them (scenario files and
//!   LiteLLM configs), one parser with a syntax for each.
//!
//! Nothing is ever resolved: an `os.environ/NAME` value stays that literal string, and no
//! environment variable is read.

pub mod duration;
mod include;
pub mod input;
pub mod keys;
mod known_keys;
pub mod load;
mod numerals;
mod spelling;

pub use load::{ConfigError, load_router_config_str};
