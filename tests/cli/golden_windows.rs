//! Goldens of scenarios with a fault window, end to end: every number of `summary.json`'s
//! `windows` is compared on its own under the tolerances, a tolerance names a window's path
//! or a family of them, one tolerance covers every name of a number, and only the numbers
//! that moved are printed, largest relative change first.

use std::path::{Path, PathBuf};

use crate::common::{routersim, scratch_dir};
use serde_json::Value;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Two deployments at p50 700 ms; one rate-limits half its calls from 10 s to 20 s (a fault
/// window, so `summary.json` has a `windows` entry).
const WINDOWED: &str = "\
name: window-shift
seed: 4
duration: 30s
router:
  model_list:
    - {model_name: A, litellm_params: {model: openai/a}, model_info: {id: a1}}
    - {model_name: A, litellm_params: {model: azure/a}, model_info: {id: a2}}
  router_settings: {num_retries: 2}
providers:
  a1: {latency: {p50: 700ms, p99: 2s}}
  a2: {latency: {p50: 700ms, p99: 2s}}
faults:
  - {deployment: a2, from: 10s, to: 20s, error: rate_limit, probability: 0.5}
traffic:
  - {model: A, rate: 10/s}
";

/// The window's path prefix in a diff.
const WINDOW: &str = "windows[\"a2: rate_limit 50%\"]";

fn path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// A folder with the scenario (plus `extra` lines) blessed, then every latency 2 % slower
/// (p50 700 → 714 ms, p99 2 → 2.04 s): the golden is of the faster run.
fn blessed_then_slower(name: &str, extra: &str) -> (PathBuf, PathBuf) {
    let dir = scratch_dir(name);
    let scenarios = dir.join("scenarios");
    std::fs::create_dir_all(&scenarios).unwrap();
    let file = scenarios.join("shift.yaml");
    std::fs::write(&file, format!("{WINDOWED}{extra}")).unwrap();
    let out = dir.join("out");
    let bless = routersim(&["check", &path(&scenarios), "--out", &path(&out), "--bless"]);
    assert_eq!(
        bless.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&bless.stderr)
    );
    let slower = std::fs::read_to_string(&file)
        .unwrap()
        .replace("p50: 700ms, p99: 2s", "p50: 714ms, p99: 2040ms");
    std::fs::write(&file, slower).unwrap();
    (scenarios, out)
}

