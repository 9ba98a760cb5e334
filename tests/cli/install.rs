//! The ways routersim is installed and run in CI: the GitHub Action's script (`action.yml`
//! runs `scripts/action-check.sh`; these tests run it with the inputs the Action maps, as a
//! workflow would), the example workflow for a LiteLLM proxy repository, and `--version`. The
//! wheel, its pytest plugin and `cargo install` are exercised by `.ci/run` (they install into
//! venvs and a cargo root; docs/install.md).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{Killed, free_port, repo, routersim, scratch_dir};
use serde_json::Value;

/// A YAML file of the repository as JSON values.
fn yaml(path: &str) -> Value {
    let text = std::fs::read_to_string(repo().join(path)).unwrap();
    serde_saphyr::from_str(&text).unwrap()
}

/// The Action's script run as `action.yml` runs it: each environment variable of its step
/// mapped from `${{ inputs.NAME }}`, with the value of `with` or else the input's default.
/// `routersim` on PATH is the binary under test; GITHUB_OUTPUT and GITHUB_STEP_SUMMARY are files
/// in `dir`.
#[allow(
    clippy::disallowed_methods,
    reason = "the script's PATH is the test's, with the binary under test first"
)]
fn run_action(with: &BTreeMap<&str, String>, cwd: &Path, dir: &Path) -> Output {
    let action = yaml("action.yml");
    assert_eq!(action["runs"]["using"], "composite");
    let steps = action["runs"]["steps"].as_array().unwrap();
    let step = steps.iter().find(|s| s["id"] == "check").unwrap();
    assert_eq!(
        step["run"].as_str().unwrap(),
        "\"$GITHUB_ACTION_PATH/scripts/action-check.sh\""
    );
    let inputs = action["inputs"].as_object().unwrap();
    for name in with.keys() {
        assert!(inputs.contains_key(*name), "the Action has no input {name}");
    }
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_routersim")).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    let mut command = std::process::Command::new("bash");
    command
        .arg(repo().join("scripts/action-check.sh"))
        .current_dir(cwd)
        .env("PATH", path)
        .env("GITHUB_ACTION_PATH", repo())
        .env("GITHUB_OUTPUT", dir.join("github_output"))
        .env("GITHUB_STEP_SUMMARY", dir.join("step_summary.md"))
        .env("RUNNER_TEMP", dir);
    for (var, value) in step["env"].as_object().unwrap() {
        let input = value
            .as_str()
            .unwrap()
            .strip_prefix("${{ inputs.")
            .and_then(|v| v.strip_suffix(" }}"))
            .unwrap();
        let value = with
            .get(input)
            .cloned()
            .unwrap_or_else(|| inputs[input]["default"].as_str().unwrap().to_string());
        command.env(var, value);
    }
    command.output().unwrap()
}

fn outputs(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("github_output")).unwrap_or_default()
}

fn yaml_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "yaml")
        })
        .count()
}

#[test]
fn the_actions_script_checks_scenarios_ci_and_writes_junit_and_its_outputs() {
    let dir = scratch_dir("action-ci");
    let out = dir.join("out");
    let with = BTreeMap::from([
        ("scenarios", "scenarios/ci".to_string()),
        ("out", out.display().to_string()),
        // The binary under test is on PATH; the default pip install needs a registry.
        ("install", String::new()),
    ]);
    let done = run_action(&with, repo(), &dir);
    let stdout = String::from_utf8_lossy(&done.stdout);
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.starts_with(&format!(
            "routersim {} (litellm-1.110 models LiteLLM 1.110.2)\n",
            env!("CARGO_PKG_VERSION")
        )),
        "{stdout}"
    );
    // No seeds input: each scenario runs once with its own seed, one testsuite per run.
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    let scenarios = yaml_files(&repo().join("scenarios/ci"));
    assert_eq!(junit.matches("<testsuite ").count(), scenarios, "{junit}");
    assert_eq!(junit.matches("<failure").count(), 0, "{junit}");
    assert!(stdout.contains(&format!("{scenarios} run(s): {scenarios} passed")));
    assert_eq!(
        outputs(&dir),
        format!(
            "exit-code=0\njunit={0}/junit.xml\nreports={0}\n",
            out.display()
        )
    );
    let summary = std::fs::read_to_string(dir.join("step_summary.md")).unwrap();
    assert!(
        summary.starts_with("### routersim check scenarios/ci\n```text\nscenario"),
        "{summary}"
    );
}

#[test]
fn the_actions_script_exits_with_routersims_code_on_a_failed_expect_and_on_bad_input() {
    let dir = scratch_dir("action-fail");
    let scenarios = dir.join("scenarios");
    std::fs::create_dir_all(&scenarios).unwrap();
    // The shipped storm cools `east` 33 times (README): an expect of none fails.
    let storm = std::fs::read_to_string(repo().join("scenarios/rate-limit-storm.yaml")).unwrap();
    let failing = storm.replace(
        "{metric: cooldowns.east, min: 5}",
        "{metric: cooldowns.east, max: 0}",
    );
    assert_ne!(failing, storm);
    std::fs::write(scenarios.join("storm.yaml"), failing).unwrap();
    let out = dir.join("out");
    let with = BTreeMap::from([
        ("scenarios", scenarios.display().to_string()),
        ("seeds", "7".to_string()),
        ("out", out.display().to_string()),
        ("install", String::new()),
    ]);
    let done = run_action(&with, repo(), &dir);
    let stdout = String::from_utf8_lossy(&done.stdout);
    assert_eq!(done.status.code(), Some(1), "{stdout}");
    assert!(outputs(&dir).starts_with("exit-code=1\n"));
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert_eq!(junit.matches("<failure ").count(), 1, "{junit}");
    assert!(
        junit.contains("cooldowns.east &lt;= 0 (measured 33)"),
        "{junit}"
    );

    // A folder that does not exist: routersim's exit 2, passed on.
    let dir = scratch_dir("action-bad-input");
    let with = BTreeMap::from([
        ("scenarios", "no/such/folder".to_string()),
        ("install", String::new()),
    ]);
    let done = run_action(&with, repo(), &dir);
    assert_eq!(done.status.code(), Some(2));
    assert!(outputs(&dir).starts_with("exit-code=2\n"));
    assert!(String::from_utf8_lossy(&done.stderr).contains("no/such/folder"));
}

