//! A typo is never silently a no-op: every command that loads a scenario says which router
//! config keys LiteLLM would not know (with the closest known key) and which routersim does not
//! model; `--strict` makes either an error (exit 2); `sweep --set` refuses both.

use std::path::{Path, PathBuf};

use crate::common::{routersim, scratch_dir};

/// A scenario whose router config has a typo (`allowed_fail`) and a key LiteLLM knows but
/// routersim does not model (`redis_host`).
const TYPO: &str = "\
name: typo
duration: 5s
router:
  model_list:
    - {model_name: A, litellm_params: {model: openai/a}, model_info: {id: a1}}
  router_settings:
    allowed_fail: 3
    redis_host: localhost
traffic:
  - {model: A, rate: 2/s}
";

/// The same incident with only keys routersim models.
const CLEAN: &str = "\
name: clean
duration: 5s
router:
  model_list:
    - {model_name: A, litellm_params: {model: openai/a}, model_info: {id: a1}}
  router_settings:
    allowed_fails: 3
traffic:
  - {model: A, rate: 2/s}
";

const TYPO_WARNING: &str = "warning: router config: router_settings.allowed_fail: LiteLLM's \
     Router has no such setting (its proxy ignores it, and so does routersim); did you mean \
     router_settings.allowed_fails?";
const NOTE: &str = "note: router config keys not modelled (ignored): router_settings.redis_host";

struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(args: &[&str]) -> Out {
    let output = routersim(args);
    Out {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("temp dir is writable");
    path.to_string_lossy().into_owned()
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn out_dir(dir: &Path) -> PathBuf {
    dir.join("out")
}

#[test]
fn run_warns_of_each_unknown_key_with_its_suggestion_and_notes_the_unmodelled_ones() {
    let dir = scratch_dir("keys-run");
    let scenario = write(&dir, "typo.yaml", TYPO);
    let out = run(&["run", &scenario, "--out", &s(&out_dir(&dir))]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stderr.contains(TYPO_WARNING), "{}", out.stderr);
    assert!(out.stderr.contains(NOTE), "{}", out.stderr);
}

#[test]
fn run_strict_makes_either_class_an_error_naming_the_file_and_the_key() {
    let dir = scratch_dir("keys-run-strict");
    let scenario = write(&dir, "typo.yaml", TYPO);
    let report = out_dir(&dir);
    let out = run(&["run", &scenario, "--strict", "--out", &s(&report)]);
    assert_eq!(out.code, Some(2), "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains(&format!(
            "error: {scenario}:7:19: router.router_settings.allowed_fail: LiteLLM's Router has no \
             such setting"
        )),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("did you mean router_settings.allowed_fails?"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(&format!(
            "error: {scenario}:8:17: router.router_settings.redis_host: routersim does not model \
             this key"
        )),
        "{}",
        out.stderr
    );
    assert!(!report.exists(), "a strict error must not run the scenario");

    let clean = write(&dir, "clean.yaml", CLEAN);
    let out = run(&["run", &clean, "--strict", "--out", &s(&report)]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(!out.stderr.contains("warning:"), "{}", out.stderr);
}

#[test]
fn strict_names_the_router_file_when_the_config_is_in_one() {
    let dir = scratch_dir("keys-router-file");
    write(
        &dir,
        "router.yaml",
        "model_list:\n  - {model_name: A, litellm_params: {model: openai/a}}\nrouter_settings:\n  \
         num_retry: 1\n",
    );
    let scenario = write(
        &dir,
        "s.yaml",
        "duration: 2s\nrouter_file: router.yaml\ntraffic:\n  - {model: A, at: 1s}\n",
    );
    let out = run(&["run", &scenario, "--out", &s(&out_dir(&dir))]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "warning: router config: router_settings.num_retry: LiteLLM's Router has no such \
             setting (its proxy ignores it, and so does routersim); did you mean \
             router_settings.num_retries?"
        ),
        "{}",
        out.stderr
    );
    let out = run(&["run", &scenario, "--strict", "--out", &s(&out_dir(&dir))]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    let router = s(&dir.join("router.yaml"));
    assert!(
        out.stderr.contains(&format!(
            "error: {router}:4:14: router_settings.num_retry: "
        )),
        "{}",
        out.stderr
    );
}

#[test]
fn check_shows_the_warnings_in_its_table_and_in_junit_and_strict_makes_them_errors() {
    let dir = scratch_dir("keys-check");
    let cases = dir.join("cases");
    std::fs::create_dir_all(&cases).expect("temp dir is writable");
    write(&cases, "typo.yaml", TYPO);
    write(&cases, "clean.yaml", CLEAN);
    let out_path = out_dir(&dir);
    let out = run(&["check", &s(&cases), "--out", &s(&out_path)]);
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(&format!("  {TYPO_WARNING}")),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains(&format!("  {NOTE}")), "{}", out.stdout);
    let junit = std::fs::read_to_string(out_path.join("junit.xml")).expect("junit.xml");
    assert!(
        junit.contains(
            "warning: router config: router_settings.allowed_fail: LiteLLM&apos;s Router has no \
             such setting"
        ),
        "{junit}"
    );
    assert!(junit.contains(NOTE), "{junit}");

    let out = run(&["check", &s(&cases), "--strict", "--out", &s(&out_path)]);
    assert_eq!(out.code, Some(2), "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("router.router_settings.allowed_fail"),
        "{}",
        out.stdout
    );
    let junit = std::fs::read_to_string(out_path.join("junit.xml")).expect("junit.xml");
    assert!(
        junit.contains("tests=\"2\" failures=\"0\" errors=\"1\""),
        "{junit}"
    );
    assert!(
        junit.contains("router.router_settings.redis_host: routersim does not model"),
        "{junit}"
    );
}

#[test]
fn sweep_warns_and_strict_refuses() {
    let dir = scratch_dir("keys-sweep");
    let scenario = write(&dir, "typo.yaml", TYPO);
    let args = [
        "sweep",
        &scenario,
        "--seeds",
        "1",
        "--set",
        "router_settings.num_retries=0,1",
        "--out",
        &s(&out_dir(&dir)),
    ];
    let out = run(&args);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stderr.contains(TYPO_WARNING), "{}", out.stderr);
    assert!(out.stderr.contains(NOTE), "{}", out.stderr);

    let mut strict = args.to_vec();
    strict.push("--strict");
    let out = run(&strict);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("router.router_settings.allowed_fail: LiteLLM's Router has no such setting"),
        "{}",
        out.stderr
    );
}

