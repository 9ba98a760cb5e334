//! Fleets through the binary: bad fleet keys exit 2 naming file, line and path; a fleet run
//! tags its traces and summary by replica; a shared store lets one replica's cooldown keep
//! the others away; fleet runs are deterministic.

use std::path::{Path, PathBuf};

use crate::common::{routersim, scratch_dir};

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).expect("utf-8 output")
}

fn path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// A scenario whose `router:` starts with `fleet` (YAML lines at two spaces), written to a
/// scratch folder.
fn scenario(name: &str, fleet: &str) -> (PathBuf, PathBuf) {
    let dir = scratch_dir(name);
    let file = dir.join("fleet.yaml");
    let text = format!(
        "name: fleet\nduration: 30s\nrouter:\n{fleet}  model_list:\n    \
         - {{model_name: g, litellm_params: {{model: openai/a}}, model_info: {{id: a}}}}\n    \
         - {{model_name: g, litellm_params: {{model: openai/b}}, model_info: {{id: b}}}}\n  \
         router_settings: {{num_retries: 2}}\n\
         faults:\n  - {{deployment: a, from: 0s, to: 30s, error: rate_limit, retry_after: 5s}}\n\
         traffic:\n  - {{model: g, rate: 6/s, to: 30s, arrival: uniform}}\n"
    );
    std::fs::write(&file, text).unwrap();
    (file, dir)
}

fn run(file: &Path, out: &Path) -> std::process::Output {
    routersim(&["run", &path(file), "--out", &path(out)])
}

