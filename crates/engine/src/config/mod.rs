//! The router's configuration, validated.
//!
//! Read in two phases (as TensorZero does): the `routersim-config` crate parses LiteLLM's proxy
//! `config.yaml` shape into a raw tree and walks it into these validated types, naming the YAML
//! path of anything wrong. Everything the engine decides from lives here; keys it does not model
//! are listed in [`RouterConfig::ignored_keys`] and keys LiteLLM itself would not know (typos)
//! in [`RouterConfig::unknown_keys`]; values are never resolved (no `os.environ/…` secret is
//! ever read).
//!
//! Why a layer of its own: every policy reads the settings, so the settings (and every value
//! type they hold) sit below all of them and name nothing above. One file per concern:
//! [`settings`] (the router-wide settings and their defaults), [`deployment`], [`fallbacks`],
//! [`names`] (the named values), [`modes`], [`alternatives`] (other gateways' mechanisms),
//! [`unknown`] (keys LiteLLM would not know).

pub mod alternatives;
pub mod deployment;
pub mod fallbacks;
pub mod modes;
pub mod names;
pub mod settings;
pub mod unknown;

pub use alternatives::{HedgeAfter, OutlierSettings, RetryBudgetSettings, RetryThrottlingSettings};
pub use deployment::{Deployment, KindPolicy};
pub use fallbacks::{FallbackMap, FallbackTarget};
pub use modes::{Replay, SchemaMode, StreamRecovery};
pub use names::{Classification, PortkeyStrategy, Profile, Recovery, RoutingStrategyName};
pub use settings::{
    DEFAULT_ATTEMPTS_PER_CANDIDATE, DEFAULT_CONNECT_ALLOWANCE, DEFAULT_COOLDOWN_TIME,
    DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_FALLBACKS, DEFAULT_NUM_RETRIES, DEFAULT_REQUEST_DEADLINE,
    DEFAULT_SAME_ROUTE_RETRIES, DEFAULT_STREAM_DEADLINE, DEFAULT_VALIDATION_ALLOWANCE,
    MAX_DURATION, MAX_FALLBACKS_ENV, RouterConfig, RouterSettings, resolve_max_fallbacks,
};
pub use unknown::{UnknownKey, UnreadKey};