/// `sweep --set` on a key that does nothing: exit 2 before any run, naming it.
fn sweep_set(name: &str, set: &str) -> Out {
    let dir = scratch_dir(name);
    let scenario = write(&dir, "clean.yaml", CLEAN);
    let out = out_dir(&dir);
    let result = run(&[
        "sweep",
        &scenario,
        "--seeds",
        "1..2",
        "--set",
        set,
        "--out",
        &s(&out),
    ]);
    assert_eq!(
        result.code,
        Some(2),
        "{set}: {}\n{}",
        result.stdout,
        result.stderr
    );
    assert!(!out.exists(), "{set}: nothing may run");
    result
}

#[test]
fn sweep_set_on_a_key_litellm_would_not_know_is_exit_2_with_the_suggestion() {
    let out = sweep_set("keys-set-typo", "router_settings.allowed_fail=0,2,5");
    assert!(
        out.stderr.contains(
            "error: --set router_settings.allowed_fail: LiteLLM's Router has no such setting \
             (its proxy ignores it, and so does routersim); did you mean \
             router_settings.allowed_fails? Every value would run the same"
        ),
        "{}",
        out.stderr
    );
    let out = sweep_set("keys-set-section", "router_setting.num_retries=0,1");
    assert!(
        out.stderr.contains(
            "error: --set router_setting.num_retries: router_setting: not a section LiteLLM's \
             proxy reads (ignored, by routersim too); did you mean router_settings? Every value \
             would run the same"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn sweep_set_on_a_key_routersim_does_not_model_is_exit_2() {
    for (name, set, key) in [
        (
            "keys-set-redis",
            "router_settings.redis_host=a,b",
            "router_settings.redis_host",
        ),
        (
            "keys-set-nested",
            "router_settings.routing_strategy_args.ttl=1,2",
            "router_settings.routing_strategy_args",
        ),
        (
            "keys-set-param",
            "model_list[0].litellm_params.api_key=a,b",
            // The same key as the path: not named twice.
            "model_list[0].litellm_params.api_key",
        ),
        (
            "keys-set-litellm",
            "litellm_settings.drop_params=true,false",
            "litellm_settings.drop_params",
        ),
    ] {
        let out = sweep_set(name, set);
        let path = set.split('=').next().unwrap_or_default();
        let named = if key == path {
            String::new()
        } else {
            format!("{key}: ")
        };
        assert!(
            out.stderr.contains(&format!(
                "error: --set {path}: {named}routersim does not model this key. Every value \
                 would run the same"
            )),
            "{set}: {}",
            out.stderr
        );
    }
}

/// `retry_policy: {max_retries: 3}` (a real config's): LiteLLM's pydantic `RetryPolicy`
/// ignores the field, so the run goes ahead with a warning; `--strict` makes it an error at
/// its line.
#[test]
fn an_unknown_retry_policy_field_is_a_warning_and_strict_makes_it_an_error() {
    let dir = scratch_dir("keys-retry-policy");
    let scenario = write(
        &dir,
        "policy.yaml",
        "\
name: policy
duration: 5s
router:
  model_list:
    - {model_name: A, litellm_params: {model: openai/a}, model_info: {id: a1}}
  router_settings:
    retry_policy:
      max_retries: 3
      RateLimitErrorRetries: 2
traffic:
  - {model: A, rate: 2/s}
",
    );
    let report = out_dir(&dir);
    let warning = "router_settings.retry_policy.max_retries: LiteLLM's RetryPolicy has no such \
                   field (it ignores it, and so does routersim); did you mean \
                   router_settings.retry_policy.DefaultRetries?";
    let out = run(&["run", &scenario, "--out", &s(&report)]);
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains(&format!("warning: router config: {warning}")),
        "{}",
        out.stderr
    );

    let strict = dir.join("strict");
    let out = run(&["run", &scenario, "--strict", "--out", &s(&strict)]);
    assert_eq!(out.code, Some(2), "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains(&format!("error: {scenario}:8:20: router.{warning}")),
        "{}",
        out.stderr
    );
    assert!(!strict.exists(), "a strict error must not run the scenario");
}

/// Keys that only other profiles read: under the default profile (`litellm`) each loads and
/// does nothing.
const UNREAD: &str = "\
name: unread
duration: 2s
router:
  model_list:
    - {model_name: A, litellm_params: {model: openai/a}, model_info: {id: a1}}
    - {model_name: B, litellm_params: {model: openai/b}, model_info: {id: b1}}
  router_settings:
    attempts_per_candidate: 3
    request_deadline: 10s
    same_route_retries: 1
traffic:
  - {model: A, rate: 2/s, models: [B]}
";

/// `--help`: "Make every router config key routersim does not use an error (exit 2)": a key
/// the chosen profile does not read is one ("read by profile: … only; it does nothing here").
#[test]
fn strict_refuses_the_keys_the_profile_does_not_read() {
    let dir = scratch_dir("keys-unread");
    let scenario = write(&dir, "unread.yaml", UNREAD);
    let out = run(&["run", &scenario, "--out", &s(&out_dir(&dir))]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "warning: router config: router_settings.same_route_retries: read by profile: \
             contract only; it does nothing here"
        ),
        "{}",
        out.stderr
    );

    let out = run(&["run", &scenario, "--strict", "--out", &s(&out_dir(&dir))]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    // Each error names the file, the key's line and its YAML path.
    for (line, key) in [
        (8, "router.router_settings.attempts_per_candidate"),
        (9, "router.router_settings.request_deadline"),
        (10, "router.router_settings.same_route_retries"),
        (12, "traffic[0].models"),
    ] {
        let error = out
            .stderr
            .lines()
            .find(|l| l.contains(&format!(": {key}: read by profile: ")))
            .unwrap_or_else(|| panic!("{key}: {}", out.stderr));
        assert!(error.contains(&format!("unread.yaml:{line}:")), "{error}");
    }
    assert!(
        out.stderr.contains("(an error under --strict)"),
        "{}",
        out.stderr
    );

    // Under `--profile multigrid` only `same_route_retries` (contract's) does nothing.
    let out = run(&[
        "run",
        &scenario,
        "--strict",
        "--profile",
        "multigrid",
        "--out",
        &s(&out_dir(&dir)),
    ]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert_eq!(out.stderr.matches("error: ").count(), 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("router.router_settings.same_route_retries: read by profile: contract only"),
        "{}",
        out.stderr
    );
}

/// A sweep over `profile` reads a key in some combinations: `--strict` refuses only a key no
/// combination reads.
#[test]
fn strict_sweep_over_profiles_refuses_only_keys_no_combination_reads() {
    let dir = scratch_dir("keys-unread-sweep");
    let scenario = write(&dir, "unread.yaml", UNREAD);
    let sweep = |profiles: &str| {
        run(&[
            "sweep",
            &scenario,
            "--seeds",
            "1",
            "--strict",
            "--set",
            &format!("router_settings.profile={profiles}"),
            "--out",
            &s(&out_dir(&dir).join(profiles.replace(',', "-"))),
        ])
    };
    let out = sweep("multigrid,contract");
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let out = sweep("litellm,multigrid");
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("router.router_settings.same_route_retries: read by profile: contract only"),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains("attempts_per_candidate"),
        "{}",
        out.stderr
    );
}

/// A bad `--profile` is the flag's mistake, not a `set` entry of the file's.
#[test]
fn a_bad_profile_flag_is_named_as_the_flag() {
    let dir = scratch_dir("keys-profile-flag");
    let scenario = write(&dir, "clean.yaml", CLEAN);
    let out = run(&[
        "run",
        &scenario,
        "--profile",
        "bogus",
        "--out",
        &s(&out_dir(&dir)),
    ]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert_eq!(
        out.stderr.trim_end(),
        "error: --profile (router_settings.profile): expected litellm or deltallm or \
         litellm-1.110 or multigrid or contract or portkey, found \"bogus\""
    );
}
