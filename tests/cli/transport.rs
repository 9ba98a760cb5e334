//! `transport: http` against `transport: memory`, whole runs: every shipped scenario
//! (`scenarios/`, `ci/`, `profiles/`, `quota-ramp/`), run both ways with its own seed, must
//! give the same report — `requests.csv`, `attempts.csv`, `events.csv`, `timeseries.csv`
//! and `summary.json` byte for byte (the http summary has one more line,
//! `"transport": "http"`).
//!
//! Two exceptions, both from one cause (README, "transport: http"): over the wire a provider's
//! answer reaches its request task a few task hops after the provider's timer fires, at the
//! same virtual instant, where in memory it arrives in that very poll. When another timer of
//! the router (a backoff ending, a second answer) fires in the same millisecond tick, the two
//! may run in the other order:
//! - [`ROW_ORDER`]: only the order of rows written at the same virtual millisecond differs;
//!   the rows themselves, events, timeseries and summary are identical.
//! - [`DRAW_ORDER`]: the swapped pair draws from the same seeded stream (a backoff's jitter, a
//!   deployment pick), so later draws differ; the traffic is identical and every `expect`
//!   line gives the same verdict.

use std::path::Path;

use crate::common::{repo, routersim, scratch_dir, shipped_scenarios};
use routersim_sim::run::{Rendering, RunReport, run_into};
use routersim_sim::scenario::load_scenario;
use routersim_sim::transport::Transport;

/// Scenarios whose same-millisecond rows may come in another order over http.
const ROW_ORDER: [&str; 5] = [
    "scenarios/ci/content-policy-fallback.yaml",
    "scenarios/context-window-overflow.yaml",
    "scenarios/profiles/incident-deltallm.yaml",
    "scenarios/profiles/incident-multigrid.yaml",
    "scenarios/profiles/incident.yaml",
];

/// Scenarios where a same-millisecond pair swaps two seeded draws over http.
const DRAW_ORDER: [&str; 1] = ["scenarios/seed-example.yaml"];

/// Scenarios whose fault the wire cannot carry: `connection_lost_after_send` (the wire has
/// no way to say "sent, then lost", so the router sees a plain `api_connection` and `replay`
/// does nothing; the loader warns), and `profile: contract`'s validation of structured answers
/// (an answer over the wire carries no body, so only its finish reason is checked; see the
/// README's limits of `profile: contract`). Only their traffic is compared.
const MEMORY_ONLY: [&str; 2] = [
    "scenarios/profiles/incident-contract.yaml",
    "scenarios/retry-owner.yaml",
];

/// The traces compared.
const TRACES: [&str; 4] = [
    "requests.csv",
    "attempts.csv",
    "events.csv",
    "timeseries.csv",
];

fn run_over(file: &Path, transport: Transport, out: &Path) -> RunReport {
    let mut scenario = load_scenario(file).unwrap();
    scenario.transport = transport;
    run_into(&scenario, scenario.seed, out, false, Rendering::DataOnly)
        .unwrap_or_else(|e| panic!("{}: {transport}: {e}", file.display()))
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

/// The lines of a trace, sorted (the header stays first).
fn sorted_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.lines().collect();
    lines[1..].sort_unstable();
    lines
}

