use std::collections::BTreeSet;
use std::time::Duration;

use routersim_engine::event::ValidationReason;
use routersim_engine::failure::FailureKind;
use routersim_mock_providers::spec::{
    EmptyStream, FaultEffect, FaultSpec, ProviderSpec, StreamFault,
};
use serde_json::{Map, Value};

use super::*;

fn targets() -> Targets {
    Targets {
        deployments: vec!["a".into(), "b".into()],
        groups: vec!["g".into()],
        duration: Duration::from_secs(120),
        traffic: vec![true, false],
        traffic_models: vec!["g".into(), "g".into()],
        max_fallbacks: 5,
        scripted: Vec::new(),
    }
}

const SEEDS: u64 = 1_000;

#[test]
fn a_seed_always_gives_the_same_mix_and_seeds_differ() {
    let t = targets();
    assert_eq!(generate(7, &t), generate(7, &t));
    let distinct: BTreeSet<String> = (0..50).map(|s| format!("{:?}", generate(s, &t))).collect();
    assert!(distinct.len() > 40, "{} distinct mixes", distinct.len());
}

/// What a fault window does, by name: one name per variant of the scenario format's closed
/// list (an exhaustive match, so a new kind of fault does not compile here until the
/// generator is taught it and this list names it).
fn kind_of(spec: &FaultSpec) -> String {
    let empty = |e: &EmptyStream| match e {
        EmptyStream::RoleOnly => "role_only",
        EmptyStream::Nothing => "true",
    };
    match &spec.effect {
        FaultEffect::Error(e) if e.lost_after_send.is_some() => "connection_lost_after_send".into(),
        FaultEffect::Error(e) => format!("error {}", e.kind.as_str()),
        FaultEffect::Slowdown(_) => "slowdown".into(),
        FaultEffect::InvalidResponse(r) => format!("invalid_response {}", r.as_str()),
        FaultEffect::Stream(s) => match s {
            StreamFault::Break { .. } => "stream_break".into(),
            StreamFault::ErrorFrame { .. } => "stream_error_frame".into(),
            StreamFault::Truncated { .. } => "stream_truncated".into(),
            StreamFault::Stall { .. } => "stream_stall".into(),
            StreamFault::Empty(e) => format!("stream_empty {}", empty(e)),
            StreamFault::NoFinish(e) => format!("stream_no_finish {}", empty(e)),
        },
    }
}

#[test]
fn the_mix_covers_every_kind_of_fault_the_scenario_format_has() {
    let t = targets();
    let windows: Vec<Value> = (0..SEEDS).flat_map(|s| generate(s, &t).windows).collect();
    let mut seen = BTreeSet::new();
    for w in &windows {
        let spec: FaultSpec = serde_json::from_value(w.clone())
            .unwrap_or_else(|e| panic!("a generated window does not parse: {e}\n{w}"));
        seen.insert(kind_of(&spec));
    }
    let mut want: BTreeSet<String> = FailureKind::ALL
        .iter()
        .filter(|k| **k != FailureKind::RouterRateLimit)
        .map(|k| format!("error {}", k.as_str()))
        .collect();
    want.extend(
        ValidationReason::ALL
            .iter()
            .map(|r| format!("invalid_response {}", r.as_str())),
    );
    for name in [
        "connection_lost_after_send",
        "slowdown",
        "stream_break",
        "stream_error_frame",
        "stream_truncated",
        "stream_stall",
        "stream_empty role_only",
        "stream_empty true",
        "stream_no_finish role_only",
        "stream_no_finish true",
    ] {
        want.insert(name.into());
    }
    let missing: Vec<&String> = want.difference(&seen).collect();
    assert!(
        missing.is_empty(),
        "never generated in {SEEDS} seeds: {missing:?}"
    );
    // Every form of Retry-After, explicit statuses, group targets.
    let text = serde_json::to_string(&windows).unwrap_or_default();
    for needle in [
        "\"retry_after\":\"0ms\"",
        "\"retry_after_format\":\"http-date\"",
        "\"retry_after_format\":\"ms\"",
        "\"retry_after_format\":\"seconds\"",
        "\"status\":",
        "\"executed\":",
        "model_group",
    ] {
        assert!(text.contains(needle), "no {needle} in {SEEDS} seeds");
    }
    let over_a_minute = windows.iter().any(|w| {
        w.get("retry_after")
            .and_then(Value::as_str)
            .and_then(|v| v.strip_suffix("ms"))
            .and_then(|v| v.parse::<u64>().ok())
            .is_some_and(|v| v > 60_000)
    });
    assert!(over_a_minute);
    assert!((0..400).any(|s| generate(s, &t).windows.is_empty()));
    assert!((0..400).any(|s| !generate(s, &t).streamed.is_empty()));
}

