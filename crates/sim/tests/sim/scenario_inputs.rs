//! Inputs that are accepted must run, and limits are stated: file sizes, YAML budgets,
//! included files' errors (located, never echoed), duplicate keys, and small validation gaps.

use std::path::{Path, PathBuf};

use routersim_sim::scenario::{ScenarioError, load_scenario, parse_scenario};
use routersim_sim::traffic::TrafficSpec;

/// A fresh directory for file-based tests.
fn temp_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("scenario-inputs-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write");
}

/// A sparse file one byte over the 64 MiB limit (no disk space, no time).
fn oversized(path: &Path) {
    let file = std::fs::File::create(path).expect("create");
    file.set_len(64 * 1024 * 1024 + 1).expect("set_len");
}

/// A minimal valid scenario with `extra` appended (top-level YAML); lines 1–6 are this
/// preamble, so `extra` starts on line 7.
fn with(extra: &str) -> String {
    format!(
        "name: t\nduration: 10m\nrouter:\n  model_list:\n    - {{model_name: gpt, litellm_params: {{model: openai/gpt}}, model_info: {{id: gpt-a}}}}\n    - {{model_name: gpt, litellm_params: {{model: azure/gpt}}, model_info: {{id: gpt-b}}}}\n{extra}"
    )
}

fn error(text: &str) -> ScenarioError {
    parse_scenario(text, Path::new("s.yaml")).expect_err("should fail")
}

fn check(extra: &str, expected: &str) {
    assert_eq!(error(&with(extra)).to_string(), expected, "for:\n{extra}");
}

// ---------------------------------------------------------------------------------------------
// file size

#[test]
fn a_scenario_over_the_size_limit_is_refused_before_it_is_read() {
    let dir = temp_dir("big-scenario");
    let file = dir.join("big.yaml");
    oversized(&file);
    let e = load_scenario(&file).expect_err("too large");
    assert_eq!(
        (e.file.as_path(), e.line, e.path.as_str()),
        (file.as_path(), None, "")
    );
    assert!(e.message.contains("more than the 64 MiB"), "{e}");
    assert!(e.message.contains("67108865 bytes"), "{e}");
}

#[test]
fn a_router_file_or_an_included_file_over_the_limit_is_refused() {
    let dir = temp_dir("big-router");
    let scenario = dir.join("s.yaml");
    write(&scenario, "duration: 1m\nrouter_file: router.yaml\n");
    oversized(&dir.join("router.yaml"));
    let e = load_scenario(&scenario).expect_err("too large");
    assert_eq!(e.path, "router_file", "{e}");
    assert!(e.message.contains("more than the 64 MiB"), "{e}");

    write(
        &dir.join("router.yaml"),
        "include: [models.yaml]\nmodel_list:\n  - {model_name: m, litellm_params: {model: openai/m}}\n",
    );
    oversized(&dir.join("models.yaml"));
    let e = load_scenario(&scenario).expect_err("too large");
    assert!(e.message.contains("more than the 64 MiB"), "{e}");
    assert!(
        e.message.contains("models.yaml"),
        "names the included file: {e}"
    );
}

#[cfg(unix)]
#[test]
fn a_device_with_no_length_is_read_only_up_to_the_limit() {
    let started = std::time::Instant::now();
    let e = load_scenario(Path::new("/dev/zero")).expect_err("endless");
    assert!(e.message.contains("more than the 64 MiB"), "{e}");
    // Generous: reading 64 MiB of zeros takes well under a second even in debug.
    assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
}

// ---------------------------------------------------------------------------------------------
// YAML budgets

#[test]
fn deep_nesting_is_refused_in_words() {
    // Under `set`, where any value is accepted, so only the parser's budget stops it.
    let deep = format!("set:\n  x: {}1{}\n", "[".repeat(80), "]".repeat(80));
    let e = error(&with(&deep));
    assert!(e.message.contains("nested more than 64 levels deep"), "{e}");
    assert!(!e.message.contains("budget breached"), "{e}");
    assert!(!e.message.contains("Depth"), "{e}");
}

#[test]
fn an_alias_bomb_is_refused_in_words() {
    // Far more aliases than anchors: how an alias bomb starts.
    let aliases = vec!["*a"; 200].join(", ");
    let e = error(&with(&format!("set:\n  x: [&a x, {aliases}]\n")));
    assert!(e.message.contains("too many alias expansions"), "{e}");
    assert!(!e.message.contains("budget breached"), "{e}");
}

/// `n` explicit requests, two per millisecond.
fn explicit_requests(n: u32) -> String {
    use std::fmt::Write as _;
    let mut text = with("traffic:\n");
    for i in 0..n {
        let _ = writeln!(text, "  - {{at: {}ms, model: gpt}}", i / 2);
    }
    text
}

