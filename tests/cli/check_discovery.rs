//! `routersim check DIR` never silently skips a file: router configs no scenario references,
//! files that are not UTF-8 or cannot be read are ERROR rows (the others still run, junit.xml
//! is still written), and `x.yaml` beside `x.yml` share neither a golden nor a report folder.

use std::path::Path;

use crate::common::{routersim, scratch_dir};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const TINY: &str = r#"name: tiny
seed: 3
duration: 20s
router:
  model_list:
    - {model_name: A, litellm_params: {model: openai/a}, model_info: {id: a1}}
    - {model_name: A, litellm_params: {model: azure/a}, model_info: {id: a2}}
  router_settings: {num_retries: 2, allowed_fails: 1}
providers:
  a1: {latency: {p50: 300ms, p99: 1s}}
faults:
  - {deployment: a1, from: 5s, to: 10s, error: service_unavailable}
traffic:
  - {model: A, rate: 5/s}
expect:
  - {metric: failed, max: 0}
"#;

const ROUTER: &str = "model_list:
  - {model_name: A, litellm_params: {model: openai/a}, model_info: {id: a1}}
router_settings: {num_retries: 1}
";

const USES_ROUTER: &str = "name: uses-router
seed: 1
duration: 10s
router_file: configs/router.yaml
traffic:
  - {model: A, rate: 2/s}
expect:
  - {metric: failed, max: 0}
";

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8_lossy(&bytes).into_owned()
}

fn path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn row<'a>(stdout: &'a str, file: &str) -> Option<&'a str> {
    stdout.lines().find(|l| {
        l.split_whitespace()
            .next()
            .is_some_and(|c| c.ends_with(file))
    })
}

#[test]
fn unreferenced_router_configs_unreadable_and_non_utf8_files_are_error_rows() -> TestResult {
    let dir = scratch_dir("check-discovery");
    let scenarios = dir.join("scenarios");
    std::fs::create_dir_all(scenarios.join("configs"))?;
    std::fs::write(scenarios.join("tiny.yaml"), TINY)?;
    std::fs::write(scenarios.join("uses-router.yaml"), USES_ROUTER)?;
    std::fs::write(scenarios.join("configs/router.yaml"), ROUTER)?;
    std::fs::write(scenarios.join("orphan.yaml"), ROUTER)?;
    std::fs::write(scenarios.join("latin1.yaml"), b"name: caf\xe9\n")?;
    std::os::unix::fs::symlink(scenarios.join("no-such-file"), scenarios.join("gone.yml"))?;
    let out = dir.join("out");
    let output = routersim(&["check", &path(&scenarios), "--out", &path(&out)]);
    let stdout = text(output.stdout);
    let stderr = text(output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stdout}{stderr}");

    let passing = |file: &str| {
        let line = row(&stdout, file).unwrap_or_else(|| panic!("no row for {file}: {stdout}"));
        assert!(line.contains(" pass "), "{line}");
    };
    passing("tiny.yaml");
    passing("uses-router.yaml");
    assert!(
        row(&stdout, "configs/router.yaml").is_none(),
        "a router config a scenario references is not a case: {stdout}"
    );
    let error = |file: &str, says: &str| {
        let line = row(&stdout, file).unwrap_or_else(|| panic!("no row for {file}: {stdout}"));
        assert!(line.contains("ERROR"), "{line}");
        assert!(line.contains(says), "{file}: {says:?} in {line}");
    };
    error(
        "orphan.yaml",
        "a router config that no scenario under the directory references",
    );
    error("latin1.yaml", "not UTF-8");
    error("gone.yml", "cannot read");
    assert!(
        stdout.contains("5 run(s): 2 passed, 0 failed, 3 error(s)"),
        "{stdout}"
    );
    let junit = std::fs::read_to_string(out.join("junit.xml"))?;
    assert!(
        // Two runs (an `expect` line and a golden, skipped: none, each) and three `load` errors.
        junit.contains("tests=\"7\" failures=\"0\" errors=\"3\" skipped=\"2\""),
        "{junit}"
    );
    Ok(())
}

#[test]
fn x_yaml_beside_x_yml_share_neither_a_golden_nor_a_report_folder() -> TestResult {
    let dir = scratch_dir("check-same-stem");
    let scenarios = dir.join("scenarios");
    std::fs::create_dir_all(&scenarios)?;
    std::fs::write(scenarios.join("x.yaml"), TINY)?;
    std::fs::write(scenarios.join("x.yml"), TINY.replace("seed: 3", "seed: 4"))?;
    let out = dir.join("out");
    let check = |extra: &[&str]| {
        let mut args = vec![
            "check".to_string(),
            path(&scenarios),
            "--out".into(),
            path(&out),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        routersim(&args)
    };
    let blessed = check(&["--bless"]);
    assert_eq!(blessed.status.code(), Some(0), "{}", text(blessed.stdout));
    let (a, b) = (
        scenarios.join("x.yaml.golden.json"),
        scenarios.join("x.yml.golden.json"),
    );
    assert!(std::fs::read_to_string(&a)?.contains("\"seed\": 3"));
    assert!(std::fs::read_to_string(&b)?.contains("\"seed\": 4"));
    assert!(!scenarios.join("x.golden.json").exists());
    assert!(out.join("x.yaml/seed-3/summary.json").is_file());
    assert!(out.join("x.yml/seed-4/summary.json").is_file());
    let again = check(&[]);
    let stdout = text(again.stdout);
    assert_eq!(again.status.code(), Some(0), "{stdout}");
    assert_eq!(stdout.matches(" match").count(), 2, "{stdout}");

    // A golden named after the bare stem would be ambiguous: said, not silently ignored.
    std::fs::copy(&a, scenarios.join("x.golden.json"))?;
    let ambiguous = check(&[]);
    let stdout = text(ambiguous.stdout);
    assert_eq!(ambiguous.status.code(), Some(2), "{stdout}");
    assert!(stdout.contains("x.golden.json is ambiguous"), "{stdout}");
    Ok(())
}
