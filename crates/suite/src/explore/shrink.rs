//! Shrinking a violating scenario to a small one that still breaks the same invariant.
//!
//! Works on the YAML tree, greedily: each pass proposes smaller trees (a fault window or a
//! provider's quota, script or `then` gone, the duration halved with the traffic clipped to
//! it, a traffic entry gone, a rate or a count halved, a traffic entry no longer streamed); the
//! first that still breaks the same
//! invariant (same seed) is kept and the pass starts again; passes repeat until none makes
//! progress or the run budget is spent. The result is a file `routersim run` replays (seed and
//! faults inline) with fewer fault windows, a shorter duration and fewer requests.

use std::time::Duration;

use serde_json::Value;

use super::explorer::Explorer;
use super::invariants::{Invariant, Violation};
use super::scratch::Scratch;
use super::tree::to_yaml;
use routersim_sim::scenario::{Scenario, parse_scenario};
use routersim_sim::traffic::{Arrivals, TrafficSpec};

/// How big a scenario is, for the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    /// Fault windows.
    pub fault_windows: usize,
    /// Keys under `providers` that make trouble (quotas, scripts, `then`, `emits`).
    pub provider_faults: usize,
    /// The duration.
    pub duration: Duration,
    /// Arrivals with the seed.
    pub arrivals: u64,
}

/// A shrunk scenario.
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// The tree.
    pub tree: Value,
    /// Its violation (the same invariant as the original's).
    pub violation: Violation,
    /// Runs spent.
    pub runs: usize,
    /// Size before.
    pub before: Size,
    /// Size after.
    pub after: Size,
}

const PROVIDER_FAULT_KEYS: [&str; 6] = [
    "rpm_limit",
    "tpm_limit",
    "quota_retry_after_format",
    "script",
    "then",
    "emits",
];

/// Shrinks `tree`, which breaks `violation.invariant` with `seed`, within `budget` runs.
pub fn shrink(
    explorer: &Explorer,
    tree: Value,
    seed: u64,
    violation: Violation,
    budget: usize,
    scratch: &Scratch,
) -> Shrunk {
    let target = violation.invariant;
    let before = size(explorer, &tree, seed);
    let mut current = (tree, violation);
    let mut runs = 0;
    let passes: [fn(&Value, &Scenario) -> Vec<Value>; 6] = [
        drop_faults,
        drop_provider_faults,
        halve_duration,
        drop_traffic,
        halve_traffic,
        drop_streams,
    ];
    'outer: loop {
        let mut progressed = false;
        for pass in passes {
            loop {
                let Some(scenario) = parsed(explorer, &current.0) else {
                    break 'outer;
                };
                let mut accepted = false;
                for candidate in pass(&current.0, &scenario) {
                    if runs >= budget {
                        break 'outer;
                    }
                    runs += 1;
                    if let Some(v) = still_breaks(explorer, &candidate, seed, target, scratch) {
                        current = (candidate, v);
                        accepted = true;
                        progressed = true;
                        break;
                    }
                }
                if !accepted {
                    break;
                }
            }
        }
        if !progressed {
            break;
        }
    }
    let after = size(explorer, &current.0, seed);
    Shrunk {
        tree: current.0,
        violation: current.1,
        runs,
        before,
        after,
    }
}

fn still_breaks(
    explorer: &Explorer,
    tree: &Value,
    seed: u64,
    target: Invariant,
    scratch: &Scratch,
) -> Option<Violation> {
    let determinism = target == Invariant::Deterministic;
    let checked = explorer.check(tree, seed, determinism, scratch);
    checked
        .violation
        .map(|(v, _)| v)
        .filter(|v| v.invariant == target)
}

fn parsed(explorer: &Explorer, tree: &Value) -> Option<Scenario> {
    parse_scenario(&to_yaml(tree), explorer.path()).ok()
}

/// The size of a tree with a seed.
pub fn size(explorer: &Explorer, tree: &Value, seed: u64) -> Size {
    let scenario = parsed(explorer, tree);
    let provider_faults = tree
        .get("providers")
        .and_then(Value::as_object)
        .map_or(0, |providers| {
            providers
                .values()
                .filter_map(Value::as_object)
                .map(|p| {
                    PROVIDER_FAULT_KEYS
                        .iter()
                        .filter(|k| p.contains_key(**k))
                        .count()
                })
                .sum()
        });
    Size {
        fault_windows: tree
            .get("faults")
            .and_then(Value::as_array)
            .map_or(0, Vec::len),
        provider_faults,
        duration: scenario.as_ref().map_or(Duration::ZERO, |s| s.duration),
        arrivals: scenario.map_or(0, |s| Arrivals::new(&s.traffic, seed).count() as u64),
    }
}

