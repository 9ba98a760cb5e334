//! Every real config loads, end to end: a scenario whose router has an alias LiteLLM cannot
//! route, CRLF line endings, numbers written `1_000` or `"1000"`, wildcard model names.

use std::path::Path;

use crate::common::{routersim, scratch_dir};
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

/// A scenario file with CRLF line endings, numbers written `1_000` and `"1000"` in its router
/// section, and wildcard model groups that its traffic reaches by names they match.
#[test]
fn a_crlf_scenario_with_underscored_and_quoted_numbers_and_wildcards_runs() {
    let scenario = "name: shapes
seed: 1_000
duration: 10s
router:
  model_list:
    - {model_name: \"openai/*\", litellm_params: {model: \"openai/*\", rpm: 1_000, tpm: \"100000\"}, model_info: {id: oa}}
    - {model_name: \"*\", litellm_params: {model: \"anthropic/*\", rpm: \"1_000\"}, model_info: {id: any}}
  router_settings:
    num_retries: \"2\"
    cooldown_time: 1_0
    timeout: \"600\"
    allowed_fails: 1_0
providers:
  oa: {latency: {p50: 100ms, p99: 200ms}, context_window: 128_000}
  any: {latency: {p50: 100ms, p99: 200ms}}
traffic:
  - {model: openai/gpt-4o, rate: 2/s, input_tokens: 1_000}
  - {model: claude-3, rate: 1/s}
"
    .replace('\n', "\r\n");
    let (summary, _) = run("shapes", &scenario);
    assert_eq!(summary["seed"].as_u64(), Some(1000), "{summary}");
    let requests = summary["requests"].as_u64().unwrap();
    assert!(requests > 20, "{summary}");
    assert_eq!(summary["ok"].as_u64(), Some(requests), "{summary}");
}

/// `summary.json` and `report.html` say which profile ran and which LiteLLM it models.
#[test]
fn the_report_names_the_profile_and_the_litellm_version_it_models() {
    let scenario = |name: &str, profile: &str| {
        format!(
            "name: {name}
seed: 1
duration: 5s
router:
  model_list:
    - {{model_name: A, litellm_params: {{model: openai/a}}, model_info: {{id: a1}}}}
  router_settings: {{{profile}}}
providers:
  a1: {{latency: {{p50: 100ms, p99: 200ms}}}}
traffic:
  - {{model: A, rate: 1/s}}
"
        )
    };
    for (name, profile, expected, header) in [
        (
            "profile-default",
            "",
            serde_json::json!({"name": "litellm", "litellm_version": null, "rules": "litellm-documented"}),
            "profile <b>litellm</b> (LiteLLM&#39;s documented rules)",
        ),
        (
            "profile-110",
            "profile: litellm-1.110",
            serde_json::json!({"name": "litellm-1.110", "litellm_version": "1.110.2", "rules": "litellm-1.110.2"}),
            "profile <b>litellm-1.110</b> (LiteLLM 1.110.2)",
        ),
        (
            "profile-delta",
            "profile: deltallm",
            serde_json::json!({"name": "deltallm", "litellm_version": null, "rules": "deltallm-documented"}),
            "profile <b>deltallm</b> (DeltaLLM&#39;s documented rules)",
        ),
    ] {
        let dir = scratch_dir(name);
        let file = dir.join("scenario.yaml");
        std::fs::write(&file, scenario(name, profile)).unwrap();
        let out = dir.join("out");
        let output = routersim(&["run", &path(&file), "--out", &path(&out)]);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let summary: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(summary["router_profile"], expected, "{name}");
        let html = std::fs::read_to_string(out.join("report.html")).unwrap();
        assert!(
            html.contains(header),
            "{name}: {header}\n{}",
            &html[..html.len().min(2000)]
        );
    }
}
