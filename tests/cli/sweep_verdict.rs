//! The sweep's verdict and its plot: the best combination per metric, which others cannot be
//! told apart from it (95 % intervals overlap), and a `sweep.svg` that shows it: categorical
//! ticks equal to the swept values, coincident series named, the legend outside the panels.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "tests; the browser test finds chromium on PATH like tests/report_html.rs"
)]

use std::path::Path;

use crate::common::{Component, runs_with};
use crate::common::{routersim, scratch_dir};
use serde_json::Value;

/// One group, one deployment failing 40 % of calls all run long, no fallback, and
/// `allowed_fails` high enough that it never cools: `num_retries` decides how many requests
/// fail (3 retries: clearly fewer than none), and `cooldown_time` can change nothing, so its
/// two values give identical runs.
const SCENARIO: &str = "\
name: verdict
duration: 30s
router:
  model_list:
    - {model_name: A, litellm_params: {model: openai/a1}, model_info: {id: a1}}
  router_settings:
    allowed_fails: 1000
providers:
  a1: {latency: {p50: 100ms, p99: 300ms}}
faults:
  - {deployment: a1, from: 0s, to: 30s, error: service_unavailable, probability: 0.4}
traffic:
  - {model: A, rate: 10/s, arrival: poisson}
";

fn run_sweep(dir: &Path) -> std::path::PathBuf {
    let scenario = dir.join("verdict.yaml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let out = dir.join("out");
    let output = routersim(&[
        "sweep",
        scenario.to_str().unwrap(),
        "--set",
        "router_settings.num_retries=0,1,3",
        "--set",
        "router_settings.cooldown_time=5,10",
        "--seeds",
        "1..4",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The table marks the best and names it under the table.
    assert!(stdout.contains("verdict (* best"), "{stdout}");
    assert!(
        stdout.contains(
            "failed_rate (lower is better): best router_settings.num_retries=3 \
             router_settings.cooldown_time=5"
        ),
        "{stdout}"
    );
    out
}

#[test]
fn sweep_json_names_the_best_and_the_indistinguishable() {
    let dir = scratch_dir("sweep-verdict");
    let out = run_sweep(&dir);
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap();
    let verdict = json["verdict"].as_array().expect("a verdict list");
    assert_eq!(verdict.len(), 9, "one per metric");
    let failed = verdict
        .iter()
        .find(|v| v["metric"] == "failed_rate")
        .expect("failed_rate");
    assert_eq!(failed["better"], "lower");
    assert_eq!(
        failed["best"]["values"]["router_settings.num_retries"], "3",
        "{failed}"
    );
    assert_eq!(
        failed["best"]["values"]["router_settings.cooldown_time"], "5",
        "the first of two identical combinations: {failed}"
    );
    // The identical twin overlaps the best; no retries are significantly worse.
    let twins: Vec<&str> = failed["indistinguishable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["settings"].as_str().unwrap())
        .collect();
    assert!(
        twins.contains(&"router_settings.num_retries=3 router_settings.cooldown_time=10"),
        "{failed}"
    );
    assert!(
        !twins.iter().any(|s| s.contains("num_retries=0")),
        "{failed}"
    );
    assert_eq!(failed["significant"], true);
    assert!(failed["worse"].as_u64().unwrap() >= 2, "{failed}");

    // sweep.csv: the verdict column per metric, and the counts appended.
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let (verdict_col, failed_col) = (col("failed_rate_verdict"), col("failed_mean"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let mark = |retries: &str, cooldown: &str| {
        let row = rows
            .iter()
            .find(|r| r[0] == retries && r[1] == cooldown)
            .unwrap();
        row[verdict_col]
    };
    assert_eq!(mark("3", "5"), "best");
    assert_eq!(mark("3", "10"), "indistinguishable");
    assert_eq!(mark("0", "5"), "worse");
    assert_eq!(mark("0", "10"), "worse");
    // The failed count per run is the failed rate times the requests: more with no retries.
    let failed_of = |retries: &str| {
        rows.iter().find(|r| r[0] == retries).unwrap()[failed_col]
            .parse::<f64>()
            .unwrap()
    };
    assert!(failed_of("0") > failed_of("3") && failed_of("3") >= 0.0);
    assert!(header.contains(&"cooldown_periods_mean") && header.contains(&"fallbacks_to.A_mean"));

    // runs/index.csv maps each run folder to its settings.
    let index = std::fs::read_to_string(out.join("runs/index.csv")).unwrap();
    assert!(index.starts_with(
        "path,router_settings.num_retries,router_settings.cooldown_time,seed\n\
         runs/c001/seed-1,0,5,1\n"
    ));
    // Each key also runs unset (the config's own value, last): num_retries 0, 1, 3, null ×
    // cooldown_time 5, 10, null, so 3 retries with cooldown_time 10 is the 8th combination.
    assert!(out.join("runs/c012/seed-4/summary.json").is_file());
    assert!(index.contains("runs/c008/seed-4,3,10,4\n"), "{index}");
    assert!(index.contains("runs/c012/seed-4,null,null,4\n"), "{index}");
}

/// `(attributes, content)` of every `<text>` element.
fn texts(svg: &str) -> Vec<(String, String)> {
    svg.split("<text")
        .skip(1)
        .filter_map(|chunk| {
            let (attrs, rest) = chunk.split_once('>')?;
            let (content, _) = rest.split_once("</text>")?;
            Some((attrs.to_string(), content.trim().to_string()))
        })
        .collect()
}

fn attr(attrs: &str, name: &str) -> f64 {
    let key = format!(" {name}=\"");
    let start = attrs.find(&key).unwrap() + key.len();
    attrs[start..].split('"').next().unwrap().parse().unwrap()
}

#[test]
fn sweep_svg_has_categorical_ticks_named_twins_and_an_outside_legend() {
    let dir = scratch_dir("sweep-verdict-svg");
    let out = run_sweep(&dir);
    let svg = std::fs::read_to_string(out.join("sweep.svg")).unwrap();
    let texts = texts(&svg);

    // The x tick labels (centred, upright numbers) are exactly the swept values.
    let ticks: std::collections::BTreeSet<&str> = texts
        .iter()
        .filter(|(a, c)| {
            a.contains("text-anchor=\"middle\"")
                && !a.contains("rotate")
                && c.parse::<f64>().is_ok()
        })
        .map(|(_, c)| c.as_str())
        .collect();
    assert_eq!(
        ticks.into_iter().collect::<Vec<_>>(),
        ["0", "1", "3"],
        "categorical ticks, no 0.5, 1.5 or 2"
    );

    // Coincident series are named, and keep their own marker shapes.
    assert!(
        svg.contains("cooldown_time=10 identical to cooldown_time=5"),
        "a note for the identical series"
    );
    assert!(
        svg.contains("<circle") && svg.contains("<polygon"),
        "two marker shapes"
    );

    // Rates are on a share axis that says whether it is zoomed.
    assert!(svg.contains("share of requests"));

    // The legend sits above every panel: its labels are higher than any panel caption.
    let legend_y: Vec<f64> = texts
        .iter()
        .filter(|(_, c)| c == "cooldown_time=5" || c == "cooldown_time=10")
        .map(|(a, _)| attr(a, "y"))
        .collect();
    assert_eq!(legend_y.len(), 2, "one legend entry per series");
    let first_caption = texts
        .iter()
        .filter(|(_, c)| c.contains("is better)"))
        .map(|(a, _)| attr(a, "y"))
        .fold(f64::INFINITY, f64::min);
    assert!(first_caption.is_finite(), "panel captions");
    for y in legend_y {
        assert!(
            y < first_caption,
            "legend at y={y}, first panel at {first_caption}"
        );
    }
}

/// A Chromium binary, if one is installed.
pub(crate) fn chromium() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
        .chain([std::path::PathBuf::from("/usr/bin/chromium")])
        .find(|p| p.is_file())
}

/// Runs headless Chromium on `url` with `extra` arguments; stdout, or an error after 90 s.
pub(crate) fn browser(chromium: &Path, profile: &Path, extra: &[String], url: &str) -> String {
    use std::io::Read;
    let mut child = std::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--disable-background-networking",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let began = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "chromium: {status}");
            break;
        }
        if began.elapsed() > std::time::Duration::from_secs(90) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    reader.join().unwrap()
}

#[test]
fn sweep_svg_renders_in_headless_chromium() {
    let Some(chromium) = chromium() else {
        runs_with(
            Component::Chromium,
            false,
            "sweep_svg_renders_in_headless_chromium",
        );
        return;
    };
    let dir = scratch_dir("sweep-verdict-chromium");
    let out = run_sweep(&dir);
    let url = format!(
        "file://{}",
        out.join("sweep.svg").canonicalize().unwrap().display()
    );
    // The DOM the browser built from the file: the markers, whiskers and labels are there.
    let dom = browser(
        &chromium,
        &dir.join("profile-dom"),
        &["--dump-dom".into()],
        &url,
    );
    assert!(
        dom.matches("<circle").count() >= 6,
        "circle markers in the browser"
    );
    assert!(
        dom.matches("<polygon").count() >= 6,
        "triangle markers in the browser"
    );
    assert!(dom.contains("cooldown_time=10 identical to cooldown_time=5"));
    // A screenshot: a real PNG of the plot.
    let png = dir.join("sweep.png");
    browser(
        &chromium,
        &dir.join("profile-shot"),
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1440,1300".into(),
        ],
        &url,
    );
    let bytes = std::fs::read(&png).unwrap();
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000,
        "{} bytes",
        bytes.len()
    );
}
