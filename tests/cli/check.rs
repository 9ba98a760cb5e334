//! `routersim check DIR`: the table, exit codes, junit.xml, goldens and `--seeds`, end to end
//! through the binary.

use std::path::Path;

use crate::common::{routersim, scratch_dir};

/// A small scenario (about 100 requests): one of two deployments answers 503 for five seconds.
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
  a2: {latency: {p50: 400ms, p99: 1500ms}}
faults:
  - {deployment: a1, from: 5s, to: 10s, error: service_unavailable}
traffic:
  - {model: A, rate: 5/s}
expect:
  - {metric: failed, max: 0}
"#;

/// A scenario whose `expect` cannot hold: its only deployment always answers 503.
const IMPOSSIBLE: &str = r#"name: impossible
duration: 10s
router:
  model_list:
    - {model_name: A, litellm_params: {model: openai/a}}
faults:
  - {model_group: A, error: service_unavailable}
traffic:
  - {at: 1s, model: A}
expect:
  - {metric: failed, max: 0}
  - {metric: requests, min: 1}
"#;

/// A scenario that does not load (an unknown key on line 7).
const BROKEN: &str = r#"name: broken
duration: 10s
router:
  model_list:
    - {model_name: A, litellm_params: {model: openai/a}}
traffic:
  - {at: 1s, model: A, retries: 3}
"#;

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).expect("utf-8 output")
}

fn path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The table row of a scenario file (by file name) and seed.
fn row<'a>(stdout: &'a str, file: &str, seed: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            cols.len() >= 2 && cols[0].ends_with(file) && cols[1] == seed
        })
        .unwrap_or_else(|| panic!("no row for {file} seed {seed}:\n{stdout}"))
}

#[test]
fn the_shipped_ci_scenarios_pass_and_match_their_goldens() -> Result<(), Box<dyn std::error::Error>>
{
    let out = scratch_dir("check-ci");
    let output = routersim(&["check", "scenarios/ci", "--out", &path(&out)]);
    let stdout = text(output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("scenarios/ci/"))
        .collect();
    assert!(rows.len() >= 10, "at least ten CI scenarios:\n{stdout}");
    for row in &rows {
        assert!(row.contains(" pass "), "{row}");
        assert!(
            row.trim_end().ends_with("match"),
            "every golden matches: {row}"
        );
    }
    let junit = std::fs::read_to_string(out.join("junit.xml"))?;
    assert!(
        junit.contains("<testsuites name=\"routersim check\" tests=\"")
            && junit.contains("failures=\"0\" errors=\"0\" skipped=\"0\""),
        "{junit}"
    );
    // One suite per run, one case per `expect` line and one for the golden.
    assert_eq!(junit.matches("<testsuite ").count(), rows.len(), "{junit}");
    assert_eq!(
        junit.matches(" golden\" time=\"").count(),
        rows.len(),
        "{junit}"
    );
    assert!(
        out.join("thundering-herd/seed-23/summary.json").is_file(),
        "reports go to <out>/<relative path>/seed-<N>/"
    );
    Ok(())
}

