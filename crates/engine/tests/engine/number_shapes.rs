//! Shapes of real configs that must keep loading: CRLF line endings, numbers written `1_000`
//! (an integer to PyYAML, a YAML 1.1 parser, which LiteLLM uses) or quoted `"1000"` (a
//! string to PyYAML, which LiteLLM's pydantic models and router read as the number), for every
//! kind of number the loader reads (counts, durations, rpm/tpm, order, weight), and wildcard
//! model names (`openai/*`, `*`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "tests fail loudly, read as one story, and drive tokio's paused clock directly"
)]

use std::time::Duration;

use crate::common::*;
use routersim_config::load::load_router_config_str;
use routersim_engine::config::RouterConfig;
use routersim_engine::failure::FailureKind;
use routersim_engine::request::Request;

/// Every numeric key kind, each written as `{n}` (the caller's spelling of a number).
fn config(n: impl Fn(u64) -> String) -> String {
    format!(
        "model_list:
  - model_name: gpt
    litellm_params: {{model: openai/gpt, rpm: {rpm}, tpm: {tpm}, order: {order}, weight: {weight}, timeout: {dtimeout}, stream_timeout: {dstream}}}
    model_info: {{id: gpt-a}}
  - model_name: gpt
    litellm_params: {{model: azure/gpt}}
    model_info: {{id: gpt-b}}
router_settings:
  num_retries: {retries}
  allowed_fails: {fails}
  max_fallbacks: {maxfb}
  cooldown_time: {cooldown}
  timeout: {timeout}
  stream_timeout: {stream}
  retry_policy: {{RateLimitErrorRetries: {rl}}}
  allowed_fails_policy: {{TimeoutErrorAllowedFails: {tf}}}
",
        rpm = n(1000),
        tpm = n(100_000),
        order = n(2),
        weight = n(3),
        dtimeout = n(45),
        dstream = n(12),
        retries = n(4),
        fails = n(5),
        maxfb = n(6),
        cooldown = n(30),
        timeout = n(600),
        stream = n(20),
        rl = n(7),
        tf = n(8),
    )
}

fn load(yaml: &str) -> RouterConfig {
    match load_router_config_str(yaml) {
        Ok(c) => c,
        Err(e) => panic!("should load: {e}\n{yaml}"),
    }
}

fn check(c: &RouterConfig, how: &str) {
    let a = &c.deployments[0];
    assert_eq!(a.rpm, Some(1000), "{how}: rpm");
    assert_eq!(a.tpm, Some(100_000), "{how}: tpm");
    assert_eq!(a.order, Some(2), "{how}: order");
    assert_eq!(a.weight, Some(3.0), "{how}: weight");
    assert_eq!(
        a.timeout,
        Some(Duration::from_secs(45)),
        "{how}: deployment timeout"
    );
    assert_eq!(
        a.stream_timeout,
        Some(Duration::from_secs(12)),
        "{how}: deployment stream_timeout"
    );
    let s = &c.settings;
    assert_eq!(s.num_retries, 4, "{how}: num_retries");
    assert_eq!(s.allowed_fails, Some(5), "{how}: allowed_fails");
    assert_eq!(s.max_fallbacks, 6, "{how}: max_fallbacks");
    assert_eq!(
        s.cooldown_time,
        Duration::from_secs(30),
        "{how}: cooldown_time"
    );
    assert_eq!(s.timeout, Some(Duration::from_secs(600)), "{how}: timeout");
    assert_eq!(
        s.stream_timeout,
        Some(Duration::from_secs(20)),
        "{how}: stream_timeout"
    );
    let policy = s.retry_policy.as_ref().expect("retry_policy");
    assert_eq!(
        policy.per_kind.get(&FailureKind::RateLimit),
        Some(&7),
        "{how}: retry_policy"
    );
    let fails = s
        .allowed_fails_policy
        .as_ref()
        .expect("allowed_fails_policy");
    assert_eq!(
        fails.per_kind.get(&FailureKind::Timeout),
        Some(&8),
        "{how}: allowed_fails_policy"
    );
}

