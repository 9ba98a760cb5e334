//! The validated scenario: what the loader produces and the runner reads.
//!
//! Separate from the loader so that the runner, `check` and the other commands depend on the
//! result only, not on how a file becomes one.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use routersim_engine::config::RouterConfig;
use routersim_engine::contract::Contract;
use routersim_mock_providers::{FaultSpec, ProviderSpec};
use serde_json::Value;

use super::golden::GoldenSettings;
use crate::expect::Expectation;
use crate::fleet::FleetConfig;
use crate::traffic::{Arrivals, TrafficSpec};
use crate::traffic_file::TrafficFile;
use crate::transport::Transport;

/// The wall clock at virtual time 0 when a scenario sets no `epoch`.
pub const DEFAULT_EPOCH: &str = "2026-01-01T00:00:00Z";

/// Where the router config came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RouterSource {
    /// The scenario's `router:` mapping.
    Inline,
    /// `router_file:`, resolved against the scenario's directory.
    File(PathBuf),
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
    pub fleet: FleetConfig,
    /// `set`: the overrides applied to the router config, in file order (path, value).
    pub set: Vec<(String, Value)>,
    /// `providers`, keyed by deployment id (each one exists in the router config).
    pub providers: BTreeMap<String, ProviderSpec>,
    /// `faults`, in file order (each target exists).
    pub faults: Vec<FaultSpec>,
    /// `contracts` (`profile: contract`), by name.
    pub contracts: BTreeMap<String, Arc<Contract>>,
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
    pub fn arrivals(&self) -> Arrivals {
        self.arrivals_with_seed(self.seed)
    }

    /// The traffic (`traffic`, then `traffic_file`'s rows) under another seed.
    pub fn arrivals_with_seed(&self, seed: u64) -> Arrivals {
        Arrivals::with_file(&self.traffic, self.traffic_file.as_ref(), seed)
    }

    /// Requests the traffic is expected to produce: `traffic` ([`Arrivals::expected_count`])
    /// plus the rows of `traffic_file`.
    pub fn expected_requests(&self) -> f64 {
        Arrivals::expected_count(&self.traffic)
            + self.traffic_file.as_ref().map_or(0.0, |f| f.rows as f64)
    }
}
