//! The fleet keys of a scenario's inline `router:` mapping (`replicas`, `load_balancer`,
//! `state`, `store`), taken out of the router tree before the engine's config loader sees it:
//! they describe routersim's deployment of the router, not LiteLLM's config.
//!
//! Read by hand from the tree (after `set`/`--set` are applied, so they sweep like any router
//! key) so that every mistake names its YAML path.

use std::time::Duration;

use routersim_mock_providers::duration::parse_duration;
use serde_json::{Map, Value};

/// The keys this module takes out of the router tree.
pub const FLEET_KEYS: [&str; 4] = ["replicas", "load_balancer", "state", "store"];

/// The most replicas one simulation runs (each is a full router with its own state).
pub const MAX_REPLICAS: usize = 1024;

/// How user requests are spread over the replicas.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Balancer {
    /// Replica 0, 1, …, N−1, 0, … in arrival order.
    #[default]
    RoundRobin,
    /// A uniform draw per request from the run's seeded `balancer` stream.
    Random,
    /// The replica with the fewest requests in flight (ties round robin).
    LeastConnections,
}

/// Where each replica keeps its cooldowns and allowed-fails counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StateMode {
    /// In each replica's memory (LiteLLM's default without `redis_host`).
    #[default]
    PerProcess,
    /// In one simulated shared store ([`crate::fleet::store`]).
    Shared,
}

/// What a replica does while the shared store does not answer (DeltaLLM's
/// `redis_degraded_mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FailureMode {
    /// Keep routing on process-local health state; the store is authoritative again once it
    /// answers.
    #[default]
    FailOpen,
    /// Health transitions fail: no cooldown is written anywhere while the store is out.
    FailClosed,
}

/// A window in which the shared store misbehaves (`router.store.faults`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreFault {
    /// Start, since the run start.
    pub from: Duration,
    /// End (exclusive).
    pub to: Duration,
    /// What happens.
    pub kind: StoreFaultKind,
}

/// What a store fault does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreFaultKind {
    /// `store_outage`: the store answers nothing.
    Outage,
    /// `store_latency`: every read and write takes this much longer to land.
    Latency(Duration),
}

/// The simulated shared store (`router.store`, only with `state: shared`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreModel {
    /// How stale a replica's reads are: it sees the store as it was this long ago.
    pub read_latency: Duration,
    /// How long a write takes to reach the store (other replicas see it only then).
    pub write_latency: Duration,
    /// How long a replica trusts a store read that found no cooldown before reading that
    /// key again (LiteLLM 1.110.2 with Redis, observed: 1 s per process and key; zero reads
    /// on every lookup). A live cooldown in the replica's memory is never read again while it
    /// lasts.
    pub miss_ttl: Duration,
    /// Allowed-fails counters are incremented atomically in the store (LiteLLM's awaited
    /// `INCRBYFLOAT`, DeltaLLM's Lua scripts); otherwise each replica reads the count, adds
    /// its failure and writes it back (a concurrent update in between is lost).
    pub atomic_counters: bool,
    /// What a replica does while the store is out.
    pub failure_mode: FailureMode,
    /// Outages and added latency.
    pub faults: Vec<StoreFault>,
}

impl Default for StoreModel {
    fn default() -> Self {
        Self {
            read_latency: Duration::from_millis(1),
            write_latency: Duration::from_millis(1),
            miss_ttl: Duration::from_secs(1),
            atomic_counters: true,
            failure_mode: FailureMode::FailOpen,
            faults: Vec::new(),
        }
    }
}

/// The fleet a scenario runs: one replica and per-process state unless it says otherwise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FleetConfig {
    /// Router replicas (at least 1).
    pub replicas: usize,
    /// How requests are spread over them.
    pub balancer: Balancer,
    /// Where their state lives.
    pub state: StateMode,
    /// The shared store (read only with `state: shared`).
    pub store: StoreModel,
    /// `state` was not written and `router_settings.redis_host` made it `shared` (only with
    /// more than one replica).
    pub state_from_redis_host: bool,
}

impl Default for FleetConfig {
    fn default() -> Self {
        Self {
            replicas: 1,
            balancer: Balancer::default(),
            state: StateMode::default(),
            store: StoreModel::default(),
            state_from_redis_host: false,
        }
    }
}

impl FleetConfig {
    /// True for a plain single router (every report as before fleets existed).
    pub fn is_single(&self) -> bool {
        self.replicas == 1
    }
}

/// A fleet key's mistake: its path under the router tree (`replicas`, `store.faults[0].to`)
/// and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetKeyError {
    /// The path under `router`.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

fn err(path: impl Into<String>, message: impl Into<String>) -> FleetKeyError {
    FleetKeyError {
        path: path.into(),
        message: message.into(),
    }
}

