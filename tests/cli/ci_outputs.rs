//! CI-grade outputs, end to end through the binary: golden tolerances and the order of a
//! golden diff, junit.xml's structure, `--json` and `--quiet`, and `metrics.prom`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::{routersim, scratch_dir};
use serde_json::Value;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A small scenario (about 100 requests): one of two deployments answers 503 for five seconds.
const TINY: &str = r#"name: tiny
seed: 3
duration: 20s
router:
  model_list:
    - {model_name: A, litellm_params: {model: openai/a}, model_info: {id: a1}}
    - {model_name: A, litellm_params: {model: azure/a}, model_info: {id: a2}}
  router_settings: {num_retries: 2, allowed_fails: 1}
providers:
  a1: {latency: {p50: 300ms, p99: 1s}}
  a2: {latency: {p50: 400ms, p99: 1500ms}}
faults:
  - {deployment: a1, from: 5s, to: 10s, error: service_unavailable}
traffic:
  - {model: A, rate: 5/s}
expect:
  - {metric: failed, max: 0}
  - {metric: requests, min: 10}
"#;

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).expect("utf-8 output")
}

fn path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// A scenario folder with TINY (plus `extra` lines appended) blessed, and its golden.
fn blessed(name: &str, extra: &str) -> (PathBuf, PathBuf, PathBuf) {
    let dir = scratch_dir(name);
    let scenarios = dir.join("scenarios");
    std::fs::create_dir_all(&scenarios).unwrap();
    std::fs::write(scenarios.join("tiny.yaml"), format!("{TINY}{extra}")).unwrap();
    let out = dir.join("out");
    let bless = routersim(&["check", &path(&scenarios), "--out", &path(&out), "--bless"]);
    assert_eq!(bless.status.code(), Some(0), "{}", text(bless.stderr));
    (scenarios.clone(), scenarios.join("tiny.golden.json"), out)
}

/// Rewrites numbers of a golden: each `(path, factor)` multiplies the leaf at `path`.
fn scale_golden(golden: &Path, changes: &[(&str, f64)]) {
    let mut value: Value = serde_json::from_str(&std::fs::read_to_string(golden).unwrap()).unwrap();
    for (leaf, factor) in changes {
        let pointer = format!("/{}", leaf.replace('.', "/"));
        let slot = value
            .pointer_mut(&pointer)
            .unwrap_or_else(|| panic!("{leaf}"));
        let old = slot.as_f64().unwrap();
        assert!(old != 0.0, "{leaf} is 0 in the golden");
        *slot = serde_json::json!(old * factor);
    }
    std::fs::write(golden, serde_json::to_string_pretty(&value).unwrap()).unwrap();
}

fn check_json(scenarios: &Path, out: &Path, extra: &[&str]) -> (Option<i32>, Value, String) {
    let mut args = vec!["check", scenarios.to_str().unwrap(), "--out"];
    args.push(out.to_str().unwrap());
    args.push("--json");
    args.extend_from_slice(extra);
    let output = routersim(&args);
    let stdout = text(output.stdout);
    let json: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("stdout is one JSON document ({e}): {stdout}"));
    (output.status.code(), json, text(output.stderr))
}