/// serde-saphyr's default budget (250,000 nodes) stopped at 50,000 explicit requests.
#[test]
fn more_explicit_requests_than_the_default_yaml_budget_load() {
    let s = parse_scenario(&explicit_requests(60_000), Path::new("s.yaml")).expect("loads");
    assert_eq!(s.traffic.len(), 60_000);
}

/// Incidents are replayed from logs: a million explicit requests must load (and fit in the
/// 64 MiB file limit: 30 bytes each here). About 6 s of CPU in release (9 s wall on a loaded
/// 2-core machine); over a minute in debug, so only release runs it (`cargo test --release`).
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "a million YAML entries take minutes in debug: run with --release"
)]
fn a_million_explicit_traffic_entries_load() {
    let text = explicit_requests(1_000_000);
    assert!(text.len() < 64 * 1024 * 1024);
    let s = parse_scenario(&text, Path::new("s.yaml")).expect("a million entries load");
    assert_eq!(s.traffic.len(), 1_000_000);
    assert!(
        matches!(s.traffic[999_999], TrafficSpec::Request(ref r) if r.at.as_millis() == 499_999)
    );
}

// ---------------------------------------------------------------------------------------------
// duplicate keys

#[test]
fn a_duplicate_key_names_its_path() {
    check(
        "traffic:\n  - {at: 1s, model: gpt, model: gpt}\n",
        "s.yaml:8:26: traffic[0].model: this key is set twice in the same mapping; keep one",
    );
    check(
        "duration: 20m\n",
        "s.yaml:7:1: duration: this key is set twice in the same mapping; keep one",
    );
}

/// `lines` full-line comments, each indented by `indent` spaces.
fn comment_block(lines: usize, indent: usize) -> String {
    let pad = " ".repeat(indent);
    (0..lines)
        .map(|i| format!("{pad}# comment line {i}: keep: [this, out] # and this\n"))
        .collect()
}