/// Takes the fleet keys out of `tree` (the router config, `set` already applied) and reads
/// them. `deltallm` says whether the router runs DeltaLLM's rules (its replicas read the
/// store on every lookup by default: `miss_ttl` 0). A `router:` mapping nested in the tree (what
/// `--set router.replicas=4` writes, since `set` paths are relative to the router config) is
/// read as the same keys.
pub fn take_fleet_config(tree: &mut Value, deltallm: bool) -> Result<FleetConfig, FleetKeyError> {
    let Value::Object(map) = tree else {
        return Ok(FleetConfig::default());
    };
    let mut keys = Map::new();
    for key in FLEET_KEYS {
        if let Some(v) = map.remove(key) {
            keys.insert(key.to_string(), v);
        }
    }
    if let Some(nested) = map.remove("router") {
        let Value::Object(nested) = nested else {
            return Err(err(
                "router",
                "expected a mapping of fleet keys (replicas, …)",
            ));
        };
        for (key, v) in nested {
            if !FLEET_KEYS.contains(&key.as_str()) {
                return Err(err(
                    format!("router.{key}"),
                    format!(
                        "unknown fleet key; expected one of {}",
                        FLEET_KEYS.join(", ")
                    ),
                ));
            }
            keys.insert(key, v);
        }
    }
    let redis_host = map
        .get("router_settings")
        .and_then(|s| s.get("redis_host"))
        .is_some_and(|v| !v.is_null());
    read_fleet(&keys, redis_host, deltallm)
}

fn read_fleet(
    keys: &Map<String, Value>,
    redis_host: bool,
    deltallm: bool,
) -> Result<FleetConfig, FleetKeyError> {
    let mut fleet = FleetConfig::default();
    if let Some(v) = keys.get("replicas").filter(|v| !v.is_null()) {
        let n = v.as_u64().ok_or_else(|| {
            err(
                "replicas",
                format!("expected a whole number of router replicas (1 or more), found {v}"),
            )
        })?;
        if n == 0 || n > MAX_REPLICAS as u64 {
            return Err(err(
                "replicas",
                format!("{n} replicas: expected 1 to {MAX_REPLICAS}"),
            ));
        }
        fleet.replicas = n as usize;
    }
    if let Some(v) = keys.get("load_balancer").filter(|v| !v.is_null()) {
        fleet.balancer = match v.as_str() {
            Some("round_robin") => Balancer::RoundRobin,
            Some("random") => Balancer::Random,
            Some("least_connections") => Balancer::LeastConnections,
            _ => {
                return Err(err(
                    "load_balancer",
                    format!(
                        "unknown load balancer {v}; expected round_robin, random or least_connections"
                    ),
                ));
            }
        };
    }
    match keys.get("state").filter(|v| !v.is_null()) {
        Some(v) => {
            fleet.state = match v.as_str() {
                Some("per_process") => StateMode::PerProcess,
                Some("shared") => StateMode::Shared,
                _ => {
                    return Err(err(
                        "state",
                        format!("unknown state {v}; expected per_process or shared"),
                    ));
                }
            };
        }
        // One replica sharing a store with no one is per-process state: then redis_host
        // changes nothing (and stays a key routersim does not model).
        None if redis_host && fleet.replicas > 1 => {
            fleet.state = StateMode::Shared;
            fleet.state_from_redis_host = true;
        }
        None => {}
    }
    if deltallm {
        // DeltaLLM reads the shared health state on every admission (one pipeline or MGET).
        fleet.store.miss_ttl = Duration::ZERO;
    }
    if let Some(store) = keys.get("store").filter(|v| !v.is_null()) {
        if fleet.state != StateMode::Shared {
            return Err(err(
                "store",
                "the store model applies only with `state: shared` (the replicas keep their \
                 state in memory otherwise); set `state: shared` or drop `store`",
            ));
        }
        read_store(store, &mut fleet.store)?;
    }
    Ok(fleet)
}

const STORE_KEYS: &str =
    "read_latency, write_latency, miss_ttl, atomic_counters, failure_mode, faults";

fn read_store(v: &Value, store: &mut StoreModel) -> Result<(), FleetKeyError> {
    let Value::Object(map) = v else {
        return Err(err("store", format!("expected a mapping ({STORE_KEYS})")));
    };
    for (key, v) in map {
        let path = format!("store.{key}");
        match key.as_str() {
            "read_latency" => store.read_latency = duration(&path, v)?,
            "write_latency" => store.write_latency = duration(&path, v)?,
            "miss_ttl" => store.miss_ttl = duration(&path, v)?,
            "atomic_counters" => {
                store.atomic_counters = v
                    .as_bool()
                    .ok_or_else(|| err(&path, format!("expected true or false, found {v}")))?;
            }
            "failure_mode" => {
                store.failure_mode = match v.as_str() {
                    Some("fail_open") => FailureMode::FailOpen,
                    Some("fail_closed") => FailureMode::FailClosed,
                    _ => {
                        return Err(err(
                            &path,
                            format!("unknown failure mode {v}; expected fail_open or fail_closed"),
                        ));
                    }
                };
            }
            "faults" => store.faults = read_faults(v)?,
            _ => {
                return Err(err(
                    &path,
                    format!("unknown store key; expected one of {STORE_KEYS}"),
                ));
            }
        }
    }
    Ok(())
}