fn diff_paths(json: &Value) -> Vec<String> {
    json["cases"][0]["golden"]["diffs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn tolerance_lets_a_small_change_pass_and_a_golden_diff_is_sorted_by_relative_change() -> TestResult
{
    let (scenarios, golden, out) = blessed("ci-tolerance", "");
    // The run's frame and derived event totals are not compared.
    let mut value: Value = serde_json::from_str(&std::fs::read_to_string(&golden)?)?;
    value["duration_ms"] = serde_json::json!(1);
    value["run_end_ms"] = serde_json::json!(1);
    value["events"]["RequestEnd"] = serde_json::json!(1);
    std::fs::write(&golden, serde_json::to_string_pretty(&value)?)?;
    let (code, json, _) = check_json(&scenarios, &out, &[]);
    assert_eq!(code, Some(0), "{json}");
    assert_eq!(json["cases"][0]["golden"]["status"], "matched", "{json}");

    // +1 % on p99 and +30 % on p50 (the golden says it was lower before).
    scale_golden(
        &golden,
        &[
            ("latency_ms.p99", 1.0 / 1.01),
            ("latency_ms.p50", 1.0 / 1.3),
        ],
    );
    let (code, json, _) = check_json(&scenarios, &out, &[]);
    assert_eq!(code, Some(1), "exact by default: {json}");
    assert_eq!(
        diff_paths(&json),
        ["latency_ms.p50", "latency_ms.p99"],
        "largest relative change first: {json}"
    );
    let change = json["cases"][0]["golden"]["diffs"][0]["relative_change"]
        .as_f64()
        .unwrap();
    assert!((change - 0.3).abs() < 1e-6, "{change}");

    let (code, json, _) = check_json(&scenarios, &out, &["--tolerance", "2%"]);
    assert_eq!(code, Some(1), "{json}");
    assert_eq!(diff_paths(&json), ["latency_ms.p50"], "{json}");
    let (code, json, _) = check_json(&scenarios, &out, &["--tolerance", "31%"]);
    assert_eq!(code, Some(0), "{json}");

    // The table says it the same way.
    let table = routersim(&[
        "check",
        &path(&scenarios),
        "--out",
        &path(&out),
        "--tolerance",
        "2%",
    ]);
    let stdout = text(table.stdout);
    assert!(
        stdout.contains("latency_ms.p50: golden ") && stdout.contains("(+30%, tolerance 2%)"),
        "{stdout}"
    );
    assert!(!stdout.contains("latency_ms.p99: golden"), "{stdout}");

    let bad = routersim(&["check", &path(&scenarios), "--tolerance", "2"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(bad.stderr).contains("expected a percentage such as 5%"),
        "a bad --tolerance is a usage error"
    );
    Ok(())
}

#[test]
fn a_scenario_golden_tolerance_wins_for_its_metric_and_bad_ones_are_located_errors() -> TestResult {
    let (scenarios, golden, out) = blessed(
        "ci-golden-key",
        "golden:\n  tolerance: {p50_latency_ms: 40%}\n",
    );
    scale_golden(&golden, &[("latency_ms.p50", 1.0 / 1.3)]);
    let (code, json, _) = check_json(&scenarios, &out, &[]);
    assert_eq!(code, Some(0), "p50 may move 40 %: {json}");
    scale_golden(&golden, &[("latency_ms.p90", 1.0 / 1.3)]);
    let (code, json, _) = check_json(&scenarios, &out, &["--tolerance", "1%"]);
    assert_eq!(code, Some(1), "{json}");
    assert_eq!(diff_paths(&json), ["latency_ms.p90"], "{json}");

    for (golden_key, says) in [
        (
            "golden:\n  tolerance: {p99_latncy_ms: 5%}\n",
            "golden.tolerance.p99_latncy_ms: unknown metric \"p99_latncy_ms\"",
        ),
        (
            "golden:\n  tolerance: {p99_latency_ms: 5}\n",
            "golden.tolerance.p99_latency_ms: expected a percentage such as 5%",
        ),
        (
            "golden:\n  tolerance: {duration_ms: 5%}\n",
            "golden.tolerance.duration_ms: unknown metric",
        ),
        ("golden:\n  tolerances: {}\n", "unknown field `tolerances`"),
    ] {
        let dir = scratch_dir("ci-golden-bad");
        let file = dir.join("bad.yaml");
        std::fs::write(&file, format!("{TINY}{golden_key}"))?;
        let output = routersim(&["run", &path(&file), "--out", &path(&dir.join("out"))]);
        let stderr = text(output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        let line = TINY.lines().count() + 2;
        assert!(
            stderr.contains(&format!("bad.yaml:{line}:")) || golden_key.contains("tolerances"),
            "names the line: {stderr}"
        );
        assert!(stderr.contains(says), "{says:?} in {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    Ok(())
}

/// junit.xml with every `time="…"` attribute emptied: the only values that change from one
/// check of the same input to the next (wall-clock seconds).
pub fn without_times(xml: &str) -> String {
    let mut out = String::with_capacity(xml.len());
    let mut rest = xml;
    while let Some(at) = rest.find(" time=\"") {
        let value = at + " time=\"".len();
        out.push_str(&rest[..value]);
        let end = rest[value..].find('"').map_or(rest.len(), |e| value + e);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// One element of a parsed XML document.
#[derive(Debug, Default)]
struct Element {
    name: String,
    attrs: BTreeMap<String, String>,
    children: Vec<Element>,
    text: String,
}

impl Element {
    fn all<'a>(&'a self, name: &str, out: &mut Vec<&'a Element>) {
        if self.name == name {
            out.push(self);
        }
        for child in &self.children {
            child.all(name, out);
        }
    }

    fn find(&self, name: &str) -> Vec<&Element> {
        let mut out = Vec::new();
        self.all(name, &mut out);
        out
    }

    fn attr(&self, name: &str) -> &str {
        self.attrs
            .get(name)
            .unwrap_or_else(|| panic!("<{}> has no {name}", self.name))
    }
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&#10;", "\n")
        .replace("&#13;", "\r")
        .replace("&#9;", "\t")
        .replace("&amp;", "&")
}

/// A strict little XML parser, enough for junit.xml: the declaration, elements, attributes in
/// double quotes, text, and only the five named entities and numeric references. Panics on
/// anything malformed (an unclosed or mismatched tag, a stray `<` or `&`, a repeated
/// attribute, content after the root).
fn parse_xml(xml: &str) -> Element {
    let rest = xml
        .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        .expect("an XML declaration");
    let mut stack = vec![Element::default()];
    let mut i = 0;
    let bytes = rest.as_bytes();
    while i < bytes.len() {
        if bytes[i] == b'<' {
            let end = rest[i..].find('>').expect("a closed tag") + i;
            let tag = &rest[i + 1..end];
            assert!(!tag.contains('<'), "a stray < in {tag}");
            if let Some(name) = tag.strip_prefix('/') {
                let done = stack.pop().expect("an open element");
                assert_eq!(done.name, name, "mismatched close tag");
                stack.last_mut().expect("a parent").children.push(done);
            } else {
                let self_closing = tag.ends_with('/');
                let tag = tag.trim_end_matches('/');
                let (name, mut attrs_text) = tag.split_once(' ').unwrap_or((tag, ""));
                let mut element = Element {
                    name: name.to_string(),
                    ..Element::default()
                };
                assert!(
                    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
                    "element name {name:?}"
                );
                loop {
                    attrs_text = attrs_text.trim_start();
                    if attrs_text.is_empty() {
                        break;
                    }
                    let (key, after) = attrs_text.split_once("=\"").expect("key=\"value\"");
                    let close = after.find('"').expect("a closing quote");
                    let raw = &after[..close];
                    assert!(!raw.contains('<'), "< in an attribute");
                    check_entities(raw);
                    let previous = element.attrs.insert(key.to_string(), unescape(raw));
                    assert!(previous.is_none(), "repeated attribute {key}");
                    attrs_text = &after[close + 1..];
                }
                if self_closing {
                    stack.last_mut().expect("a parent").children.push(element);
                } else {
                    stack.push(element);
                }
            }
            i = end + 1;
        } else {
            let end = rest[i..].find('<').map_or(rest.len(), |e| e + i);
            let raw = &rest[i..end];
            check_entities(raw);
            assert!(
                stack.len() > 1 || raw.trim().is_empty(),
                "text outside the root: {raw:?}"
            );
            stack
                .last_mut()
                .expect("an element")
                .text
                .push_str(&unescape(raw));
            i = end;
        }
    }
    assert_eq!(stack.len(), 1, "unclosed elements");
    let mut document = stack.pop().unwrap();
    assert_eq!(document.children.len(), 1, "one root element");
    document.children.pop().unwrap()
}

fn check_entities(raw: &str) {
    for (at, _) in raw.match_indices('&') {
        let entity = &raw[at..raw[at..].find(';').expect("a terminated entity") + at + 1];
        let numeric = entity
            .strip_prefix("&#")
            .and_then(|n| n.strip_suffix(';'))
            .is_some_and(|n| n.parse::<u32>().is_ok());
        assert!(
            numeric || ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"].contains(&entity),
            "unknown entity {entity}"
        );
    }
}

#[test]
fn the_xml_checker_refuses_malformed_files() {
    for bad in [
        "<a><b></a></b>",
        "<a>",
        "<a x=\"1\" x=\"2\"/>",
        "<a>&nbsp;</a>",
        "<a/><b/>",
    ] {
        let doc = format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{bad}\n");
        assert!(
            std::panic::catch_unwind(|| parse_xml(&doc)).is_err(),
            "{bad} is refused"
        );
    }
}

#[test]
fn junit_xml_has_a_suite_per_run_a_case_per_expect_line_and_golden_and_wall_times() -> TestResult {
    let dir = scratch_dir("ci-junit");
    let scenarios = dir.join("suite.v2");
    std::fs::create_dir_all(&scenarios)?;
    std::fs::write(scenarios.join("tiny.yaml"), TINY)?;
    // Fails its first line; no golden.
    std::fs::write(
        scenarios.join("strict.yaml"),
        TINY.replace("name: tiny", "name: strict")
            .replace("{metric: requests, min: 10}", "{metric: requests, max: 1}"),
    )?;
    std::fs::write(
        scenarios.join("broken.yaml"),
        "name: broken\nduration: 10s\nbogus: 1\n",
    )?;
    let out = dir.join("out");
    routersim(&[
        "check",
        &path(&scenarios),
        "--out",
        &path(&out),
        "--seeds",
        "3",
        "--bless",
    ]);
    std::fs::remove_file(scenarios.join("strict.golden.json"))?;
    let output = routersim(&[
        "check",
        &path(&scenarios),
        "--out",
        &path(&out),
        "--seeds",
        "3,4",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", text(output.stdout));
    let xml = std::fs::read_to_string(out.join("junit.xml"))?;
    let root = parse_xml(&xml);
    assert_eq!(root.name, "testsuites");
    let suites = root.find("testsuite");
    // broken (load), strict × 2 seeds, tiny × 2 seeds.
    assert_eq!(suites.len(), 5, "{xml}");
    let mut total = 0;
    for suite in &suites {
        let cases = suite.find("testcase");
        assert_eq!(suite.attr("tests"), cases.len().to_string(), "{xml}");
        total += cases.len();
        let props: BTreeMap<&str, &str> = suite
            .find("property")
            .iter()
            .map(|p| (p.attr("name"), p.attr("value")))
            .collect();
        // A run that happened also says how long it was in virtual time.
        let ran = !cases.iter().any(|c| c.attr("name") == "load");
        let mut expected = vec!["routersim_version", "scenario", "seed"];
        if ran {
            expected.push("virtual_seconds");
        }
        assert_eq!(props.keys().copied().collect::<Vec<_>>(), expected, "{xml}");
        assert_eq!(props["routersim_version"], env!("CARGO_PKG_VERSION"));
        assert!(props["scenario"].ends_with(".yaml"), "{xml}");
        for case in &cases {
            // Jenkins splits a classname at its last dot: there is none.
            let class = case.attr("classname");
            assert!(!class.contains('.'), "{class}");
            assert!(class.ends_with("_yaml"), "{class}");
            let time: f64 = case.attr("time").parse()?;
            assert!(time >= 0.0);
        }
        let time: f64 = suite.attr("time").parse()?;
        let sum: f64 = cases
            .iter()
            .map(|c| c.attr("time").parse::<f64>().unwrap())
            .sum();
        assert!(
            (time - sum).abs() < 1e-6,
            "a suite's cases add up to its time"
        );
    }
    assert_eq!(root.attr("tests"), total.to_string());
    let root_time: f64 = root.attr("time").parse()?;
    let suites_time: f64 = suites
        .iter()
        .map(|s| s.attr("time").parse::<f64>().unwrap())
        .sum();
    assert!(
        (root_time - suites_time).abs() < 1e-6,
        "the suites add up to the root's time"
    );
    let names: Vec<&str> = suites
        .iter()
        .flat_map(|s| s.find("testcase"))
        .map(|c| c.attr("name"))
        .collect();
    assert_eq!(
        names,
        [
            "load",
            "seed-3 expect failed <= 0",
            "seed-3 expect requests <= 1",
            "seed-3 golden",
            "seed-4 expect failed <= 0",
            "seed-4 expect requests <= 1",
            "seed-4 golden",
            "seed-3 expect failed <= 0",
            "seed-3 expect requests >= 10",
            "seed-3 golden",
            "seed-4 expect failed <= 0",
            "seed-4 expect requests >= 10",
            "seed-4 golden",
        ],
        "{xml}"
    );
    let by_name = |suite: usize, name: &str| -> &Element {
        suites[suite]
            .find("testcase")
            .into_iter()
            .find(|c| c.attr("name") == name)
            .unwrap()
    };
    assert_eq!(by_name(0, "load").find("error").len(), 1);
    assert_eq!(
        by_name(1, "seed-3 expect requests <= 1").find("failure")[0].attr("type"),
        "expectation"
    );
    assert_eq!(
        by_name(1, "seed-3 golden").find("skipped").len(),
        1,
        "no golden"
    );
    let golden = by_name(3, "seed-3 golden");
    assert!(golden.find("failure").is_empty() && golden.find("skipped").is_empty());
    // The suite's properties carry the run's virtual duration, which its summary states; the
    // golden case's time is the run's wall time, far below the 20 virtual seconds.
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(
        out.join("tiny/seed-3/summary.json"),
    )?)?;
    let virtual_s = summary["run_end_ms"].as_f64().unwrap() / 1000.0;
    let property = |suite: &Element, name: &str| -> f64 {
        suite
            .find("property")
            .into_iter()
            .find(|p| p.attr("name") == name)
            .unwrap()
            .attr("value")
            .parse()
            .unwrap()
    };
    assert!(virtual_s > 10.0, "{virtual_s}");
    assert!((property(suites[3], "virtual_seconds") - virtual_s).abs() < 1e-6);
    let time: f64 = golden.attr("time").parse()?;
    assert!(
        time > 0.0 && time < virtual_s / 2.0,
        "wall time {time} s, not the virtual {virtual_s} s"
    );
    assert!(golden.find("system-out")[0].text.contains("requests in"));
    assert_eq!(by_name(4, "seed-4 golden").find("skipped").len(), 1);
    assert_eq!(root.attr("failures"), "2");
    assert_eq!(root.attr("errors"), "1");
    assert!(
        suites[1].attr("name").ends_with("strict_yaml seed-3"),
        "{xml}"
    );

    // Deterministic but for the wall times: a second check writes the same bytes once every
    // `time` attribute is set aside.
    routersim(&[
        "check",
        &path(&scenarios),
        "--out",
        &path(&out),
        "--seeds",
        "3,4",
    ]);
    let again = std::fs::read_to_string(out.join("junit.xml"))?;
    assert_eq!(without_times(&again), without_times(&xml));
    assert!(
        without_times(&xml).contains(" time=\"\""),
        "times were set aside"
    );
    Ok(())
}

#[test]
fn json_prints_one_document_on_stdout_and_quiet_prints_nothing() -> TestResult {
    let dir = scratch_dir("ci-json");
    let scenario = dir.join("tiny.yaml");
    // A router key routersim does not use: a warning, which goes to stderr.
    std::fs::write(
        &scenario,
        TINY.replace(
            "router_settings: {num_retries: 2, allowed_fails: 1}",
            "router_settings: {num_retries: 2, allowed_fails: 1, allowed_fail: 3}",
        ),
    )?;
    let a = dir.join("a");
    let b = dir.join("b");

    let run = routersim(&["run", &path(&scenario), "--out", &path(&a), "--json"]);
    assert_eq!(run.status.code(), Some(0));
    let stdout = text(run.stdout);
    let json: Value = serde_json::from_str(&stdout)?;
    assert_eq!(json["command"], "run");
    assert_eq!(json["passed"], true);
    assert_eq!(json["summary"]["seed"], 3);
    assert_eq!(json["report"], path(&a));
    assert_eq!(json["expectations"][0]["metric"], "failed");
    assert_eq!(json["expectations"][0]["passed"], true);
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(a.join("summary.json"))?)?;
    assert_eq!(json["summary"], summary, "the summary is summary.json's");
    assert!(
        text(run.stderr).contains("allowed_fail"),
        "warnings go to stderr"
    );

    let quiet = routersim(&[
        "run",
        &path(&scenario),
        "--out",
        &path(&b),
        "--seed",
        "4",
        "--quiet",
    ]);
    assert_eq!(quiet.status.code(), Some(0));
    assert!(
        quiet.stdout.is_empty() && quiet.stderr.is_empty(),
        "{}",
        text(quiet.stderr)
    );
    assert!(
        b.join("summary.json").is_file(),
        "--quiet still writes the report"
    );

    // A failing `expect` under --quiet: nothing printed, the exit code says it.
    let failing = dir.join("failing.yaml");
    std::fs::write(
        &failing,
        TINY.replace("{metric: requests, min: 10}", "{metric: requests, max: 1}"),
    )?;
    let quiet = routersim(&["run", &path(&failing), "--out", &path(&dir.join("f")), "-q"]);
    assert_eq!(quiet.status.code(), Some(1));
    assert!(quiet.stdout.is_empty() && quiet.stderr.is_empty());
    // An error is still printed.
    let missing = routersim(&["run", &path(&dir.join("nope.yaml")), "--quiet"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(missing.stdout.is_empty());
    assert!(text(missing.stderr).starts_with("error: "));

    let diff = routersim(&["diff", &path(&a), &path(&b), "--json"]);
    assert_eq!(diff.status.code(), Some(0));
    let json: Value = serde_json::from_str(&text(diff.stdout))?;
    assert_eq!(json["command"], "diff");
    assert_eq!(json["a"]["seed"], 3);
    assert_eq!(json["b"]["seed"], 4);
    assert_eq!(json["attempts"]["status"], "compared");
    let requests = json["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "requests")
        .unwrap();
    assert_eq!(requests["a"], summary["requests"].as_f64().unwrap());
    let diff = routersim(&["diff", &path(&a), &path(&b), "--quiet"]);
    assert_eq!(diff.status.code(), Some(0));
    assert!(diff.stdout.is_empty() && diff.stderr.is_empty());

    let (code, json, stderr) = check_json(&dir, &dir.join("check"), &["--seeds", "3"]);
    assert_eq!(code, Some(1), "failing.yaml fails: {json}");
    assert_eq!(json["command"], "check");
    assert_eq!(json["runs"], 2);
    assert_eq!(json["failed"], 1);
    assert_eq!(json["cases"][0]["verdict"], "fail");
    assert_eq!(json["cases"][1]["verdict"], "pass");
    assert_eq!(json["cases"][1]["golden"]["status"], "missing");
    assert!(
        json["cases"][1]["warnings"][0]
            .as_str()
            .unwrap()
            .contains("allowed_fail")
    );
    assert!(
        !stderr.contains("scenario  "),
        "no table anywhere: {stderr}"
    );
    let quiet = routersim(&[
        "check",
        &path(&dir),
        "--out",
        &path(&dir.join("check")),
        "-q",
    ]);
    assert_eq!(quiet.status.code(), Some(1));
    assert!(quiet.stdout.is_empty() && quiet.stderr.is_empty());
    assert!(dir.join("check/junit.xml").is_file());
    // An error case is an error: --quiet prints it.
    std::fs::write(
        dir.join("broken.yaml"),
        "name: broken\nduration: 10s\nbogus: 1\n",
    )?;
    let quiet = routersim(&[
        "check",
        &path(&dir),
        "--out",
        &path(&dir.join("check")),
        "-q",
    ]);
    assert_eq!(quiet.status.code(), Some(2));
    assert!(quiet.stdout.is_empty());
    let stderr = text(quiet.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: ")
            && stderr.contains("broken.yaml load: ")
            && stderr.contains("bogus"),
        "{stderr}"
    );

    let both = routersim(&["run", &path(&scenario), "--json", "--quiet"]);
    assert_eq!(both.status.code(), Some(2), "--json and --quiet conflict");
    // stderr is not a terminal here: no progress line.
    assert!(!text(both.stderr).contains("running tiny"));
    Ok(())
}

/// A sample's labels and value.
type Sample = (BTreeMap<String, String>, f64);

/// One sample line of a Prometheus text exposition: name, labels, value.
fn sample(line: &str) -> (String, BTreeMap<String, String>, f64) {
    let (series, value) = line.rsplit_once(' ').expect("series value");
    let value: f64 = match value {
        "+Inf" => f64::INFINITY,
        v => v.parse().unwrap_or_else(|_| panic!("a number in {line}")),
    };
    let (name, labels) = match series.split_once('{') {
        None => (series, ""),
        Some((name, rest)) => (name, rest.strip_suffix('}').expect("closing }")),
    };
    assert!(
        name.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
            && !name.starts_with(|c: char| c.is_ascii_digit()),
        "metric name {name:?}"
    );
    let mut map = BTreeMap::new();
    let mut rest = labels;
    while !rest.is_empty() {
        let (key, after) = rest.split_once("=\"").expect("label=\"value\"");
        assert!(
            key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !key.is_empty(),
            "label name {key:?}"
        );
        // The value ends at the first quote not escaped by a backslash.
        let mut end = None;
        let mut escaped = false;
        for (i, c) in after.char_indices() {
            match (escaped, c) {
                (false, '\\') => escaped = true,
                (false, '"') => {
                    end = Some(i);
                    break;
                }
                _ => escaped = false,
            }
        }
        let end = end.expect("a closing quote");
        map.insert(key.to_string(), after[..end].to_string());
        rest = after[end + 1..]
            .strip_prefix(',')
            .unwrap_or(&after[end + 1..]);
    }
    (name.to_string(), map, value)
}

#[test]
fn metrics_prom_is_valid_prometheus_text_that_agrees_with_the_summary() -> TestResult {
    let dir = scratch_dir("ci-prom");
    let scenario = dir.join("tiny.yaml");
    std::fs::write(
        &scenario,
        TINY.replace("name: tiny", "name: \"tiny \\\"q\\\"\""),
    )?;
    let out = dir.join("out");
    let run = routersim(&["run", &path(&scenario), "--out", &path(&out), "-q"]);
    assert_eq!(run.status.code(), Some(0), "{}", text(run.stderr));
    let prom = std::fs::read_to_string(out.join("metrics.prom"))?;
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json"))?)?;
    assert!(prom.ends_with('\n'));

    let mut types: BTreeMap<String, String> = BTreeMap::new();
    let mut helped: Vec<String> = Vec::new();
    let mut values: BTreeMap<String, Vec<Sample>> = BTreeMap::new();
    for line in prom.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').expect("HELP name text");
            assert!(!help.is_empty());
            helped.push(name.to_string());
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("TYPE name kind");
            assert!(["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind));
            assert_eq!(
                helped.last().map(String::as_str),
                Some(name),
                "HELP before TYPE"
            );
            assert!(
                types.insert(name.to_string(), kind.to_string()).is_none(),
                "one TYPE"
            );
        } else {
            assert!(!line.starts_with('#') && !line.is_empty(), "{line:?}");
            let (name, labels, value) = sample(line);
            let family = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| {
                    name.strip_suffix(s)
                        .filter(|f| types.get(*f).is_some_and(|k| k == "histogram"))
                })
                .unwrap_or(&name)
                .to_string();
            let kind = types
                .get(&family)
                .unwrap_or_else(|| panic!("TYPE before {name}"));
            if kind == "counter" {
                assert!(name.ends_with("_total"), "{name}");
                assert!(value >= 0.0 && value.fract() == 0.0, "{line}");
            }
            assert_eq!(labels["scenario"], "tiny \\\"q\\\"", "escaped: {line}");
            assert_eq!(labels["seed"], "3");
            values.entry(name).or_default().push((labels, value));
        }
    }
    let one = |name: &str| -> f64 {
        let v = &values[name];
        assert_eq!(v.len(), 1, "{name}");
        v[0].1
    };
    for (metric, key) in [
        ("routersim_requests_total", "requests"),
        ("routersim_ok_total", "ok"),
        ("routersim_failed_total", "failed"),
        ("routersim_retries_total", "retries"),
        ("routersim_fallbacks_total", "fallbacks"),
        ("routersim_attempts_total", "attempts"),
    ] {
        assert_eq!(one(metric), summary[key].as_f64().unwrap(), "{metric}");
    }
    assert_eq!(
        one("routersim_cooldowns_total"),
        summary["cooldowns"]["total"].as_f64().unwrap()
    );
    assert_eq!(
        one("routersim_cooldown_periods_total"),
        summary["cooldowns"]["periods"].as_f64().unwrap()
    );
    let periods: f64 = values
        .get("routersim_deployment_cooldown_periods_total")
        .map_or(0.0, |v| v.iter().map(|(_, x)| x).sum());
    assert_eq!(periods, summary["cooldowns"]["periods"].as_f64().unwrap());
    let by_kind: f64 = values
        .get("routersim_failed_by_kind_total")
        .map_or(0.0, |v| v.iter().map(|(_, x)| x).sum());
    assert_eq!(by_kind, summary["failed"].as_f64().unwrap());

    let buckets = &values["routersim_request_latency_seconds_bucket"];
    let mut previous = (0.0, 0.0);
    for (labels, count) in buckets {
        let le: f64 = match labels["le"].as_str() {
            "+Inf" => f64::INFINITY,
            le => le.parse()?,
        };
        assert!(le > previous.0, "bounds rise");
        assert!(*count >= previous.1, "cumulative counts never fall");
        previous = (le, *count);
    }
    assert_eq!(previous.0, f64::INFINITY, "the last bucket is +Inf");
    let count = one("routersim_request_latency_seconds_count");
    assert_eq!(previous.1, count, "+Inf bucket == count");
    assert_eq!(count, summary["requests"].as_f64().unwrap());
    let sum = one("routersim_request_latency_seconds_sum");
    let mean_ms = summary["latency_ms"]["mean"].as_f64().unwrap();
    assert!(
        (sum / count * 1000.0 - mean_ms).abs() < 0.01,
        "{sum} {mean_ms}"
    );
    // Some requests took more than 100 ms and all less than 10 s: the buckets say so.
    assert!(
        buckets[4].1 < count && buckets[10].1 == count,
        "{buckets:?}"
    );

    // Deterministic bytes.
    let again = dir.join("again");
    routersim(&["run", &path(&scenario), "--out", &path(&again), "-q"]);
    assert_eq!(std::fs::read_to_string(again.join("metrics.prom"))?, prom);
    Ok(())
}

/// `run` on a terminal: a progress line on stderr once a run passes a second of wall time,
/// none for a quick run. Needs util-linux `script` for a pseudo-terminal (skipped without it).
#[test]
fn run_shows_a_progress_line_on_a_terminal_only_when_it_takes_over_a_second() -> TestResult {
    let has_script = std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_script {
        eprintln!("warning: no `script` on the PATH; the terminal progress test is skipped");
        return Ok(());
    }
    let dir = scratch_dir("ci-progress");
    let on_tty = |scenario: &str, name: &str| -> String {
        let file = dir.join(format!("{name}.yaml"));
        std::fs::write(&file, scenario).unwrap();
        let typescript = dir.join(format!("{name}.typescript"));
        let command = format!(
            "{} run {} --out {} --trace none --json > /dev/null",
            env!("CARGO_BIN_EXE_routersim"),
            path(&file),
            path(&dir.join(name))
        );
        let status = std::process::Command::new("script")
            .args(["-qec", &command, &path(&typescript)])
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        std::fs::read_to_string(&typescript).unwrap_or_default()
    };
    // Hours of traffic: several seconds of wall time, far more than one. A release build
    // simulates several times faster, so it gets 4 times the traffic.
    let hours = if cfg!(debug_assertions) { "6h" } else { "24h" };
    let long = TINY
        .replace("name: tiny", "name: long")
        .replace("duration: 20s", &format!("duration: {hours}"))
        .replace("rate: 5/s", "rate: 40/s");
    let screen = on_tty(&long, "long");
    assert!(screen.contains("running long"), "{screen}");
    // The virtual time, as a share of the scenario's duration, and the requests so far.
    let line = screen
        .split("running long · virtual ")
        .nth(1)
        .unwrap_or_else(|| panic!("no virtual progress in {screen}"));
    let of = format!(" / {hours} (");
    let pct = line
        .split_once(of.as_str())
        .and_then(|(_, rest)| rest.split_once("%)"))
        .map(|(pct, _)| pct)
        .unwrap_or_else(|| panic!("no percentage of {hours} in {line}"));
    let pct: u32 = pct.parse().unwrap_or_else(|_| panic!("{pct} in {line}"));
    assert!(pct <= 100, "{line}");
    assert!(line.contains(" requests"), "{line}");
    let screen = on_tty(TINY, "tiny");
    assert!(
        !screen.contains("running"),
        "a quick run shows nothing: {screen}"
    );
    Ok(())
}
