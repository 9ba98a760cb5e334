//! Inputs through the binary: accepted inputs run, bad ones exit 2 (never a panic), limits
//! hold, and a long replay from `traffic_file` runs.

use std::path::Path;

use crate::common::{routersim, scratch_dir};

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).expect("utf-8 output")
}

fn path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

const HEAD: &str = "name: t\nduration: 10s\nrouter:\n  model_list:\n    - {model_name: A, litellm_params: {model: openai/a}, model_info: {id: a1}}\n";

#[test]
fn bench_refuses_zero_repeats() {
    let out = scratch_dir("cli-bench-repeat");
    let output = routersim(&[
        "bench",
        "--repeat",
        "0",
        "--duration",
        "1s",
        "--out",
        &path(&out),
    ]);
    let stderr = text(output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--repeat"), "{stderr}");
    assert!(
        !out.join("summary.json").exists(),
        "nothing ran: {}",
        out.display()
    );
}

#[test]
fn an_expectation_bound_of_nan_exits_2_not_a_panic() {
    let dir = scratch_dir("cli-nan");
    for (name, bound) in [("max.yaml", "max: .nan"), ("min.yaml", "min: .NaN")] {
        let scenario = dir.join(name);
        std::fs::write(
            &scenario,
            format!(
                "{HEAD}traffic:\n  - {{at: 1s, model: A}}\nexpect:\n  - {{metric: ok, {bound}}}\n"
            ),
        )
        .expect("write");
        let output = routersim(&["run", &path(&scenario), "--out", &path(&dir.join("out"))]);
        let stderr = text(output.stderr);
        assert_eq!(output.status.code(), Some(2), "{name}: {stderr}");
        assert!(stderr.contains("expected a finite number"), "{stderr}");
    }
}

#[test]
fn expect_on_an_unknown_deployment_exits_2_listing_the_ids() {
    let dir = scratch_dir("cli-expect-id");
    let scenario = dir.join("s.yaml");
    std::fs::write(
        &scenario,
        format!("{HEAD}traffic:\n  - {{at: 1s, model: A}}\nexpect:\n  - {{metric: cooldowns.nosuch, max: 0}}\n"),
    )
    .expect("write");
    let output = routersim(&["run", &path(&scenario), "--out", &path(&dir.join("out"))]);
    let stderr = text(output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("s.yaml:9:"), "{stderr}");
    assert!(stderr.contains("takes a deployment id: a1"), "{stderr}");
}

#[test]
fn a_golden_over_the_size_limit_is_an_error_row() {
    let dir = scratch_dir("cli-big-golden");
    let scenarios = dir.join("scenarios");
    std::fs::create_dir_all(&scenarios).expect("dir");
    std::fs::write(
        scenarios.join("t.yaml"),
        format!("{HEAD}traffic:\n  - {{at: 1s, model: A}}\n"),
    )
    .expect("write");
    let golden = std::fs::File::create(scenarios.join("t.golden.json")).expect("create");
    golden.set_len(64 * 1024 * 1024 + 1).expect("sparse");
    let output = routersim(&["check", &path(&scenarios), "--out", &path(&dir.join("out"))]);
    let stdout = text(output.stdout);
    assert_eq!(output.status.code(), Some(2), "{stdout}");
    assert!(stdout.contains("more than the 64 MiB"), "{stdout}");
}

#[test]
fn a_replay_from_traffic_file_runs_every_row() {
    use std::fmt::Write as _;
    let dir = scratch_dir("cli-traffic-file");
    let mut csv = String::from("at,model,stream,output_tokens\n");
    for i in 0..3000u32 {
        let _ = writeln!(csv, "{}ms,A,{},{}", i * 3, i % 2 == 0, 20 + i % 7);
    }
    std::fs::write(dir.join("requests.csv"), csv).expect("write");
    let scenario = dir.join("replay.yaml");
    std::fs::write(
        &scenario,
        format!("{HEAD}traffic_file: requests.csv\nexpect:\n  - {{metric: requests, min: 3000, max: 3000}}\n"),
    )
    .expect("write");
    let out = dir.join("out");
    let output = routersim(&["run", &path(&scenario), "--out", &path(&out)]);
    let stderr = text(output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let summary = std::fs::read_to_string(out.join("summary.json")).expect("summary");
    assert!(summary.contains("\"requests\": 3000"), "{summary}");

    // A bad row is exit 2 before anything runs, naming the file, line and column.
    std::fs::write(dir.join("requests.csv"), "at,model\n1s,A\n2s,B\n").expect("write");
    let output = routersim(&["run", &path(&scenario), "--out", &path(&dir.join("out2"))]);
    let stderr = text(output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("requests.csv:3: model: no model group or alias \"B\""),
        "{stderr}"
    );
    assert!(!dir.join("out2").exists(), "nothing ran");
}
