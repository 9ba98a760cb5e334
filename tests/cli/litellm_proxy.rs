//! The real LiteLLM proxy (1.110.2, the version routersim models) in front of routersim's fake
//! providers, driven by `routersim drive` with two shipped scenarios; the assertions are on
//! what the provider side saw. Skipped with a warning when `target/litellm-venv/bin/litellm`
//! is absent (`.ci/run` installs it: `python3 -m venv target/litellm-venv &&
//! target/litellm-venv/bin/pip install 'litellm==1.110.2' -r .ci/litellm-proxy-requirements.txt`).
//!
//! One scenario file drives both: `drive --emit-litellm-config CFG --wait-for-target 90s`
//! binds the fake providers, writes the proxy config pointing at them and waits; the test then
//! starts `litellm --config CFG` on the target port, and drive starts the fault timeline and
//! the traffic together once the proxy answers.
//!
//! Both runs also check the live report against the provider side (every count of attempts,
//! retries and fallbacks is the calls' own) and `diff` it against the simulation of the same
//! file: no rate is computed two ways.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Component, real_time_turn, runs_with};
use crate::common::{Killed, free_port, repo, scratch_dir};
use serde_json::Value;

fn litellm() -> Option<PathBuf> {
    let bin = repo().join("target/litellm-venv/bin/litellm");
    runs_with(Component::LiteLlm, bin.exists(), "the LiteLLM proxy test").then_some(bin)
}

/// A master key different on every run.
fn master_key() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("sk-routersim-{}-{nanos:x}", std::process::id())
}

/// Drives `scenario` through a fresh LiteLLM proxy; the report folder.
fn drive_through_litellm(bin: &Path, scenario: &str, name: &str) -> PathBuf {
    let dir = scratch_dir(name);
    let (port, key) = (free_port(), master_key());
    let config = dir.join("litellm.yaml");
    let report = dir.join("live");
    let mut drive = Killed(
        Command::new(env!("CARGO_BIN_EXE_routersim"))
            .arg("drive")
            .arg(repo().join(scenario))
            .args(["--target", &format!("http://127.0.0.1:{port}")])
            .args(["--api-key", &key])
            .arg("--emit-litellm-config")
            .arg(&config)
            .args(["--wait-for-target", "90s"])
            .arg("--out")
            .arg(&report)
            .current_dir(repo())
            .stdout(File::create(dir.join("drive.out")).unwrap())
            .stderr(File::create(dir.join("drive.err")).unwrap())
            .spawn()
            .unwrap(),
    );
    let begun = Instant::now();
    while !config.exists() {
        assert!(begun.elapsed() < Duration::from_secs(30), "no config");
        std::thread::sleep(Duration::from_millis(50));
    }
    let log = dir.join("litellm.log");
    let _proxy = Killed(
        Command::new(bin)
            .arg("--config")
            .arg(&config)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .env("LITELLM_MASTER_KEY", &key)
            .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            .stdout(File::create(&log).unwrap())
            .stderr(Stdio::from(File::create(dir.join("litellm.err")).unwrap()))
            .spawn()
            .unwrap(),
    );
    let status = drive.0.wait().unwrap();
    let stdout = std::fs::read_to_string(dir.join("drive.out")).unwrap();
    let stderr = std::fs::read_to_string(dir.join("drive.err")).unwrap();
    assert!(
        status.success(),
        "{stdout}\n{stderr}\nproxy log: {}",
        log.display()
    );
    eprintln!("{stdout}");
    report
}

/// A provider call: start (ms), deployment, outcome, end (ms).
type Call = (u64, String, String, u64);

/// `provider_calls.csv` as [`Call`]s.
fn calls(report: &Path) -> Vec<Call> {
    let text = std::fs::read_to_string(report.join("provider_calls.csv")).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let at: u64 = f[0].parse().unwrap();
            let latency: f64 = f[7].parse().unwrap();
            (
                at,
                f[1].to_string(),
                f[4].to_string(),
                at + latency.ceil() as u64,
            )
        })
        .collect()
}

fn summary(report: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(report.join("summary.json")).unwrap()).unwrap()
}

