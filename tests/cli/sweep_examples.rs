//! The shipped manifests for sweeps beyond one machine (`examples/k8s/sweep-indexed-job.yaml`,
//! `examples/github-actions/sweep-matrix.yml`) run the command lines this test runs: each
//! shard's `routersim sweep … --shard K/N`, then `routersim merge` over a glob, which must give
//! byte for byte the files of the same sweep run unsharded. So the examples cannot rot.

use std::path::{Path, PathBuf};

use crate::common::{repo, routersim, scratch_dir};
use serde_json::Value;

const FILES: [&str; 4] = ["runs.csv", "sweep.csv", "sweep.svg", "sweep.json"];

/// Splits a command line at whitespace, dropping single quotes (the manifests quote only a
/// glob, so the shell would pass it to routersim as is).
fn words(line: &str) -> Vec<String> {
    assert!(!line.contains('"'), "no double quotes in {line}");
    line.split_whitespace()
        .map(|w| w.replace('\'', ""))
        .collect()
}

/// Runs `routersim` with `args`, where `map` rewrites each path argument into the test's
/// folder; asserts exit 0.
fn run(args: &[String]) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = routersim(&args);
    assert_eq!(
        output.status.code(),
        Some(0),
        "routersim {}\n{}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The value after `flag`.
fn flag<'a>(args: &'a [String], flag: &str) -> &'a str {
    let i = args
        .iter()
        .position(|a| a == flag)
        .unwrap_or_else(|| panic!("{flag}"));
    &args[i + 1]
}

/// The same arguments with `flag`'s value replaced.
fn with_flag(args: &[String], flag: &str, value: &str) -> Vec<String> {
    let mut args = args.to_vec();
    let i = args.iter().position(|a| a == flag).unwrap();
    args[i + 1] = value.to_string();
    args
}

/// The sweep's arguments without `--shard K/N` and with `--out out`: the unsharded sweep.
fn unsharded(args: &[String], out: &Path) -> Vec<String> {
    let mut args = with_flag(args, "--out", out.to_str().unwrap());
    let i = args.iter().position(|a| a == "--shard").unwrap();
    args.drain(i..i + 2);
    args
}

fn assert_same_files(whole: &Path, merged: &Path, what: &str) {
    for file in FILES {
        let a = std::fs::read(whole.join(file)).unwrap();
        let b = std::fs::read(merged.join(file)).unwrap();
        assert!(a == b, "{what}: {file} differs from the unsharded sweep's");
    }
}

/// Runs the unsharded sweep once per test folder.
fn whole_sweep(shard_args: &[String], dir: &Path) -> PathBuf {
    let whole = dir.join("whole");
    run(&unsharded(shard_args, &whole));
    whole
}

