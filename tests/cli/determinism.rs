//! Same scenario, seed and version: byte-identical reports. A different seed changes the
//! generated traffic.

use std::path::Path;

use crate::common::{repo, scratch_dir};
use routersim_runtime::RuntimeKind;
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

/// Runs `scenario` over `transport` on `runtime` into `out`.
fn run_over(
    scenario: &Path,
    out: &Path,
    transport: Transport,
    runtime: RuntimeKind,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut scenario = load_scenario(scenario)?;
    scenario.transport = transport;
    scenario.runtime = runtime;
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
        same_seed_same_bytes(name, Transport::Memory, RuntimeKind::Virtual)?;
    }
    Ok(())
}

/// `--runtime tokio` (tokio's paused runtime behind the same seam) is deterministic too.
#[test]
fn same_seed_gives_byte_identical_reports_on_tokio() -> Result<(), Box<dyn std::error::Error>> {
    for name in ["rate-limit-storm", "stream-cuts"] {
        same_seed_same_bytes(name, Transport::Memory, RuntimeKind::Tokio)?;
    }
    same_seed_same_bytes("stream-cuts", Transport::Http, RuntimeKind::Tokio)
}

/// The two runtimes run the same traffic; they differ only where tokio rounds a timer up to
/// the next whole millisecond (README, "Runtimes"): every request arrives at the same instant,
/// or on tokio up to 1 ms later.
#[test]
fn the_runtimes_differ_only_below_a_millisecond() -> Result<(), Box<dyn std::error::Error>> {
    let scenario = repo().join("scenarios/rate-limit-storm.yaml");
    let base = scratch_dir("runtimes");
    let (v, t) = (base.join("virtual"), base.join("tokio"));
    run_over(&scenario, &v, Transport::Memory, RuntimeKind::Virtual)?;
    run_over(&scenario, &t, Transport::Memory, RuntimeKind::Tokio)?;
    let arrivals = |dir: &Path| -> Result<Vec<(u64, f64)>, Box<dyn std::error::Error>> {
        let text = std::fs::read_to_string(dir.join("requests.csv"))?;
        let mut rows = Vec::new();
        for line in text.lines().skip(1) {
            let mut cols = line.split(',');
            let id = cols.next().ok_or("id")?.parse()?;
            let at = cols.next().ok_or("arrival")?.parse()?;
            rows.push((id, at));
        }
        rows.sort_by_key(|r| r.0);
        Ok(rows)
    };
    let (on_virtual, on_tokio) = (arrivals(&v)?, arrivals(&t)?);
    assert_eq!(on_virtual.len(), on_tokio.len());
    assert!(on_virtual.len() > 9_000);
    let mut exact_differs = 0;
    for ((id, a), (id2, b)) in on_virtual.iter().zip(&on_tokio) {
        assert_eq!(id, id2);
        // tokio fires on the next whole millisecond, never before (values print to 1 µs).
        assert!(
            *b >= a - 0.001 && b - a <= 1.0 + 0.001,
            "request {id}: {a} ms vs {b} ms"
        );
        assert!(
            b.fract() == 0.0,
            "tokio's timers fire on whole milliseconds: {b}"
        );
        exact_differs += usize::from(a != b);
    }
    assert!(
        exact_differs > 0,
        "the virtual executor keeps sub-millisecond arrivals"
    );
    Ok(())
}

/// `transport: http` (the engine's HTTP adapter and the wire server over in-memory pipes) is
/// as deterministic as memory: every file of the report, `report.html` and the plots included.
#[test]
fn same_seed_gives_byte_identical_reports_over_http() -> Result<(), Box<dyn std::error::Error>> {
    for name in ["rate-limit-storm", "stream-cuts"] {
        same_seed_same_bytes(name, Transport::Http, RuntimeKind::Virtual)?;
    }
    Ok(())
}

/// A ramp (`stages:`, as `routersim init incident` writes it) draws its arrivals from the
/// seeded stream too: the same seed gives the same bytes on both runtimes and over HTTP.
#[test]
fn a_ramp_gives_byte_identical_reports() -> Result<(), Box<dyn std::error::Error>> {
    let scenario = repo().join("templates/init/incident.yaml");
    for (transport, runtime) in [
        (Transport::Memory, RuntimeKind::Virtual),
        (Transport::Memory, RuntimeKind::Tokio),
        (Transport::Http, RuntimeKind::Virtual),
    ] {
        same_bytes_twice(&scenario, "ramp", transport, runtime)?;
    }
    Ok(())
}

fn same_seed_same_bytes(
    name: &str,
    transport: Transport,
    runtime: RuntimeKind,
) -> Result<(), Box<dyn std::error::Error>> {
    let scenario = repo().join(format!("scenarios/{name}.yaml"));
    same_bytes_twice(&scenario, name, transport, runtime)
}

fn same_bytes_twice(
    scenario: &Path,
    name: &str,
    transport: Transport,
    runtime: RuntimeKind,
) -> Result<(), Box<dyn std::error::Error>> {
    let scenario = scenario.to_path_buf();
    let base = scratch_dir(&format!(
        "determinism-{name}-{transport}-{}",
        runtime.name()
    ));
    let (a, b) = (base.join("a"), base.join("b"));
    run_over(&scenario, &a, transport, runtime)?;
    run_over(&scenario, &b, transport, runtime)?;
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

/// A run whose recorder has a thread of its own (`routersim run` on a machine with a core to
/// spare) writes the same bytes as one folding on the run's thread: traffic with cooldowns,
/// streams, a fleet (which keeps the run's thread), hedging and the walk profiles.
#[test]
fn the_recorders_own_thread_writes_the_same_bytes() -> Result<(), Box<dyn std::error::Error>> {
    let base = scratch_dir("recorder-thread");
    for name in [
        "rate-limit-storm",
        "stream-cuts",
        "fleet-outage",
        "alternatives/hedging",
        "profiles/incident-contract",
        "profiles/incident-multigrid",
    ] {
        let scenario = load_scenario(&repo().join(format!("scenarios/{name}.yaml")))?;
        let out = base.join(name.replace('/', "_"));
        let (here, there) = (out.join("here"), out.join("there"));
        for (dir, recorder_thread) in [(&here, false), (&there, true)] {
            let options = RunOptions {
                out_dir: Some(dir.clone()),
                recorder_thread,
                ..RunOptions::default()
            };
            run(&scenario, &options)?;
        }
        let names = files(&here)?;
        assert_eq!(names, files(&there)?, "{name}");
        assert!(
            names.iter().any(|n| n == "summary.json"),
            "{name}: {names:?}"
        );
        for file in &names {
            assert!(
                std::fs::read(here.join(file))? == std::fs::read(there.join(file))?,
                "{name}: {file} differs"
            );
        }
    }
    Ok(())
}
