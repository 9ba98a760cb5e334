//! Same scenario, seed and version: byte-identical reports. A different seed changes the
//! generated traffic.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    reason = "tests fail loudly and read as one story"
)]

mod common;

use std::path::Path;

use common::{repo, scratch_dir};
use routersim_sim::run::{RunOptions, run, run_file};
use routersim_sim::scenario::load_scenario;
use routersim_sim::transport::Transport;

fn run_into(
    scenario: &Path,
    out: &Path,
    seed: Option<u64>,
) -> Result<(), Box<dyn std::error::Error>> {
    run_file(
        scenario,
        &RunOptions {
            seed,
            out_dir: Some(out.to_path_buf()),
            ..RunOptions::default()
        },
    )?;
    Ok(())
}

/// Runs `scenario` over `transport` into `out`.
fn run_over(
    scenario: &Path,
    out: &Path,
    transport: Transport,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut scenario = load_scenario(scenario)?;
    scenario.transport = transport;
    run(
        &scenario,
        &RunOptions {
            out_dir: Some(out.to_path_buf()),
            ..RunOptions::default()
        },
    )?;
    Ok(())
}

fn files(dir: &Path) -> Result<Vec<String>, std::io::Error> {
    let mut names: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    Ok(names)
}

#[test]
fn same_seed_gives_byte_identical_reports() -> Result<(), Box<dyn std::error::Error>> {
    // The storm exercises Retry-After, cooldowns, retries and random picks; the stream cuts
    // exercise paced streams, breaks and continuations.
    for name in ["rate-limit-storm", "stream-cuts"] {
        same_seed_same_bytes(name, Transport::Memory)?;
    }
    Ok(())
}

/// `transport: http` (the engine's HTTP adapter and the wire server over in-memory pipes) is
/// as deterministic as memory: every file of the report, `report.html` and the plots included.
#[test]
fn same_seed_gives_byte_identical_reports_over_http() -> Result<(), Box<dyn std::error::Error>> {
    for name in ["rate-limit-storm", "stream-cuts"] {
        same_seed_same_bytes(name, Transport::Http)?;
    }
    Ok(())
}

fn same_seed_same_bytes(
    name: &str,
    transport: Transport,
) -> Result<(), Box<dyn std::error::Error>> {
    let scenario = repo().join(format!("scenarios/{name}.yaml"));
    let base = scratch_dir(&format!("determinism-{name}-{transport}"));
    let (a, b) = (base.join("a"), base.join("b"));
    run_over(&scenario, &a, transport)?;
    run_over(&scenario, &b, transport)?;
    let names = files(&a)?;
    assert_eq!(names, files(&b)?);
    for expected in [
        "attempts.csv",
        "deployments.csv",
        "events.csv",
        "inter_token.hgrm",
        "latency.hgrm",
        "latency.hlog",
        "requests.csv",
        "routing.jsonl",
        "summary.json",
        "timeseries.csv",
        "ttft.hgrm",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} missing: {names:?}"
        );
    }
    for name in &names {
        let left = std::fs::read(a.join(name))?;
        let right = std::fs::read(b.join(name))?;
        assert!(
            left == right,
            "{name} differs between two runs of the same seed"
        );
        assert!(!left.is_empty(), "{name} is empty");
    }
    Ok(())
}

#[test]
fn a_different_seed_changes_the_generated_traffic() -> Result<(), Box<dyn std::error::Error>> {
    let scenario = repo().join("scenarios/rate-limit-storm.yaml");
    let base = scratch_dir("seeds");
    run_into(&scenario, &base.join("s1"), Some(1))?;
    run_into(&scenario, &base.join("s2"), Some(2))?;
    let arrivals = |dir: &Path| -> Result<Vec<String>, std::io::Error> {
        let text = std::fs::read_to_string(dir.join("requests.csv"))?;
        Ok(text
            .lines()
            .skip(1)
            .filter_map(|l| l.split(',').nth(1).map(str::to_string))
            .collect())
    };
    assert_ne!(arrivals(&base.join("s1"))?, arrivals(&base.join("s2"))?);
    let summary = std::fs::read_to_string(base.join("s2/summary.json"))?;
    assert!(summary.contains("\"seed\": 2"), "summary records the seed");
    Ok(())
}
