//! `routersim bench --in-flight N`: what one in-flight request costs in memory.
//!
//! N requests arrive at the same instant and each waits an hour on its provider, so at the
//! end of that instant all N are in flight at once: their tasks, the router's per-request
//! state, the provider call and its timer, the runtime's queue entry. The figure is the rise
//! of the process's peak resident set over its resident set before the run, divided by N
//! (traces off, no plots: nothing else grows with N). It is what
//! [`routersim_sim::traffic::BYTES_PER_IN_FLIGHT`], the budget behind the in-flight limit, must cover.
//!
//! Run it in a fresh process (the command does): memory a previous run freed would be
//! reused and hide part of the cost.

use std::path::Path;

use crate::bench::peak_rss_kib;
use routersim_sim::run::{Rendering, RunError, RunOptions, run_with_rendering};
use routersim_sim::scenario::parse_scenario;

/// What `routersim bench --in-flight N` prints.
#[derive(Clone, Debug)]
pub struct Footprint {
    /// Requests in flight at once.
    pub requests: u64,
    /// Of which streamed.
    pub streamed: u64,
    /// Resident set before the run, KiB.
    pub before_kib: u64,
    /// Peak resident set after it, KiB.
    pub peak_kib: u64,
}

impl Footprint {
    /// (peak − before) / requests, in bytes.
    pub fn bytes_per_request(&self) -> f64 {
        self.peak_kib.saturating_sub(self.before_kib) as f64 * 1024.0 / self.requests.max(1) as f64
    }
}

/// The measuring scenario: `requests` at 0 s on one deployment answering in an hour; the
/// `streamed` ones are streams whose first token comes after that hour.
pub fn footprint_scenario_yaml(requests: u32, streamed: u32) -> String {
    let streamed = streamed.min(requests);
    let mut traffic = String::new();
    for (count, stream) in [(requests - streamed, false), (streamed, true)] {
        if count > 0 {
            traffic.push_str(&format!(
                "  - {{at: 0s, model: gpt-4o, count: {count}, stream: {stream}}}\n"
            ));
        }
    }
    format!(
        r#"name: in-flight
description: every request in flight at once
duration: 1s
router:
  model_list:
    - {{model_name: gpt-4o, litellm_params: {{model: openai/gpt-4o}}, model_info: {{id: d1}}}}
providers:
  d1: {{latency: 1h}}
traffic:
{traffic}"#
    )
}

/// `VmRSS` of this process, KiB (Linux only).
fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Runs `requests` requests (`streamed` of them streams) all in flight at once, writing the
/// data files (no traces, no plots) into `out_dir`. `None` off Linux.
pub fn measure_in_flight(
    requests: u32,
    streamed: u32,
    out_dir: &Path,
) -> Result<Option<Footprint>, RunError> {
    let yaml = footprint_scenario_yaml(requests, streamed);
    let scenario = parse_scenario(&yaml, Path::new("<bench --in-flight>"))?;
    let options = RunOptions {
        seed: None,
        out_dir: Some(out_dir.to_path_buf()),
        no_trace: true,
        recorder_thread: false,
    };
    // The peak must be this run's, not that of whatever ran before in this process.
    crate::bench::reset_peak_rss();
    let Some(before_kib) = rss_kib() else {
        return Ok(None);
    };
    let report = run_with_rendering(&scenario, &options, Rendering::DataOnly)?;
    Ok(peak_rss_kib().map(|peak_kib| Footprint {
        requests: report.summary.requests,
        streamed: u64::from(streamed.min(requests)),
        before_kib,
        peak_kib,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use routersim_engine::Router;
    use routersim_engine::request::Request;
    use routersim_mock_providers::provider::FakeProviders;

    /// The router's state for one request in flight (walk, group visit, retry loop, attempt,
    /// the provider's call and its timer) is what each request's task boxes: most of the
    /// ~0.9 KB `bench --in-flight` measures (beside the request itself, tokio's 128-byte task
    /// cell and the allocator's overhead). A step that starts keeping more across an await
    /// shows here first.
    #[test]
    fn the_state_of_a_request_in_flight_stays_small() -> Result<(), Box<dyn std::error::Error>> {
        let scenario = parse_scenario(&footprint_scenario_yaml(1, 0), Path::new("<test>"))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()?;
        let _inside = runtime.enter();
        let providers = FakeProviders::new(
            &scenario.router,
            &scenario.providers,
            &scenario.faults,
            1,
            scenario.epoch_unix_ms,
            tokio::time::Instant::now(),
        )?;
        let router = Router::from_config(scenario.router.clone(), providers);
        let request = Request::new(1, "gpt-4o");
        let bytes = std::mem::size_of_val(&router.completion_of(&request));
        assert!(
            bytes <= 640,
            "the router keeps {bytes} bytes per request in flight"
        );
        Ok(())
    }
}
