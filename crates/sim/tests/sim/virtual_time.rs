//! Virtual time costs nothing: a request that takes years and a stream that stalls for years
//! run in bounded memory and time, and what is longer than the longest duration routersim
//! serves (`MAX_DURATION`, 10 years) is refused at load, naming the file, line and key.

use std::path::{Path, PathBuf};
use std::time::Duration;

use routersim_engine::config::MAX_DURATION;
use routersim_sim::run::{Rendering, RunOptions, run_with_rendering};
use routersim_sim::scenario::parse_scenario;

/// One deployment `d1` with `providers` and `traffic` as given (lines 1–5 are the preamble).
fn scenario(settings: &str, providers: &str, traffic: &str) -> String {
    format!(
        "name: t\nduration: 1s\nrouter:\n  model_list:\n    - {{model_name: gpt, litellm_params: {{model: openai/gpt}}, model_info: {{id: d1}}}}\n{settings}{providers}{traffic}"
    )
}

fn out_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("virtual-time-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Runs `yaml` without traces or plots; returns the summary and `timeseries.csv`.
fn run(name: &str, yaml: &str) -> (routersim_report::Summary, String) {
    let scenario = parse_scenario(yaml, Path::new("t.yaml")).expect("loads");
    let out = out_dir(name);
    let report = run_with_rendering(
        &scenario,
        &RunOptions {
            seed: None,
            out_dir: Some(out.clone()),
            no_trace: true,
            recorder_thread: false,
        },
        Rendering::DataOnly,
    )
    .expect("runs");
    let csv = std::fs::read_to_string(out.join("timeseries.csv")).expect("timeseries.csv");
    (report.summary, csv)
}

fn load_error(yaml: &str) -> String {
    parse_scenario(yaml, Path::new("t.yaml"))
        .expect_err("should be refused")
        .to_string()
}

#[test]
fn the_longest_duration_is_ten_years() {
    assert_eq!(MAX_DURATION, Duration::from_secs(87_600 * 3600));
}

#[test]
fn the_paused_clock_sleeps_the_longest_duration_exactly() {
    // Beyond tokio's timer wheel (2^36 ms, about 2.2 years) a timer is re-filed each time the
    // wheel turns; it must still fire at its exact instant.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("runtime");
    for d in [
        Duration::from_millis(1 << 36) + Duration::from_millis(1),
        MAX_DURATION,
        MAX_DURATION * 3,
    ] {
        let slept = runtime.block_on(async {
            let start = tokio::time::Instant::now();
            tokio::time::sleep(d).await;
            start.elapsed()
        });
        assert_eq!(slept, d);
    }
}

#[test]
fn a_request_of_the_longest_latency_runs_in_a_few_rows() {
    let yaml = scenario(
        "",
        "providers:\n  d1: {latency: 87600h}\n",
        "traffic:\n  - {at: 0s, model: gpt}\n",
    );
    let (summary, csv) = run("longest-latency", &yaml);
    assert_eq!(summary.ok, 1);
    assert_eq!(summary.latency_ms.max, 87_600.0 * 3_600_000.0);
    let last = 87_600 * 3600;
    assert_eq!(
        csv,
        format!(
            "second,arrivals,ok,failed,retries,fallbacks,deployments_cooling,deployments_half_open,\
             p50_ms,p90_ms,p99_ms,continuations\n\
             0,1,0,0,0,0,0,0,,,,0\n{last},0,1,0,0,0,0,0,{ms}.000,{ms}.000,{ms}.000,0\n",
            ms = 87_600_u64 * 3_600_000
        )
    );
}

#[test]
fn a_stall_of_ten_years_runs_in_a_few_rows() {
    let yaml = scenario(
        "",
        "providers:\n  d1: {latency: 1s, inter_token: 1s, output_tokens: 10, script: [{stream_stall: {after_tokens: 5, for: 87600h}}]}\n",
        "traffic:\n  - {at: 0s, model: gpt, stream: true}\n",
    );
    let (summary, csv) = run("longest-stall", &yaml);
    assert_eq!(summary.ok, 1);
    assert!(summary.latency_ms.max > 87_600.0 * 3_600_000.0);
    assert_eq!(csv.lines().count(), 3, "{csv}");
}

#[test]
fn durations_past_ten_years_are_refused_naming_the_key() {
    let too_long = "more than the longest duration routersim serves (87600h, 10 years)";
    for (yaml, place) in [
        (
            scenario("", "providers:\n  d1: {latency: 100000h}\n", ""),
            "t.yaml:7:17: providers.d1.latency",
        ),
        (
            scenario(
                "",
                "providers:\n  d1: {script: [{stream_stall: {after_tokens: 5, for: 999999h}}]}\n",
                "",
            ),
            "t.yaml:7:55: providers.d1.script[0].stream_stall.for",
        ),
        (
            scenario(
                "",
                "providers:\n  d1: {latency: {p50: 1s, p99: 87601h}}\n",
                "",
            ),
            "t.yaml:7:32: providers.d1.latency.p99",
        ),
        (
            scenario(
                "faults:\n  - {deployment: d1, from: 0s, to: 100000h, error: timeout}\n",
                "",
                "",
            ),
            "t.yaml:7:36: faults[0].to",
        ),
    ] {
        let e = load_error(&yaml);
        assert!(e.starts_with(place), "{e}\nexpected at {place}");
        assert!(e.contains(too_long), "{e}");
    }
    let e = load_error(&scenario("  router_settings: {timeout: 1e19}\n", "", ""));
    assert!(e.contains("router_settings.timeout"), "{e}");
    assert!(e.contains("10 years"), "{e}");
    let e = load_error(&scenario("", "", "").replace("duration: 1s", "duration: 87601h"));
    assert!(e.starts_with("t.yaml:2:11: duration"), "{e}");
    assert!(e.contains(too_long), "{e}");
}
