//! `routersim drive --target A --target B`: the requests go round-robin over router replicas
//! (two real `routersim proxy` processes here), one report for the fleet.

use crate::common;

use std::path::Path;
use std::process::Command;

use crate::common::{Killed, free_port, scratch_dir, spawn_drive_emitting_config, spawn_proxy};
use serde_json::Value;

const SCENARIO: &str = r"name: drive-replicas
seed: 5
duration: 2s
router:
  model_list:
    - {model_name: gpt, litellm_params: {model: openai/a}, model_info: {id: rep-a}}
    - {model_name: gpt, litellm_params: {model: openai/b}, model_info: {id: rep-b}}
providers:
  rep-a: {latency: 5ms}
  rep-b: {latency: 5ms}
traffic:
  - {model: gpt, rate: 10/s, to: 2s, arrival: uniform, output_tokens: 5}
";

/// SIGTERM (the proxy then prints its tally), and its stdout.
fn stop(dir: &Path, name: &str, mut p: Killed) -> String {
    Command::new("kill")
        .args(["-TERM", &p.0.id().to_string()])
        .status()
        .unwrap();
    p.0.wait().unwrap();
    std::fs::read_to_string(dir.join(format!("{name}.out"))).unwrap()
}

#[test]
fn drive_deals_requests_round_robin_over_repeated_targets() {
    let dir = scratch_dir("drive-replicas");
    let scenario = dir.join("s.yaml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let (port_a, port_b) = (free_port(), free_port());
    let (config, live) = (dir.join("proxy.yaml"), dir.join("live"));
    let (url_a, url_b) = (
        format!("http://127.0.0.1:{port_a}"),
        format!("http://127.0.0.1:{port_b}"),
    );
    let mut drive = spawn_drive_emitting_config(
        &dir,
        &scenario,
        &["--target", &url_a, "--target", &url_b],
        &config,
        &live,
    );
    let a = spawn_proxy(&dir, "a", &config, port_a);
    let b = spawn_proxy(&dir, "b", &config, port_b);
    let status = drive.0.wait().unwrap();
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
    assert!(
        status.success(),
        "{}\n{}",
        read("drive.out"),
        read("drive.err")
    );
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(live.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["requests"], 20, "{s:#}");
    assert_eq!(s["failed"], 0, "{s:#}");
    assert_eq!(s["live"]["target"], format!("{url_a},{url_b}"), "{s:#}");
    assert_eq!(
        s["live"]["joined_by_request_id"], s["live"]["provider_calls"],
        "{s:#}"
    );
    // Each replica served every other request.
    for (name, p) in [("a", a), ("b", b)] {
        let out = stop(&dir, name, p);
        assert!(
            out.contains("stopped (sigterm): 10 requests served, 10 ok"),
            "{name}: {out}"
        );
    }
}

#[test]
fn drive_refuses_a_remote_replica_and_a_bad_one() {
    let out = common::routersim(&[
        "drive",
        "scenarios/live/fleet-429.yaml",
        "--target",
        "http://127.0.0.1:9,http://192.0.2.1:80",
        "--max-requests",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("192.0.2.1"), "{err}");
    let out = common::routersim(&[
        "drive",
        "scenarios/live/fleet-429.yaml",
        "--target",
        "http://127.0.0.1:9",
        "--target",
        "https://127.0.0.1:9",
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("only http://"));
}
