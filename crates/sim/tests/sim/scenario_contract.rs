//! `profile: contract` end to end: a scenario's `contracts:` and `workload:` reach the router
//! with each request, the fake providers answer with bodies the router validates, and
//! `invalid_response` faults are rejected; mistakes in the new sections name their YAML path.

use std::path::{Path, PathBuf};

use routersim_sim::run::{RunOptions, run};
use routersim_sim::scenario::parse_scenario;

fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("scenario-contract-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn scenario(profile: &str) -> String {
    format!(
        "duration: 1m
seed: 4
router:
  model_list:
    - model_name: g
      litellm_params: {{model: openai/a}}
      model_info: {{id: a, schema_modes: [json_schema, strict], model_class: extraction}}
    - model_name: g
      litellm_params: {{model: openai/b}}
      model_info: {{id: b, schema_modes: [json_schema, strict], model_class: extraction}}
    - model_name: g
      litellm_params: {{model: openai/c}}
      model_info: {{id: c, supports_response_schema: true, model_class: chat}}
  router_settings: {{profile: {profile}, disable_cooldowns: true}}
contracts:
  - name: invoices
    structured_output: {{schema_id: invoice-v3, strict: true}}
    allowed_model_classes: [extraction]
    deadline_ms: 8000
providers:
  a: {{latency: 100ms}}
  b: {{latency: 300ms}}
  c: {{latency: 50ms}}
faults:
  - {{deployment: a, from: 0s, to: 30s, invalid_response: malformed_json}}
  - {{deployment: b, from: 10s, to: 30s, invalid_response: invariant_violated}}
traffic:
  - {{at: 1s, model: g, workload: invoices, count: 3}}
  - {{at: 20s, model: g, workload: invoices}}
  - {{at: 40s, model: g, workload: invoices}}
"
    )
}

fn column(csv: &str, name: &str) -> Vec<String> {
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == name).unwrap();
    csv.lines()
        .skip(1)
        .map(|l| l.split(',').nth(col).unwrap().to_string())
        .collect()
}

#[test]
fn invalid_answers_are_rejected_and_the_incompatible_route_is_never_called() {
    let parsed = parse_scenario(&scenario("contract"), Path::new("contract.yaml")).unwrap();
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
    // 1 s ×3: a (the first in config order, unmeasured) malformed → b ok. 20 s: b (healthier:
    // a's last three answers were rejected) breaks its invariant → a malformed: rejected, no
    // third attempt (max_attempts 2). 40 s: b (one failure against a's four) ok. attempts.csv
    // is in order of end.
    assert_eq!((s.requests, s.ok, s.failed), (5, 4, 1));
    assert_eq!(s.failed_by_kind.get("malformed_response"), Some(&1));
    let attempts = std::fs::read_to_string(dir.join("attempts.csv")).unwrap();
    assert_eq!(
        column(&attempts, "deployment_id"),
        ["a", "a", "a", "b", "b", "b", "b", "a", "b"]
    );
    assert_eq!(
        column(&attempts, "outcome"),
        [
            "malformed_response",
            "malformed_response",
            "malformed_response",
            "ok",
            "ok",
            "ok",
            "malformed_response",
            "malformed_response",
            "ok"
        ]
    );
    let c = s.contract.as_ref().expect("a contract section");
    assert_eq!(c.validation_rejections.get("malformed_json"), Some(&4));
    assert_eq!(c.validation_rejections.get("invariant_violated"), Some(&1));
    assert_eq!(c.routes_filtered.get("schema_mode"), Some(&5));
    assert_eq!(c.http_success_rate, 1.0);
    assert_eq!(c.accepted_rate, 0.8);
    assert_eq!(s.metric("validation_rejections"), Some(5.0));
    let events = std::fs::read_to_string(dir.join("events.csv")).unwrap();
    assert!(
        events.contains("validation_rejected,g,a,attempt=1 reason=malformed_json request=0"),
        "{events}"
    );
    assert!(
        events.contains("route_filtered,g,c,reason=schema_mode request=0"),
        "{events}"
    );
}

#[test]
fn the_same_traffic_under_litellm_accepts_every_answer_and_says_so() {
    let parsed = parse_scenario(&scenario("litellm"), Path::new("litellm.yaml")).unwrap();
    assert!(
        parsed
            .router
            .warnings
            .iter()
            .any(|w| w.contains("traffic[0].workload")),
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
    assert_eq!(report.summary.ok, 5);
    assert_eq!(report.summary.contract, None);
}

#[test]
fn contract_mistakes_name_their_yaml_path() {
    let base = scenario("contract");
    let cases = [
        (
            base.replace(
                "workload: invoices, count: 3",
                "workload: invoicez, count: 3",
            ),
            "traffic[0].workload",
            "no contract named \"invoicez\"",
        ),
        (
            base.replace("schema_id: invoice-v3", "schema_id: invoice-v9"),
            "contracts[0].structured_output.schema_id",
            "no built-in schema",
        ),
        (
            base.replace("deadline_ms: 8000", "deadline_ms: 8000\n    deadline: 8s"),
            "contracts[0]",
            "unknown field",
        ),
        (
            base.replace(
                "deadline_ms: 8000",
                "deadline_ms: 8000\n    max_input_tokens: 100",
            ),
            "traffic[0].input_tokens",
            "max_input_tokens (100)",
        ),
        (
            base.replace(
                "invalid_response: malformed_json",
                "invalid_response: garbled",
            ),
            "faults[0]",
            "unknown variant",
        ),
        (
            base.replace(
                "invalid_response: malformed_json}",
                "invalid_response: malformed_json, error: timeout}",
            ),
            "faults[0]",
            "invalid_response fault takes no other effect",
        ),
    ];
    for (text, path, message) in cases {
        let err = parse_scenario(&text, Path::new("bad.yaml")).unwrap_err();
        assert!(
            err.path.starts_with(path) && err.message.contains(message) && err.line.is_some(),
            "{path}: {err}"
        );
    }
}

#[test]
fn a_contract_deadline_stops_at_the_longest_duration_routersim_serves() {
    let base = scenario("contract");
    // 87600h (10 years, the config crate's `MAX_DURATION`) = 315 360 000 000 ms.
    for ms in ["315360000001", "18446744073709551615"] {
        let text = base.replace("deadline_ms: 8000", &format!("deadline_ms: {ms}"));
        let err = parse_scenario(&text, Path::new("bad.yaml")).unwrap_err();
        assert_eq!(err.path, "contracts[0].deadline_ms", "{err}");
        assert!(err.line.is_some(), "{err}");
        assert_eq!(
            err.message,
            format!(
                "{ms} ms is more than the longest duration routersim serves (87600h, 10 years)"
            )
        );
    }
    let longest = base.replace("deadline_ms: 8000", "deadline_ms: 315360000000");
    let parsed = parse_scenario(&longest, Path::new("ok.yaml")).unwrap();
    let contract = parsed.contracts.values().next().unwrap();
    assert_eq!(
        contract.deadline,
        Some(std::time::Duration::from_secs(315_360_000))
    );
}
