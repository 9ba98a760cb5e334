//! `profile: multigrid` end to end: a scenario's traffic with a `models:` chain walks every
//! deployment of its group (three tries each), then the chain's model, through the real
//! router and the fake providers; the same scenario under LiteLLM's rules fails instead.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    reason = "tests fail loudly and read as one story"
)]

use std::path::{Path, PathBuf};

use routersim_sim::run::{RunOptions, run};
use routersim_sim::scenario::parse_scenario;

fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("scenario-multigrid-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn scenario(profile: &str) -> String {
    format!(
        "duration: 1m
seed: 3
router:
  model_list:
    - {{model_name: g, litellm_params: {{model: openai/a}}, model_info: {{id: a}}}}
    - {{model_name: g, litellm_params: {{model: openai/b}}, model_info: {{id: b}}}}
    - {{model_name: h, litellm_params: {{model: openai/c}}, model_info: {{id: c}}}}
  router_settings: {{profile: {profile}, disable_cooldowns: true}}
providers:
  a: {{latency: 100ms}}
  b: {{latency: 100ms}}
  c: {{latency: 100ms}}
faults:
  - {{model_group: g, from: 0s, to: 1m, error: service_unavailable}}
traffic:
  - {{at: 1s, model: g, models: [h], count: 4}}
  - {{at: 20s, model: g, models: [h], allow_fallbacks: false}}
"
    )
}

#[test]
fn a_models_chain_is_walked_after_every_deployment_of_the_group() {
    let parsed = parse_scenario(&scenario("multigrid"), Path::new("multigrid.yaml")).unwrap();
    assert!(
        parsed.router.warnings.is_empty(),
        "{:?}",
        parsed.router.warnings
    );
    let dir = out_dir("walk");
    let report = run(
        &parsed,
        &RunOptions {
            out_dir: Some(dir.clone()),
            ..RunOptions::default()
        },
    )
    .expect("runs");
    let s = &report.summary;
    // Four requests: a ×3, b ×3, c ok (7 attempts each); the fifth stops after a's 3 tries.
    assert_eq!((s.requests, s.ok, s.failed), (5, 4, 1));
    assert_eq!(s.attempts, 4 * 7 + 3);
    let attempts = std::fs::read_to_string(dir.join("attempts.csv")).expect("attempts.csv");
    let header: Vec<&str> = attempts.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (request, deployment) = (col("request_id"), col("deployment_id"));
    let first: Vec<String> = attempts
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[request] == "0")
        .map(|f| f[deployment].to_string())
        .collect();
    assert_eq!(first, ["a", "a", "a", "b", "b", "b", "c"]);
}

#[test]
fn the_same_traffic_under_litellm_says_models_does_nothing_and_fails() {
    let parsed = parse_scenario(&scenario("litellm"), Path::new("litellm.yaml")).unwrap();
    assert!(
        parsed
            .router
            .warnings
            .iter()
            .any(|w| w.contains("traffic[0].models")),
        "{:?}",
        parsed.router.warnings
    );
    let report = run(
        &parsed,
        &RunOptions {
            out_dir: Some(out_dir("litellm")),
            ..RunOptions::default()
        },
    )
    .expect("runs");
    assert_eq!(report.summary.ok, 0);
}
