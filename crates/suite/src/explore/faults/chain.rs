//! A continuation chain: fallback groups added to the router config so that a stream broken
//! after content is continued, and the continuation breaks again, to every length up to
//! `max_fallbacks` and past it.
//!
//! Shipped scenarios seldom have fallback groups whose deployments support assistant
//! prefill, so without this shape `explore` never sees a chained continuation (nor the
//! recursion that once overflowed the stack on one). The chain starts at a group the traffic
//! asks for: its streams break after content (a `model_group` window, so a group of several
//! deployments breaks on each), continuation is switched on, and `k` groups
//! `explore-chain-1` … `explore-chain-k` follow, each of one or two deployments that (mostly)
//! support prefill and break after a few tokens of their own (the last one is sometimes
//! healthy). Two shapes: each group's own chain (`from → chain-1`, `chain-1 → chain-2`, …), or
//! one list (`from → [chain-1, …, chain-k]`), which a continuation resumes, skipping the groups
//! its walk tried. `k` is drawn up to one past `max_fallbacks` (itself sometimes drawn lower).

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};

use super::target::{ChainShape, ContinuationChain, Targets};
use super::windows::{cut, stream_error};

/// The prefix of every group and deployment a chain adds.
pub const CHAIN_PREFIX: &str = "explore-chain-";

/// A chain for this seed, with its fault windows appended to `windows` and the traffic to
/// its first group streamed (`streamed`); `None` when no traffic entry asks for a group.
pub(super) fn chain(
    rng: &mut ChaCha8Rng,
    targets: &Targets,
    windows: &mut Vec<Value>,
    streamed: &mut Vec<(usize, Value)>,
) -> Option<ContinuationChain> {
    let asked: Vec<&String> = targets
        .groups
        .iter()
        .filter(|g| targets.traffic_models.contains(g))
        .collect();
    if asked.is_empty() {
        return None;
    }
    let from = asked[rng.random_range(0..asked.len())].clone();
    let max_fallbacks = rng.random_bool(0.3).then(|| rng.random_range(1..=5u32));
    let depth = max_fallbacks.unwrap_or(targets.max_fallbacks).clamp(1, 7);
    let k = rng.random_range(1..=depth + 1);
    let shape = if rng.random_bool(0.6) {
        ChainShape::Chained
    } else {
        ChainShape::List
    };
    let mut groups = Vec::new();
    for i in 1..=k {
        let name = format!("{CHAIN_PREFIX}{i}");
        let size = if rng.random_bool(0.7) { 1 } else { 2 };
        let deployments: Vec<(String, bool)> = ["a", "b"][..size]
            .iter()
            .map(|suffix| (format!("{name}-{suffix}"), !rng.random_bool(0.1)))
            .collect();
        groups.push((name, deployments));
    }
    windows.push(break_window("model_group", &from, 1..=30, rng));
    for (i, (_, deployments)) in groups.iter().enumerate() {
        let last = i + 1 == groups.len();
        for (id, _) in deployments {
            if last && rng.random_bool(0.5) {
                continue;
            }
            windows.push(break_window("deployment", id, 1..=10, rng));
        }
    }
    for (i, model) in targets.traffic_models.iter().enumerate() {
        if *model == from && !streamed.iter().any(|(j, _)| *j == i) {
            let value = if targets.traffic[i] {
                json!(1.0)
            } else {
                json!(true)
            };
            streamed.push((i, value));
        }
    }
    Some(ContinuationChain {
        from,
        groups,
        shape,
        max_fallbacks,
    })
}

/// A window from the start, for the whole run, in which `key: target`'s streams fail after
/// content: mostly a `stream_break` (its error one a continuation carries on from, or any),
/// sometimes another cut (an error frame, a truncation, a stall).
fn break_window(
    key: &str,
    target: &str,
    tokens: std::ops::RangeInclusive<u32>,
    rng: &mut ChaCha8Rng,
) -> Value {
    let mut entry = Map::new();
    entry.insert(key.into(), json!(target));
    if !rng.random_bool(0.6) {
        let probability = f64::from(rng.random_range(30..=99u32)) / 100.0;
        entry.insert("probability".into(), json!(probability));
    }
    let mut fault = Map::new();
    let name = match rng.random_range(0..10u32) {
        0..=6 => {
            fault.insert("after_tokens".into(), json!(rng.random_range(tokens)));
            if rng.random_bool(0.3) {
                stream_error(rng, &mut fault);
            }
            "stream_break"
        }
        7 => {
            cut(rng, &mut fault);
            stream_error(rng, &mut fault);
            "stream_error_frame"
        }
        8 => {
            cut(rng, &mut fault);
            "stream_truncated"
        }
        _ => {
            cut(rng, &mut fault);
            fault.insert(
                "for".into(),
                json!(format!("{}ms", rng.random_range(1..=30_000u32))),
            );
            "stream_stall"
        }
    };
    entry.insert(name.into(), Value::Object(fault));
    Value::Object(entry)
}

/// Adds the chain to a router config tree (the LiteLLM proxy config shape): its groups to
/// `model_list`, continuation on, its links to `router_settings.fallbacks` (after the
/// config's own, which are kept: from `router_settings`, else `litellm_settings`), and its
/// `max_fallbacks`.
pub fn add_to_router(router: &mut Value, chain: &ContinuationChain) {
    let Some(root) = router.as_object_mut() else {
        return;
    };
    let own = root
        .get("router_settings")
        .and_then(|s| s.get("fallbacks"))
        .or_else(|| {
            root.get("litellm_settings")
                .and_then(|s| s.get("fallbacks"))
        })
        .cloned()
        .unwrap_or_else(|| json!([]));
    if let Some(list) = root
        .entry("model_list")
        .or_insert_with(|| json!([]))
        .as_array_mut()
    {
        for (group, deployments) in &chain.groups {
            for (id, prefill) in deployments {
                list.push(json!({
                    "model_name": group,
                    "litellm_params": {"model": format!("openai/{group}")},
                    "model_info": {"id": id, "supports_assistant_prefill": prefill},
                }));
            }
        }
    }
    let settings = root.entry("router_settings").or_insert_with(|| json!({}));
    let Some(settings) = settings.as_object_mut() else {
        return;
    };
    settings.insert(
        "enable_mid_stream_fallback_continuation".into(),
        json!(true),
    );
    if let Some(max) = chain.max_fallbacks {
        settings.insert("max_fallbacks".into(), json!(max));
    }
    if let Value::Array(entries) = own {
        settings.insert("fallbacks".into(), Value::Array(linked(entries, chain)));
    }
}

/// The config's fallback entries with the chain's links added.
fn linked(mut entries: Vec<Value>, chain: &ContinuationChain) -> Vec<Value> {
    let names: Vec<&String> = chain.groups.iter().map(|(g, _)| g).collect();
    let first_targets: Vec<&String> = match chain.shape {
        ChainShape::Chained => names.iter().take(1).copied().collect(),
        ChainShape::List => names.clone(),
    };
    let existing = entries
        .iter_mut()
        .find_map(|e| e.get_mut(&chain.from).and_then(Value::as_array_mut));
    match existing {
        Some(targets) => targets.extend(first_targets.iter().map(|t| json!(t))),
        None => entries.push(json!({ chain.from.clone(): first_targets })),
    }
    if chain.shape == ChainShape::Chained {
        for pair in names.windows(2) {
            entries.push(json!({ pair[0].clone(): [pair[1]] }));
        }
    }
    entries
}
