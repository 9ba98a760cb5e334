//! One clock for `routersim serve` and `routersim drive --providers`: serve's fault timeline
//! starts when the traffic does (drive connects at its t = 0), however long the router took to
//! come up, and serve outlives drive's last request.

use std::process::Command;
use std::time::Duration;

use crate::common::server::Server;
use crate::common::{repo, scratch_dir};
use serde_json::Value;

/// gpt-a answers 503 for the first 600 ms of the scenario; six requests, three inside.
const SCENARIO: &str = "
name: drive-clock
duration: 1500ms
router:
  model_list:
    - {model_name: gpt, litellm_params: {model: openai/gpt-4o}, model_info: {id: gpt-a}}
providers:
  gpt-a: {latency: 5ms}
faults:
  - {deployment: gpt-a, from: 0s, to: 600ms, error: service_unavailable}
traffic:
  - {at: 100ms, model: gpt}
  - {at: 300ms, model: gpt}
  - {at: 500ms, model: gpt}
  - {at: 900ms, model: gpt}
  - {at: 1200ms, model: gpt}
  - {at: 1400ms, model: gpt}
";

#[test]
fn serve_starts_its_faults_with_the_traffic_and_outlives_it() {
    let dir = scratch_dir("drive-clock");
    let scenario = dir.join("clock.yaml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let served = dir.join("served");
    let serve = Server::start(&[
        "serve",
        scenario.to_str().unwrap(),
        "--out",
        served.to_str().unwrap(),
    ]);
    let addr = serve.addr.clone();
    // The router takes its time to come up: longer than the scenario's whole duration.
    std::thread::sleep(Duration::from_millis(2000));
    let report = dir.join("live");
    let out = Command::new(env!("CARGO_BIN_EXE_routersim"))
        .arg("drive")
        .arg(&scenario)
        .args(["--target", &format!("http://{addr}/d/gpt-a/v1")])
        .args(["--providers", &format!("http://{addr}")])
        .arg("--out")
        .arg(&report)
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("summary.json")).unwrap())
            .unwrap();
    // The three requests of the first 600 ms met the outage; every request reached serve.
    assert_eq!(s["requests"], 6, "{s:#}");
    assert_eq!(s["failed_by_kind"]["service_unavailable"], 3, "{s:#}");
    assert_eq!(s["ok"], 3, "{s:#}");
    assert_eq!(s["live"]["unreached"], 0, "{s:#}");
    assert!(
        s["live"]["not_injected"].as_object().unwrap().is_empty(),
        "{s:#}"
    );
    // serve stops once drive is done (its clock connection closed), past the duration.
    let rest = serve.wait_to_end();
    assert!(
        rest.contains("stopped (duration): 6 calls served"),
        "{rest}"
    );
    let calls = std::fs::read_to_string(served.join("provider_calls.csv")).unwrap();
    // serve's t = 0 is drive's: the first call arrives about 100 ms in, not 2 s.
    let first_at: f64 = calls
        .lines()
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((90.0..600.0).contains(&first_at), "{calls}");
}
