//! `routersim sweep` and `routersim merge`: the files, their determinism, shards, errors.

use std::path::{Path, PathBuf};

use crate::common::{routersim, scratch_dir};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const SCENARIO: &str = "\
name: sweep-small
duration: 30s
router:
  model_list:
    - {model_name: A, litellm_params: {model: openai/a1}, model_info: {id: a1}}
    - {model_name: A, litellm_params: {model: openai/a2}, model_info: {id: a2}}
    - {model_name: B, litellm_params: {model: openai/b}, model_info: {id: b}}
  router_settings:
    num_retries: 1
    fallbacks: [{A: [B]}]
providers:
  a1: {latency: {p50: 200ms, p99: 1s}}
  a2: {latency: {p50: 300ms, p99: 1s}}
faults:
  - {deployment: a1, from: 5s, to: 20s, error: service_unavailable, probability: 0.6}
  - {deployment: a2, from: 10s, to: 15s, error: rate_limit, probability: 0.5}
traffic:
  - {model: A, rate: 10/s, arrival: poisson}
";

const GRID: [&str; 4] = [
    "--set",
    "router_settings.allowed_fails=0,3",
    "--set",
    "router_settings.num_retries=0,2",
];

fn scenario(dir: &Path) -> String {
    let path = dir.join("small.yaml");
    std::fs::write(&path, SCENARIO).expect("temp dir is writable");
    path.to_string_lossy().into_owned()
}

/// Runs `routersim sweep` on the grid into `out` with extra arguments; asserts exit 0.
fn sweep(scenario: &str, out: &Path, extra: &[&str]) -> Result<String, Box<dyn std::error::Error>> {
    let out_arg = out.to_string_lossy().into_owned();
    let mut args = vec!["sweep", scenario, "--seeds", "1..2", "--out", &out_arg];
    args.extend(GRID);
    args.extend(extra);
    let output = routersim(&args);
    let stdout = String::from_utf8(output.stdout)?;
    let stderr = String::from_utf8(output.stderr)?;
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    Ok(stdout)
}

fn read(path: PathBuf) -> String {
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

const METRICS: [&str; 9] = [
    "fallback_rate",
    "failed_rate",
    "retry_rate",
    "p50_latency_ms",
    "p99_latency_ms",
    "cooled_ms_total",
    "attempts_per_request_mean",
    "deadline_exhaustion_rate",
    "validation_rejection_rate",
];

const COUNTS: [&str; 5] = [
    "failed",
    "cooldown_periods",
    "cooldown_sets",
    "fallbacks_to.A",
    "fallbacks_to.B",
];

#[test]
fn a_sweep_writes_one_row_per_run_and_per_combination() -> TestResult {
    let dir = scratch_dir("sweep-files");
    let scenario = scenario(&dir);
    let out = dir.join("out");
    let stdout = sweep(&scenario, &out, &["--jobs", "2"])?;
    assert!(stdout.contains("router_settings.allowed_fails=3 router_settings.num_retries=2"));
    assert!(
        stdout.contains(&format!("report: {}", out.display())),
        "{stdout}"
    );

    let runs = read(out.join("runs.csv"));
    let lines: Vec<&str> = runs.lines().collect();
    // The counts follow the metrics: failed requests, cooldown periods and sets, fallback hops
    // per group.
    let header = format!(
        "router_settings.allowed_fails,router_settings.num_retries,seed,{},{}",
        METRICS.join(","),
        COUNTS.join(",")
    );
    assert_eq!(lines[0], header);
    // Each key also runs at the config's own value, after the listed ones: allowed_fails is
    // unset (`null`), num_retries is 1.
    assert_eq!(lines.len(), 1 + 3 * 3 * 2, "{runs}");
    // Grid order (first key slowest), then seed.
    let settings: Vec<String> = lines[1..]
        .iter()
        .map(|l| l.split(',').take(3).collect::<Vec<_>>().join(","))
        .collect();
    let mut expected = Vec::new();
    for allowed_fails in ["0", "3", "null"] {
        for num_retries in ["0", "2", "1"] {
            for seed in ["1", "2"] {
                expected.push(format!("{allowed_fails},{num_retries},{seed}"));
            }
        }
    }
    assert_eq!(settings, expected);
    assert_eq!(
        &settings[..8],
        [
            "0,0,1", "0,0,2", "0,2,1", "0,2,2", "0,1,1", "0,1,2", "3,0,1", "3,0,2"
        ]
    );
    for line in &lines[1..] {
        assert_eq!(
            line.split(',').count(),
            3 + METRICS.len() + COUNTS.len(),
            "{line}"
        );
    }

    let summary = read(out.join("sweep.csv"));
    let lines: Vec<&str> = summary.lines().collect();
    let mut expected = vec![
        "router_settings.allowed_fails".to_string(),
        "router_settings.num_retries".to_string(),
        "runs".to_string(),
    ];
    for m in METRICS.iter().chain(&COUNTS) {
        expected.extend([
            format!("{m}_mean"),
            format!("{m}_ci95_low"),
            format!("{m}_ci95_high"),
        ]);
    }
    expected.extend(METRICS.iter().map(|m| format!("{m}_verdict")));
    assert_eq!(lines[0], expected.join(","));
    assert_eq!(lines.len(), 1 + 9, "{summary}");
    for line in &lines[1..] {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells.len(), expected.len(), "{line}");
        assert_eq!(cells[2], "2", "two seeds per combination: {line}");
        for m in 0..METRICS.len() + COUNTS.len() {
            let value = |i: usize| cells[3 + 3 * m + i].parse::<f64>().expect("a number");
            let (mean, low, high) = (value(0), value(1), value(2));
            assert!(low <= mean && mean <= high, "{line}");
        }
    }
    // The interval is the mean ± t(0.975, 1)·s/√2, from runs.csv's two seeds.
    let run_value = |row: usize, col: usize| -> f64 {
        runs.lines()
            .nth(row)
            .expect("row")
            .split(',')
            .nth(col)
            .expect("col")
            .parse()
            .expect("num")
    };
    let (x1, x2) = (run_value(1, 3 + 4), run_value(2, 3 + 4)); // p99_latency_ms, first combination
    let mean = (x1 + x2) / 2.0;
    let s = ((x1 - mean).powi(2) + (x2 - mean).powi(2)).sqrt();
    let high = mean + 12.7062047362 * s / 2f64.sqrt();
    let cells: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(cells[3 + 3 * 4], format!("{mean:.6}"));
    assert_eq!(cells[3 + 3 * 4 + 2], format!("{high:.6}"));

    let svg = read(out.join("sweep.svg"));
    assert!(svg.starts_with("<svg"), "an SVG");
    for m in METRICS {
        assert!(svg.contains(m), "a panel for {m}");
    }
    // Each run keeps its summary only.
    let run_dir = out.join("runs/c001/seed-1");
    assert!(run_dir.join("summary.json").is_file());
    assert!(!run_dir.join("events.csv").exists());
    assert!(!run_dir.join("attempts.csv").exists());
    Ok(())
}