#[test]
fn bad_fleet_keys_exit_2_naming_file_line_and_path() {
    let cases = [
        ("  replicas: 0\n", 4, "router.replicas"),
        ("  replicas: many\n", 4, "router.replicas"),
        ("  load_balancer: sticky\n", 4, "router.load_balancer"),
        ("  state: redis\n", 4, "router.state"),
        ("  store: {read_latency: 1ms}\n", 4, "router.store"),
        (
            "  state: shared\n  store: {faults: [{kind: store_flood, from: 1s, to: 2s}]}\n",
            5,
            "router.store.faults[0].kind",
        ),
        (
            "  state: shared\n  store: {failure_mode: fail_sideways}\n",
            5,
            "router.store.failure_mode",
        ),
    ];
    for (i, (fleet, line, key)) in cases.into_iter().enumerate() {
        let (file, dir) = scenario(&format!("fleet-bad-{i}"), fleet);
        let output = run(&file, &dir.join("out"));
        let stderr = text(output.stderr);
        assert_eq!(output.status.code(), Some(2), "{fleet}: {stderr}");
        let at = format!("{}:{line}:", file.display());
        assert!(stderr.contains(&at), "{fleet}: no {at} in {stderr}");
        assert!(
            stderr.contains(&format!("{key}:")),
            "{fleet}: no {key} in {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn a_fleet_run_tags_traces_and_summary_by_replica() {
    let (file, dir) = scenario("fleet-tags", "  replicas: 3\n");
    let out = dir.join("out");
    let output = run(&file, &out);
    assert_eq!(output.status.code(), Some(0), "{}", text(output.stderr));
    for trace in ["requests.csv", "attempts.csv"] {
        let csv = std::fs::read_to_string(out.join(trace)).unwrap();
        let mut lines = csv.lines();
        assert!(lines.next().unwrap().ends_with(",replica"), "{trace}");
        // Round robin: request i goes to replica i mod 3.
        let replicas: Vec<&str> = lines.map(|l| l.rsplit(',').next().unwrap()).collect();
        for r in ["0", "1", "2"] {
            assert!(replicas.contains(&r), "{trace}: no replica {r}");
        }
    }
    let requests = std::fs::read_to_string(out.join("requests.csv")).unwrap();
    for line in requests.lines().skip(1) {
        let id: u64 = line.split(',').next().unwrap().parse().unwrap();
        assert_eq!(
            line.rsplit(',').next().unwrap(),
            (id % 3).to_string(),
            "{line}"
        );
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let by_replica = summary["by_replica"].as_array().unwrap();
    assert_eq!(by_replica.len(), 3);
    let sum = |key: &str| {
        by_replica
            .iter()
            .map(|r| r[key].as_u64().unwrap())
            .sum::<u64>()
    };
    assert_eq!(sum("requests"), summary["requests"].as_u64().unwrap());
    assert_eq!(sum("attempts"), summary["attempts"].as_u64().unwrap());
    assert_eq!(
        sum("cooldown_sets"),
        summary["cooldowns"]["sets"].as_u64().unwrap()
    );
    // Per-process state: every replica cooled the failing deployment itself.
    assert!(
        by_replica
            .iter()
            .all(|r| r["cooldown_sets"].as_u64().unwrap() > 0)
    );
    // …and each has its own cooldown lane beside the deployment's.
    let svg = std::fs::read_to_string(out.join("deployments.svg")).unwrap();
    for r in 0..3 {
        assert!(svg.contains(&format!("a @ r{r}")), "no lane a @ r{r}");
    }
}

#[test]
fn one_replica_writes_no_replica_column_or_by_replica() {
    let (file, dir) = scenario("fleet-one", "  replicas: 1\n");
    let out = dir.join("out");
    assert_eq!(run(&file, &out).status.code(), Some(0));
    let requests = std::fs::read_to_string(out.join("requests.csv")).unwrap();
    assert!(!requests.lines().next().unwrap().contains("replica"));
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(!summary.contains("by_replica"));
}

/// Calls to the failing deployment `a`.
fn failing_calls(out: &Path) -> usize {
    let csv = std::fs::read_to_string(out.join("attempts.csv")).unwrap();
    csv.lines()
        .skip(1)
        .filter(|l| l.split(',').nth(5) == Some("a"))
        .count()
}

#[test]
fn a_shared_store_saves_the_other_replicas_the_discovery() {
    let calls = |fleet: &str, name: &str| {
        let (file, dir) = scenario(name, fleet);
        let out = dir.join("out");
        let output = run(&file, &out);
        assert_eq!(output.status.code(), Some(0), "{}", text(output.stderr));
        failing_calls(&out)
    };
    let per_process = calls("  replicas: 4\n  state: per_process\n", "fleet-pp");
    let shared = calls("  replicas: 4\n  state: shared\n", "fleet-shared");
    assert!(
        shared * 2 < per_process,
        "shared {shared} vs per_process {per_process}"
    );
    // The store out for the whole run, failing open: every replica is on its own again.
    let outage = calls(
        "  replicas: 4\n  state: shared\n  store: {faults: [{kind: store_outage, from: 0s, to: 30s}]}\n",
        "fleet-outage-open",
    );
    assert_eq!(outage, per_process);
    // Failing closed: no cooldown is set, so every pick may land on the failing deployment.
    let closed = calls(
        "  replicas: 4\n  state: shared\n  store: {failure_mode: fail_closed, faults: [{kind: store_outage, from: 0s, to: 30s}]}\n",
        "fleet-outage-closed",
    );
    assert!(
        closed > per_process,
        "closed {closed} vs per_process {per_process}"
    );
}

#[test]
fn fleet_runs_are_deterministic() {
    let (file, dir) = scenario(
        "fleet-determinism",
        "  replicas: 5\n  load_balancer: random\n  state: shared\n  store: {write_latency: 50ms}\n",
    );
    let (a, b) = (dir.join("a"), dir.join("b"));
    assert_eq!(run(&file, &a).status.code(), Some(0));
    assert_eq!(run(&file, &b).status.code(), Some(0));
    for name in ["requests.csv", "attempts.csv", "events.csv", "summary.json"] {
        assert_eq!(
            std::fs::read(a.join(name)).unwrap(),
            std::fs::read(b.join(name)).unwrap(),
            "{name}"
        );
    }
}

#[test]
fn redis_host_makes_the_state_shared_and_says_so() {
    let dir = scratch_dir("fleet-redis-host");
    let file = dir.join("fleet.yaml");
    std::fs::write(
        &file,
        "name: rh\nduration: 10s\nrouter:\n  replicas: 2\n  model_list:\n    \
         - {model_name: g, litellm_params: {model: openai/a}, model_info: {id: a}}\n  \
         router_settings: {redis_host: localhost, redis_port: 6379}\n\
         traffic:\n  - {model: g, rate: 1/s, to: 10s}\n",
    )
    .unwrap();
    let output = run(&file, &dir.join("out"));
    let stderr = text(output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("router.state: shared"), "{stderr}");
    // redis_host did something; redis_port still does not.
    let ignored = stderr
        .lines()
        .find(|l| l.contains("not modelled"))
        .unwrap_or_default();
    assert!(!ignored.contains("redis_host"), "{stderr}");
    assert!(ignored.contains("router_settings.redis_port"), "{stderr}");
}
