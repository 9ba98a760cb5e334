//! The import closes the loop, with the real thing: each recorded incident (a shipped scenario
//! played through the real LiteLLM 1.110.2 proxy by `routersim drive`, its logging callback
//! writing the standard payload; `tools/litellm-import/record.sh`) is imported with the same
//! proxy config, and measured on the two things the scenario that drove the fake providers
//! knows: the fault windows recovered against the ones injected (start and end per deployment
//! and kind, within one 10 s bucket), and the replay of the imported scenario against the live
//! run (calls per deployment, failed calls per deployment and kind, failed requests, requests
//! that fell back: within 10 %, or one for counts under ten; p50/p99 per window are printed
//! side by side), under routersim's default profile and under `litellm-1.110`.
//!
//! `recorded-storms/` holds more recordings of the 429 storm, each of a live run whose
//! cooldowns ran later than its replay's (the proxy writes each cooldown after its own
//! processing, which the log does not show), so the replay probed `gpt-a` before the live run
//! did, and a window ended at the next observed success failed that probe and cooled `gpt-a`
//! for one more Retry-After: `1/` by an arrival (74 calls against 97 live), `2/` by a burst of
//! nine arrivals the proxy queued while it stalled on the last 429 (it answered 267 ms late and
//! retried 173 ms after that; 79 calls against 96). Ended halfway to that success, the replays
//! hold.
//!
//! Times: the injected windows count from drive's start, the log's from its first row (the
//! first provider call, which `provider_calls.csv` dates from the same start), so the truth is
//! shifted by that first call's instant. Fallbacks are compared as requests that fell back
//! (`fallback_rate × requests`): the live report counts a hop only where a provider call shows
//! it, and LiteLLM's fallback out of a group whose deployments are all cooling calls none.

use std::collections::BTreeMap;
use std::path::Path;

use routersim_import::series::SeriesKind;
use routersim_mock_providers::spec::{FaultEffect, FaultTarget, StreamFault};
use routersim_sim::run::{RunOptions, run};
use routersim_sim::scenario::{PROFILE_SET_PATH, load_scenario, load_scenario_with_set};

use crate::common::{
    attempts_by_deployment, failures_by_kind, fixtures, import_log, provider_calls, recorded,
    scratch,
};

/// One bucket: how far a recovered boundary may be from the injected one, seconds.
const BUCKET_S: f64 = 10.0;

/// An injected window, in the log's time.
#[derive(Debug)]
struct Injected {
    deployment: String,
    kind: SeriesKind,
    from: f64,
    to: f64,
}

fn injected(name: &str, offset: f64, span: f64) -> Vec<Injected> {
    let truth = load_scenario(&fixtures().join(format!("incidents/{name}.yaml"))).unwrap();
    truth
        .faults
        .iter()
        .map(|f| {
            let FaultTarget::Deployment(deployment) = &f.target else {
                panic!("{name}: a group fault")
            };
            let kind = match &f.effect {
                FaultEffect::Error(e) => SeriesKind::Error(e.kind),
                FaultEffect::Stream(StreamFault::Break { error, .. }) => {
                    SeriesKind::Cut(error.kind)
                }
                other => panic!("{name}: {other:?}"),
            };
            Injected {
                deployment: deployment.clone(),
                kind,
                from: f.from.as_secs_f64() - offset,
                to: f.to.map_or(span, |t| t.as_secs_f64() - offset),
            }
        })
        .collect()
}

fn within(replay: f64, live: f64) -> bool {
    (replay - live).abs() <= (0.1 * live).max(1.0)
}

/// Imports one incident, replays it, and returns what failed (empty: all held), with a line of
/// numbers for the log.
fn check(name: &str, dir: &Path) -> (Vec<String>, String) {
    let work = scratch(&format!(
        "loop-{name}-{}",
        dir.parent().unwrap().file_name().unwrap().to_string_lossy()
    ));
    let imported = import_log(
        &dir.join("standard_logging.jsonl.gz"),
        Some(&dir.join("litellm.yaml")),
        &work.join("import"),
    );
    let calls = provider_calls(dir);
    let offset = calls.iter().map(|c| c.at_ms).fold(f64::INFINITY, f64::min) / 1000.0;
    let mut failures = Vec::new();
    let truth = injected(name, offset, imported.span);
    let mut lines = format!("{name} ({}):\n", dir.display());
    for t in &truth {
        let found = imported
            .faults
            .iter()
            .filter(|f| !f.background)
            .find(|f| *f.deployment == *t.deployment && f.kind == t.kind);
        let Some(f) = found else {
            failures.push(format!(
                "{name}: {} {} not recovered: {:?}",
                t.deployment,
                t.kind.name(),
                imported.faults
            ));
            continue;
        };
        let (from, to) = (
            f.from - imported.t0,
            f.to.map_or(imported.span, |to| to - imported.t0),
        );
        lines.push_str(&format!(
            "  {} {}: injected [{:.3}, {:.3}) s, recovered [{from:.3}, {to:.3}) s, p {:.3}\n",
            t.deployment,
            t.kind.name(),
            t.from,
            t.to,
            f.probability
        ));
        if (from - t.from).abs() > BUCKET_S || (to - t.to).abs() > BUCKET_S {
            failures.push(format!(
                "{name}: {} {} recovered [{from:.3}, {to:.3}) s, injected [{:.3}, {:.3}) s: more than a bucket apart",
                t.deployment,
                t.kind.name(),
                t.from,
                t.to
            ));
        }
    }
    for f in imported.faults.iter().filter(|f| !f.background) {
        if !truth
            .iter()
            .any(|t| *t.deployment == *f.deployment && t.kind == f.kind)
        {
            failures.push(format!("{name}: a window nothing injected: {f:?}"));
        }
    }
    compare_replay(name, dir, &work, &calls, &mut failures, &mut lines);
    (failures, lines)
}

