//! The sweep's baseline and its honest verdict: the config's own value of each key runs as a
//! labelled value of its own, no best is named on a tie, time cooled is not ranked, and
//! `sweep.svg` draws every metric, with the zoom beside the axis from 0.

use std::path::Path;

use crate::common::{routersim, scratch_dir};
use serde_json::Value;

/// `allowed_fails` unset, `num_retries` 1; one of two deployments fails 60 % of its calls
/// from 5 s to 15 s.
const SCENARIO: &str = "\
name: baseline
duration: 20s
router:
  model_list:
    - {model_name: A, litellm_params: {model: openai/a1}, model_info: {id: a1}}
    - {model_name: A, litellm_params: {model: openai/a2}, model_info: {id: a2}}
  router_settings:
    num_retries: 1
providers:
  a1: {latency: {p50: 200ms, p99: 1s}}
  a2: {latency: {p50: 300ms, p99: 1s}}
faults:
  - {deployment: a1, from: 5s, to: 15s, error: service_unavailable, probability: 0.6}
traffic:
  - {model: A, rate: 10/s, arrival: poisson}
";

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// `routersim sweep` of `scenario` with `args` into `out`: its stdout (exit 0 asserted).
fn sweep(scenario: &Path, out: &Path, args: &[&str]) -> String {
    let (scenario, out_arg) = (s(scenario), s(out));
    let mut all = vec!["sweep", &scenario, "--seeds", "1..2", "--out", &out_arg];
    all.extend_from_slice(args);
    let output = routersim(&all);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&read(path)).unwrap()
}

#[test]
fn the_configs_own_value_runs_as_a_labelled_baseline() {
    let dir = scratch_dir("sweep-baseline");
    let scenario = dir.join("baseline.yaml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let out = dir.join("out");
    let stdout = sweep(
        &scenario,
        &out,
        &["--set", "router_settings.allowed_fails=0,2"],
    );
    // Unset in the config: `null`, after the listed values, labelled.
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("router_settings.allowed_fails=null (config)  ")),
        "{stdout}"
    );
    let manifest = json(&out.join("sweep.json"));
    assert_eq!(
        manifest["keys"][0]["values"],
        serde_json::json!(["0", "2", "null"])
    );
    assert_eq!(manifest["keys"][0]["baseline"], 2);
    let csv = read(&out.join("sweep.csv"));
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 1 + 3, "{csv}");
    assert!(rows[3].starts_with("null,2,"), "{csv}");
    // The baseline runs are the scenario's own: the same summary as `routersim run`.
    let own = dir.join("own");
    let run = routersim(&[
        "run",
        &s(&scenario),
        "--seed",
        "2",
        "--trace",
        "none",
        "--out",
        &s(&own),
    ]);
    assert_eq!(run.status.code(), Some(0));
    assert_eq!(
        read(&out.join("runs/c003/seed-2/summary.json")),
        read(&own.join("summary.json"))
    );

    // Without the baseline: the listed values only, the same columns.
    let only = dir.join("only");
    sweep(
        &scenario,
        &only,
        &[
            "--set",
            "router_settings.allowed_fails=0,2",
            "--no-baseline",
        ],
    );
    let listed = read(&only.join("sweep.csv"));
    assert_eq!(listed.lines().count(), 1 + 2, "{listed}");
    assert_eq!(listed.lines().next(), rows.first().copied());

    // p50 differs by a few ms between the combinations (failovers to the slower a2): on the
    // axis from 0 that is a flat line, so the zoom is drawn beside it, and says so.
    let svg = read(&out.join("sweep.svg"));
    assert!(
        svg.contains("p50_latency_ms: ZOOMED to the values (left: from 0)"),
        "a zoom beside p50"
    );
    assert!(svg.contains("ms, ZOOMED to "), "the zoomed axis says so");
    assert!(
        svg.contains("(not from 0"),
        "and that it does not start at 0"
    );

    // A listed value that is the config's own is labelled, not added; so is an explicit null.
    let listed_own = dir.join("listed-own");
    let stdout = sweep(
        &scenario,
        &listed_own,
        &["--set", "router_settings.num_retries=0,1"],
    );
    assert!(
        stdout.contains("router_settings.num_retries=1 (config)"),
        "{stdout}"
    );
    let manifest = json(&listed_own.join("sweep.json"));
    assert_eq!(manifest["keys"][0]["values"], serde_json::json!(["0", "1"]));
    assert_eq!(manifest["keys"][0]["baseline"], 1);
    let explicit = dir.join("explicit-null");
    sweep(
        &scenario,
        &explicit,
        &["--set", "router_settings.allowed_fails=null,0"],
    );
    let manifest = json(&explicit.join("sweep.json"));
    assert_eq!(
        manifest["keys"][0]["values"],
        serde_json::json!(["null", "0"])
    );
    assert_eq!(manifest["keys"][0]["baseline"], 0);
}

