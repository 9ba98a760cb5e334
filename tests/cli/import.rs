//! `routersim import`: a recorded LiteLLM log in, a scenario `run` runs unchanged and a report
//! `diff` compares with the replay, window by window; bad input is exit 2 naming the file and
//! line.

use crate::common::{repo, routersim, scratch_dir};

const STORM: &str = "crates/import/tests/fixtures/recorded/429-storm";

#[test]
fn import_writes_a_scenario_run_replays_and_diff_compares_window_by_window() {
    let dir = scratch_dir("import-cli");
    let out = dir.join("incident");
    let out_s = out.to_str().unwrap();
    let log = format!("{STORM}/standard_logging.jsonl.gz");
    let config = format!("{STORM}/litellm.yaml");
    let o = routersim(&["import", &log, "--config", &config, "--out", out_s]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.starts_with(&format!(
            "imported {log} (LiteLLM standard logging payload): "
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("fault windows: 1\n  gpt-a rate_limit ["),
        "{stdout}"
    );
    assert!(stdout.contains("retry_after 4s"), "{stdout}");
    assert!(
        stdout.contains(&format!("scenario: {out_s}/scenario.yaml")),
        "{stdout}"
    );
    for file in [
        "scenario.yaml",
        "router.yaml",
        "imported/summary.json",
        "imported/requests.csv",
        "imported/attempts.csv",
        "imported/import.json",
        "imported/error_series.csv",
        "imported/report.complete",
    ] {
        assert!(out.join(file).is_file(), "{file} missing");
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("imported/summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["source"], "imported");
    let replay = dir.join("replay");
    let o = routersim(&[
        "run",
        &format!("{out_s}/scenario.yaml"),
        "--out",
        replay.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = routersim(&[
        "diff",
        &format!("{out_s}/imported"),
        replay.to_str().unwrap(),
    ]);
    let diff = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{diff}");
    assert!(diff.contains(", source imported)"), "{diff}");
    assert!(
        diff.contains("windows (requests by arrival; A / B):\n  gpt-a: rate_limit ["),
        "{diff}"
    );
    assert!(
        diff.contains(" during: requests ") && diff.contains(" after: requests "),
        "{diff}"
    );
    let o = routersim(&[
        "diff",
        "--json",
        &format!("{out_s}/imported"),
        replay.to_str().unwrap(),
    ]);
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        json["windows"].as_array().map(Vec::len),
        Some(1),
        "{json:#}"
    );
    // Importing again replaces the folder (it is routersim's).
    let o = routersim(&[
        "import", &log, "--config", &config, "--out", out_s, "--bucket", "5s",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn import_errors_are_exit_2_naming_the_file_and_line() {
    let dir = scratch_dir("import-cli-errors");
    let log = dir.join("calls.csv");
    std::fs::write(
        &log,
        "timestamp,model_group,deployment,status,latency_ms\n1800000000,g,d,two hundred,50\n",
    )
    .unwrap();
    let o = routersim(&[
        "import",
        log.to_str().unwrap(),
        "--out",
        dir.join("out").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        stderr.trim_end(),
        format!(
            "error: {}:2: status: \"two hundred\" is not an HTTP status (or 0)",
            log.display()
        )
    );
    let o = routersim(&[
        "import",
        log.to_str().unwrap(),
        "--out",
        "x",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("one of litellm, spend-logs, csv"));
    let o = routersim(&[
        "import",
        log.to_str().unwrap(),
        "--out",
        "x",
        "--since",
        "yesterday",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(repo().join(STORM).is_dir());
}
