//! A report is complete or absent, never a mix: interrupted and concurrent runs, sweeps and
//! checks that replace their folder as a whole, scenario names that cannot escape `reports/`,
//! merges of shards from different scenario contents, and `diff` on hostile request ids.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::{repo, routersim, scratch_dir};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Every file under `dir` (relative path → bytes), hidden ones included.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).expect("readable") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let bytes = std::fs::read(&path).expect("readable");
                files.insert(path.strip_prefix(dir).expect("inside").to_path_buf(), bytes);
            }
        }
    }
    files
}

/// Names in `dir` (hidden ones included), sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("readable")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A small scenario: one of two deployments answers 503 for a while (about 100 requests).
fn small(name: &str, probability: f64) -> String {
    format!(
        "name: {name}
seed: 3
duration: 20s
router:
  model_list:
    - {{model_name: A, litellm_params: {{model: openai/a}}, model_info: {{id: a1}}}}
    - {{model_name: A, litellm_params: {{model: azure/a}}, model_info: {{id: a2}}}}
  router_settings: {{num_retries: 2, allowed_fails: 1}}
providers:
  a1: {{latency: {{p50: 300ms, p99: 1s}}}}
  a2: {{latency: {{p50: 400ms, p99: 1500ms}}}}
faults:
  - {{deployment: a1, from: 5s, to: 10s, error: service_unavailable, probability: {probability}}}
traffic:
  - {{model: A, rate: 5/s}}
"
    )
}

/// A scenario that takes many seconds of wall time (hundreds of thousands of requests).
const LONG: &str = "name: long
duration: 2h
router:
  model_list:
    - {model_name: A, litellm_params: {model: openai/a}, model_info: {id: a1}}
    - {model_name: A, litellm_params: {model: azure/a}, model_info: {id: a2}}
providers:
  a1: {latency: {p50: 300ms, p99: 1s}}
traffic:
  - {model: A, rate: 100/s}
";

fn run_ok(scenario: &Path, out: &Path) -> String {
    let output = routersim(&["run", &path(scenario), "--out", &path(out)]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}{}",
        text(output.stdout),
        text(output.stderr)
    );
    text(output.stderr)
}