#[test]
fn the_kubernetes_indexed_job_runs_shards_that_merge_to_the_sweep() {
    let text = std::fs::read_to_string(repo().join("examples/k8s/sweep-indexed-job.yaml")).unwrap();
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
    let job = |name: &str| {
        docs.iter()
            .find(|d| d["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("a Job named {name}"))
    };
    let sweep = job("routersim-sweep");
    assert_eq!(sweep["kind"], "Job");
    assert_eq!(sweep["spec"]["completionMode"], "Indexed");
    let n = sweep["spec"]["completions"].as_u64().unwrap();
    assert_eq!(sweep["spec"]["parallelism"].as_u64(), Some(n));
    let container = &sweep["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        container["command"][0], "/bin/sh",
        "a shell computes the index"
    );
    let line = container["args"][0].as_str().unwrap();
    assert!(
        line.contains(&format!("--shard $((JOB_COMPLETION_INDEX+1))/{n}")),
        "{line}"
    );
    let mount = container["volumeMounts"][0]["mountPath"].as_str().unwrap();
    assert_eq!(mount, "/shared");

    let dir = scratch_dir("sweep-k8s");
    // The shared volume is this test's folder.
    let shared = |path: &str| -> String {
        let rest = path
            .strip_prefix("/shared/")
            .unwrap_or_else(|| panic!("{path} on /shared"));
        dir.join(rest).to_string_lossy().into_owned()
    };
    let mut first = Vec::new();
    for k in 1..=n {
        // What the pod's shell runs with JOB_COMPLETION_INDEX = k - 1.
        let args = words(&line.replace("$((JOB_COMPLETION_INDEX+1))", &k.to_string()));
        assert_eq!(args[0], "routersim");
        assert_eq!(args[1], "sweep");
        assert_eq!(flag(&args, "--shard"), format!("{k}/{n}"));
        let out = shared(flag(&args, "--out"));
        run(&with_flag(&args[1..], "--out", &out));
        if k == 1 {
            first = args[1..].to_vec();
        }
    }

    let merge = job("routersim-merge");
    let command: Vec<String> = merge["spec"]["template"]["spec"]["containers"][0]["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(&command[..2], ["routersim", "merge"], "{command:?}");
    assert!(
        command[2].ends_with("/*"),
        "a glob, expanded by routersim: {command:?}"
    );
    let glob = shared(&command[2]);
    let out = shared(flag(&command, "--out"));
    let mut merge_args = vec!["merge".to_string(), glob, "--out".into(), out.clone()];
    merge_args.extend(command[5..].iter().cloned());
    run(&merge_args);

    let whole = whole_sweep(&first, &dir);
    assert_same_files(&whole, Path::new(&out), "the Kubernetes example");
}

#[test]
fn the_github_actions_matrix_runs_shards_that_merge_to_the_sweep() {
    let text =
        std::fs::read_to_string(repo().join("examples/github-actions/sweep-matrix.yml")).unwrap();
    let workflow: Value = serde_saphyr::from_str(&text).unwrap();
    let shard_job = &workflow["jobs"]["shard"];
    let matrix: Vec<u64> = shard_job["strategy"]["matrix"]["shard"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let n = matrix.len() as u64;
    assert_eq!(matrix, (1..=n).collect::<Vec<_>>(), "shards 1 to N");
    let steps = |job: &Value| -> Vec<String> {
        job["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s["run"].as_str())
            .filter(|r| r.starts_with("routersim "))
            .map(String::from)
            .collect()
    };
    let sweep_runs = steps(shard_job);
    assert_eq!(sweep_runs.len(), 1, "{sweep_runs:?}");
    let line = &sweep_runs[0];
    assert!(
        line.contains(&format!("--shard ${{{{ matrix.shard }}}}/{n}")),
        "{line}"
    );

    let dir = scratch_dir("sweep-gha");
    let local = |path: &str| dir.join(path).to_string_lossy().into_owned();
    let mut first = Vec::new();
    for k in &matrix {
        let args = words(&line.replace("${{ matrix.shard }}", &k.to_string()));
        assert_eq!(&args[..2], ["routersim", "sweep"]);
        let out = flag(&args, "--out").to_string();
        assert_eq!(out, format!("shards/shard-{k}"), "the artifact's folder");
        run(&with_flag(&args[1..], "--out", &local(&out)));
        if *k == 1 {
            first = args[1..].to_vec();
        }
    }
    // The merge job downloads every shard artifact into `shards/` (one folder each).
    let merge_job = &workflow["jobs"]["merge"];
    assert_eq!(merge_job["needs"], "shard");
    let download = merge_job["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/download-artifact"))
        })
        .expect("a download step");
    assert_eq!(download["with"]["path"], "shards");
    let merge_runs = steps(merge_job);
    assert_eq!(merge_runs.len(), 1, "{merge_runs:?}");
    assert!(merge_runs[0].contains("'shards/*'"), "a quoted glob");
    let args = words(&merge_runs[0]);
    assert_eq!(&args[..2], ["routersim", "merge"]);
    let out = local(flag(&args, "--out"));
    run(&[
        "merge".to_string(),
        local(&args[2]),
        "--out".into(),
        out.clone(),
    ]);

    let whole = whole_sweep(&first, &dir);
    assert_same_files(&whole, Path::new(&out), "the GitHub Actions example");
}

#[test]
fn merge_with_a_glob_that_matches_nothing_is_exit_2() {
    let dir = scratch_dir("sweep-glob-none");
    let pattern = dir.join("shards").join("*").to_string_lossy().into_owned();
    let out = dir.join("merged").to_string_lossy().into_owned();
    let output = routersim(&["merge", &pattern, "--out", &out]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("matches nothing"), "{stderr}");
    assert!(!Path::new(&out).exists());
}
