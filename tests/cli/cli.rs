//! The `routersim` command: exit codes, the summary, and errors that name file, line and path.

use crate::common;

use crate::common::{routersim, scratch_dir};

#[test]
fn run_prints_the_summary_and_the_report_path() -> Result<(), Box<dyn std::error::Error>> {
    let out = scratch_dir("cli-run");
    let out_arg = out.to_string_lossy().into_owned();
    let output = routersim(&["run", "scenarios/seed-example.yaml", "--out", &out_arg]);
    let stdout = String::from_utf8(output.stdout)?;
    assert_eq!(output.status.code(), Some(0), "stdout: {stdout}");
    assert!(stdout.contains("seed-example (seed 42)"), "{stdout}");
    assert!(stdout.contains(&format!("report: {out_arg}")), "{stdout}");
    assert!(out.join("summary.json").is_file());
    Ok(())
}

#[test]
fn run_defaults_to_reports_name_seed() -> Result<(), Box<dyn std::error::Error>> {
    let output = routersim(&[
        "run",
        "scenarios/context-window-overflow.yaml",
        "--seed",
        "99",
        "--trace",
        "none",
    ]);
    let stdout = String::from_utf8(output.stdout)?;
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("report: reports/context-window-overflow/seed-99"),
        "{stdout}"
    );
    let dir = common::repo().join("reports/context-window-overflow/seed-99");
    assert!(dir.join("summary.json").is_file());
    assert!(
        !dir.join("requests.csv").exists(),
        "--trace none skips requests.csv"
    );
    assert!(
        !dir.join("attempts.csv").exists(),
        "--trace none skips attempts.csv"
    );
    Ok(())
}

#[test]
fn a_failed_expectation_exits_1_and_names_the_measured_value()
-> Result<(), Box<dyn std::error::Error>> {
    let dir = scratch_dir("cli-expect");
    let scenario = dir.join("impossible.yaml");
    std::fs::write(
        &scenario,
        "name: impossible\nduration: 10s\nrouter:\n  model_list:\n    - {model_name: A, litellm_params: {model: openai/a}}\n\
         faults:\n  - {model_group: A, error: service_unavailable}\n\
         traffic:\n  - {at: 1s, model: A}\nexpect:\n  - {metric: failed, max: 0}\n  - {metric: requests, min: 1}\n",
    )?;
    let out = dir.join("out").to_string_lossy().into_owned();
    let output = routersim(&["run", &scenario.to_string_lossy(), "--out", &out]);
    let stderr = String::from_utf8(output.stderr)?;
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("1 expectation(s) failed"), "{stderr}");
    assert!(stderr.contains("FAIL failed <= 0 (measured 1)"), "{stderr}");
    assert!(
        !stderr.contains("requests"),
        "only failing lines are listed: {stderr}"
    );
    Ok(())
}

#[test]
fn a_broken_scenario_exits_2_naming_file_line_and_path() -> Result<(), Box<dyn std::error::Error>> {
    let dir = scratch_dir("cli-broken");
    let scenario = dir.join("broken.yaml");
    std::fs::write(
        &scenario,
        "name: broken\nduration: 10s\nrouter:\n  model_list:\n    - {model_name: A, litellm_params: {model: openai/a}}\n\
         traffic:\n  - {at: 1s, model: A, retries: 3}\n",
    )?;
    let output = routersim(&["run", &scenario.to_string_lossy()]);
    let stderr = String::from_utf8(output.stderr)?;
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("broken.yaml:7:"),
        "names the file and line: {stderr}"
    );
    assert!(
        stderr.contains("traffic[0]"),
        "names the YAML path: {stderr}"
    );
    assert!(
        stderr.contains("retries"),
        "names the unknown key: {stderr}"
    );

    let unknown_metric = dir.join("metric.yaml");
    std::fs::write(
        &unknown_metric,
        "name: m\nduration: 10s\nrouter:\n  model_list:\n    - {model_name: A, litellm_params: {model: openai/a}}\n\
         traffic:\n  - {at: 1s, model: A}\nexpect:\n  - {metric: p42_latency, max: 1}\n",
    )?;
    let output = routersim(&["run", &unknown_metric.to_string_lossy()]);
    let stderr = String::from_utf8(output.stderr)?;
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("metric.yaml:9:"), "{stderr}");
    assert!(stderr.contains("expect[0].metric"), "{stderr}");
    Ok(())
}

