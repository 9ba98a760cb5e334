//! The stated limits from the command line: inputs past them are exit 2 naming the key, and
//! `bench --in-flight` measures the memory the in-flight limit is counted in.

use crate::common::{routersim, scratch_dir};

/// Writes a one-deployment scenario with `providers` and `traffic` (line 6 on) and runs it.
fn run_scenario(name: &str, providers: &str, traffic: &str) -> std::process::Output {
    let dir = scratch_dir(name);
    let file = dir.join(format!("{name}.yaml"));
    std::fs::write(
        &file,
        format!(
            "name: {name}\nduration: 1s\nrouter:\n  model_list:\n    - {{model_name: gpt, litellm_params: {{model: openai/gpt}}, model_info: {{id: d1}}}}\n{providers}traffic:\n{traffic}"
        ),
    )
    .expect("temp dir is writable");
    let out = dir.join("report");
    routersim(&[
        "run",
        &file.to_string_lossy(),
        "--out",
        &out.to_string_lossy(),
    ])
}

#[test]
fn a_count_that_cannot_be_in_flight_is_exit_2_with_the_arithmetic() {
    let output = run_scenario("count", "", "  - {at: 0s, model: gpt, count: 4294967295}\n");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "count.yaml:7:33: traffic[0].count: 4,294,967,295 requests at 0s would be in flight \
             at once, ~8.0 TiB at 2 KiB each; at most 2,000,000 can be (~3.8 GiB)"
        ),
        "{stderr}"
    );
}

#[test]
fn a_latency_past_ten_years_is_exit_2_naming_the_key() {
    let output = run_scenario(
        "latency",
        "providers:\n  d1: {latency: 100000h}\n",
        "  - {at: 0s, model: gpt}\n",
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "latency.yaml:7:17: providers.d1.latency: 100000h is more than the longest \
             duration routersim serves (87600h, 10 years)"
        ),
        "{stderr}"
    );
}

#[test]
fn bench_in_flight_prints_the_bytes_per_request() {
    let out = scratch_dir("bench-in-flight");
    let output = routersim(&[
        "bench",
        "--in-flight",
        "20000",
        "--out",
        &out.to_string_lossy(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("in flight at once:      20000 requests (0 streamed)"),
        "{stdout}"
    );
    let bytes: f64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("per in-flight request:"))
        .and_then(|v| v.trim().trim_end_matches("bytes").trim().parse().ok())
        .expect("a figure");
    // A real figure: more than nothing (a request in flight holds at least its future, the
    // provider's call and a timer, hundreds of bytes), and within what the in-flight limit's
    // arithmetic counts each request at.
    let limit = routersim_sim::traffic::BYTES_PER_IN_FLIGHT as f64;
    assert!(
        bytes > 200.0 && bytes <= limit,
        "{bytes} bytes (limit counts {limit}): {stdout}"
    );

    // The traffic knobs of the speed benchmark do nothing here: refused, not ignored.
    let output = routersim(&["bench", "--in-flight", "100", "--rate", "5"]);
    assert_eq!(output.status.code(), Some(2));
}
