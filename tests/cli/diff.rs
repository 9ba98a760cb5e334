//! `routersim diff A B`: summary lines, the first request that went differently, errors.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::{routersim, scratch_dir};

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

/// Writes a hand-made report folder: `summary` (with `source` when given), `requests` as
/// `(id, arrival_ms)` and `attempts` as `(id, [deployment:outcome, …])`.
fn hand_made(
    dir: &Path,
    summary: &serde_json::Value,
    source: Option<&str>,
    requests: &[(u64, &str)],
    attempts: &[(u64, &[&str])],
) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let mut summary = summary.clone();
    if let Some(source) = source {
        summary["source"] = serde_json::json!(source);
    }
    std::fs::write(dir.join("summary.json"), summary.to_string()).unwrap();
    let mut text = String::from(
        "request_id,arrival_ms,model,final_model_group,final_deployment_id,outcome,status,\
         attempts,retries,fallbacks,latency_ms,stream,stream_outcome,ttft_ms,tokens_delivered,\
         tokens_billed\n",
    );
    for (id, at) in requests {
        text.push_str(&format!("{id},{at},A,A,a1,ok,200,1,0,0,1.000,false,,,,\n"));
    }
    std::fs::write(dir.join("requests.csv"), text).unwrap();
    let mut text = String::from(
        "request_id,attempt,start_ms,end_ms,model_group,deployment_id,outcome,status,\
         retry_after_ms,wait_ms,fallback_depth\n",
    );
    for (id, steps) in attempts {
        for (n, step) in steps.iter().enumerate() {
            let (deployment, outcome) = step.split_once(':').unwrap();
            text.push_str(&format!(
                "{id},{},0.000,1.000,A,{deployment},{outcome},,,0.000,0\n",
                n + 1
            ));
        }
    }
    std::fs::write(dir.join("attempts.csv"), text).unwrap();
    std::fs::write(dir.join("report.complete"), "routersim test\n").unwrap();
    dir.to_string_lossy().into_owned()
}

#[test]
fn a_live_report_diffs_against_a_sim_report_joining_requests_by_id_then_arrival() -> TestResult {
    let dir = scratch_dir("diff-live");
    // A valid summary to start from; the hand-made folders only differ in their traces.
    let real = run(&dir, "real", 0, "none");
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
        Path::new(&real).join("summary.json"),
    )?)?;
    assert!(
        summary.get("source").is_none(),
        "a sim summary may have no source"
    );
    let sim = hand_made(
        &dir.join("sim"),
        &summary,
        None,
        &[(0, "0.000"), (1, "100.000"), (2, "200.000"), (3, "300.000")],
        &[
            (0, &["a1:ok"]),
            (1, &["a1:service_unavailable", "a2:ok"]),
            (2, &["a1:ok"]),
            (3, &["a2:ok"]),
        ],
    );
    // The live run numbered its requests its own way (but for the first), 0.2–0.9 ms late.
    let live = hand_made(
        &dir.join("live"),
        &summary,
        Some("live"),
        &[
            (0, "0.300"),
            (51, "100.600"),
            (52, "200.900"),
            (53, "300.200"),
        ],
        &[
            (0, &["a1:ok"]),
            (51, &["a1:service_unavailable", "a2:ok"]),
            (52, &["a2:ok"]),
            (53, &["a2:ok"]),
        ],
    );
    let output = routersim(&["diff", &sim, &live]);
    let stdout = String::from_utf8(output.stdout)?;
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains(", source sim)\n"), "{stdout}");
    assert!(stdout.contains(", source live)\n"), "{stdout}");
    assert!(
        stdout.contains("note: reports from different sources"),
        "{stdout}"
    );
    assert!(stdout.contains("0 of "), "the same summary: {stdout}");
    assert!(
        stdout.contains(
            "attempts: first joined request that differs: A 2 at 200 ms, B 52 at 200.9 ms \
             (4 requests joined (1 by id, 3 by arrival) of 4 in A and 4 in B)"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("  A: a1:ok\n  B: a2:ok\n"), "{stdout}");

    // The same traces from both sources: nothing differs.
    let twin = hand_made(
        &dir.join("twin"),
        &summary,
        Some("live"),
        &[(0, "0.000"), (1, "100.000"), (2, "200.000"), (3, "300.000")],
        &[
            (0, &["a1:ok"]),
            (1, &["a1:service_unavailable", "a2:ok"]),
            (2, &["a1:ok"]),
            (3, &["a2:ok"]),
        ],
    );
    let output = routersim(&["diff", &sim, &twin]);
    let stdout = String::from_utf8(output.stdout)?;
    assert!(
        stdout.contains(
            "attempts: no joined request differs (4 requests joined (4 by id, 0 by arrival)"
        ),
        "{stdout}"
    );
    Ok(())
}