#[test]
fn a_failing_expectation_exits_1_naming_the_assertion_and_its_value()
-> Result<(), Box<dyn std::error::Error>> {
    let dir = scratch_dir("check-fail");
    let scenarios = dir.join("scenarios");
    std::fs::create_dir_all(scenarios.join("nested"))?;
    std::fs::write(scenarios.join("tiny.yaml"), TINY)?;
    std::fs::write(scenarios.join("nested/impossible.yaml"), IMPOSSIBLE)?;
    let out = dir.join("out");
    let output = routersim(&["check", &path(&scenarios), "--out", &path(&out)]);
    let stdout = text(output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    let failed = row(&stdout, "nested/impossible.yaml", "0");
    assert!(failed.contains("FAIL"), "{failed}");
    assert!(failed.contains("no golden"), "{failed}");
    assert!(
        failed.contains("failed <= 0 (measured 1)"),
        "the row names the assertion and the measured value: {failed}"
    );
    let passed = row(&stdout, "tiny.yaml", "3");
    assert!(
        passed.contains("pass") && passed.contains("no golden"),
        "{passed}"
    );
    assert!(
        stdout.contains("2 run(s): 1 passed, 1 failed, 0 error(s)"),
        "{stdout}"
    );
    assert!(out.join("nested/impossible/seed-0/summary.json").is_file());
    assert!(out.join("tiny/seed-3/summary.json").is_file());

    let junit = std::fs::read_to_string(out.join("junit.xml"))?;
    assert!(junit.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites"));
    // tiny: one `expect` line and its golden; impossible: two lines and its golden (no
    // goldens: skipped).
    assert!(
        junit.contains(
            "<testsuites name=\"routersim check\" tests=\"5\" failures=\"1\" errors=\"0\" skipped=\"2\""
        ),
        "{junit}"
    );
    let impossible = path(&scenarios.join("nested/impossible.yaml")).replace('.', "_");
    assert!(
        junit.contains(&format!(
            "<testcase classname=\"{impossible}\" name=\"seed-0 expect failed &lt;= 0\" time=\"0\">"
        )),
        "{junit}"
    );
    assert!(
        junit.contains(
            "<failure message=\"failed &lt;= 0 (measured 1)\" type=\"expectation\">FAIL failed &lt;= 0 (measured 1)</failure>"
        ),
        "{junit}"
    );
    assert_eq!(junit.matches("<failure ").count(), 1, "{junit}");
    assert_eq!(junit.matches("<testcase ").count(), 5, "{junit}");

    // Same input, same junit.xml but for its wall-clock `time` attributes.
    let again = routersim(&["check", &path(&scenarios), "--out", &path(&out)]);
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(
        crate::ci_outputs::without_times(&std::fs::read_to_string(out.join("junit.xml"))?),
        crate::ci_outputs::without_times(&junit)
    );
    Ok(())
}

#[test]
fn a_broken_scenario_is_an_error_case_and_the_others_still_run()
-> Result<(), Box<dyn std::error::Error>> {
    let dir = scratch_dir("check-broken");
    std::fs::write(dir.join("a-tiny.yaml"), TINY)?;
    std::fs::write(dir.join("broken.yaml"), BROKEN)?;
    let out = dir.join("out");
    let output = routersim(&["check", &path(&dir), "--out", &path(&out)]);
    let stdout = text(output.stdout);
    assert_eq!(
        output.status.code(),
        Some(2),
        "bad input is exit 2: {stdout}"
    );
    assert!(
        row(&stdout, "a-tiny.yaml", "3").contains("pass"),
        "{stdout}"
    );
    let broken = row(&stdout, "broken.yaml", "-");
    assert!(broken.contains("ERROR"), "{broken}");
    assert!(
        broken.contains("broken.yaml:7:") && broken.contains("retries"),
        "the row carries the error: {broken}"
    );
    let junit = std::fs::read_to_string(out.join("junit.xml"))?;
    // a-tiny: its `expect` line and its golden (skipped: none); broken: one `load` case.
    assert!(
        junit.contains("tests=\"3\" failures=\"0\" errors=\"1\" skipped=\"1\""),
        "{junit}"
    );
    assert!(junit.contains("name=\"load\""), "{junit}");
    assert!(junit.contains("<error message=\""), "{junit}");
    Ok(())
}

#[test]
fn bless_writes_goldens_and_a_changed_summary_fails_with_the_differences()
-> Result<(), Box<dyn std::error::Error>> {
    let dir = scratch_dir("check-bless");
    let scenarios = dir.join("scenarios");
    std::fs::create_dir_all(&scenarios)?;
    let scenario = scenarios.join("tiny.yaml");
    std::fs::write(&scenario, TINY)?;
    let out = path(&dir.join("out"));

    let blessed = routersim(&["check", &path(&scenarios), "--out", &out, "--bless"]);
    let stdout = text(blessed.stdout);
    assert_eq!(blessed.status.code(), Some(0), "{stdout}");
    assert!(
        row(&stdout, "tiny.yaml", "3").contains("blessed"),
        "{stdout}"
    );
    let golden = scenarios.join("tiny.golden.json");
    let golden_text = std::fs::read_to_string(&golden)?;
    assert_eq!(
        golden_text,
        std::fs::read_to_string(dir.join("out/tiny/seed-3/summary.json"))?,
        "the golden is the run's summary.json"
    );

    let same = routersim(&["check", &path(&scenarios), "--out", &out]);
    let stdout = text(same.stdout);
    assert_eq!(same.status.code(), Some(0), "{stdout}");
    assert!(row(&stdout, "tiny.yaml", "3").contains("match"), "{stdout}");

    // A version bump alone does not fail a golden.
    let bumped = golden_text.replacen(
        "\"routersim_version\": \"",
        "\"routersim_version\": \"99.0.0-",
        1,
    );
    assert_ne!(bumped, golden_text);
    std::fs::write(&golden, &bumped)?;
    let same = routersim(&["check", &path(&scenarios), "--out", &out]);
    assert_eq!(same.status.code(), Some(0), "{}", text(same.stdout));

    // Another seed in the scenario: the summary changes and check says how.
    std::fs::write(&scenario, TINY.replace("seed: 3", "seed: 4"))?;
    let changed = routersim(&["check", &path(&scenarios), "--out", &out]);
    let stdout = text(changed.stdout);
    assert_eq!(changed.status.code(), Some(1), "{stdout}");
    let line = row(&stdout, "tiny.yaml", "4");
    assert!(line.contains("FAIL") && line.contains("changed"), "{line}");
    assert!(line.contains("seed 3 -> 4"), "{line}");
    assert!(
        stdout.contains(&format!("golden {} differs in", path(&golden))),
        "{stdout}"
    );
    assert!(stdout.contains("    seed: golden 3, new 4"), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("    latency_ms.p50: golden ")),
        "the differing metrics are listed with both values: {stdout}"
    );
    assert!(
        !stdout.contains("routersim_version"),
        "the version is not compared: {stdout}"
    );
    let junit = std::fs::read_to_string(dir.join("out/junit.xml"))?;
    assert!(junit.contains("type=\"golden\""), "{junit}");
    assert!(junit.contains("seed: golden 3, new 4"), "{junit}");
    Ok(())
}

#[test]
fn seeds_run_each_scenario_once_per_seed() -> Result<(), Box<dyn std::error::Error>> {
    let dir = scratch_dir("check-seeds");
    let scenarios = dir.join("scenarios");
    std::fs::create_dir_all(&scenarios)?;
    std::fs::write(scenarios.join("tiny.yaml"), TINY)?;
    let out = dir.join("out");
    let output = routersim(&[
        "check",
        &path(&scenarios),
        "--seeds",
        "1..3",
        "--out",
        &path(&out),
        "--bless",
    ]);
    let stdout = text(output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    for seed in ["1", "2", "3"] {
        assert!(row(&stdout, "tiny.yaml", seed).contains("pass"), "{stdout}");
        assert!(out.join(format!("tiny/seed-{seed}/summary.json")).is_file());
    }
    assert!(stdout.contains("3 run(s): 3 passed"), "{stdout}");
    let junit = std::fs::read_to_string(out.join("junit.xml"))?;
    assert!(
        junit.contains("tests=\"6\" failures=\"0\" errors=\"0\""),
        "{junit}"
    );
    // Seeds other than the scenario's own get their own golden; its own seed (3) the plain one.
    assert!(scenarios.join("tiny.seed-1.golden.json").is_file());
    assert!(scenarios.join("tiny.seed-2.golden.json").is_file());
    assert!(scenarios.join("tiny.golden.json").is_file());
    assert!(!scenarios.join("tiny.seed-3.golden.json").exists());

    // Without --seeds, the scenario's own seed reads the plain golden.
    let own = routersim(&["check", &path(&scenarios), "--out", &path(&out)]);
    let stdout = text(own.stdout);
    assert_eq!(own.status.code(), Some(0), "{stdout}");
    assert!(row(&stdout, "tiny.yaml", "3").contains("match"), "{stdout}");
    Ok(())
}

#[test]
fn a_bad_seeds_flag_exits_2_with_a_clear_message() {
    for (bad, says) in [
        ("3..1", "empty range"),
        ("abc", "is not a seed"),
        ("1,,2", "empty item"),
        ("", "no seeds given"),
    ] {
        let output = routersim(&["check", "scenarios/ci", "--seeds", bad]);
        let stderr = text(output.stderr);
        assert_eq!(output.status.code(), Some(2), "--seeds {bad:?}: {stderr}");
        assert!(
            stderr.contains("error: --seeds") && stderr.contains(says),
            "--seeds {bad:?}: {stderr}"
        );
        assert!(output.stdout.is_empty(), "nothing runs: --seeds {bad:?}");
    }
    let missing = routersim(&["check", "scenarios/no-such-dir"]);
    assert_eq!(missing.status.code(), Some(2));
}