/// A CSV file's rows as maps from its header.
fn rows_of(path: &Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            header
                .iter()
                .zip(l.split(','))
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

/// The live report's counts are the provider side's: every call in `provider_calls.csv` is one
/// attempt of the request it names (in `attempts.csv` and in its `requests.csv` row), and every
/// call beyond a request's first is one retry or one fallback hop.
fn assert_counts_are_the_provider_side(report: &Path, s: &Value) {
    let calls = rows_of(&report.join("provider_calls.csv"));
    let attempts = rows_of(&report.join("attempts.csv"));
    let requests = rows_of(&report.join("requests.csv"));
    assert_eq!(
        s["live"]["provider_calls"].as_u64().unwrap(),
        calls.len() as u64
    );
    assert_eq!(s["live"]["unjoined_calls"], 0, "{s:#}");
    assert_eq!(s["attempts"].as_u64().unwrap(), calls.len() as u64, "{s:#}");
    let key = |r: &std::collections::BTreeMap<String, String>| {
        (
            r["request_id"].clone(),
            r["deployment_id"].clone(),
            r["outcome"].clone(),
        )
    };
    let mut from_calls: Vec<_> = calls.iter().map(key).collect();
    let mut from_attempts: Vec<_> = attempts.iter().map(key).collect();
    from_calls.sort();
    from_attempts.sort();
    assert_eq!(from_calls, from_attempts);
    let number =
        |r: &std::collections::BTreeMap<String, String>, k: &str| -> u64 { r[k].parse().unwrap() };
    for r in &requests {
        let of_it = calls
            .iter()
            .filter(|c| c["request_id"] == r["request_id"])
            .count() as u64;
        assert_eq!(number(r, "attempts"), of_it, "request {}", r["request_id"]);
        if of_it > 0 {
            assert_eq!(
                number(r, "retries") + number(r, "fallbacks"),
                of_it - 1,
                "request {}",
                r["request_id"]
            );
        }
    }
    let sum = |k: &str| requests.iter().map(|r| number(r, k)).sum::<u64>();
    assert_eq!(s["retries"].as_u64().unwrap(), sum("retries"), "{s:#}");
    assert_eq!(s["fallbacks"].as_u64().unwrap(), sum("fallbacks"), "{s:#}");
    let with = |k: &str| requests.iter().filter(|r| number(r, k) > 0).count() as f64;
    let share = |n: f64| (n / requests.len() as f64 * 1e6).round() / 1e6;
    assert_eq!(
        s["retry_rate"].as_f64().unwrap(),
        share(with("retries")),
        "{s:#}"
    );
    assert_eq!(
        s["fallback_rate"].as_f64().unwrap(),
        share(with("fallbacks")),
        "{s:#}"
    );
}

/// The simulation of the same file, and `diff` of the two: no rate computed two ways.
fn assert_diff_compares_like_with_like(scenario: &str, report: &Path) {
    let sim = report.with_file_name("sim");
    let run = crate::common::routersim(&["run", scenario, "--out", sim.to_str().unwrap()]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let diff = crate::common::routersim(&[
        "diff",
        report.to_str().unwrap(),
        sim.to_str().unwrap(),
        "--json",
    ]);
    assert!(
        diff.status.success(),
        "{}",
        String::from_utf8_lossy(&diff.stderr)
    );
    let json: Value = serde_json::from_slice(&diff.stdout).unwrap();
    assert!(json.get("rates_computed_two_ways").is_none(), "{json:#}");
    assert_eq!(json["a"]["source"], "live");
    assert_eq!(json["b"]["source"], "sim");
}

/// What holds for both scenarios: every request answered and saved, LiteLLM named, every
/// provider call joined to its request by the forwarded `x-routersim-request-id`.
fn assert_common(s: &Value) {
    assert_eq!(s["source"], "live");
    assert_eq!(s["live"]["target_name"], "litellm", "{s:#}");
    assert_eq!(s["live"]["target_version"], "1.110.2");
    assert_eq!(s["live"]["unfinished"], 0);
    assert_eq!(s["requests"], 250, "{s:#}");
    assert_eq!(
        s["failed"], 0,
        "a request the config should save failed: {s:#}"
    );
    assert_eq!(
        s["live"]["joined_by_request_id"],
        s["live"]["provider_calls"]
    );
}

#[test]
fn litellm_proxy_429_storm_and_503_outage() {
    let _turn = real_time_turn();
    let Some(bin) = litellm() else {
        return;
    };

    // (a) 429 + Retry-After: 5 on gpt-a from 10 s to 40 s; gpt-b 503 from 25 s to 30 s.
    let report = drive_through_litellm(&bin, "scenarios/live/429-storm.yaml", "litellm-429");
    let s = summary(&report);
    assert_common(&s);
    assert_counts_are_the_provider_side(&report, &s);
    assert_diff_compares_like_with_like("scenarios/live/429-storm.yaml", &report);
    let rows = calls(&report);
    let a: Vec<&Call> = rows.iter().filter(|c| c.1 == "gpt-a").collect();
    for (i, c) in a.iter().enumerate() {
        if c.2 != "rate_limit" {
            continue;
        }
        // Cooled for the Retry-After once the 429 is back (a call already sent may still
        // arrive; slack for the proxy's clock).
        if let Some(next) = a[i + 1..].iter().find(|n| n.0 > c.3) {
            assert!(
                next.0 >= c.0 + 4_000,
                "gpt-a called {} ms after a 429 with Retry-After 5 s",
                next.0 - c.0
            );
        }
    }
    let storm_429s = a.iter().filter(|c| c.2 == "rate_limit").count();
    assert!((3..=12).contains(&storm_429s), "{storm_429s} 429s");
    assert!(
        a.iter().any(|c| c.0 > 40_000 && c.2 == "ok"),
        "gpt-a back after the storm"
    );
    let backup: Vec<u64> = rows
        .iter()
        .filter(|c| c.1 == "backup-1")
        .map(|c| c.0)
        .collect();
    assert!(
        !backup.is_empty(),
        "no fallback while both deployments failed"
    );
    assert!(
        backup.iter().all(|t| (10_000..31_000).contains(t)),
        "{backup:?}"
    );
    assert!(s["fallbacks"].as_u64().unwrap() >= 1);
    assert!(s["retries"].as_u64().unwrap() >= 1);

    // (b) 503 on gpt-a from 10 s to 35 s, allowed_fails 2, cooldown_time 5 s.
    let report = drive_through_litellm(&bin, "scenarios/live/503-outage.yaml", "litellm-503");
    let s = summary(&report);
    assert_common(&s);
    assert_counts_are_the_provider_side(&report, &s);
    assert_diff_compares_like_with_like("scenarios/live/503-outage.yaml", &report);
    let rows = calls(&report);
    let a: Vec<&Call> = rows.iter().filter(|c| c.1 == "gpt-a").collect();
    // Cooled spans: gaps of 4 s or more between gpt-a's failed calls (cooldown_time is 5 s).
    // Between two of them, the failures that cooled it: allowed_fails 2, so the third failure
    // within the minute cools it (one more may already be in flight). The failures need not
    // be close together: two, then a third a second later, is the same count.
    let failed: Vec<u64> = a
        .iter()
        .filter(|c| c.2 == "service_unavailable")
        .map(|c| c.0)
        .collect();
    let mut between: Vec<Vec<u64>> = vec![Vec::new()];
    for (i, at) in failed.iter().enumerate() {
        if i > 0 && at - failed[i - 1] >= 4_000 {
            between.push(Vec::new());
        }
        between.last_mut().unwrap().push(*at);
    }
    assert!(between.len() >= 4, "fewer than 3 cooled spans: {between:?}");
    for b in &between {
        assert!(
            b.len() <= 4,
            "more failures than allowed_fails lets through: {between:?}"
        );
    }
    // While it is cooled, no call at all reaches gpt-a (not even a success).
    for pair in between.windows(2) {
        let (last, next) = (*pair[0].last().unwrap(), pair[1][0]);
        let calls_inside = a.iter().filter(|c| c.0 > last && c.0 < next).count();
        assert_eq!(calls_inside, 0, "gpt-a called while cooled: {between:?}");
    }
    assert!(
        s["cooldowns"]["by_deployment"]["gpt-a"]["count"]
            .as_u64()
            .unwrap()
            >= 3
    );
    // Every deployment is listed; gpt-b was never cooled.
    assert_eq!(
        s["cooldowns"]["by_deployment"]["gpt-b"]["count"].as_u64(),
        Some(0),
        "{s:#}"
    );
}