#[test]
fn the_provider_keys_cover_quotas_emits_and_degenerate_answers_and_parse() {
    let t = targets();
    let mut keys = BTreeSet::new();
    for seed in 0..SEEDS {
        let mut providers: Map<String, Value> = Map::new();
        for (d, key, value) in generate(seed, &t).quotas {
            if key == "script" {
                keys.insert(format!("script {value}"));
            } else {
                keys.insert(key.clone());
            }
            let entry = providers
                .entry(d)
                .or_insert_with(|| Value::Object(Map::new()));
            entry.as_object_mut().unwrap().insert(key, value);
        }
        for (d, spec) in providers {
            let parsed: Result<ProviderSpec, _> = serde_json::from_value(spec.clone());
            assert!(
                parsed.is_ok(),
                "seed {seed}: providers.{d} {spec}: {parsed:?}"
            );
        }
    }
    for key in [
        "rpm_limit",
        "tpm_limit",
        "quota_retry_after_format",
        "emits",
    ] {
        assert!(keys.contains(key), "no {key} in {SEEDS} seeds: {keys:?}");
    }
    for degenerate in ["empty_choices", "content_filter"] {
        assert!(
            keys.iter()
                .any(|k| k.starts_with("script") && k.contains(degenerate)),
            "no {degenerate} script in {SEEDS} seeds: {keys:?}"
        );
    }
    // A deployment with a script of its own keeps it.
    let scripted = Targets {
        scripted: vec!["a".into(), "b".into()],
        ..targets()
    };
    assert!((0..SEEDS).all(|s| {
        generate(s, &scripted)
            .quotas
            .iter()
            .all(|(_, k, _)| k != "script")
    }));
}

#[test]
fn continuation_chains_come_in_both_shapes_and_every_length_past_max_fallbacks() {
    let t = targets();
    let chains: Vec<ContinuationChain> = (0..SEEDS).filter_map(|s| generate(s, &t).chain).collect();
    assert!(chains.len() > SEEDS as usize / 6, "{} chains", chains.len());
    for shape in [ChainShape::Chained, ChainShape::List] {
        assert!(
            chains.iter().any(|c| c.shape == shape),
            "no {shape:?} chain"
        );
    }
    // Every length from one continuation to one past the deepest max_fallbacks allows.
    let lengths: BTreeSet<(Option<u32>, usize)> = chains
        .iter()
        .map(|c| (c.max_fallbacks, c.groups.len()))
        .collect();
    for k in 1..=6 {
        assert!(
            lengths.contains(&(None, k)),
            "no chain of {k} at max_fallbacks 5"
        );
    }
    assert!(
        lengths.contains(&(Some(1), 2)),
        "no chain past max_fallbacks 1"
    );
    assert!(chains.iter().all(|c| c.from == "g"));
    // Some deployments cannot continue (no prefill); most can.
    let prefill: Vec<bool> = chains
        .iter()
        .flat_map(|c| c.groups.iter().flat_map(|(_, d)| d.iter().map(|(_, p)| *p)))
        .collect();
    assert!(prefill.contains(&false) && prefill.iter().filter(|p| **p).count() > prefill.len() / 2);
    // No traffic to a group: no chain.
    let none = Targets {
        traffic_models: vec!["alias".into(), "alias".into()],
        ..targets()
    };
    assert!((0..200).all(|s| generate(s, &none).chain.is_none()));
}