/// `ROUTER_MAX_FALLBACKS` is read once by the CLI and recorded: the run says it used it.
#[test]
fn router_max_fallbacks_from_the_environment_is_a_warning() -> Result<(), Box<dyn std::error::Error>>
{
    let out = scratch_dir("cli-max-fallbacks-env");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_routersim"))
        .args([
            "run",
            "scenarios/seed-example.yaml",
            "--trace",
            "none",
            "--out",
        ])
        .arg(&out)
        .env("ROUTER_MAX_FALLBACKS", "1")
        .current_dir(common::repo())
        .output()?;
    let text = format!(
        "{}{}",
        String::from_utf8(output.stdout)?,
        String::from_utf8(output.stderr)?
    );
    assert_eq!(output.status.code(), Some(0), "{text}");
    // seed-example.yaml sets no max_fallbacks: the variable is used, and said so.
    assert!(
        text.contains(
            "warning: router config: ROUTER_MAX_FALLBACKS=\"1\" from the environment: \
             max_fallbacks is 1"
        ),
        "{text}"
    );
    Ok(())
}

/// Runs `routersim` with stdout a pipe whose reader is already gone (`routersim … | head`).
fn with_closed_stdout(args: &[&str]) -> std::process::Output {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_routersim"))
        .args(args)
        .current_dir(common::repo())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the routersim binary runs");
    drop(child.stdout.take());
    child.wait_with_output().expect("routersim ends")
}

#[test]
fn a_closed_stdout_is_not_a_crash() -> Result<(), Box<dyn std::error::Error>> {
    let out = scratch_dir("cli-closed-stdout");
    let bench_out = out.join("bench").to_string_lossy().into_owned();
    let run_out = out.join("run").to_string_lossy().into_owned();
    let cases: [&[&str]; 2] = [
        &[
            "bench",
            "--duration",
            "2s",
            "--rate",
            "5",
            "--repeat",
            "1",
            "--out",
            &bench_out,
        ],
        &["run", "scenarios/seed-example.yaml", "--out", &run_out],
    ];
    for args in cases {
        let output = with_closed_stdout(args);
        let stderr = String::from_utf8(output.stderr)?;
        assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    // The work was done all the same.
    assert!(out.join("run").join("summary.json").is_file());
    Ok(())
}

/// `bench --profile` runs the benchmark router under that profile (its summary names it); a
/// profile that does not exist is a load error, exit 2.
#[test]
fn bench_runs_under_the_profile_asked_for() -> Result<(), Box<dyn std::error::Error>> {
    let dir = scratch_dir("cli-bench-profile");
    for profile in ["multigrid", "deltallm"] {
        let out = dir.join(profile).to_string_lossy().into_owned();
        let output = routersim(&[
            "bench",
            "--duration",
            "2s",
            "--rate",
            "5",
            "--repeat",
            "1",
            "--profile",
            profile,
            "--out",
            &out,
        ]);
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
            dir.join(profile).join("summary.json"),
        )?)?;
        assert_eq!(summary["router_profile"]["name"], profile, "{summary}");
    }
    let out = dir.join("nope").to_string_lossy().into_owned();
    let output = routersim(&[
        "bench",
        "--duration",
        "2s",
        "--repeat",
        "1",
        "--profile",
        "nope",
        "--out",
        &out,
    ]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(String::from_utf8(output.stderr)?.contains("profile"));
    Ok(())
}

