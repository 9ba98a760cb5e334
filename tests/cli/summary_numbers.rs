//! Numbers that agree (issue 15): cooldown periods beside cooldown sets, every deployment in
//! the per-deployment maps, and time windows (fault windows during/after, windowed `expect`
//! lines). Every figure below is worked out by hand from the scenario text.

use std::path::{Path, PathBuf};

use crate::common::{routersim, scratch_dir};
use serde_json::Value;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A lone deployment `solo` answers 401 after 1 s, always; `idle` (another group) is never
/// called. Three requests at 0 s fail together at 1 s: the first 401 cools `solo` for 30 s
/// (a 401 cools even a lone deployment), the other two re-set the live cooldown (same
/// deadline, 31 s). The request at 35 s fails at 36 s: a second period, clipped at the run
/// end, 45 s, where the last request finds `solo` cooling (an all-cooled pick, no attempt).
/// So: 4 sets, 2 periods, 30 s + 9 s cooled.
const COOLDOWN_RESETS: &str = "name: cooldown-resets
duration: 50s
router:
  model_list:
    - {model_name: m, litellm_params: {model: openai/m}, model_info: {id: solo}}
    - {model_name: idle, litellm_params: {model: openai/idle}, model_info: {id: idle}}
  router_settings: {num_retries: 0, cooldown_time: 30s}
providers:
  solo: {latency: 100ms}
faults:
  - {deployment: solo, error: authentication, latency: 1s}
traffic:
  - {at: 0s, model: m, count: 3}
  - {at: 35s, model: m}
  - {at: 45s, model: m}
expect:
  - {metric: cooldown_sets, min: 4, max: 4}
  - {metric: cooldown_periods, min: 2, max: 2}
  - {metric: cooldown_sets.solo, min: 4, max: 4}
  - {metric: cooldown_periods.solo, min: 2, max: 2}
  - {metric: cooldown_periods.idle, max: 0}
";