#[test]
fn the_actions_script_says_so_when_the_install_fails() {
    let dir = scratch_dir("action-install");
    let with = BTreeMap::from([
        ("scenarios", "scenarios/ci".to_string()),
        ("install", dir.join("no-such.whl").display().to_string()),
    ]);
    let done = run_action(&with, repo(), &dir);
    assert_eq!(done.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&done.stderr).contains("error: could not install routersim"),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    // No check ran.
    assert_eq!(outputs(&dir), "");
}

/// examples/github-actions/litellm-proxy.yml's routersim step, run through the Action's script
/// in examples/litellm-proxy-repo (a proxy repository's config.yaml and scenarios/): every
/// scenario for every seed of its `seeds` input passes.
#[test]
fn the_litellm_proxy_example_workflow_passes_through_the_action() {
    let workflow = yaml("examples/github-actions/litellm-proxy.yml");
    let steps = workflow["jobs"]["incidents"]["steps"].as_array().unwrap();
    let step = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.contains("/routersim@"))
        })
        .unwrap();
    let mut with: BTreeMap<&str, String> = step["with"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str().unwrap().to_string()))
        .collect();
    assert_eq!(with["seeds"], "1..5");
    // The binary under test, not the registry's.
    with.insert("install", String::new());
    let dir = scratch_dir("action-example");
    let out: PathBuf = dir.join("out");
    with.insert("out", out.display().to_string());
    let example = repo().join("examples/litellm-proxy-repo");
    let done = run_action(&with, &example, &dir);
    let stdout = String::from_utf8_lossy(&done.stdout);
    assert_eq!(done.status.code(), Some(0), "{stdout}");
    let runs = yaml_files(&example.join(&with["scenarios"])) * 5;
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert_eq!(junit.matches("<testsuite ").count(), runs, "{junit}");
    assert!(stdout.contains(&format!("{runs} run(s): {runs} passed")));
}

#[test]
fn version_names_routersims_version_and_the_litellm_release_its_profile_models() {
    let done = routersim(&["--version"]);
    assert!(done.status.success());
    assert_eq!(
        String::from_utf8_lossy(&done.stdout),
        format!(
            "routersim {} (litellm-1.110 models LiteLLM 1.110.2)\n",
            env!("CARGO_PKG_VERSION")
        )
    );
}

/// examples/compose/litellm-config.yaml is what `routersim serve` emits for the scenario the
/// compose file serves, with every api_base at the `routersim` service on the port it listens
/// on: LiteLLM routes to exactly the fake providers the container plays.
#[test]
fn the_compose_examples_litellm_config_is_what_serve_emits_for_its_scenario() {
    let compose = yaml("examples/compose/compose.yaml");
    let command: Vec<&str> = compose["services"]["routersim"]["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(command[0], "serve");
    let scenario = command[1].strip_prefix("/scenarios/").unwrap();
    assert!(command.contains(&"--listen=0.0.0.0:8000"), "{command:?}");
    let dir = scratch_dir("compose-config");
    let emitted = dir.join("litellm.yaml");
    let port = free_port();
    let _serve = Killed(
        std::process::Command::new(env!("CARGO_BIN_EXE_routersim"))
            .arg("serve")
            .arg(repo().join("scenarios").join(scenario))
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .arg("--emit-litellm-config")
            .arg(&emitted)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let begun = std::time::Instant::now();
    while !emitted.exists() && begun.elapsed() < std::time::Duration::from_secs(30) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Written in one go; read once it is there.
    std::thread::sleep(std::time::Duration::from_millis(100));
    let text = std::fs::read_to_string(&emitted)
        .unwrap()
        .replace(&format!("127.0.0.1:{port}"), "routersim:8000");
    let emitted: Value = serde_saphyr::from_str(&text).unwrap();
    assert_eq!(yaml("examples/compose/litellm-config.yaml"), emitted);
}

/// `check --json` gives each case's failure lines as the table prints them: what the pytest
/// plugin shows for a failed item (an `expect` line here; a golden's lines in `.ci/install-paths`).
#[test]
fn check_json_gives_each_cases_failure_lines() {
    let dir = scratch_dir("install-check-json");
    let storm = std::fs::read_to_string(repo().join("scenarios/rate-limit-storm.yaml")).unwrap();
    let failing = dir.join("storm.yaml");
    std::fs::write(
        &failing,
        storm.replace(
            "{metric: cooldowns.east, min: 5}",
            "{metric: cooldowns.east, max: 0}",
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let done = routersim(&[
        "check",
        failing.to_str().unwrap(),
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(done.status.code(), Some(1));
    let json: Value = serde_json::from_slice(&done.stdout).unwrap();
    assert_eq!(
        json["cases"][0]["failures"],
        serde_json::json!(["FAIL cooldowns.east <= 0 (measured 33)"])
    );
    // A passing case has none.
    let done = routersim(&[
        "check",
        "scenarios/ci/rate-limit-storm.yaml",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    let json: Value = serde_json::from_slice(&done.stdout).unwrap();
    assert_eq!(json["cases"][0]["failures"], serde_json::json!([]));
}