/// `bench --profile all` times the harness under no profile and every profile, traces on and
/// with `--trace none`, against the tokio floor, one line each with both ratios and whether
/// they meet the targets; options it cannot honour are a usage error (exit 2).
#[test]
fn bench_all_prints_every_profile_s_ratios() -> Result<(), Box<dyn std::error::Error>> {
    let dir = scratch_dir("cli-bench-all");
    let out = dir.join("b").to_string_lossy().into_owned();
    let bench = |extra: &[&str]| {
        let mut args = vec![
            "bench",
            "--profile",
            "all",
            "--duration",
            "5s",
            "--rate",
            "5",
            "--repeat",
            "1",
            "--out",
            &out,
        ];
        args.extend_from_slice(extra);
        routersim(&args)
    };
    let output = bench(&[]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stdout = String::from_utf8(output.stdout)?;
    assert!(
        stdout.contains("targets: traces on >= 1.0, --trace none >= 1.3"),
        "{stdout}"
    );
    for profile in [
        "none",
        "litellm",
        "deltallm",
        "litellm-1.110",
        "multigrid",
        "contract",
        "portkey",
    ] {
        let line = stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(profile))
            .ok_or_else(|| format!("no {profile} line in {stdout}"))?;
        // profile, requests, 3 × (seconds, "s"), two ratios, the verdict.
        let words: Vec<&str> = line.split_whitespace().collect();
        let ratio_on: f64 = words[8].parse()?;
        let ratio_none: f64 = words[9].parse()?;
        assert!(ratio_on > 0.0 && ratio_none > 0.0, "{line}");
        assert!(words[1].parse::<u64>()? > 0, "{line}");
    }
    assert!(
        stdout.lines().any(|l| l.starts_with("targets: ")),
        "{stdout}"
    );
    let output = bench(&["--runtime", "tokio"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(String::from_utf8(output.stderr)?.contains("--profile all"));
    Ok(())
}

/// `bench --repeat N` reports the fastest run of each kind and, beside it, the median of the
/// N (issue 17: "best of 5; report median too"), and the ratios of the medians; one run has no
/// median to report.
#[test]
fn bench_reports_the_median_beside_the_fastest() -> Result<(), Box<dyn std::error::Error>> {
    let dir = scratch_dir("cli-bench-median");
    let out = dir.join("b").to_string_lossy().into_owned();
    let bench = |repeat: &str| {
        routersim(&[
            "bench",
            "--duration",
            "10m",
            "--rate",
            "50",
            "--repeat",
            repeat,
            "--out",
            &out,
        ])
    };
    let output = bench("3");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stdout = String::from_utf8(output.stdout)?;
    let requests: f64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("requests simulated:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("no request count in {stdout}"))?;
    // `0.108 s wall, 276062 simulated req/s (traces on)` → (0.108, 276062).
    let secs_and_rate = |s: &str| -> (f64, f64) {
        let number = |word: Option<&str>| word.and_then(|w| w.parse().ok()).unwrap_or(f64::NAN);
        let words: Vec<&str> = s.split([' ', ',']).filter(|w| !w.is_empty()).collect();
        let secs = words.iter().position(|w| *w == "s").map(|i| words[i - 1]);
        let rate = words
            .iter()
            .position(|w| w.starts_with("req/s") || *w == "simulated");
        (number(secs), number(rate.map(|i| words[i - 1])))
    };
    let mut medians = std::collections::BTreeMap::new();
    for kind in [
        "harness (virtual):",
        "floor (virtual):",
        "harness (tokio):",
        "floor (tokio):",
    ] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(kind))
            .ok_or_else(|| format!("no {kind} line in {stdout}"))?;
        let (fastest, median) = line
            .split_once("; median of 3: ")
            .ok_or_else(|| format!("no median on {line}"))?;
        let (fastest, median) = (secs_and_rate(&fastest[kind.len()..]), secs_and_rate(median));
        // Each figure is the same traffic over its own wall time (seconds are printed to the
        // millisecond, so within a few per cent), and the fastest run is the one with the
        // highest rate.
        for (secs, rate) in [fastest, median] {
            let implied = secs * rate;
            assert!(
                (implied - requests).abs() <= 0.05 * requests,
                "{line}: {secs} s × {rate} req/s is not {requests} requests"
            );
        }
        assert!(fastest.1 >= median.1, "{line}");
        medians.insert(kind, median.1);
    }
    // The median ratios are the ratios of the medians printed above them.
    let printed = |name: &str| -> f64 {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches('x').parse().ok())
            .unwrap_or(f64::NAN)
    };
    let expected = [
        (
            "median ratio harness (virtual)/tokio floor:",
            medians["harness (virtual):"] / medians["floor (tokio):"],
        ),
        (
            "median harness virtual vs tokio:",
            medians["harness (virtual):"] / medians["harness (tokio):"],
        ),
    ];
    for (name, ratio) in expected {
        let shown = printed(name);
        assert!(
            (shown - ratio).abs() <= 0.01 * ratio,
            "{name} {shown}, the medians give {ratio}"
        );
    }
    let output = bench("1");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stdout = String::from_utf8(output.stdout)?;
    assert!(!stdout.contains("median of"), "{stdout}");
    Ok(())
}

/// `run --profile` overrides `router_settings.profile`: under `litellm-1.110` the router also
/// waits after the last failed try (3 waits for 2 retries), under the file's own profile not;
/// a profile that does not exist is a load error naming the override.
#[test]
fn run_profile_overrides_the_config_profile() -> Result<(), Box<dyn std::error::Error>> {
    let dir = scratch_dir("cli-profile");
    let scenario = dir.join("lone.yaml");
    std::fs::write(
        &scenario,
        "name: lone\nduration: 10s\nrouter:\n  model_list:\n    - {model_name: A, litellm_params: {model: openai/a}}\n\
         \x20 router_settings: {profile: litellm}\n\
         faults:\n  - {model_group: A, error: service_unavailable}\n\
         traffic:\n  - {at: 1s, model: A}\n",
    )?;
    let scenario = scenario.to_string_lossy().into_owned();
    let waits = |profile: Option<&str>| -> Result<u64, Box<dyn std::error::Error>> {
        let out = dir
            .join(profile.unwrap_or("own"))
            .to_string_lossy()
            .into_owned();
        let mut args = vec!["run", scenario.as_str(), "--out", out.as_str()];
        if let Some(p) = profile {
            args.extend(["--profile", p]);
        }
        let output = routersim(&args);
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
            dir.join(&out).join("summary.json"),
        )?)?;
        Ok(summary["events"]["wait"].as_u64().unwrap_or(0))
    };
    assert_eq!(waits(None)?, 2);
    assert_eq!(waits(Some("litellm-1.110"))?, 3);
    let output = routersim(&["run", &scenario, "--profile", "litellm-9"]);
    let stderr = String::from_utf8(output.stderr)?;
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("router_settings.profile"), "{stderr}");
    Ok(())
}