#[test]
fn a_sweep_is_byte_identical_across_runs_and_worker_counts() -> TestResult {
    let dir = scratch_dir("sweep-determinism");
    let scenario = scenario(&dir);
    let (a, b, c) = (dir.join("a"), dir.join("b"), dir.join("c"));
    sweep(&scenario, &a, &["--jobs", "2"])?;
    sweep(&scenario, &b, &["--jobs", "2"])?;
    sweep(&scenario, &c, &["--jobs", "1"])?;
    for file in ["runs.csv", "sweep.csv", "sweep.svg", "sweep.json"] {
        let first = read(a.join(file));
        assert_eq!(first, read(b.join(file)), "{file}: two runs");
        assert_eq!(first, read(c.join(file)), "{file}: --jobs 1 vs --jobs 2");
    }
    Ok(())
}

#[test]
fn merged_shards_equal_the_unsharded_sweep() -> TestResult {
    let dir = scratch_dir("sweep-shards");
    let scenario = scenario(&dir);
    let whole = dir.join("whole");
    sweep(&scenario, &whole, &[])?;
    let (s1, s2) = (dir.join("s1"), dir.join("s2"));
    sweep(&scenario, &s1, &["--shard", "1/2"])?;
    sweep(&scenario, &s2, &["--shard", "2/2", "--jobs", "1"])?;
    // Each shard holds its slice of the 18 jobs (9 combinations, the baselines included, × 2
    // seeds): jobs 0, 2, …, 16 and 1, 3, …, 17.
    assert_eq!(read(s1.join("runs.csv")).lines().count(), 1 + 9);
    assert_eq!(read(s2.join("runs.csv")).lines().count(), 1 + 9);
    let seeds = |dir: &Path| -> Vec<String> {
        read(dir.join("runs.csv"))
            .lines()
            .skip(1)
            .map(|l| l.split(',').nth(2).unwrap_or_default().to_string())
            .collect()
    };
    assert_eq!(seeds(&s1), ["1"; 9]);
    assert_eq!(seeds(&s2), ["2"; 9]);

    let merged = dir.join("merged");
    let (a1, a2, m) = (
        s1.to_string_lossy().into_owned(),
        s2.to_string_lossy().into_owned(),
        merged.to_string_lossy().into_owned(),
    );
    // Shards in any order.
    let output = routersim(&["merge", &a2, &a1, "--out", &m]);
    let stderr = String::from_utf8(output.stderr)?;
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    for file in ["runs.csv", "sweep.csv", "sweep.svg", "sweep.json"] {
        assert_eq!(
            read(whole.join(file)),
            read(merged.join(file)),
            "{file}: merged shards vs one sweep"
        );
    }

    // A missing shard is an error.
    let output = routersim(&["merge", &a1, "--out", &m]);
    let stderr = String::from_utf8(output.stderr)?;
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("missing shard(s) 2/2"), "{stderr}");

    // A shard of another sweep (other seeds) is an error.
    let other = dir.join("other");
    let other_arg = other.to_string_lossy().into_owned();
    let mut args = vec![
        "sweep", &scenario, "--seeds", "1..3", "--shard", "2/2", "--out", &other_arg,
    ];
    args.extend(GRID);
    assert_eq!(routersim(&args).status.code(), Some(0));
    let output = routersim(&["merge", &a1, &other_arg, "--out", &m]);
    let stderr = String::from_utf8(output.stderr)?;
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("not shards of the same sweep: seeds"),
        "{stderr}"
    );
    Ok(())
}

