//! A swept key whose values give byte-identical summaries for every seed is said to have no
//! effect, in the table and in `sweep.json`, with the reason where the engine can tell it.

use std::path::Path;

use crate::common::{routersim, scratch_dir};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Two deployments; a1 answers 429 with `Retry-After: 20s` for five seconds, so every cooldown
/// takes its length from the provider, never from the router's `cooldown_time`.
const RETRY_AFTER_STORM: &str = "\
name: retry-after-storm
duration: 30s
router:
  model_list:
    - {model_name: A, litellm_params: {model: openai/a1}, model_info: {id: a1}}
    - {model_name: A, litellm_params: {model: openai/a2}, model_info: {id: a2}}
providers:
  a1: {latency: {p50: 200ms, p99: 1s}}
  a2: {latency: {p50: 300ms, p99: 1s}}
faults:
  - {deployment: a1, from: 5s, to: 10s, error: rate_limit, retry_after: 20s}
traffic:
  - {model: A, rate: 5/s, arrival: poisson}
";

/// Nothing ever fails.
const CALM: &str = "\
name: calm
duration: 20s
router:
  model_list:
    - {model_name: A, litellm_params: {model: openai/a1}, model_info: {id: a1}}
    - {model_name: B, litellm_params: {model: openai/b}, model_info: {id: b}}
traffic:
  - {model: A, rate: 4/s, arrival: poisson}
";

/// Every failure is a 400, which LiteLLM never retries.
const BAD_REQUESTS: &str = "\
name: bad-requests
duration: 20s
router:
  model_list:
    - {model_name: A, litellm_params: {model: openai/a1}, model_info: {id: a1}}
faults:
  - {deployment: a1, from: 2s, to: 8s, error: bad_request, probability: 0.5}
traffic:
  - {model: A, rate: 4/s, arrival: poisson}
";

struct Swept {
    stdout: String,
    json: serde_json::Value,
}

fn sweep(
    dir: &Path,
    name: &str,
    scenario: &str,
    extra: &[&str],
) -> Result<Swept, Box<dyn std::error::Error>> {
    // One file name for every sweep of a directory: shards must name the same file.
    let file = dir.join("scenario.yaml");
    std::fs::write(&file, scenario)?;
    let file = file.to_string_lossy().into_owned();
    let out = dir.join(name);
    let out_arg = out.to_string_lossy().into_owned();
    let mut args = vec!["sweep", &file, "--seeds", "1..2", "--out", &out_arg];
    args.extend(extra);
    let output = routersim(&args);
    let stdout = String::from_utf8(output.stdout)?;
    let stderr = String::from_utf8(output.stderr)?;
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    let json = serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json"))?)?;
    Ok(Swept { stdout, json })
}

fn no_effect(json: &serde_json::Value) -> Vec<String> {
    json["no_effect"]
        .as_array()
        .map(|lines| {
            lines
                .iter()
                .filter_map(|l| l.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn cooldown_time_has_no_effect_when_every_cooldown_took_the_providers_retry_after() -> TestResult {
    let dir = scratch_dir("no-effect-retry-after");
    let swept = sweep(
        &dir,
        "storm",
        RETRY_AFTER_STORM,
        &[
            "--set",
            "router_settings.cooldown_time=1,5,60",
            "--set",
            "router_settings.num_retries=0,2",
        ],
    )?;
    let line = "router_settings.cooldown_time: no effect on any metric in this scenario; every \
                cooldown took its length from the provider's Retry-After, which wins over \
                cooldown_time";
    // num_retries changes the runs: only cooldown_time is named.
    assert_eq!(no_effect(&swept.json), [line]);
    assert!(
        swept.stdout.contains(&format!("note: {line}")),
        "{}",
        swept.stdout
    );
    Ok(())
}

#[test]
fn keys_that_only_matter_on_failures_have_no_effect_when_nothing_failed() -> TestResult {
    let dir = scratch_dir("no-effect-calm");
    let swept = sweep(
        &dir,
        "calm",
        CALM,
        &[
            "--set",
            "router_settings.allowed_fails=0,3",
            "--set",
            "router_settings.fallbacks=[],[{A: [B]}]",
            "--set",
            "router_settings.routing_strategy=simple-shuffle,least-busy",
        ],
    )?;
    assert_eq!(
        no_effect(&swept.json),
        [
            "router_settings.allowed_fails: no effect on any metric in this scenario; no \
             deployment call ever failed",
            "router_settings.fallbacks: no effect on any metric in this scenario; no model group \
             ever gave up on a request, so no fallback was looked up",
            // One deployment per group: the strategy has nothing to choose, and the engine
            // cannot tell that reason, so none is given.
            "router_settings.routing_strategy: no effect on any metric in this scenario",
        ]
    );
    Ok(())
}

#[test]
fn retries_have_no_effect_when_no_failure_was_retryable() -> TestResult {
    let dir = scratch_dir("no-effect-400");
    let swept = sweep(
        &dir,
        "bad",
        BAD_REQUESTS,
        &[
            "--set",
            "router_settings.num_retries=0,3",
            "--set",
            "router_settings.retry_after=0,2",
        ],
    )?;
    assert_eq!(
        no_effect(&swept.json),
        [
            "router_settings.num_retries: no effect on any metric in this scenario; no failure \
             was retryable",
            "router_settings.retry_after: no effect on any metric in this scenario; no request \
             was retried",
        ]
    );
    Ok(())
}

#[test]
fn a_key_with_an_effect_is_not_named_and_merged_shards_say_the_same() -> TestResult {
    let dir = scratch_dir("no-effect-shards");
    let set = ["--set", "router_settings.cooldown_time=1,60"];
    let whole = sweep(&dir, "whole", RETRY_AFTER_STORM, &set)?;
    assert_eq!(no_effect(&whole.json).len(), 1);
    let mut shard = set.to_vec();
    shard.extend(["--shard", "1/2"]);
    let s1 = sweep(&dir, "s1", RETRY_AFTER_STORM, &shard)?;
    // A shard holds only some of the runs: it cannot tell.
    assert!(no_effect(&s1.json).is_empty());
    shard[3] = "2/2";
    sweep(&dir, "s2", RETRY_AFTER_STORM, &shard)?;
    let merged = dir.join("merged");
    let output = routersim(&[
        "merge",
        &dir.join("s1").to_string_lossy(),
        &dir.join("s2").to_string_lossy(),
        "--out",
        &merged.to_string_lossy(),
    ]);
    let stdout = String::from_utf8(output.stdout)?;
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(merged.join("sweep.json"))?,
        std::fs::read_to_string(dir.join("whole").join("sweep.json"))?
    );
    assert!(
        stdout.contains("note: router_settings.cooldown_time: no effect"),
        "{stdout}"
    );

    // A scenario where the router's cooldown_time does decide: a 503 has no Retry-After.
    let decided = RETRY_AFTER_STORM.replace(
        "error: rate_limit, retry_after: 20s",
        "error: service_unavailable",
    );
    let swept = sweep(&dir, "decided", &decided, &set)?;
    assert!(no_effect(&swept.json).is_empty(), "{}", swept.stdout);
    assert!(!swept.stdout.contains("no effect"), "{}", swept.stdout);
    Ok(())
}
