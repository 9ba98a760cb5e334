//! `routersim diff A B`: summary lines, the first request that went differently, errors.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    reason = "tests fail loudly and read as one story"
)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{routersim, scratch_dir};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn scenario(allowed_fails: u32) -> String {
    format!(
        "\
name: diff-small
seed: 3
duration: 30s
router:
  model_list:
    - {{model_name: A, litellm_params: {{model: openai/a1}}, model_info: {{id: a1}}}}
    - {{model_name: A, litellm_params: {{model: openai/a2}}, model_info: {{id: a2}}}}
  router_settings:
    num_retries: 2
    allowed_fails: {allowed_fails}
providers:
  a1: {{latency: {{p50: 200ms, p99: 1s}}}}
  a2: {{latency: {{p50: 300ms, p99: 1s}}}}
faults:
  - {{deployment: a1, from: 5s, to: 20s, error: service_unavailable, probability: 0.6}}
traffic:
  - {{model: A, rate: 10/s, arrival: poisson}}
"
    )
}

/// Runs `scenario(allowed_fails)` into `dir/name`; returns the report directory.
fn run(dir: &Path, name: &str, allowed_fails: u32, trace: &str) -> String {
    let file = dir.join(format!("{name}.yaml"));
    std::fs::write(&file, scenario(allowed_fails)).expect("temp dir is writable");
    let out = dir.join(name).to_string_lossy().into_owned();
    let output = routersim(&[
        "run",
        &file.to_string_lossy(),
        "--out",
        &out,
        "--trace",
        trace,
    ]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    out
}

/// Request id → `deployment_id:outcome` sequence, read the simple way.
fn sequences(report: &str) -> BTreeMap<u64, Vec<(u64, String)>> {
    let text = std::fs::read_to_string(Path::new(report).join("attempts.csv")).expect("attempts");
    let mut map: BTreeMap<u64, Vec<(u64, String)>> = BTreeMap::new();
    for line in text.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        let id = cells[0].parse().expect("request id");
        let attempt = cells[1].parse().expect("attempt");
        map.entry(id)
            .or_default()
            .push((attempt, format!("{}:{}", cells[5], cells[6])));
    }
    for seq in map.values_mut() {
        seq.sort();
    }
    map
}

#[test]
fn diff_prints_the_metrics_and_the_first_differing_request() -> TestResult {
    let dir = scratch_dir("diff-change");
    let a = run(&dir, "a", 0, "all");
    let b = run(&dir, "b", 5, "all");
    let output = routersim(&["diff", &a, &b]);
    let stdout = String::from_utf8(output.stdout)?;
    assert_eq!(
        output.status.code(),
        Some(0),
        "differences are not an error: {stdout}"
    );
    assert!(
        stdout.contains(&format!("A: {a} (diff-small, seed 3)")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("B: {b} (diff-small, seed 3)")),
        "{stdout}"
    );
    let line = |metric: &str| {
        stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(metric))
            .unwrap_or_else(|| panic!("a {metric} line in {stdout}"))
            .split_whitespace()
            .map(String::from)
            .collect::<Vec<_>>()
    };
    let requests = line("requests");
    assert_eq!(requests[1], requests[2], "same arrivals");
    assert_eq!(requests[4], "=");
    let cooldowns = line("cooldowns");
    let (ca, cb): (f64, f64) = (cooldowns[1].parse()?, cooldowns[2].parse()?);
    assert_ne!(ca, cb, "allowed_fails changes the cooldowns: {stdout}");
    let change: f64 = cooldowns[3].trim_start_matches('+').parse()?;
    assert_eq!(change, cb - ca);
    assert!(cooldowns[4].ends_with('%'), "{cooldowns:?}");

    // The first differing request, checked against a plain reading of both traces.
    let (sa, sb) = (sequences(&a), sequences(&b));
    let ids: std::collections::BTreeSet<u64> = sa.keys().chain(sb.keys()).copied().collect();
    let first = ids
        .into_iter()
        .find(|id| sa.get(id) != sb.get(id))
        .expect("some request differs");
    let show = |s: &BTreeMap<u64, Vec<(u64, String)>>| {
        s.get(&first).map_or("(no attempts)".to_string(), |seq| {
            seq.iter()
                .map(|(_, step)| step.as_str())
                .collect::<Vec<_>>()
                .join(" -> ")
        })
    };
    assert!(
        stdout.contains(&format!("first request that differs: {first} ")),
        "{first}: {stdout}"
    );
    assert!(
        stdout.contains(&format!("  A: {}\n", show(&sa))),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("  B: {}\n", show(&sb))),
        "{stdout}"
    );
    Ok(())
}

#[test]
fn identical_reports_have_no_differing_request() -> TestResult {
    let dir = scratch_dir("diff-same");
    let a = run(&dir, "a", 0, "all");
    let b = run(&dir, "b", 0, "all");
    let output = routersim(&["diff", &a, &b]);
    let stdout = String::from_utf8(output.stdout)?;
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("attempts: no request differs"), "{stdout}");
    assert!(stdout.contains("0 of "), "no metric changed: {stdout}");
    Ok(())
}

#[test]
fn untraced_reports_compare_summaries_and_missing_ones_exit_2() -> TestResult {
    let dir = scratch_dir("diff-untraced");
    let a = run(&dir, "a", 0, "all");
    let b = run(&dir, "b", 5, "none");
    let output = routersim(&["diff", &a, &b]);
    let stdout = String::from_utf8(output.stdout)?;
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("fallback_rate"), "{stdout}");
    assert!(stdout.contains("--trace none"), "{stdout}");
    assert!(
        stdout.contains("only the summaries were compared"),
        "{stdout}"
    );

    let nowhere = dir.join("nowhere").to_string_lossy().into_owned();
    let output = routersim(&["diff", &a, &nowhere]);
    let stderr = String::from_utf8(output.stderr)?;
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("summary.json"), "{stderr}");
    Ok(())
}