/// A lone deployment answers in 100 ms, but 503 in 50 ms from 10 s to 20 s; no retries.
/// Arrivals: 4 at 5 s (before), 3 at 12 s and 2 at 19.9 s (during: 5, all failed), 1 at 20 s
/// (the end is exclusive: after) and 2 at 25 s (after: 3, all ok).
fn windows_scenario(expect: &str) -> String {
    format!(
        "name: windows-check
duration: 30s
router:
  model_list:
    - {{model_name: m, litellm_params: {{model: openai/m}}, model_info: {{id: solo}}}}
  router_settings: {{num_retries: 0}}
providers:
  solo: {{latency: 100ms}}
faults:
  - {{deployment: solo, from: 10s, to: 20s, error: service_unavailable, latency: 50ms}}
traffic:
  - {{at: 5s, model: m, count: 4}}
  - {{at: 12s, model: m, count: 3}}
  - {{at: 19.9s, model: m, count: 2}}
  - {{at: 20s, model: m}}
  - {{at: 25s, model: m, count: 2}}
expect:
{expect}"
    )
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn run(scenario: &Path, out: &Path) -> (Option<i32>, String, String) {
    let output = routersim(&[
        "run",
        &scenario.to_string_lossy(),
        "--out",
        &out.to_string_lossy(),
    ]);
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn summary(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn cooldown_sets_count_every_set_and_periods_count_intervals() -> TestResult {
    let dir = scratch_dir("numbers-cooldowns");
    let scenario = write(&dir, "cooldown-resets.yaml", COOLDOWN_RESETS);
    let out = dir.join("out");
    let (code, stdout, stderr) = run(&scenario, &out);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let s = summary(&out);
    let c = &s["cooldowns"];
    assert_eq!(c["sets"], 4, "{c}");
    assert_eq!(c["periods"], 2, "{c}");
    // `total` and `count` keep counting every set, as before.
    assert_eq!(c["total"], 4, "{c}");
    assert_eq!(c["cooled_ms_total"], 39000.0, "{c}");
    assert_eq!(c["by_deployment"]["solo"]["count"], 4);
    assert_eq!(c["by_deployment"]["solo"]["sets"], 4);
    assert_eq!(c["by_deployment"]["solo"]["periods"], 2);
    assert_eq!(c["by_deployment"]["solo"]["total_cooled_ms"], 39000.0);
    assert!(
        stdout.contains("cooldown periods 2, cooldown sets 4 (39000.000 ms cooled)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("solo 2 periods/4 sets/39000.000 ms"),
        "{stdout}"
    );
    let html = std::fs::read_to_string(out.join("report.html"))?;
    assert!(
        html.contains("<span>cooldown periods</span><b>2</b>"),
        "report.html names periods"
    );
    assert!(
        html.contains("<span>cooldown sets</span><b>4</b>"),
        "report.html names sets"
    );
    // And deployments.svg, in its legend and beside the lane.
    let svg = std::fs::read_to_string(out.join("deployments.svg"))?;
    assert!(
        svg.contains("cooling: 2 cooldown periods (4 cooldown sets)"),
        "deployments.svg names both"
    );
    assert!(
        svg.contains("2 periods, 4 sets"),
        "deployments.svg lane note"
    );
    Ok(())
}

#[test]
fn every_deployment_is_in_the_per_deployment_maps_with_zeros() -> TestResult {
    let dir = scratch_dir("numbers-every-deployment");
    let scenario = write(&dir, "cooldown-resets.yaml", COOLDOWN_RESETS);
    let out = dir.join("out");
    let (code, stdout, stderr) = run(&scenario, &out);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let s = summary(&out);
    // `idle` is never called: present, with zeros (jq gets 0, not null).
    let idle = &s["cooldowns"]["by_deployment"]["idle"];
    assert_eq!(idle["count"], 0, "{idle}");
    assert_eq!(idle["sets"], 0, "{idle}");
    assert_eq!(idle["periods"], 0, "{idle}");
    assert_eq!(idle["total_cooled_ms"], 0.0, "{idle}");
    let idle = &s["half_open"]["by_deployment"]["idle"];
    assert_eq!(idle["count"], 0, "{idle}");
    assert_eq!(idle["total_half_open_ms"], 0.0, "{idle}");
    let solo = &s["half_open"]["by_deployment"]["solo"];
    assert_eq!(solo["count"], 0, "{solo}");
    // Under the default profile the reliability metrics are left out; where they are written
    // (multigrid), every deployment has its final-route entry.
    let text = COOLDOWN_RESETS.replace(
        "cooldown_time: 30s}",
        "cooldown_time: 30s, profile: multigrid}",
    );
    let multigrid = write(
        &dir,
        "multigrid.yaml",
        text.split("expect:").next().unwrap(),
    );
    let out = dir.join("out-multigrid");
    let (code, stdout, stderr) = run(&multigrid, &out);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let s = summary(&out);
    let idle = &s["latency_by_final_route"]["idle"];
    assert_eq!(idle["count"], 0, "{s}");
    Ok(())
}

#[test]
fn fault_windows_count_requests_during_and_after() -> TestResult {
    let dir = scratch_dir("numbers-fault-windows");
    let scenario = write(
        &dir,
        "windows.yaml",
        &windows_scenario("  - {metric: requests, min: 12, max: 12}\n"),
    );
    let out = dir.join("out");
    let (code, stdout, stderr) = run(&scenario, &out);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let s = summary(&out);
    let windows = s["windows"].as_array().expect("windows is a list");
    assert_eq!(windows.len(), 1, "{s}");
    let w = &windows[0];
    assert_eq!(w["label"], "solo: service_unavailable");
    assert_eq!(w["from_ms"], 10000.0);
    assert_eq!(w["to_ms"], 20000.0);
    let during = &w["during"];
    assert_eq!(during["requests"], 5, "{during}");
    assert_eq!(during["ok"], 0, "{during}");
    assert_eq!(during["failed"], 5, "{during}");
    assert_eq!(during["failed_rate"], 1.0, "{during}");
    assert_eq!(during["p50_latency_ms"], 50.0, "{during}");
    assert_eq!(during["p99_latency_ms"], 50.0, "{during}");
    assert_eq!(during["max_latency_ms"], 50.0, "{during}");
    let after = &w["after"];
    assert_eq!(after["requests"], 3, "{after}");
    assert_eq!(after["ok"], 3, "{after}");
    assert_eq!(after["failed"], 0, "{after}");
    assert_eq!(after["failed_rate"], 0.0, "{after}");
    assert_eq!(after["p99_latency_ms"], 100.0, "{after}");
    // No expect line is windowed: no `expect_windows`.
    assert!(s.get("expect_windows").is_none(), "{s}");
    assert!(
        stdout.contains(
            "  window solo: service_unavailable [10.000 s, 20.000 s): during 5 requests, 5 failed, \
             p99 50.000 ms; after 3 requests, 0 failed, p99 100.000 ms\n"
        ),
        "{stdout}"
    );
    Ok(())
}

#[test]
fn windowed_expect_lines_pass_and_fail_on_their_window_only() -> TestResult {
    let dir = scratch_dir("numbers-windowed-expect");
    let passing = write(
        &dir,
        "pass.yaml",
        &windows_scenario(
            "  - {metric: failed, window: 10s..20s, min: 5, max: 5}
  - {metric: failed_rate, window: 10s..20s, min: 1}
  - {metric: p99_latency_ms, window: 20s.., max: 100, min: 100}
  - {metric: requests, window: 0s..10s, min: 4, max: 4}
",
        ),
    );
    let out = dir.join("pass");
    let (code, stdout, stderr) = run(&passing, &out);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("ok   failed in 10s..20s >= 5 <= 5 (measured 5)"),
        "{stdout}"
    );
    let s = summary(&out);
    assert_eq!(s["expect_windows"].as_array().map(Vec::len), Some(3), "{s}");
    let html = std::fs::read_to_string(out.join("report.html"))?;
    assert!(
        html.contains("<td>failed in 10s..20s</td>"),
        "report.html names the window"
    );

    // The whole run failed 5 of 12: a bound the whole run meets fails in the window after.
    let failing = write(
        &dir,
        "fail.yaml",
        &windows_scenario(
            "  - {metric: ok, min: 7}
  - {metric: ok, window: 15s..30s, min: 4}
",
        ),
    );
    let (code, stdout, stderr) = run(&failing, &dir.join("fail"));
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("ok   ok >= 7 (measured 7)"), "{stdout}");
    assert!(
        stdout.contains("FAIL ok in 15s..30s >= 4 (measured 3)"),
        "{stdout}"
    );
    Ok(())
}

#[test]
fn a_bad_window_exits_2_naming_file_line_and_path() -> TestResult {
    let dir = scratch_dir("numbers-bad-window");
    for (name, line, path, what) in [
        (
            "backwards",
            "  - {metric: failed, window: 20s..10s, max: 1}\n",
            "expect[0].window",
            "ends before it starts",
        ),
        (
            "no-dots",
            "  - {metric: failed, window: 10s, max: 1}\n",
            "expect[0].window",
            "5m..15m",
        ),
        (
            "bad-duration",
            "  - {metric: failed, window: 10x..20s, max: 1}\n",
            "expect[0].window",
            "expected a duration",
        ),
        (
            "unwindowable",
            "  - {metric: ok, max: 100}\n  - {metric: cooldowns, window: 10s..20s, max: 1}\n",
            "expect[1].metric",
            "p99_latency_ms",
        ),
    ] {
        let scenario = write(&dir, &format!("{name}.yaml"), &windows_scenario(line));
        let (code, stdout, stderr) = run(&scenario, &dir.join(name));
        assert_eq!(code, Some(2), "{name}: {stdout}{stderr}");
        assert!(
            stderr.contains(&format!("{name}.yaml:")),
            "{name}: {stderr}"
        );
        assert!(stderr.contains(path), "{name}: {stderr}");
        assert!(stderr.contains(what), "{name}: {stderr}");
        assert!(!dir.join(name).join("summary.json").exists(), "{name}");
    }
    Ok(())
}