fn ms(d: Duration) -> Value {
    Value::String(format!("{}ms", d.as_millis()))
}

/// Every fault window gone at once, then each one alone (last first).
fn drop_faults(tree: &Value, _: &Scenario) -> Vec<Value> {
    let n = tree
        .get("faults")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let mut out = Vec::new();
    if n > 1 {
        let mut all = tree.clone();
        if let Some(root) = all.as_object_mut() {
            root.remove("faults");
        }
        out.push(all);
    }
    for i in (0..n).rev() {
        let mut t = tree.clone();
        if let Some(list) = t.get_mut("faults").and_then(Value::as_array_mut) {
            list.remove(i);
            if list.is_empty()
                && let Some(root) = t.as_object_mut()
            {
                root.remove("faults");
            }
        }
        out.push(t);
    }
    out
}

/// Each provider's quota, script and `then` gone, one key at a time.
fn drop_provider_faults(tree: &Value, _: &Scenario) -> Vec<Value> {
    let mut out = Vec::new();
    let Some(providers) = tree.get("providers").and_then(Value::as_object) else {
        return out;
    };
    for (id, spec) in providers {
        let Some(spec) = spec.as_object() else {
            continue;
        };
        for key in PROVIDER_FAULT_KEYS {
            if spec.contains_key(key) {
                let mut t = tree.clone();
                if let Some(p) = t
                    .get_mut("providers")
                    .and_then(|p| p.get_mut(id))
                    .and_then(Value::as_object_mut)
                {
                    p.remove(key);
                }
                out.push(t);
            }
        }
    }
    out
}

/// The duration halved (to whole milliseconds, at least 1 ms), streams clipped to it and
/// entries past it dropped.
fn halve_duration(tree: &Value, scenario: &Scenario) -> Vec<Value> {
    let half = Duration::from_millis((scenario.duration.as_millis() / 2) as u64);
    if half.is_zero() {
        return Vec::new();
    }
    let mut t = tree.clone();
    if let Some(root) = t.as_object_mut() {
        root.insert("duration".into(), ms(half));
    }
    if let Some(list) = t.get_mut("traffic").and_then(Value::as_array_mut) {
        for i in (0..list.len()).rev() {
            let Some(spec) = scenario.traffic.get(i) else {
                continue;
            };
            match spec {
                TrafficSpec::Request(r) if r.at > half => {
                    list.remove(i);
                }
                TrafficSpec::Stream(s) if s.from >= half => {
                    list.remove(i);
                }
                TrafficSpec::Stream(s) => {
                    if let Some(entry) = list[i].as_object_mut() {
                        entry.insert("to".into(), ms(s.to.min(half)));
                    }
                }
                TrafficSpec::Request(_) => {}
            }
        }
    }
    vec![t]
}

/// Each traffic entry gone (last first), while more than one is left.
fn drop_traffic(tree: &Value, _: &Scenario) -> Vec<Value> {
    let n = tree
        .get("traffic")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if n < 2 {
        return Vec::new();
    }
    (0..n)
        .rev()
        .map(|i| {
            let mut t = tree.clone();
            if let Some(list) = t.get_mut("traffic").and_then(Value::as_array_mut) {
                list.remove(i);
            }
            t
        })
        .collect()
}

/// Each stream's rate halved (while above one per minute), each explicit count halved.
fn halve_traffic(tree: &Value, scenario: &Scenario) -> Vec<Value> {
    let mut out = Vec::new();
    for (i, spec) in scenario.traffic.iter().enumerate() {
        let (key, value) = match spec {
            TrafficSpec::Stream(s) if s.rate_per_sec / 2.0 >= 1.0 / 60.0 => {
                ("rate", Value::from(s.rate_per_sec / 2.0))
            }
            TrafficSpec::Request(r) if r.count > 1 => ("count", Value::from(r.count / 2)),
            _ => continue,
        };
        let mut t = tree.clone();
        if let Some(entry) = t
            .get_mut("traffic")
            .and_then(|l| l.get_mut(i))
            .and_then(Value::as_object_mut)
        {
            entry.insert(key.into(), value);
            out.push(t);
        }
    }
    out
}

/// Each traffic entry's `stream` key gone.
fn drop_streams(tree: &Value, _: &Scenario) -> Vec<Value> {
    let n = tree
        .get("traffic")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    (0..n)
        .filter_map(|i| {
            let mut t = tree.clone();
            let entry = t
                .get_mut("traffic")
                .and_then(|l| l.get_mut(i))
                .and_then(Value::as_object_mut)?;
            entry.remove("stream")?;
            Some(t)
        })
        .collect()
}