/// `requests.csv`'s traffic columns (request id, arrival, model), by request id.
fn arrivals(text: &str) -> Vec<(u64, String, String)> {
    let mut rows: Vec<(u64, String, String)> = text
        .lines()
        .skip(1)
        .map(|l| {
            let mut cols = l.split(',');
            let id = cols.next().unwrap().parse().unwrap();
            let at = cols.next().unwrap().to_string();
            let model = cols.next().unwrap().to_string();
            (id, at, model)
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn every_shipped_scenario_gives_the_same_report_over_http() {
    let base = scratch_dir("transport-parity");
    let mut exact = 0;
    for (i, file) in shipped_scenarios().iter().enumerate() {
        let name = file
            .strip_prefix(repo())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let (m, h) = (
            base.join(format!("{i}-memory")),
            base.join(format!("{i}-http")),
        );
        let memory = run_over(file, Transport::Memory, &m);
        let http = run_over(file, Transport::Http, &h);
        assert_eq!(memory.summary.transport, None, "{name}");
        assert_eq!(http.summary.transport.as_deref(), Some("http"), "{name}");

        let http_summary = read(&h, "summary.json");
        let marker = "  \"transport\": \"http\",\n";
        assert_eq!(
            http_summary.matches(marker).count(),
            1,
            "{name}: {http_summary}"
        );
        let http_summary = http_summary.replacen(marker, "", 1);
        if MEMORY_ONLY.contains(&name.as_str()) {
            let requests = (read(&m, "requests.csv"), read(&h, "requests.csv"));
            let first_sends = |text: &str| {
                let mut rows = arrivals(text);
                rows.dedup_by_key(|r| r.0);
                rows
            };
            assert_eq!(
                first_sends(&requests.0),
                first_sends(&requests.1),
                "{name}: traffic"
            );
            continue;
        }
        let verdicts = |r: &RunReport| r.expectations.iter().map(|e| e.passed).collect::<Vec<_>>();
        assert_eq!(
            verdicts(&memory),
            verdicts(&http),
            "{name}: expect verdicts"
        );

        if DRAW_ORDER.contains(&name.as_str()) {
            let requests = (read(&m, "requests.csv"), read(&h, "requests.csv"));
            assert_eq!(
                arrivals(&requests.0),
                arrivals(&requests.1),
                "{name}: traffic"
            );
            assert_eq!(memory.summary.requests, http.summary.requests, "{name}");
            continue;
        }
        assert_eq!(
            read(&m, "summary.json"),
            http_summary,
            "{name}: summary.json"
        );
        let mut all_same = true;
        for trace in TRACES {
            let (left, right) = (read(&m, trace), read(&h, trace));
            if left == right {
                continue;
            }
            all_same = false;
            assert!(
                ROW_ORDER.contains(&name.as_str()),
                "{name}: {trace} differs between memory and http (see {} and {})",
                m.display(),
                h.display()
            );
            assert_eq!(
                sorted_lines(&left),
                sorted_lines(&right),
                "{name}: {trace} has other rows over http, not only another order"
            );
        }
        exact += usize::from(all_same);
    }
    // Most shipped scenarios are byte-identical: a regression in the wire shows here first.
    assert!(
        exact >= 16,
        "only {exact} scenarios are byte-identical over http"
    );
    let _ = std::fs::remove_dir_all(&base);
}

/// The shipped http scenario is its in-memory twin but for the name, description and
/// `transport`, and its golden summary is the twin's but for the name and `transport`.
#[test]
fn the_http_ci_scenario_is_its_memory_twin() {
    let ci = repo().join("scenarios/ci");
    let body = |file: &str| -> Vec<String> {
        read(&ci, file)
            .lines()
            .filter(|l| {
                !l.starts_with('#')
                    && !l.starts_with("name:")
                    && !l.starts_with("description:")
                    && !l.starts_with("transport:")
            })
            .map(str::to_string)
            .collect()
    };
    assert_eq!(body("stream-cuts.yaml"), body("stream-cuts-http.yaml"));
    assert!(read(&ci, "stream-cuts-http.yaml").contains("\ntransport: http\n"));
    let golden = |file: &str| -> Vec<String> {
        read(&ci, file)
            .lines()
            .filter(|l| !l.starts_with("  \"scenario\":") && !l.starts_with("  \"transport\":"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        golden("stream-cuts.golden.json"),
        golden("stream-cuts-http.golden.json")
    );
    assert!(read(&ci, "stream-cuts-http.golden.json").contains("\n  \"transport\": \"http\",\n"));
}

/// `routersim run --transport http` overrides the scenario's key and says so.
#[test]
fn run_takes_the_transport_flag() {
    let out = scratch_dir("run-transport-http");
    let report = out.join("r");
    let o = routersim(&[
        "run",
        "scenarios/ci/half-open-recovery.yaml",
        "--transport",
        "http",
        "--out",
        report.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(stdout.contains(", transport http\n"), "{stdout}");
    assert!(read(&report, "summary.json").contains("\n  \"transport\": \"http\",\n"));
    assert!(read(&report, "report.html").contains(" · transport <b>http</b>"));
    // The http twin back in memory: no transport in its summary.
    let o = routersim(&[
        "run",
        "scenarios/ci/stream-cuts-http.yaml",
        "--transport",
        "memory",
        "--out",
        report.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    assert!(!read(&report, "summary.json").contains("transport"));
    let o = routersim(&["run", "scenarios/ci/stream-cuts.yaml", "--transport", "tcp"]);
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&out);
}

/// The whole CI suite over http matches its goldens (which ignore `transport`).
#[test]
fn the_ci_suite_passes_its_goldens_over_http() {
    let out = scratch_dir("check-transport-http");
    let o = routersim(&[
        "check",
        "scenarios/ci",
        "--transport",
        "http",
        "--out",
        out.join("c").to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(stdout.contains(" passed, 0 failed, 0 error(s)"), "{stdout}");
    // Every scenario has a golden, and every one matched.
    let rows = stdout
        .lines()
        .filter(|l| l.starts_with("scenarios/ci/"))
        .count();
    assert!(rows >= 13, "{stdout}");
    assert_eq!(stdout.matches("  pass    match").count(), rows, "{stdout}");
    let _ = std::fs::remove_dir_all(&out);
}

/// A deployment the adapter cannot address is the scenario's mistake, said before any run.
#[test]
fn an_api_key_that_cannot_be_a_header_is_an_error_over_http_only() {
    let dir = scratch_dir("transport-bad-key");
    let file = dir.join("bad-key.yaml");
    std::fs::write(
        &file,
        "duration: 1s\ntransport: http\nrouter:\n  model_list:\n    - {model_name: m, \
         litellm_params: {model: openai/m, api_key: \"a\\nb\"}, model_info: {id: d}}\n\
         traffic:\n  - {at: 0s, model: m}\n",
    )
    .unwrap();
    let out = dir.join("r");
    let (file, out) = (file.to_str().unwrap(), out.to_str().unwrap());
    let o = routersim(&["run", file, "--out", out]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("bad-key.yaml: transport: http: model_list[0].litellm_params.api_key: "),
        "{stderr}"
    );
    assert!(!Path::new(out).exists(), "no report");
    let o = routersim(&["run", file, "--out", out, "--transport", "memory"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}