/// `check --json` with `extra` arguments: the exit code and the first case's diffs.
fn check(scenarios: &Path, out: &Path, extra: &[&str]) -> (Option<i32>, Vec<Value>, String) {
    let (scenarios, out) = (path(scenarios), path(out));
    let mut args = vec!["check", &scenarios, "--out", &out, "--json"];
    args.extend_from_slice(extra);
    let output = routersim(&args);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let json: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let diffs = json["cases"][0]["golden"]["diffs"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    (
        output.status.code(),
        diffs,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn paths(diffs: &[Value]) -> Vec<String> {
    diffs
        .iter()
        .map(|d| d["path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_golden_with_a_fault_window_passes_at_5_percent_after_a_2_percent_shift_and_fails_at_half_a_percent()
-> TestResult {
    let (scenarios, out) = blessed_then_slower("golden-window-shift", "");
    let (code, diffs, stderr) = check(&scenarios, &out, &["--tolerance", "0.5%"]);
    assert_eq!(code, Some(1), "{stderr}");
    let moved = paths(&diffs);
    // Each window number is its own leaf: the p50 during the fault moved by 2 %.
    assert!(
        moved.contains(&format!("{WINDOW}.during.p50_latency_ms")),
        "{moved:?}"
    );
    assert!(
        moved.iter().all(|p| p != "windows"),
        "no leaf is the whole list: {moved:?}"
    );
    // Only the numbers that moved beyond 0.5 %, largest relative change first.
    let changes: Vec<f64> = diffs
        .iter()
        .map(|d| d["relative_change"].as_f64().unwrap().abs())
        .collect();
    assert!(changes.iter().all(|c| *c > 0.005), "{changes:?}");
    assert!(
        changes.windows(2).all(|w| w[0] >= w[1]),
        "sorted: {changes:?}"
    );
    for tolerance in ["5%", "1000%"] {
        let (code, diffs, _) = check(&scenarios, &out, &["--tolerance", tolerance]);
        assert_eq!(code, Some(0), "{tolerance}: {diffs:?}");
    }

    // The table's detail column names leaves, never a line of JSON.
    let table = routersim(&[
        "check",
        &path(&scenarios),
        "--out",
        &path(&out),
        "--tolerance",
        "0.5%",
    ]);
    let stdout = String::from_utf8_lossy(&table.stdout);
    assert!(!stdout.contains("{\"label\""), "{stdout}");
    assert!(
        stdout.contains(&format!("{WINDOW}.during.p50_latency_ms: golden ")),
        "{stdout}"
    );
    Ok(())
}

#[test]
fn a_golden_tolerance_names_a_window_its_family_or_the_whole_list() -> TestResult {
    // The whole list of windows may move 5 %: only the run-wide latencies remain.
    let (scenarios, out) = blessed_then_slower(
        "golden-window-family",
        "golden: {tolerance: {windows: 5%}}\n",
    );
    let (code, diffs, stderr) = check(&scenarios, &out, &["--tolerance", "0.5%"]);
    assert_eq!(code, Some(1), "{stderr}");
    let moved = paths(&diffs);
    assert!(!moved.is_empty());
    assert!(
        moved.iter().all(|p| p.starts_with("latency_ms.")),
        "{moved:?}"
    );

    // A family: every window's p50 and p90, not its p99 or max.
    let (scenarios, out) = blessed_then_slower(
        "golden-window-p50",
        "golden:\n  tolerance: {windows.*.p50_latency_ms: 5%, \"windows[*].during.p90_latency_ms\": 5%, \"windows[\\\"a2: rate_limit 50%\\\"].after.p90_latency_ms\": 5%}\n",
    );
    let (code, diffs, stderr) = check(&scenarios, &out, &["--tolerance", "0.5%"]);
    assert_eq!(code, Some(1), "{stderr}");
    let moved = paths(&diffs);
    assert!(
        !moved
            .iter()
            .any(|p| p.ends_with("p50_latency_ms") || p.ends_with("p90_latency_ms")),
        "{moved:?}"
    );
    assert!(
        moved.contains(&format!("{WINDOW}.during.p99_latency_ms")),
        "{moved:?}"
    );

    // A path that covers no number is a key that does nothing: an error case (exit 2).
    let (scenarios, out) = blessed_then_slower("golden-window-typo", "");
    let file = scenarios.join("shift.yaml");
    let text = std::fs::read_to_string(&file)?;
    std::fs::write(
        &file,
        format!("{text}golden: {{tolerance: {{windows.*.p99_latncy_ms: 5%}}}}\n"),
    )?;
    let output = routersim(&["check", &path(&scenarios), "--out", &path(&out)]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(2), "{stdout}");
    assert!(
        stdout.contains("golden.tolerance.windows.*.p99_latncy_ms: covers no number"),
        "{stdout}"
    );
    Ok(())
}

#[test]
fn one_tolerance_covers_every_name_of_a_number() -> TestResult {
    let dir = scratch_dir("golden-aliases");
    let scenarios = dir.join("scenarios");
    std::fs::create_dir_all(&scenarios)?;
    let file = scenarios.join("shift.yaml");
    std::fs::write(&file, WINDOWED)?;
    let out = dir.join("out");
    let bless = routersim(&["check", &path(&scenarios), "--out", &path(&out), "--bless"]);
    assert_eq!(bless.status.code(), Some(0));
    // The golden says a2 cooled 5 % less often: under every name of that number.
    let golden = scenarios.join("shift.golden.json");
    let mut value: Value = serde_json::from_str(&std::fs::read_to_string(&golden)?)?;
    let names = [
        "/cooldowns/total",
        "/cooldowns/sets",
        "/cooldowns/by_deployment/a2/count",
        "/cooldowns/by_deployment/a2/sets",
    ];
    for pointer in names {
        let slot = value.pointer_mut(pointer).unwrap();
        let old = slot.as_f64().unwrap();
        assert!(old > 0.0, "{pointer}");
        *slot = serde_json::json!(old / 1.05);
    }
    std::fs::write(&golden, serde_json::to_string_pretty(&value)?)?;
    let (code, diffs, _) = check(&scenarios, &out, &[]);
    assert_eq!(code, Some(1));
    assert_eq!(
        paths(&diffs),
        [
            "cooldowns.total",
            "cooldowns.sets",
            "cooldowns.by_deployment.a2.count",
            "cooldowns.by_deployment.a2.sets"
        ]
    );
    // `cooldowns: 10%` covers all four.
    std::fs::write(
        &file,
        format!("{WINDOWED}golden: {{tolerance: {{cooldowns: 10%}}}}\n"),
    )?;
    let (code, diffs, stderr) = check(&scenarios, &out, &[]);
    assert_eq!(code, Some(0), "{diffs:?} {stderr}");
    Ok(())
}