/// `1000` → `1_000`, `100000` → `100_000`; small numbers get a `_` after their first digit
/// where they have two (`45` → `4_5`), as YAML 1.1 allows anywhere in the digits.
fn underscored(v: u64) -> String {
    let digits = v.to_string();
    if digits.len() < 2 {
        return digits;
    }
    let (head, tail) = digits.split_at(digits.len() % 3);
    let mut groups: Vec<&str> = tail
        .as_bytes()
        .chunks(3)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    if !head.is_empty() {
        groups.insert(0, head);
    }
    if groups.len() == 1 {
        let (a, b) = digits.split_at(1);
        return format!("{a}_{b}");
    }
    groups.join("_")
}

#[test]
fn plain_numbers_load_as_the_baseline() {
    check(&load(&config(|v| v.to_string())), "plain");
}

#[test]
fn underscored_numbers_load_as_pyyaml_reads_them() {
    assert_eq!(underscored(100_000), "100_000");
    assert_eq!(underscored(45), "4_5");
    check(&load(&config(underscored)), "1_000");
}

#[test]
fn quoted_numbers_load_as_litellm_reads_them() {
    check(&load(&config(|v| format!("\"{v}\""))), "\"1000\"");
    check(
        &load(&config(|v| format!("'{}'", underscored(v)))),
        "'1_000'",
    );
}

#[test]
fn crlf_line_endings_load_the_same() {
    for (how, n) in [
        ("plain", (|v: u64| v.to_string()) as fn(u64) -> String),
        ("1_000", underscored),
        ("\"1000\"", |v| format!("\"{v}\"")),
    ] {
        let text = config(n).replace('\n', "\r\n");
        assert!(text.contains("\r\n"));
        check(&load(&text), &format!("CRLF {how}"));
    }
}

#[test]
fn crlf_keeps_block_scalars_and_comments_working() {
    let text = "# a comment\r\nmodel_list:\r\n  # another\r\n  - model_name: \"openai/*\"\r\n    litellm_params:\r\n      model: \"openai/*\"\r\n  - model_name: \"*\"\r\n    litellm_params: {model: \"anthropic/*\"}\r\nrouter_settings:\r\n  model_group_alias:\r\n    smart: openai/gpt-4o\r\n";
    let c = load(text);
    let names: Vec<&str> = c.deployments.iter().map(|d| &*d.model_name).collect();
    assert_eq!(names, ["openai/*", "*"]);
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}

#[tokio::test(start_paused = true)]
async fn wildcard_groups_serve_the_names_they_match() {
    let c = load(
        "model_list:\r\n  - {model_name: \"openai/*\", litellm_params: {model: \"openai/*\"}, model_info: {id: oa}}\r\n  - {model_name: \"*\", litellm_params: {model: \"anthropic/*\"}, model_info: {id: any}}\r\n  - {model_name: gpt-4o, litellm_params: {model: azure/gpt-4o}, model_info: {id: exact}}\r\nrouter_settings:\r\n  fallbacks: [{\"openai/*\": [\"*\"]}]\r\n",
    );
    let (router, _) = make_router(c, Scripted::new());
    for (id, model, served) in [
        (1, "gpt-4o", "exact"),
        (2, "openai/gpt-4o-mini", "oa"),
        (3, "claude-3", "any"),
    ] {
        let r = router.completion(Request::new(id, model)).await;
        assert_eq!(attempts(&r), [format!("{served}:ok")], "{model}");
    }
}

/// Where PyYAML (YAML 1.1, what LiteLLM reads a config with) and YAML 1.2 disagree on a
/// number, routersim reads what LiteLLM sees: `010` is octal 8, `1:30` is sexagesimal 90,
/// `0b11` is 3.
#[test]
fn yaml_1_1_numbers_read_as_pyyaml_reads_them() {
    let c = load(
        "model_list:\n  - {model_name: a, litellm_params: {model: openai/a, rpm: 010, tpm: 1:00:00, order: 0b10}}\nrouter_settings:\n  timeout: 1:30\n  num_retries: 0b11\n  cooldown_time: 010\n",
    );
    let a = &c.deployments[0];
    assert_eq!(a.rpm, Some(8), "010 is octal to PyYAML");
    assert_eq!(a.tpm, Some(3600), "1:00:00 is sexagesimal to PyYAML");
    assert_eq!(a.order, Some(2), "0b10 is binary to PyYAML");
    assert_eq!(c.settings.timeout, Some(Duration::from_secs(90)));
    assert_eq!(c.settings.num_retries, 3);
    assert_eq!(c.settings.cooldown_time, Duration::from_secs(8));
}