fn read_faults(v: &Value) -> Result<Vec<StoreFault>, FleetKeyError> {
    let Value::Array(items) = v else {
        return Err(err("store.faults", "expected a list of store faults"));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| read_fault(&format!("store.faults[{i}]"), item))
        .collect()
}

fn read_fault(path: &str, v: &Value) -> Result<StoreFault, FleetKeyError> {
    let Value::Object(map) = v else {
        return Err(err(
            path,
            "expected {kind: store_outage, from, to} or {kind: store_latency, from, to, latency}",
        ));
    };
    for key in map.keys() {
        if !["kind", "from", "to", "latency"].contains(&key.as_str()) {
            return Err(err(
                format!("{path}.{key}"),
                "unknown store fault key; expected kind, from, to, latency",
            ));
        }
    }
    let get = |key: &str| {
        map.get(key)
            .ok_or_else(|| err(format!("{path}.{key}"), format!("missing `{key}`")))
    };
    let from = duration(&format!("{path}.from"), get("from")?)?;
    let to = duration(&format!("{path}.to"), get("to")?)?;
    if to <= from {
        return Err(err(format!("{path}.to"), "`to` must be after `from`"));
    }
    let kind = match get("kind")?.as_str() {
        Some("store_outage") => {
            if map.contains_key("latency") {
                return Err(err(
                    format!("{path}.latency"),
                    "a store_outage answers nothing: `latency` belongs to store_latency",
                ));
            }
            StoreFaultKind::Outage
        }
        Some("store_latency") => {
            StoreFaultKind::Latency(duration(&format!("{path}.latency"), get("latency")?)?)
        }
        _ => {
            return Err(err(
                format!("{path}.kind"),
                format!(
                    "unknown store fault {}; expected store_outage or store_latency",
                    get("kind")?
                ),
            ));
        }
    };
    Ok(StoreFault { from, to, kind })
}

fn duration(path: &str, v: &Value) -> Result<Duration, FleetKeyError> {
    let text = v.as_str().ok_or_else(|| {
        err(
            path,
            format!("expected a duration such as 5ms or 1s, found {v}"),
        )
    })?;
    parse_duration(text).map_err(|e| err(path, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(yaml: serde_json::Value) -> Result<FleetConfig, FleetKeyError> {
        let mut tree = yaml;
        take_fleet_config(&mut tree, false)
    }

    #[test]
    fn keys_are_taken_out_and_read() -> Result<(), FleetKeyError> {
        let mut tree = serde_json::json!({
            "model_list": [],
            "replicas": 3,
            "load_balancer": "least_connections",
            "state": "shared",
            "store": {"write_latency": "20ms", "faults": [
                {"kind": "store_outage", "from": "1s", "to": "2s"},
                {"kind": "store_latency", "from": "0s", "to": "5s", "latency": "50ms"}
            ]}
        });
        let fleet = take_fleet_config(&mut tree, false)?;
        assert_eq!(tree, serde_json::json!({"model_list": []}));
        assert_eq!(fleet.replicas, 3);
        assert_eq!(fleet.balancer, Balancer::LeastConnections);
        assert_eq!(fleet.state, StateMode::Shared);
        assert_eq!(fleet.store.write_latency, Duration::from_millis(20));
        assert_eq!(fleet.store.faults.len(), 2);
        Ok(())
    }

    #[test]
    fn mistakes_name_their_path() {
        let path = |v| read(v).err().map(|e| e.path);
        assert_eq!(
            path(serde_json::json!({"replicas": 0})).as_deref(),
            Some("replicas")
        );
        assert_eq!(
            path(serde_json::json!({"load_balancer": "sticky"})).as_deref(),
            Some("load_balancer")
        );
        assert_eq!(
            path(serde_json::json!({"state": "redis"})).as_deref(),
            Some("state")
        );
        assert_eq!(
            path(serde_json::json!({"store": {"read_latency": "1ms"}})).as_deref(),
            Some("store")
        );
    }

    #[test]
    fn redis_host_makes_state_shared_unless_written() -> Result<(), FleetKeyError> {
        let fleet =
            read(serde_json::json!({"router_settings": {"redis_host": "h"}, "replicas": 2}))?;
        assert!(fleet.state == StateMode::Shared && fleet.state_from_redis_host);
        let fleet = read(serde_json::json!({"router_settings": {"redis_host": "h"}}))?;
        assert!(fleet.state == StateMode::PerProcess && !fleet.state_from_redis_host);
        let fleet = read(serde_json::json!({
            "router_settings": {"redis_host": "h"}, "state": "per_process"
        }))?;
        assert_eq!(fleet.state, StateMode::PerProcess);
        Ok(())
    }
}
