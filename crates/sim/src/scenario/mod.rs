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
//! Layout: this file holds the public types (`Scenario`, `ScenarioError`, …); `load` reads
//! and parses a scenario file; `router` loads a `router_file`; `set` applies `set` and
//! `--set` overrides; `validate` checks the traffic against the router; `values` reads the
//! small typed values (`count`, `rate`, `stream`, `format`, fallbacks). Every public item is
//! re-exported here.

mod contracts;
pub mod golden;
mod load;
mod router;
mod set;
mod validate;
mod values;

pub use self::golden::GoldenSettings;
pub use self::load::router_load_options;
pub use self::load::{
    PROFILE_SET_PATH, load_scenario, load_scenario_with_set, parse_scenario,
    parse_scenario_with_set, read_scenario_text, set_router_load_options,
};
pub use self::set::{apply_set, parse_set_value};

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use routersim_engine::config::RouterConfig;
use routersim_mock_providers::{FaultSpec, ProviderSpec};
use serde_json::Value;

use crate::traffic::TrafficSpec;
use crate::traffic_file::TrafficFile;
use crate::transport::Transport;

/// The wall clock at virtual time 0 when a scenario sets no `epoch`.
pub const DEFAULT_EPOCH: &str = "2026-01-01T00:00:00Z";

/// A scenario that cannot be used: where, and what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ScenarioError {
    /// The file at fault (the scenario, or its `router_file`).
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: Option<u64>,
    /// 1-based column, when known.
    pub column: Option<u64>,
    /// YAML path in that file (`traffic[2].rate`); empty for the file as a whole.
    pub path: String,
    /// What was expected.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        if !self.path.is_empty() {
            write!(f, ": {}", self.path)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Where the router config came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RouterSource {
    /// The scenario's `router:` mapping.
    Inline,
    /// `router_file:`, resolved against the scenario's directory.
    File(PathBuf),
}

/// A bound a run's metric must meet.
#[derive(Clone, Debug, PartialEq)]
pub struct Expectation {
    /// The metric's name (checked by the runner).
    pub metric: String,
    /// Lower bound, inclusive.
    pub min: Option<f64>,
    /// Upper bound, inclusive.
    pub max: Option<f64>,
    /// `window: 5m..15m`: the bound is on the requests that arrived in this span of the run
    /// only; `None`: the whole run.
    pub window: Option<routersim_report::windows::TimeWindow>,
}

/// A validated scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The file it was read from.
    pub file: PathBuf,
    /// `name` (default: the file's stem).
    pub name: String,
    /// `description` (default empty).
    pub description: String,
    /// `seed` (default 0).
    pub seed: u64,
    /// `duration`: generated traffic ends here; the run ends when all traffic is served.
    pub duration: Duration,
    /// `epoch` as Unix milliseconds: the wall clock at virtual time 0.
    pub epoch_unix_ms: i64,
    /// The router config.
    pub router: RouterConfig,
    /// Where it came from.
    pub router_source: RouterSource,
    /// The fleet keys of `router:` (`replicas`, `load_balancer`, `state`, `store`): one
    /// replica with per-process state unless set.
    pub fleet: crate::fleet::FleetConfig,
    /// `set`: the overrides applied to the router config, in file order (path, value).
    pub set: Vec<(String, Value)>,
    /// `providers`, keyed by deployment id (each one exists in the router config).
    pub providers: BTreeMap<String, ProviderSpec>,
    /// `faults`, in file order (each target exists).
    pub faults: Vec<FaultSpec>,
    /// `contracts` (`profile: contract`), by name.
    pub contracts: BTreeMap<String, std::sync::Arc<routersim_engine::contract::Contract>>,
    /// `traffic`, in file order.
    pub traffic: Vec<TrafficSpec>,
    /// `traffic_file`, validated (its rows are read again as the run goes).
    pub traffic_file: Option<TrafficFile>,
    /// `expect`, in file order.
    pub expect: Vec<Expectation>,
    /// How `check` compares a run with its golden (`golden:`).
    pub golden: GoldenSettings,
    /// `transport` (default `memory`): how the router reaches the fake providers.
    pub transport: Transport,
    /// `client_retries` (default 0): a client above the router sends a failed user request
    /// again, at once and with the same id (its operation id), up to this many times.
    pub client_retries: u32,
    /// Which runtime runs it (the virtual-time executor unless `--runtime tokio` says so):
    /// not a key of the file, since the same file must run on both.
    pub runtime: routersim_runtime::RuntimeKind,
    /// Where the virtual executor's `Instant`s count from (none: now). No output may depend
    /// on it; `tests/wall_clock.rs` moves it to catch any simulated path reading the wall
    /// clock.
    pub virtual_origin: Option<std::time::Instant>,
}

impl Scenario {
    /// The traffic, as a lazy time-ordered iterator of requests.
    pub fn arrivals(&self) -> crate::traffic::Arrivals {
        self.arrivals_with_seed(self.seed)
    }

    /// The traffic (`traffic`, then `traffic_file`'s rows) under another seed.
    pub fn arrivals_with_seed(&self, seed: u64) -> crate::traffic::Arrivals {
        crate::traffic::Arrivals::with_file(&self.traffic, self.traffic_file.as_ref(), seed)
    }

    /// Requests the traffic is expected to produce: `traffic`
    /// ([`Arrivals::expected_count`](crate::traffic::Arrivals::expected_count)) plus the
    /// rows of `traffic_file`.
    pub fn expected_requests(&self) -> f64 {
        crate::traffic::Arrivals::expected_count(&self.traffic)
            + self.traffic_file.as_ref().map_or(0.0, |f| f.rows as f64)
    }
}