/// PyYAML reads a comment block of any length; serde-saphyr's default budget rejected more
/// than 32 buffered comments in a row after a key with no value.
#[test]
fn a_long_comment_block_loads_in_every_position() {
    let (top, two, four, six) = (
        comment_block(500, 0),
        comment_block(500, 2),
        comment_block(500, 4),
        comment_block(500, 6),
    );
    let scenarios = [
        // top level, before the first key and at the end
        format!("{top}{}{top}", with("")),
        // after keys with no value, and inside model_list (between entries, inside one)
        format!(
            "name: t\nduration: 10m\nrouter:\n{two}  model_list:\n{four}    - model_name: gpt\n      litellm_params:\n{six}        model: openai/gpt\n{four}    - {{model_name: gpt, litellm_params: {{model: azure/gpt}}}}\n{top}"
        ),
        // after a key with no value, before a list
        with(&format!("traffic:\n{two}  - {{at: 1s, model: gpt}}\n")),
    ];
    let failed: Vec<String> = scenarios
        .iter()
        .enumerate()
        .filter_map(|(i, text)| {
            parse_scenario(text, Path::new("s.yaml"))
                .err()
                .map(|e| format!("scenario {i}: {e}"))
        })
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn an_error_after_a_long_comment_block_names_its_line() {
    // The preamble is lines 1-6, `traffic:` line 7, the block lines 8-507.
    let block = comment_block(500, 2);
    check(
        &format!("traffic:\n{block}  - {{at: 1s, model: gpt, model: gpt}}\n"),
        "s.yaml:508:26: traffic[0].model: this key is set twice in the same mapping; keep one",
    );
}

// ---------------------------------------------------------------------------------------------
// router files and included files: located, never echoed

fn router_dir(name: &str, router: &str, included: &str) -> (PathBuf, PathBuf) {
    let dir = temp_dir(name);
    let scenario = dir.join("s.yaml");
    write(&scenario, "duration: 1m\nrouter_file: router.yaml\n");
    write(&dir.join("router.yaml"), router);
    write(&dir.join("secrets.yaml"), included);
    (scenario, dir)
}

const INCLUDING: &str = "include: [secrets.yaml]\nmodel_list:\n  - {model_name: m, litellm_params: {model: openai/m}}\n";

#[test]
fn a_yaml_error_in_an_included_file_names_its_file_line_and_column_not_its_text() {
    let (scenario, dir) = router_dir(
        "include-yaml",
        INCLUDING,
        "litellm_settings:\n  api_key: \"sk-SECRET\\q\"\n",
    );
    let e = load_scenario(&scenario).expect_err("bad include");
    assert_eq!(e.file, dir.join("secrets.yaml"), "{e}");
    assert_eq!((e.line, e.column), (Some(2), Some(12)), "{e}");
    assert!(e.message.starts_with("invalid YAML: "), "{e}");
    assert!(!e.to_string().contains("SECRET"), "{e}");
    assert!(!e.message.contains("line 2"), "the place is said once: {e}");
}

#[test]
fn a_value_error_in_an_included_file_names_that_file_and_hides_the_value() {
    let (scenario, dir) = router_dir(
        "include-value",
        INCLUDING,
        "model_list:\n  - model_name: n\n    litellm_params: {model: openai/n, rpm: sk-SECRET}\n",
    );
    let e = load_scenario(&scenario).expect_err("bad include");
    assert_eq!(e.file, dir.join("secrets.yaml"), "{e}");
    assert_eq!(e.path, "model_list[0].litellm_params.rpm", "{e}");
    assert_eq!((e.line, e.column), (Some(3), Some(44)), "{e}");
    assert!(!e.to_string().contains("SECRET"), "{e}");
    assert!(e.message.contains("expected a non-negative integer"), "{e}");

    let (scenario, dir) = router_dir(
        "include-settings",
        INCLUDING,
        "router_settings:\n  routing_strategy: sk-SECRET\n",
    );
    let e = load_scenario(&scenario).expect_err("bad include");
    assert_eq!(e.file, dir.join("secrets.yaml"), "{e}");
    assert_eq!(e.path, "router_settings.routing_strategy", "{e}");
    assert_eq!((e.line, e.column), (Some(2), Some(21)), "{e}");
    assert!(!e.to_string().contains("SECRET"), "{e}");
}

#[test]
fn a_yaml_error_in_the_router_file_is_located_once() {
    let (scenario, dir) = router_dir(
        "router-yaml",
        "model_list:\n  - {model_name: m, litellm_params: {model: openai/m, api_key: \"sk-SECRET\\q\"}}\n",
        "",
    );
    let e = load_scenario(&scenario).expect_err("bad router");
    assert_eq!(e.file, dir.join("router.yaml"), "{e}");
    assert_eq!(e.line, Some(2), "{e}");
    assert!(e.column.is_some(), "{e}");
    assert_eq!(e.path, "", "{e}");
    assert!(!e.to_string().contains("SECRET"), "{e}");
    assert!(!e.message.contains("line 2"), "the place is said once: {e}");
}

// ---------------------------------------------------------------------------------------------
// small validation gaps

#[test]
fn expect_bounds_must_be_numbers() {
    check(
        "expect:\n  - {metric: ok, max: .nan}\n",
        "s.yaml:8:23: expect[0].max: expected a finite number, found NaN",
    );
    check(
        "expect:\n  - {metric: ok, min: .NaN}\n",
        "s.yaml:8:23: expect[0].min: expected a finite number, found NaN",
    );
    check(
        "expect:\n  - {metric: ok, max: -.inf}\n",
        "s.yaml:8:23: expect[0].max: expected a finite number, found -inf",
    );
}

#[test]
fn count_says_the_range_it_accepts() {
    check(
        "traffic:\n  - {at: 1s, model: gpt, count: 0}\n",
        "s.yaml:8:33: traffic[0].count: expected a whole number from 1 to 4294967295, found 0",
    );
    check(
        "traffic:\n  - {at: 1s, model: gpt, count: -1}\n",
        "s.yaml:8:33: traffic[0].count: expected a whole number from 1 to 4294967295, found -1",
    );
    check(
        "traffic:\n  - {at: 1s, model: gpt, count: many}\n",
        "s.yaml:8:33: traffic[0].count: expected a whole number from 1 to 4294967295, found \"many\"",
    );
}

#[test]
fn an_injected_error_has_an_error_status() {
    check(
        "faults:\n  - {deployment: gpt-a, error: rate_limit, status: 200}\n",
        "s.yaml:8:5: faults[0]: status 200 is not an error status: an injected error is sent \
         with a status from 400 to 599",
    );
    let e = error(&with(
        "providers:\n  gpt-a: {script: [{error: timeout, status: 302}]}\n",
    ));
    assert!(
        e.message.contains("status 302 is not an error status"),
        "{e}"
    );
}

#[test]
fn expect_on_an_unknown_deployment_lists_the_ids() {
    check(
        "expect:\n  - {metric: cooldowns.nosuch, max: 0}\n",
        "s.yaml:8:14: expect[0].metric: no deployment \"nosuch\"; cooldowns.<id> takes a \
         deployment id: gpt-a, gpt-b",
    );
    check(
        "expect:\n  - {metric: cooled_ms.gpt, max: 0}\n",
        "s.yaml:8:14: expect[0].metric: \"gpt\" is a model group, not a deployment; \
         cooled_ms.<id> takes a deployment id: gpt-a, gpt-b",
    );
    let s = parse_scenario(
        &with("expect:\n  - {metric: cooldowns.gpt-b, max: 0}\n"),
        Path::new("s.yaml"),
    )
    .expect("a real id");
    assert_eq!(s.expect[0].metric, "cooldowns.gpt-b");
}
