//! `routersim drive` against `routersim proxy`: the loop closed with no Python. Drive binds the
//! scenario's fake providers and writes a proxy config pointing at them; `routersim proxy`
//! serves routersim's own engine on that config; drive then sends the traffic through it in
//! real time. The live report must be complete, every provider call joined to its request by
//! the forwarded `x-routersim-request-id`, and the cooldown the engine applies must show on the
//! provider side; `routersim diff` then compares it with the simulated run of the same file.

use crate::common::{
    free_port, repo, routersim, scratch_dir, spawn_drive_emitting_config, spawn_proxy,
};
use serde_json::Value;

/// Two deployments of a group; `gpt-a` answers 429 with Retry-After 2 s from 1 s to 3 s.
const SCENARIO: &str = r"name: drive-proxy
description: drive through routersim proxy; a 429 window with Retry-After on one of two deployments
seed: 3
duration: 4s
router:
  model_list:
    - {model_name: gpt-4o, litellm_params: {model: openai/gpt-4o-a}, model_info: {id: gpt-a}}
    - {model_name: gpt-4o, litellm_params: {model: openai/gpt-4o-b}, model_info: {id: gpt-b}}
  router_settings:
    routing_strategy: simple-shuffle
    num_retries: 2
providers:
  gpt-a: {latency: 20ms}
  gpt-b: {latency: 20ms}
faults:
  - {deployment: gpt-a, from: 1s, to: 3s, error: rate_limit, probability: 1.0, retry_after: 2s}
traffic:
  - {model: gpt-4o, rate: 10/s, to: 4s, arrival: uniform, output_tokens: 5}
";

#[test]
fn drive_through_routersim_proxy_writes_a_complete_joined_report() {
    let dir = scratch_dir("drive-proxy");
    let scenario = dir.join("drive-proxy.yaml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let (port, config, live) = (free_port(), dir.join("proxy.yaml"), dir.join("live"));
    let mut drive = spawn_drive_emitting_config(
        &dir,
        &scenario,
        &["--target", &format!("http://127.0.0.1:{port}")],
        &config,
        &live,
    );
    let _proxy = spawn_proxy(&dir, "proxy", &config, port);
    let status = drive.0.wait().unwrap();
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
    assert!(
        status.success(),
        "drive: {}\n{}\nproxy: {}",
        read("drive.out"),
        read("drive.err"),
        read("proxy.err")
    );

    // A complete live report, every request answered and saved, every call joined by id.
    assert!(live.join("report.complete").exists());
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(live.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["source"], "live", "{s:#}");
    assert_eq!(s["live"]["target_name"], "routersim", "{s:#}");
    assert_eq!(
        s["live"]["target_version"],
        env!("CARGO_PKG_VERSION"),
        "{s:#}"
    );
    assert_eq!(s["requests"], 40, "{s:#}");
    assert_eq!(s["failed"], 0, "{s:#}");
    assert_eq!(s["live"]["unfinished"], 0, "{s:#}");
    assert_eq!(
        s["live"]["joined_by_request_id"], s["live"]["provider_calls"],
        "{s:#}"
    );

    // The provider side: after each 429 comes back, gpt-a is left alone for its Retry-After
    // (the engine cools it: a 429 in a group of two), and every 429 was retried on gpt-b.
    let calls = std::fs::read_to_string(live.join("provider_calls.csv")).unwrap();
    let rows: Vec<(u64, String, String, u64)> = calls
        .lines()
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
        .collect();
    let a: Vec<_> = rows.iter().filter(|r| r.1 == "gpt-a").collect();
    let limited: Vec<_> = a.iter().filter(|r| r.2 == "rate_limit").collect();
    assert!(!limited.is_empty(), "the 429 window was never hit: {calls}");
    for r in &limited {
        if let Some(next) = a.iter().find(|n| n.0 > r.3) {
            assert!(
                next.0 >= r.0 + 1_800,
                "gpt-a called {} ms after a 429 with Retry-After 2 s\n{calls}",
                next.0 - r.0
            );
        }
    }
    assert_eq!(
        rows.len(),
        40 + limited.len(),
        "one retry per 429, nothing else failed: {calls}"
    );

    // The simulated run of the same file diffs against the live report.
    let sim = dir.join("sim");
    let out = routersim(&[
        "run",
        scenario.to_str().unwrap(),
        "--out",
        sim.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let diff = routersim(&["diff", sim.to_str().unwrap(), live.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&diff.stdout);
    assert!(diff.status.code().is_some_and(|c| c <= 1), "{text}");
    assert!(
        text.contains("live"),
        "the diff names the live source:\n{text}"
    );
    let _ = repo();
}
