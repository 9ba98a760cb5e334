//! Every real config loads, end to end: a scenario whose router has an alias LiteLLM cannot
//! route, CRLF line endings, numbers written `1_000` or `"1000"`, wildcard model names.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    reason = "tests fail loudly and read as one story"
)]

mod common;

use std::path::Path;

use common::{routersim, scratch_dir};
use serde_json::Value;

fn path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Runs `scenario` (written to a scratch file) and returns its summary and events.csv.
fn run(name: &str, scenario: &str) -> (Value, String) {
    let dir = scratch_dir(name);
    let file = dir.join("scenario.yaml");
    std::fs::write(&file, scenario).unwrap();
    let out = dir.join("out");
    let output = routersim(&["run", &path(&file), "--out", &path(&out)]);
    assert!(
        output.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    let events = std::fs::read_to_string(out.join("events.csv")).unwrap();
    (serde_json::from_str(&summary).unwrap(), events)
}

#[test]
fn a_scenario_may_ask_for_an_unroutable_alias_and_only_those_requests_fail() {
    let scenario = "name: alias-list
seed: 1
duration: 10s
router:
  model_list:
    - {model_name: A, litellm_params: {model: openai/a}, model_info: {id: a1}}
  router_settings:
    model_group_alias:
      best: [A, B]
providers:
  a1: {latency: {p50: 100ms, p99: 200ms}}
traffic:
  - {model: best, rate: 1/s}
  - {model: A, rate: 1/s}
";
    let (summary, events) = run("alias-list", scenario);
    let requests = summary["requests"].as_u64().unwrap();
    assert!(requests > 10, "{summary}");
    let failed = summary["failed"].as_u64().unwrap();
    assert_eq!(
        summary["failed_by_kind"]["bad_request"].as_u64(),
        Some(failed)
    );
    assert!(failed > 0 && failed < requests, "{summary}");
    assert!(
        events
            .lines()
            .any(|l| l.contains("give_up") && l.contains("best") && l.contains("unroutable_alias")),
        "{events}"
    );
}