/// No faults: nothing fails, nothing cools, whatever the settings.
const CALM: &str = "\
name: calm
duration: 10s
router:
  model_list:
    - {model_name: A, litellm_params: {model: openai/a1}, model_info: {id: a1}}
    - {model_name: A, litellm_params: {model: openai/a2}, model_info: {id: a2}}
providers:
  a1: {latency: {p50: 200ms, p99: 1s}}
  a2: {latency: {p50: 210ms, p99: 1s}}
traffic:
  - {model: A, rate: 10/s, arrival: poisson}
";

#[test]
fn a_tie_names_no_best_and_time_cooled_is_not_ranked() {
    let dir = scratch_dir("sweep-tie");
    let scenario = dir.join("calm.yaml");
    std::fs::write(&scenario, CALM).unwrap();
    let out = dir.join("out");
    let stdout = sweep(
        &scenario,
        &out,
        &[
            "--set",
            "router_settings.allowed_fails=0,2",
            "--set",
            "router_settings.cooldown_time=5,30",
        ],
    );
    // The header names the rate it shows; the descriptive column says it is not ranked.
    assert!(stdout.contains("failed_rate (±95%)"), "{stdout}");
    assert!(!stdout.contains(" failed (±95%)"), "{stdout}");
    assert!(stdout.contains("cooled ms (±95%, not ranked)"), "{stdout}");
    assert!(
        stdout.contains(
            "failed_rate (lower is better): no combination is significantly different, so none \
             is best"
        ),
        "{stdout}"
    );
    let (table, _) = stdout.split_once("verdict (").unwrap();
    assert!(!table.contains("±0.0000*"), "no winner on a tie: {table}");
    let manifest = json(&out.join("sweep.json"));
    let verdict = |metric: &str| -> Value {
        manifest["verdict"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["metric"] == metric)
            .cloned()
            .unwrap()
    };
    // The documented jq recipe `.verdict[] | select(.metric=="failed_rate") | .best.settings`
    // gives null: all nine combinations are indistinguishable.
    let failed = verdict("failed_rate");
    assert_eq!(failed["best"], Value::Null, "{failed}");
    assert_eq!(failed["significant"], false);
    assert_eq!(failed["indistinguishable"].as_array().unwrap().len(), 9);
    let cooled = verdict("cooled_ms_total");
    assert_eq!(cooled["better"], "not ranked");
    assert_eq!(cooled["ranked"], false);
    assert_eq!(cooled["best"], Value::Null);
    let csv = read(&out.join("sweep.csv"));
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let column = header
        .iter()
        .position(|h| *h == "cooled_ms_total_verdict")
        .unwrap();
    for row in csv.lines().skip(1) {
        assert_eq!(row.split(',').nth(column), Some("not_ranked"), "{row}");
    }

    // Every metric has its panel, the ones at 0 in every run too; close values get a zoom.
    let svg = read(&out.join("sweep.svg"));
    assert!(!svg.contains("not drawn"), "every metric is drawn");
    assert!(
        svg.contains(
            "failed_rate (lower is better): no combination significantly different, none is \
             best; 0 in every run"
        ),
        "a panel for the metric at 0"
    );
    assert!(svg.contains("cooled_ms_total: not ranked (descriptive)"));
    // Every combination ran the same (nothing failed): nothing to zoom into.
    assert!(svg.contains("0 in every run: nothing to zoom into"));
    assert!(svg.contains("the same mean in every combination: nothing to zoom into"));
    assert!(!svg.contains("ZOOMED to the values"));
}