#[test]
fn an_interrupted_run_leaves_the_previous_report_byte_identical_and_a_second_writer_is_refused()
-> TestResult {
    let dir = scratch_dir("reports-interrupted");
    let small_file = dir.join("small.yaml");
    std::fs::write(&small_file, small("small", 0.5))?;
    let long_file = dir.join("long.yaml");
    std::fs::write(&long_file, LONG)?;
    let out = dir.join("out");
    run_ok(&small_file, &out);
    let before = snapshot(&out);
    assert!(before.contains_key(Path::new("summary.json")));

    let mut long = Command::new(env!("CARGO_BIN_EXE_routersim"))
        .args(["run", &path(&long_file), "--out", &path(&out)])
        .current_dir(repo())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    // Wait until it is writing its report (into its staging folder).
    let started = std::time::Instant::now();
    let staging = dir.join(format!(".out.tmp-{}", long.id()));
    while !staging.join("events.csv").is_file() {
        assert!(
            started.elapsed() < Duration::from_secs(120) && long.try_wait()?.is_none(),
            "the long run never started writing"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        long.try_wait()?.is_none(),
        "the long run must still be running when it is interrupted"
    );

    // A second writer of the same --out is refused while the first runs.
    let second = routersim(&["run", &path(&small_file), "--out", &path(&out)]);
    let stderr = text(second.stderr);
    assert_eq!(second.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("is being written by another routersim")
            && stderr.contains(&format!("pid {}", long.id())),
        "{stderr}"
    );

    long.kill()?; // SIGKILL: no handler runs, nothing is cleaned up.
    long.wait()?;
    assert!(
        snapshot(&out) == before,
        "the previous report is byte-identical after the interrupted run"
    );
    let leftovers: Vec<String> = names(&dir)
        .into_iter()
        .filter(|n| n.starts_with(".out."))
        .collect();
    assert!(
        leftovers
            .iter()
            .all(|n| n.contains(".tmp-") || n.ends_with(".lock")),
        "only a hidden, recognisable staging folder (and lock) remain: {leftovers:?}"
    );

    // The next run takes over the dead writer's lock, cleans its leftovers and replaces the
    // report as a whole.
    std::fs::write(&small_file, small("small", 0.9))?;
    let stderr = run_ok(&small_file, &out);
    assert!(
        stderr.contains("unfinished report") && stderr.contains(&format!("pid {}", long.id())),
        "the cleanup is said: {stderr}"
    );
    assert_eq!(
        names(&dir),
        ["long.yaml", "out", "small.yaml"],
        "no staging folder or lock is left behind"
    );
    assert!(snapshot(&out) != before);
    assert!(out.join("report.complete").is_file());
    Ok(())
}

#[test]
fn trace_none_writes_a_fresh_folder_and_a_foreign_folder_is_never_replaced() -> TestResult {
    let dir = scratch_dir("reports-fresh");
    let file = dir.join("small.yaml");
    std::fs::write(&file, small("small", 0.5))?;
    let out = dir.join("out");
    run_ok(&file, &out);
    assert!(out.join("attempts.csv").is_file());
    let output = routersim(&["run", &path(&file), "--out", &path(&out), "--trace", "none"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(output.stderr));
    assert!(!out.join("attempts.csv").exists());
    assert!(!out.join("requests.csv").exists());

    // A folder that is not a routersim report is never replaced (nor anything in it deleted).
    let foreign = dir.join("foreign");
    std::fs::create_dir_all(&foreign)?;
    std::fs::write(foreign.join("notes.txt"), "mine")?;
    let output = routersim(&["run", &path(&file), "--out", &path(&foreign)]);
    let stderr = text(output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not a routersim report"), "{stderr}");
    assert_eq!(names(&foreign), ["notes.txt"]);

    Ok(())
}

const SWEEP_SCENARIO: &str = "\
name: sweep-small
duration: 10s
router:
  model_list:
    - {model_name: A, litellm_params: {model: openai/a1}, model_info: {id: a1}}
    - {model_name: A, litellm_params: {model: openai/a2}, model_info: {id: a2}}
  router_settings: {num_retries: 1}
faults:
  - {deployment: a1, from: 2s, to: 6s, error: service_unavailable, probability: 0.6}
traffic:
  - {model: A, rate: 10/s}
";

#[test]
fn a_smaller_sweep_replaces_the_whole_folder() -> TestResult {
    let dir = scratch_dir("reports-sweep");
    let file = dir.join("s.yaml");
    std::fs::write(&file, SWEEP_SCENARIO)?;
    let out = dir.join("out");
    for values in ["0,1,2", "0,1"] {
        let output = routersim(&[
            "sweep",
            &path(&file),
            "--set",
            &format!("router_settings.allowed_fails={values}"),
            "--seeds",
            "1",
            "--out",
            &path(&out),
        ]);
        assert_eq!(output.status.code(), Some(0), "{}", text(output.stderr));
    }
    // 0, 1 and the config's unset value; the earlier sweep had a fourth combination.
    assert!(out.join("runs/c003/seed-1/summary.json").is_file());
    assert!(
        !out.join("runs/c004").exists(),
        "a run of the earlier, larger sweep survived"
    );
    assert!(out.join("report.complete").is_file());
    assert_eq!(names(&dir), ["out", "s.yaml"]);

    // A shard in its default place inside the sweep's folder survives the sweep's replacement.
    let sweep = |extra: &[&str], out: &Path| {
        let out = path(out);
        let mut args = vec![
            "sweep",
            "--set",
            "router_settings.allowed_fails=0,1",
            "--seeds",
            "1",
            "--out",
            &out,
        ];
        let file = path(&file);
        args.insert(1, &file);
        args.extend(extra);
        let output = routersim(&args);
        assert_eq!(output.status.code(), Some(0), "{}", text(output.stderr));
    };
    let shard = out.join("shard-1-of-2");
    sweep(&["--shard", "1/2"], &shard);
    let shard_files = snapshot(&shard);
    sweep(&[], &out);
    assert!(
        snapshot(&shard) == shard_files,
        "the shard was kept as it was"
    );
    assert!(out.join("runs/c002/seed-1/summary.json").is_file());
    Ok(())
}

#[test]
fn check_replaces_its_output_folder_as_a_whole() -> TestResult {
    let dir = scratch_dir("reports-check");
    let scenarios = dir.join("scenarios");
    std::fs::create_dir_all(&scenarios)?;
    std::fs::write(scenarios.join("one.yaml"), small("one", 0.5))?;
    std::fs::write(scenarios.join("two.yaml"), small("two", 0.5))?;
    let out = dir.join("out");
    let check = || routersim(&["check", &path(&scenarios), "--out", &path(&out)]);
    assert_eq!(check().status.code(), Some(0));
    assert!(out.join("two/seed-3/summary.json").is_file());
    std::fs::remove_file(scenarios.join("two.yaml"))?;
    assert_eq!(check().status.code(), Some(0));
    assert!(!out.join("two").exists(), "a stale report survived");
    assert!(out.join("one/seed-3/report.complete").is_file());
    let junit = std::fs::read_to_string(out.join("junit.xml"))?;
    assert!(
        junit.contains(&format!("report: {}", path(&out.join("one/seed-3")))),
        "junit.xml names the final report folder: {junit}"
    );
    assert!(!junit.contains(".tmp-"), "{junit}");
    assert_eq!(names(&dir), ["out", "scenarios"]);
    Ok(())
}

#[test]
fn diff_and_merge_accept_only_complete_reports() -> TestResult {
    let dir = scratch_dir("reports-complete");
    let file = dir.join("small.yaml");
    std::fs::write(&file, small("small", 0.5))?;
    let a = dir.join("a");
    run_ok(&file, &a);
    // A folder with a summary but no completion marker: what an interrupted run of an older
    // routersim left.
    let partial = dir.join("partial");
    std::fs::create_dir_all(&partial)?;
    std::fs::copy(a.join("summary.json"), partial.join("summary.json"))?;
    let output = routersim(&["diff", &path(&a), &path(&partial)]);
    let stderr = text(output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not a complete report"), "{stderr}");

    // A sweep shard without its marker is refused by merge.
    let scenario = dir.join("sweep.yaml");
    std::fs::write(&scenario, SWEEP_SCENARIO)?;
    let shard = dir.join("shard");
    let output = routersim(&[
        "sweep",
        &path(&scenario),
        "--set",
        "router_settings.allowed_fails=0,1",
        "--seeds",
        "1",
        "--shard",
        "1/1",
        "--out",
        &path(&shard),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(output.stderr));
    std::fs::remove_file(shard.join("report.complete"))?;
    let merged = dir.join("merged");
    let output = routersim(&["merge", &path(&shard), "--out", &path(&merged)]);
    let stderr = text(output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not a complete report"), "{stderr}");
    assert!(!merged.exists());
    Ok(())
}

#[test]
fn merge_refuses_shards_of_different_scenario_contents() -> TestResult {
    let dir = scratch_dir("reports-merge");
    let (one, two) = (dir.join("one.yaml"), dir.join("two.yaml"));
    std::fs::write(&one, SWEEP_SCENARIO)?;
    // Same name, other contents.
    std::fs::write(
        &two,
        SWEEP_SCENARIO.replace("probability: 0.6", "probability: 0.9"),
    )?;
    let shard = |file: &Path, k: &str, out: &Path| {
        let output = routersim(&[
            "sweep",
            &path(file),
            "--set",
            "router_settings.allowed_fails=0,1",
            "--seeds",
            "1",
            "--shard",
            k,
            "--out",
            &path(out),
        ]);
        assert_eq!(output.status.code(), Some(0), "{}", text(output.stderr));
    };
    let (s1, s2) = (dir.join("s1"), dir.join("s2"));
    shard(&one, "1/2", &s1);
    shard(&two, "2/2", &s2);
    let merged = dir.join("merged");
    let output = routersim(&["merge", &path(&s1), &path(&s2), "--out", &path(&merged)]);
    let stderr = text(output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("not shards of the same sweep: scenario contents"),
        "{stderr}"
    );
    assert!(!merged.exists(), "nothing merged");

    // The same contents from another path do merge.
    let copy = dir.join("copy.yaml");
    std::fs::write(&copy, SWEEP_SCENARIO)?;
    shard(&copy, "2/2", &s2);
    let output = routersim(&["merge", &path(&s1), &path(&s2), "--out", &path(&merged)]);
    assert_eq!(output.status.code(), Some(0), "{}", text(output.stderr));
    Ok(())
}

#[test]
fn diff_survives_request_ids_near_the_top_of_u64() -> TestResult {
    let dir = scratch_dir("reports-diff-ids");
    let file = dir.join("small.yaml");
    std::fs::write(&file, small("small", 0.5))?;
    let (a, b) = (dir.join("a"), dir.join("b"));
    run_ok(&file, &a);
    run_ok(&file, &b);
    let attempts = std::fs::read_to_string(b.join("attempts.csv"))?;
    for id in ["18446744073709551615", "4000000000"] {
        let row = format!("{id},1,0.000,1.000,A,a1,ok,200,,0.000,0\n");
        std::fs::write(b.join("attempts.csv"), format!("{attempts}{row}"))?;
        let output = routersim(&["diff", &path(&a), &path(&b)]);
        let stdout = text(output.stdout);
        assert_eq!(
            output.status.code(),
            Some(0),
            "request_id {id}: {stdout}{}",
            text(output.stderr)
        );
        assert!(
            stdout.contains(&format!("first request that differs: {id}")),
            "{stdout}"
        );
        assert!(stdout.contains("A: (no attempts)"), "{stdout}");
        assert!(stdout.contains("B: a1:ok"), "{stdout}");
    }
    Ok(())
}

#[test]
fn a_scenario_name_cannot_escape_the_reports_folder() -> TestResult {
    let dir = scratch_dir("reports-names");
    let out = dir.join("out");
    for (yaml, what) in [
        ("\"../escape\"", "contains `..`"),
        ("a/b", "contains `/`"),
        ("'a\\b'", "contains `\\`"),
        ("x..y", "contains `..`"),
        ("\"a\\0b\"", "contains a control character"),
        ("\"a\\tb\"", "contains a control character"),
        ("\"\"", "is empty"),
        ("\"   \"", "is empty"),
        ("\".\"", "is `.`"),
    ] {
        let file = dir.join("named.yaml");
        let scenario = small("PLACEHOLDER", 0.5).replace("PLACEHOLDER", yaml);
        std::fs::write(&file, scenario)?;
        let output = routersim(&["run", &path(&file), "--out", &path(&out)]);
        let stderr = text(output.stderr);
        assert_eq!(output.status.code(), Some(2), "name: {yaml}: {stderr}");
        assert!(
            stderr.contains(&format!("{}:1:7: name: ", path(&file))),
            "name: {yaml}: names file, line, column and field: {stderr}"
        );
        assert!(stderr.contains(what), "name: {yaml}: says why: {stderr}");
        assert!(!out.exists(), "name: {yaml}: nothing written");
    }
    // A name taken from the file's stem is held to the same rule.
    let dots = dir.join("...yaml");
    std::fs::write(&dots, small("x", 0.5).replace("name: x\n", ""))?;
    let output = routersim(&["run", &path(&dots), "--out", &path(&out)]);
    let stderr = text(output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(": name: "), "{stderr}");
    assert!(stderr.contains("set `name:`"), "{stderr}");
    Ok(())
}