/// The profiles a replay is held under: the scenario's own (routersim's default, LiteLLM's
/// documented rules) and the code of the LiteLLM release that recorded the incidents.
const PROFILES: [Option<&str>; 2] = [None, Some("litellm-1.110")];

fn compare_replay(
    name: &str,
    dir: &Path,
    work: &Path,
    calls: &[crate::common::ProviderCall],
    failures: &mut Vec<String>,
    lines: &mut String,
) {
    for profile in PROFILES {
        let path = work.join("import/scenario.yaml");
        let scenario = match profile {
            None => load_scenario(&path).unwrap(),
            Some(p) => {
                load_scenario_with_set(&path, &[(PROFILE_SET_PATH.into(), p.into())]).unwrap()
            }
        };
        let out = work.join(format!("replay-{}", profile.unwrap_or("default")));
        let replay = run(
            &scenario,
            &RunOptions {
                seed: None,
                out_dir: Some(out.clone()),
                no_trace: false,
                recorder_thread: false,
            },
        )
        .unwrap();
        let profile = profile.unwrap_or("default profile");
        lines.push_str(&format!("  replay under {profile}:\n"));
        let mut missed = Vec::new();
        compare_counts(dir, &out, &replay.summary, calls, &mut missed, lines);
        failures.extend(
            missed
                .into_iter()
                .map(|m| format!("{name} ({}, {profile}): {m}", dir.display())),
        );
    }
}

/// The replay's counts against the live run's, and its latency per window beside the live
/// one's.
fn compare_counts(
    dir: &Path,
    out: &Path,
    s: &routersim_report::summary::Summary,
    calls: &[crate::common::ProviderCall],
    failures: &mut Vec<String>,
    lines: &mut String,
) {
    let live: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("live/summary.json")).unwrap())
            .unwrap();
    let mut live_calls: BTreeMap<String, u64> = BTreeMap::new();
    for c in calls {
        *live_calls.entry(c.deployment.clone()).or_default() += 1;
    }
    let replay_calls = attempts_by_deployment(out);
    let mut pairs: Vec<(String, f64, f64)> = live_calls
        .iter()
        .map(|(d, n)| {
            (
                format!("calls {d}"),
                *n as f64,
                *replay_calls.get(d).unwrap_or(&0) as f64,
            )
        })
        .collect();
    for (d, n) in &replay_calls {
        if !live_calls.contains_key(d) {
            pairs.push((format!("calls {d}"), 0.0, *n as f64));
        }
    }
    let mut live_failures: BTreeMap<(String, String), u64> = BTreeMap::new();
    for c in calls.iter().filter(|c| c.outcome != "ok") {
        let kind = c.outcome.strip_prefix("break:").unwrap_or(&c.outcome);
        *live_failures
            .entry((c.deployment.clone(), kind.to_string()))
            .or_default() += 1;
    }
    let replay_failures = failures_by_kind(out);
    for key in live_failures.keys().chain(replay_failures.keys()) {
        let what = format!("failed calls {} {}", key.0, key.1);
        if pairs.iter().any(|(w, _, _)| *w == what) {
            continue;
        }
        pairs.push((
            what,
            *live_failures.get(key).unwrap_or(&0) as f64,
            *replay_failures.get(key).unwrap_or(&0) as f64,
        ));
    }
    let requests = live["requests"].as_f64().unwrap();
    pairs.push((
        "failed requests".into(),
        live["failed"].as_f64().unwrap(),
        s.failed as f64,
    ));
    pairs.push((
        "requests that fell back".into(),
        (live["fallback_rate"].as_f64().unwrap() * requests).round(),
        (s.fallback_rate * s.requests as f64).round(),
    ));
    for (what, live, replay) in pairs {
        lines.push_str(&format!("    {what}: live {live}, replay {replay}\n"));
        if !within(replay, live) {
            failures.push(format!(
                "{what}: replay {replay}, live {live}: more than 10 % apart"
            ));
        }
    }
    // p50/p99 per window, side by side (no tolerance: the proxy's own time is in the log's
    // latencies and LiteLLM's retry sleeps are the profile's; see docs/import.md).
    for w in live["windows"].as_array().into_iter().flatten() {
        let d = &w["during"];
        lines.push_str(&format!(
            "  live window {} [{}, {}) ms: during p50 {:.1} ms, p99 {:.1} ms, {} failed of {}\n",
            w["label"].as_str().unwrap_or(""),
            w["from_ms"],
            w["to_ms"],
            d["p50_latency_ms"].as_f64().unwrap_or(f64::NAN),
            d["p99_latency_ms"].as_f64().unwrap_or(f64::NAN),
            d["failed"],
            d["requests"]
        ));
    }
    for w in &s.windows {
        lines.push_str(&format!(
            "  replay window {}: during p50 {:.1} ms, p99 {:.1} ms, {} failed of {}\n",
            w.label,
            w.during.p50_latency_ms,
            w.during.p99_latency_ms,
            w.during.failed,
            w.during.requests
        ));
    }
}

#[test]
fn recorded_incidents_recover_their_windows_and_replay_within_ten_percent() {
    let mut failures = Vec::new();
    for (name, dir) in recorded() {
        let (failed, lines) = check(&name, &dir);
        eprint!("{lines}");
        failures.extend(failed);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
