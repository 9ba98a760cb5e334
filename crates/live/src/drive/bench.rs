//! `routersim bench --drive`: how many requests per second `drive` sends and reads, straight
//! at an in-process `serve` of a no-fault scenario (one deployment answering in 0 ms), over
//! loopback.
//!
//! `serve` runs on its own thread (its single-threaded runtime, as `routersim serve` runs it),
//! drive on the calling thread, exactly as `routersim drive --providers` runs (its whole
//! report written, then deleted). Each point is one drive run at a fixed rate for a few
//! seconds (bounded: at most `rate × seconds` requests): the rate achieved is the requests
//! answered well divided by the run's wall time, so a generator falling behind its schedule
//! or a target answering late both show.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use routersim_mock_providers::wire::CallLog;
use routersim_sim::scenario::{Scenario, parse_scenario};

use super::error::DriveError;
use super::options::DriveOptions;
use crate::serve::{ServeError, ServeOptions, bind_endpoints, start_serving};

/// The rate the issue holds drive to.
pub const HEADLINE_RATE: u64 = 20_000;

/// How hard to push.
#[derive(Clone, Debug)]
pub struct DriveBenchOptions {
    /// Each rate tried once, in order (requests per second).
    pub rates: Vec<u64>,
    /// Runs at [`HEADLINE_RATE`] (their median is the figure).
    pub repeat: usize,
    /// Each run's length.
    pub seconds: Duration,
    /// Where the runs' reports are written (and deleted).
    pub out: PathBuf,
    /// drive's `--max-connections`.
    pub max_connections: usize,
}

/// One drive run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DrivePoint {
    /// The rate asked for.
    pub rate: u64,
    /// Requests answered.
    pub requests: u64,
    /// Of those, failed.
    pub failed: u64,
    /// Requests not sent (the OS refused a socket).
    pub not_sent: u64,
    /// Requests answered well per second of the run's wall time.
    pub achieved: f64,
    /// drive's connection budget.
    pub budget: u64,
    /// Connections it opened.
    pub opened: u64,
    /// Requests that waited for a connection.
    pub waits: u64,
    /// The end-to-end p99 latency (ms).
    pub p99_ms: f64,
}

/// The scenario of a point: one deployment answering at once, `rate` requests a second for
/// `seconds`, evenly spaced.
fn scenario(rate: u64, seconds: Duration) -> Result<Scenario, DriveError> {
    let ms = seconds.as_millis();
    let text = format!(
        "name: drive-bench
duration: {ms}ms
router:
  model_list:
    - {{model_name: bench, litellm_params: {{model: openai/bench}}, model_info: {{id: zero}}}}
providers:
  zero: {{latency: 0ms, output_tokens: 20}}
traffic:
  - {{model: bench, rate: {rate}/s, to: {ms}ms, arrival: uniform}}
"
    );
    parse_scenario(&text, Path::new("drive-bench.yaml")).map_err(|e| DriveError::Url(e.to_string()))
}

/// A serve thread: its address, what stops it, the thread.
type ServeThread = (
    SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    std::thread::JoinHandle<Result<(), ServeError>>,
);

/// Runs `serve` for `scenario` on a thread of its own until `stop` is sent; its address.
fn serve_thread(scenario: Scenario) -> Result<ServeThread, DriveError> {
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::spawn(move || -> Result<(), ServeError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let local = tokio::task::LocalSet::new();
        local.block_on(&runtime, async move {
            let options = ServeOptions {
                listen: SocketAddr::from(([127, 0, 0, 1], 0)),
                allow_remote: false,
                port_per_deployment: false,
                out: None,
                duration: None,
            };
            let bound = bind_endpoints(&scenario, &options)?;
            let _ = addr_tx.send(bound.endpoints.addr);
            let running = start_serving(&scenario, bound, CallLog::disabled())?;
            let _ = stop_rx.await;
            running.stop();
            Ok(())
        })
    });
    let addr = addr_rx
        .recv()
        .map_err(|_| DriveError::Url("the serve thread did not start".into()))?;
    Ok((addr, stop_tx, thread))
}

/// One drive run at `rate`.
pub fn run_point(rate: u64, options: &DriveBenchOptions) -> Result<DrivePoint, DriveError> {
    let scenario = scenario(rate, options.seconds)?;
    let (addr, stop, thread) = serve_thread(scenario.clone())?;
    let out = options.out.join(format!("drive-{rate}"));
    let drive_options = DriveOptions {
        target: format!("http://{addr}/d/zero"),
        replicas: Vec::new(),
        api_key: None,
        headers: Vec::new(),
        out: Some(out.clone()),
        providers: Some(format!("http://{addr}")),
        max_rps: None,
        max_requests: None,
        allow_remote: false,
        drain: Duration::from_secs(10),
        wait_for_target: Some(Duration::from_secs(5)),
        progress: false,
        metrics_addr: None,
        max_connections: options.max_connections,
    };
    let report = super::drive(&scenario, &drive_options, &mut |_| Ok(Vec::new()));
    let _ = stop.send(());
    let served = thread.join();
    let _ = std::fs::remove_dir_all(&out);
    let report = report?;
    match served {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(e.into()),
        Err(_) => return Err(DriveError::Url("the serve thread panicked".into())),
    }
    let s = &report.summary;
    let live = s.live.clone().unwrap_or_default();
    let wall = (live.wall_clock_ms / 1e3).max(1e-9);
    Ok(DrivePoint {
        rate,
        requests: s.requests,
        failed: s.failed,
        not_sent: live.not_sent,
        achieved: s.ok as f64 / wall,
        budget: live.max_connections,
        opened: live.connections_opened,
        waits: live.connection_waits,
        p99_ms: s.latency_ms.p99,
    })
}

/// The median of the achieved rates (the lower middle one of an even count).
pub fn median_achieved(points: &[DrivePoint]) -> f64 {
    let mut rates: Vec<f64> = points.iter().map(|p| p.achieved).collect();
    rates.sort_by(f64::total_cmp);
    rates
        .get(rates.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_the_middle_run() {
        let at = |achieved| DrivePoint {
            achieved,
            ..DrivePoint::default()
        };
        let runs = [at(5.0), at(1.0), at(4.0), at(2.0), at(3.0)];
        assert_eq!(median_achieved(&runs), 3.0);
    }

    #[test]
    fn the_bench_scenario_parses() {
        let s = scenario(20_000, Duration::from_secs(3)).unwrap();
        assert_eq!(s.router.deployments.len(), 1);
        assert_eq!(s.duration, Duration::from_secs(3));
    }
}
