//! The scenario file: what to simulate, read and validated before anything runs.
//!
//! A scenario names a router config (inline under `router:` or in `router_file:`), how each
//! fake deployment behaves (`providers`, `faults`), the traffic, and what the results must
//! satisfy (`expect`). Every mistake is reported before the run as
//! `<file>:<line>:<col>: <yaml.path>: <what was expected>`, because a simulation that runs
//! on a typo wastes more time than it saves. Our own sections deny unknown keys.
//!
//! ```yaml
//! name: eu-rate-limit            # default: the file's stem
//! description: one deployment rate-limits for three minutes
//! seed: 7                        # default 0; every random draw derives from it
//! duration: 10m                  # no generated traffic arrives at or after it
//! epoch: 2026-01-01T00:00:00Z    # the wall clock at virtual time 0 (HTTP-date Retry-After)
//! router:                        # LiteLLM's proxy config shape; or `router_file: router.yaml`
//!   model_list:
//!     - model_name: gpt-4o
//!       litellm_params: {model: openai/gpt-4o}
//!       model_info: {id: gpt-a}
//! set:                           # overrides applied to the router's tree before it is validated
//!   router_settings.routing_strategy: least-busy
//!   model_list[0].litellm_params.rpm: 300
//! providers:
//!   gpt-a: {latency: {p50: 800ms, p99: 4s}}
//! faults:
//!   - {deployment: gpt-a, from: 2m, to: 5m, error: rate_limit, retry_after: 20s}
//! contracts:                     # profile: contract (see `contracts`)
//!   - {name: chat, deadline_ms: 8000}
//! traffic:
//!   - {model: gpt-4o, rate: 20/s, arrival: poisson, input_tokens: 500..8000, workload: chat}
//!   - {model: gpt-4o, rate: 5/s, stream: 0.3, output_tokens: 100..800, tools: true}
//!   - {at: 1.5s, model: gpt-4o, input_tokens: 12000, count: 3, stream: true, response_format: json}
//! traffic_file: logs/requests.csv  # one request per CSV row, read as the run goes
//! expect:
//!   - {metric: success_rate, min: 0.99}
//! transport: http                # default memory; http: through the wire (see `transport`)
//! golden: {tolerance: {p99_latency_ms: 5%}}  # `check`: how far a metric may move from its golden
//! ```
//!
//! `set` works on the router config's YAML tree (inline or from `router_file`) before it is
//! validated, so a shared incident can be replayed under another strategy or profile without
//! copying the config; [`apply_set`] is the operation (also for `routersim sweep --set`).
//!
//! Traffic entries are one struct with every key optional, told apart by `at` (an explicit
//! request) or `rate` (a stream), and validated after parsing: serde's untagged enums would
//! lose the path and line of the real mistake.
//!
//! Layout, bottom up: `error` is the located error every input reports, `ctx` builds it from
//! a YAML path, `options` holds the process-wide load options; `raw` is the file as serde
//! reads it (first phase), `values` the small typed values it holds; one file per section
//! validates it (second phase: `router`, `set`, `contracts`, `traffic`, `expectations`,
//! `golden`, whose paths into `summary.json` are `summary_path`'s); `load` runs them in order
//! and returns the `validated` [`Scenario`]. This file only declares the modules and re-exports the public items, so no child depends on it.

mod contracts;
mod ctx;
mod error;
mod expectations;
pub mod golden;
mod load;
mod options;
mod raw;
mod router;
mod set;
mod stages;
pub mod summary_path;
mod traffic;
mod unshared;
mod validated;
mod values;

pub use self::error::ScenarioError;
pub use self::golden::GoldenSettings;
pub use self::load::{
    load_scenario, load_scenario_with_set, parse_scenario, parse_scenario_with_set,
    read_scenario_text,
};
pub use self::options::{router_load_options, set_router_load_options};
pub use self::set::{PROFILE_SET_PATH, apply_set, parse_set_value};
pub use self::validated::{DEFAULT_EPOCH, RouterSource, Scenario};
pub use crate::expect::Expectation;