#[test]
fn a_bad_set_is_exit_2_naming_the_path() -> TestResult {
    let dir = scratch_dir("sweep-errors");
    let scenario = scenario(&dir);
    let out = dir.join("out").to_string_lossy().into_owned();
    let cases: [(&str, &[&str]); 6] = [
        (
            "router_settings.fallbacks[9]=x",
            &["router_settings.fallbacks[9]", "past the end of the list"],
        ),
        (
            "router_settings.num_retries.x=1",
            &["router_settings.num_retries.x", "not a mapping"],
        ),
        (
            "router_settings.routing_strategy=nope",
            &["router_settings.routing_strategy", "\"nope\""],
        ),
        ("router_settings.allowed_fails", &["expected KEY=V1,V2"]),
        (
            "router_settings.allowed_fails=",
            &["expected values after `=`"],
        ),
        ("router_settings.allowed_fails=1,,2", &["none empty"]),
    ];
    for (set, needles) in cases {
        let output = routersim(&[
            "sweep", &scenario, "--set", set, "--seeds", "1", "--out", &out,
        ]);
        let stderr = String::from_utf8(output.stderr)?;
        assert_eq!(output.status.code(), Some(2), "{set}: {stderr}");
        for needle in needles {
            assert!(stderr.contains(needle), "{set}: {needle:?} in {stderr}");
        }
    }
    assert!(!dir.join("out").join("runs.csv").exists(), "nothing ran");
    Ok(())
}

#[test]
fn sweep_and_check_read_seeds_in_one_grammar() -> TestResult {
    let dir = scratch_dir("sweep-seeds-grammar");
    let scenario = scenario(&dir);
    let out = dir.join("out");
    let out_arg = out.to_string_lossy().into_owned();
    // A mix with a repeat, once only `check` accepted it: seeds 2 then 1, each once.
    let output = routersim(&[
        "sweep",
        &scenario,
        "--set",
        "router_settings.allowed_fails=0",
        "--seeds",
        "2,1..2",
        "--out",
        &out_arg,
    ]);
    let stderr = String::from_utf8(output.stderr)?;
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let runs = read(out.join("runs.csv"));
    let column = runs
        .lines()
        .next()
        .and_then(|h| h.split(',').position(|c| c == "seed"))
        .ok_or("runs.csv has a seed column")?;
    let seeds: Vec<&str> = runs
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').nth(column))
        .collect();
    // Two combinations (0, and the config's unset value), each with seeds 2 then 1.
    assert_eq!(seeds, ["2", "1", "2", "1"], "{runs}");
    // The same bad text gets the same words from both commands, and nothing runs.
    for bad in ["3..1", "abc", "1,,2", ""] {
        let sweep = routersim(&["sweep", &scenario, "--seeds", bad, "--out", &out_arg]);
        let check = routersim(&["check", "scenarios/ci", "--seeds", bad]);
        assert_eq!(sweep.status.code(), Some(2), "{bad:?}");
        assert!(sweep.stdout.is_empty(), "{bad:?}");
        assert_eq!(
            String::from_utf8(sweep.stderr)?,
            String::from_utf8(check.stderr)?,
            "{bad:?}"
        );
    }
    Ok(())
}
