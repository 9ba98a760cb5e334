//! A year of virtual time at one request an hour: memory follows the 8,760 requests, not the
//! 31.5 million seconds. Alone in its own process ([`alone`]), so the process's peak resident
//! set is this run's (plus the test harness). How fast it runs is a benchmark's business, not
//! this test's.

use std::path::PathBuf;

use routersim_sim::run::{RunOptions, run};
use routersim_sim::scenario::parse_scenario;
use routersim_suite::bench::peak_rss_kib;

use crate::alone::alone;

const YEAR: &str = r#"name: year
duration: 8760h
router:
  model_list:
    - {model_name: gpt-4o, litellm_params: {model: openai/gpt-4o}, model_info: {id: d1}}
traffic:
  - {model: gpt-4o, rate: 1/h, arrival: uniform}
"#;

/// The bound on the process's peak resident set.
const MAX_RSS_MIB: u64 = 50;

#[test]
fn a_year_at_one_request_an_hour_runs_in_under_50_mb() {
    alone(
        concat!(
            module_path!(),
            "::a_year_at_one_request_an_hour_runs_in_under_50_mb"
        ),
        run_a_year,
    );
}

fn run_a_year() {
    let scenario = parse_scenario(YEAR, std::path::Path::new("year.yaml")).expect("loads");
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("year-of-virtual-time");
    // The full report: traces, timeseries, plots and page.
    let report = run(
        &scenario,
        &RunOptions {
            seed: None,
            out_dir: Some(out.clone()),
            no_trace: false,
            recorder_thread: false,
        },
    )
    .expect("runs");
    assert_eq!(report.summary.requests, 8760);
    assert_eq!(report.summary.ok, 8760);

    // One row per busy second (an arrival and its end share a second), not one per second.
    let csv = std::fs::read_to_string(out.join("timeseries.csv")).expect("timeseries.csv");
    assert_eq!(csv.lines().count(), 1 + 8760, "{} bytes", csv.len());

    let peak_kib = peak_rss_kib().expect("Linux /proc/self/status");
    assert!(
        peak_kib < MAX_RSS_MIB * 1024,
        "peak RSS {:.1} MiB (bound {MAX_RSS_MIB} MiB)",
        peak_kib as f64 / 1024.0
    );
}
