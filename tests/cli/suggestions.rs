//! A mistake in a name gets the name meant: an unknown `expect` metric, a router setting
//! swept outside its section, a golden tolerance; and a number too large to be one says so.

use crate::common::{routersim, scratch_dir};

const SCENARIO: &str = "\
name: names
duration: 5s
router:
  model_list:
    - {model_name: A, litellm_params: {model: openai/a1}, model_info: {id: a1}}
providers:
  a1: {latency: {p50: 100ms, p99: 300ms}}
traffic:
  - {model: A, rate: 10/s}
";

fn stderr_of(args: &[&str]) -> (Option<i32>, String) {
    let output = routersim(args);
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn an_unknown_expect_metric_suggests_the_metric_meant() {
    let dir = scratch_dir("suggest-expect");
    let file = dir.join("s.yaml");
    std::fs::write(
        &file,
        format!("{SCENARIO}expect:\n  - {{metric: p99_latency, max: 3000}}\n"),
    )
    .unwrap();
    let out = dir.join("out");
    let (code, stderr) = stderr_of(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("unknown metric \"p99_latency\"; did you mean p99_latency_ms?"),
        "{stderr}"
    );
}

#[test]
fn a_swept_router_setting_outside_its_section_is_pointed_to_it() {
    let dir = scratch_dir("suggest-set");
    let file = dir.join("s.yaml");
    std::fs::write(&file, SCENARIO).unwrap();
    let out = dir.join("out");
    let (code, stderr) = stderr_of(&[
        "sweep",
        file.to_str().unwrap(),
        "--set",
        "allowed_fails=0,2",
        "--seeds",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("did you mean router_settings.allowed_fails?"),
        "{stderr}"
    );
}

#[test]
fn a_golden_tolerance_on_an_unknown_name_suggests_the_metric_and_a_huge_tolerance_is_not_finite() {
    let dir = scratch_dir("suggest-golden");
    let file = dir.join("s.yaml");
    std::fs::write(
        &file,
        format!("{SCENARIO}golden: {{tolerance: {{p99_latency: 5%}}}}\n"),
    )
    .unwrap();
    let out = dir.join("out");
    let (code, stderr) = stderr_of(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("golden.tolerance.p99_latency: unknown metric \"p99_latency\": did you mean p99_latency_ms?"),
        "{stderr}"
    );
    let (code, stderr) = stderr_of(&["check", "scenarios/ci", "--tolerance", "1e400%"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("is not a finite number"), "{stderr}");
    assert!(!stderr.contains("0% or more"), "{stderr}");
}
