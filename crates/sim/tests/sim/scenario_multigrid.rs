//! `profile: multigrid` end to end: a scenario's traffic with a `models:` chain walks every
//! deployment of its group (three tries each), then the chain's model, through the real
//! router and the fake providers; the same scenario under LiteLLM's rules fails instead.

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

/// A column of `requests.csv` by name, for every row.
fn column(csv: &str, name: &str) -> Vec<String> {
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    let col = header.iter().position(|h| h == name).unwrap();
    reader
        .records()
        .map(|r| r.unwrap()[col].to_string())
        .collect()
}

#[test]
fn every_request_carries_its_routing_failures_like_multigrids_generation_record() {
    let parsed = parse_scenario(&scenario("multigrid"), Path::new("multigrid.yaml")).unwrap();
    let dir = out_dir("trace");
    let report = run(
        &parsed,
        &RunOptions {
            out_dir: Some(dir.clone()),
            ..RunOptions::default()
        },
    )
    .expect("runs");
    let requests = std::fs::read_to_string(dir.join("requests.csv")).unwrap();
    let header = requests.lines().next().unwrap();
    assert!(
        header.ends_with(",attempted_fallbacks,routing_failures,client_try"),
        "appended at the end: {header}"
    );
    let walked = "a:503:http_503;a:503:http_503 (try 2);a:503:http_503 (try 3);\
                  b:503:http_503;b:503:http_503 (try 2);b:503:http_503 (try 3)";
    let stopped = "a:503:http_503;a:503:http_503 (try 2);a:503:http_503 (try 3)";
    assert_eq!(
        column(&requests, "routing_failures"),
        [walked, walked, walked, walked, stopped]
    );
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(dir.join("routing.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5);
    let first = lines.iter().find(|l| l["id"] == 0).unwrap();
    assert_eq!(first["model"], "g");
    assert_eq!(first["attempts"], 7);
    assert_eq!(first["final_deployment"], "c");
    assert_eq!(first["outcome"], "ok");
    let failures = first["routing"]["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 6);
    assert_eq!(
        failures[1],
        serde_json::json!({"provider": "a", "status": 503, "reason": "http_503 (try 2)"})
    );
    assert_eq!(lines[4]["outcome"], "service_unavailable");
    assert_eq!(lines[4]["final_deployment"], "a");
    // The reliability metrics: 4 completed requests of 7 attempts each; by final route.
    let s = &report.summary;
    assert!((s.routing.as_ref().unwrap().attempts_per_completed_request - 7.0).abs() < 1e-9);
    let routes: Vec<(&str, u64)> = s
        .routing
        .as_ref()
        .unwrap()
        .latency_by_final_route
        .iter()
        .map(|(id, r)| (id.as_str(), r.count))
        .collect();
    // Every deployment is listed: `b`, never a final route, with 0.
    assert_eq!(routes, [("a", 1), ("b", 0), ("c", 4)]);
    let json = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    assert!(
        json.contains("\"attempts_per_completed_request\": 7.0"),
        "{json}"
    );
    assert_eq!(s.metric("attempts_per_completed_request"), Some(7.0));
}

#[test]
fn a_walk_out_of_time_counts_as_deadline_exhausted() {
    let yaml = "duration: 1m
seed: 5
router:
  model_list:
    - {model_name: g, litellm_params: {model: openai/a}, model_info: {id: a}}
    - {model_name: g, litellm_params: {model: openai/b}, model_info: {id: b}}
  router_settings: {profile: multigrid, disable_cooldowns: true, request_deadline: 2s}
providers:
  a: {latency: 700ms}
  b: {latency: 700ms}
faults:
  - {model_group: g, from: 0s, to: 10s, error: service_unavailable}
traffic:
  - {at: 1s, model: g, count: 3}
  - {at: 30s, model: g, count: 2}
";
    let parsed = parse_scenario(yaml, Path::new("deadline.yaml")).unwrap();
    let dir = out_dir("deadline");
    let report = run(
        &parsed,
        &RunOptions {
            out_dir: Some(dir.clone()),
            ..RunOptions::default()
        },
    )
    .expect("runs");
    let s = &report.summary;
    assert_eq!((s.requests, s.ok, s.failed), (5, 2, 3));
    assert_eq!(s.routing.as_ref().unwrap().deadline_exhausted, 3);
    assert!((s.routing.as_ref().unwrap().deadline_exhaustion_rate - 0.6).abs() < 1e-9);
    assert_eq!(s.metric("deadline_exhausted"), Some(3.0));
    assert_eq!(s.metric("deadline_exhaustion_rate"), Some(0.6));
    // No request outlives its deadline.
    assert!(s.latency_ms.max <= 2000.0, "{}", s.latency_ms.max);
    let json = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    assert!(json.contains("\"deadline_exhausted\": 3"), "{json}");
}

#[test]
fn cost_per_accepted_response_prices_the_successful_attempts() {
    let yaml = "duration: 1m
seed: 2
router:
  model_list:
    - {model_name: g, litellm_params: {model: openai/a, input_cost_per_token: 0.000002, output_cost_per_token: 0.00001}, model_info: {id: a}}
    - {model_name: g, litellm_params: {model: openai/b}, model_info: {id: b}}
  router_settings: {profile: multigrid, disable_cooldowns: true}
providers:
  a: {latency: 100ms, output_tokens: 50}
  b: {latency: 100ms, output_tokens: 50}
faults:
  - {deployment: a, from: 0s, to: 10s, error: service_unavailable}
traffic:
  - {at: 1s, model: g, count: 2, input_tokens: 1000}
  - {at: 20s, model: g, count: 2, input_tokens: 1000}
";
    let parsed = parse_scenario(yaml, Path::new("cost.yaml")).unwrap();
    let report = run(
        &parsed,
        &RunOptions {
            out_dir: Some(out_dir("cost")),
            ..RunOptions::default()
        },
    )
    .expect("runs");
    let s = &report.summary;
    // The first two fail over to unpriced b (0 each); the last two cost 1000 × 2e-6 + 50 × 1e-5
    // = 0.0025 each on a: 0.005 over 4 accepted responses.
    assert_eq!(s.ok, 4);
    let r = s.routing.as_ref().unwrap();
    assert_eq!(r.cost_per_accepted_response, Some(0.00125));
    assert_eq!(s.metric("cost_per_accepted_response"), Some(0.00125));
    assert_eq!(s.events.get("response_cost"), Some(&2));
}

/// `routing.jsonl` holds the requests something went wrong for (Multigrid's detail behind
/// `attempts`): one line per request with a failed attempt, in `requests.csv`'s order; a
/// request that succeeded at once is only a `requests.csv` row (attempts 1, no failures).
#[test]
fn routing_jsonl_holds_exactly_the_requests_with_a_failed_attempt() {
    let yaml = "duration: 1m
seed: 4
router:
  model_list:
    - {model_name: g, litellm_params: {model: openai/a}, model_info: {id: a}}
    - {model_name: g, litellm_params: {model: openai/b}, model_info: {id: b}}
  router_settings: {profile: multigrid, disable_cooldowns: true}
providers:
  a: {latency: 100ms}
  b: {latency: 100ms}
faults:
  - {deployment: a, from: 0s, to: 1m, error: service_unavailable, probability: 0.5}
traffic:
  - {model: g, rate: 2/s, to: 30s}
";
    let parsed = parse_scenario(yaml, Path::new("sparse.yaml")).unwrap();
    let dir = out_dir("sparse");
    let report = run(
        &parsed,
        &RunOptions {
            out_dir: Some(dir.clone()),
            ..RunOptions::default()
        },
    )
    .expect("runs");
    let requests = std::fs::read_to_string(dir.join("requests.csv")).unwrap();
    let ids = column(&requests, "request_id");
    let failures = column(&requests, "routing_failures");
    let with_failures: Vec<u64> = ids
        .iter()
        .zip(&failures)
        .filter(|(_, f)| !f.is_empty())
        .map(|(id, _)| id.parse().unwrap())
        .collect();
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(dir.join("routing.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let listed: Vec<u64> = lines.iter().map(|l| l["id"].as_u64().unwrap()).collect();
    assert_eq!(listed, with_failures);
    // Both kinds happened: some requests failed over from a, some went straight through.
    assert!(!listed.is_empty());
    assert!((listed.len() as u64) < report.summary.requests);
    assert!(lines.iter().all(|l| l["attempts"].as_u64().unwrap() > 1));
}
