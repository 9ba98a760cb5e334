//! `routersim bench`: how fast the harness simulates, against a floor.
//!
//! The issue's benchmark: one process runs a one-hour, 50 req/s scenario with three
//! deployments, 10 % 503s and cooldowns on, through the real router and the full recorder,
//! then a "floor" run with the same arrivals and latencies through a pass-through that only
//! sleeps the latency and records it. Both report simulated requests per wall-second; the
//! targets are ≥ 250,000 req/s with traces on and ≥ 0.4 × the floor on tokio's paused runtime
//! (the floor those targets were set against). Each runs on both runtimes (`--runtime`; see
//! `routersim_runtime`): the harness on the virtual-time executor is the figure users get, and
//! issue 17's further targets are ≥ 1.0 × the tokio floor and ≥ 0.5 × the executor's own floor
//! (much faster than tokio's: about 3×).
//!
//! Wall time is read with `std::time::Instant` here, around the runs, never inside them.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use hdrhistogram::Histogram;
use rand::RngExt;
use routersim_mock_providers::duration::format_duration;
use routersim_mock_providers::rng::seeded_rng;
use routersim_mock_providers::spec::LatencySpec;

use routersim_runtime::time::{now, sleep, sleep_until};
use routersim_runtime::{RuntimeError, RuntimeKind, spawn_local};

use routersim_sim::run::{RunError, RunOptions, RunReport, run, spare_core};
use routersim_sim::scenario::{Scenario, parse_scenario};
use routersim_sim::traffic::Arrivals;
use routersim_sim::transport::Transport;

/// What to benchmark. Defaults: the issue's 1 h at 50 req/s, traces on, `simple-shuffle`.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Virtual duration of the traffic.
    pub duration: Duration,
    /// Arrivals per second.
    pub rate: f64,
    /// `router_settings.routing_strategy`.
    pub strategy: String,
    /// `router_settings.profile` (`--profile`); none: the documented rules.
    pub profile: Option<String>,
    /// Share of streamed requests (`--stream-share`; streams pace their tokens on the clock).
    pub stream_share: f64,
    /// Write `requests.csv`/`attempts.csv`.
    pub trace: bool,
    /// Where the benchmark run writes its report.
    pub out_dir: PathBuf,
    /// Runs of each kind; the fastest of each is reported (wall time is noisy on a shared
    /// machine, and the simulated work is identical every time).
    pub repeat: u32,
    /// The harness run's transport; with `http` the same workload also runs in `memory`, for
    /// the ratio.
    pub transport: Transport,
    /// The harness's runtime (`--runtime`); the other runtime's harness and both floors run
    /// beside it, for the comparison, unless `compare` is off.
    pub runtime: RuntimeKind,
    /// Also time the other runtime's harness and floor.
    pub compare: bool,
    /// Router replicas (`--replicas`; `router.replicas`, round robin, per-process state).
    pub replicas: usize,
}

impl Default for BenchOptions {
    fn default() -> Self {
        Self {
            duration: Duration::from_secs(3600),
            rate: 50.0,
            strategy: "simple-shuffle".into(),
            profile: None,
            stream_share: 0.0,
            trace: true,
            out_dir: PathBuf::from("reports/bench"),
            repeat: 5,
            transport: Transport::Memory,
            runtime: RuntimeKind::Virtual,
            compare: true,
            replicas: 1,
        }
    }
}

/// The figures `routersim bench` prints.
#[derive(Clone, Debug)]
pub struct BenchResult {
    /// Requests simulated (each run).
    pub requests: u64,
    /// Wall seconds of the full simulation.
    pub sim_wall_secs: f64,
    /// Wall seconds of the floor on the same runtime.
    pub floor_wall_secs: f64,
    /// The harness's runtime.
    pub runtime: RuntimeKind,
    /// With `compare`: wall seconds of the harness and of the floor on the other runtime.
    pub other: Option<OtherRuntime>,
    /// Peak resident memory of the process after the first harness and floor runs, KiB (Linux only).
    pub peak_rss_kib: Option<u64>,
    /// With `transport: http`: wall seconds of the same harness run in `memory`.
    pub memory_wall_secs: Option<f64>,
    /// The full run's report.
    pub report: RunReport,
    /// The median wall seconds of each kind over the `repeat` runs (the figures above are the
    /// fastest): a quiet machine's best and a shared machine's typical.
    pub medians: Medians,
}

/// Median wall seconds of each kind of run.
#[derive(Clone, Copy, Debug, Default)]
pub struct Medians {
    /// Runs of each kind.
    pub runs: u32,
    /// The harness.
    pub sim_wall_secs: f64,
    /// The floor on the harness's runtime.
    pub floor_wall_secs: f64,
    /// The harness and the floor on the other runtime.
    pub other: Option<(f64, f64)>,
}

/// The median of `samples` (the mean of the middle two for an even count; 0 when empty).
pub fn median(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// The same harness and floor on the other runtime.
#[derive(Clone, Copy, Debug)]
pub struct OtherRuntime {
    /// Which runtime.
    pub runtime: RuntimeKind,
    /// Wall seconds of the full harness.
    pub sim_wall_secs: f64,
    /// Wall seconds of the floor.
    pub floor_wall_secs: f64,
}

impl BenchResult {
    /// The tokio floor's rate: what the harness is measured against across runtimes.
    pub fn tokio_floor_rate(&self) -> f64 {
        let secs = match (self.runtime, self.other) {
            (RuntimeKind::Tokio, _) | (_, None) => self.floor_wall_secs,
            (RuntimeKind::Virtual, Some(other)) => other.floor_wall_secs,
        };
        self.requests as f64 / secs.max(1e-9)
    }

    /// Simulated requests per wall-second of `secs`.
    pub fn rate_of(&self, secs: f64) -> f64 {
        self.requests as f64 / secs.max(1e-9)
    }

    /// Simulated requests per wall-second, full harness.
    pub fn sim_rate(&self) -> f64 {
        self.requests as f64 / self.sim_wall_secs.max(1e-9)
    }

    /// Simulated requests per wall-second, floor.
    pub fn floor_rate(&self) -> f64 {
        self.requests as f64 / self.floor_wall_secs.max(1e-9)
    }

    /// Full harness ÷ floor.
    pub fn ratio(&self) -> f64 {
        self.sim_rate() / self.floor_rate().max(1e-9)
    }

    /// With `transport: http`: simulated requests per wall-second of the `memory` run.
    pub fn memory_rate(&self) -> Option<f64> {
        self.memory_wall_secs
            .map(|secs| self.requests as f64 / secs.max(1e-9))
    }

    /// With `transport: http`: the harness's rate ÷ the `memory` run's (below 1: the wire's
    /// cost).
    pub fn transport_ratio(&self) -> Option<f64> {
        self.memory_rate()
            .map(|memory| self.sim_rate() / memory.max(1e-9))
    }
}

/// Gap between streamed tokens in the benchmark.
pub const BENCH_INTER_TOKEN: Duration = Duration::from_millis(20);
/// Streamed answer lengths in the benchmark (after the first token).
pub const BENCH_OUTPUT_TOKENS: std::ops::Range<u32> = 49..300;

/// The benchmark's latency model (each deployment's).
pub fn bench_latency() -> LatencySpec {
    LatencySpec::LogNormal {
        p50: Duration::from_millis(800),
        p99: Duration::from_secs(4),
    }
}

/// The benchmark scenario as YAML.
pub fn bench_scenario_yaml(options: &BenchOptions) -> String {
    let duration = format_duration(options.duration);
    format!(
        r#"name: bench
description: three deployments, 10 % 503s, cooldowns on
seed: 1
duration: {duration}
router:{replicas}
  model_list:
    - {{model_name: gpt-4o, litellm_params: {{model: openai/gpt-4o}}, model_info: {{id: d1}}}}
    - {{model_name: gpt-4o, litellm_params: {{model: azure/gpt-4o}}, model_info: {{id: d2}}}}
    - {{model_name: gpt-4o, litellm_params: {{model: azure/gpt-4o-eu}}, model_info: {{id: d3}}}}
  router_settings:
    routing_strategy: {strategy}
    num_retries: 2
    allowed_fails: 5
    cooldown_time: 2{profile}
providers:
  d1: {{latency: {{p50: 800ms, p99: 4s}}, inter_token: 20ms, output_tokens: 50..300}}
  d2: {{latency: {{p50: 800ms, p99: 4s}}, inter_token: 20ms, output_tokens: 50..300}}
  d3: {{latency: {{p50: 800ms, p99: 4s}}, inter_token: 20ms, output_tokens: 50..300}}
faults:
  - {{model_group: gpt-4o, error: service_unavailable, probability: 0.1}}
traffic:
  - {{model: gpt-4o, rate: {rate}/s, arrival: poisson, stream: {share}}}
"#,
        strategy = options.strategy,
        profile = options
            .profile
            .as_ref()
            .map_or(String::new(), |p| format!("\n    profile: {p}")),
        rate = options.rate,
        share = options.stream_share,
        replicas = if options.replicas > 1 {
            format!("\n  replicas: {}", options.replicas)
        } else {
            String::new()
        },
    )
}

/// Peak resident set size of this process, from `/proc/self/status` (`VmHWM`).
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Resets this process's peak resident set (`VmHWM`) to its current size (Linux's
/// `/proc/self/clear_refs`, value 5), so a later [`peak_rss_kib`] is the peak of what ran since:
/// a measurement in a process that has run something bigger before. `false` where unsupported.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The floor: the same arrivals, each a task that only sleeps a latency drawn from the same
/// model and records it. A streamed arrival sleeps as the fake provider paces it — to its first
/// token, then to its last (`50..300` tokens, 20 ms apart) — so the floor has the same timers
/// as the traffic itself and only the router and the reports are missing. Returns the number
/// of requests.
pub fn run_floor(
    traffic_yaml_scenario: &routersim_sim::scenario::Scenario,
    seed: u64,
    runtime: RuntimeKind,
) -> Result<u64, RunError> {
    let latency = bench_latency();
    let hist = Rc::new(RefCell::new(Histogram::<u64>::new(3).map_err(|e| {
        RunError::Runtime(RuntimeError::Build(std::io::Error::other(e.to_string())))
    })?));
    let count = runtime.block_on(async {
        let start = now();
        let mut rng = seeded_rng(seed, "floor/latency");
        let mut count = 0u64;
        for arrival in Arrivals::new(&traffic_yaml_scenario.traffic, seed) {
            sleep_until(start + arrival.at).await;
            let wait = latency.sample(&mut rng);
            let rest = arrival
                .request
                .stream
                .then(|| BENCH_INTER_TOKEN * rng.random_range(BENCH_OUTPUT_TOKENS));
            let hist = hist.clone();
            count += 1;
            drop(spawn_local(async move {
                let began = now();
                sleep(wait).await;
                if let Some(rest) = rest {
                    sleep(rest).await;
                }
                let micros = now().saturating_duration_since(began).as_micros() as u64;
                let _ = hist.borrow_mut().record(micros.max(1));
            }));
        }
        // Let every sleeper finish.
        sleep(Duration::from_secs(24 * 3600)).await;
        count
    })?;
    Ok(count)
}

/// Runs the benchmark: the full harness, then the floor (with `transport: http`, the harness
/// in `memory` first, then over the wire).
pub fn run_bench(options: &BenchOptions) -> Result<BenchResult, RunError> {
    let yaml = bench_scenario_yaml(options);
    let mut scenario = parse_scenario(&yaml, Path::new("<bench>"))?;
    scenario.transport = options.transport;
    let memory = (options.transport != Transport::Memory).then(|| {
        let mut memory = scenario.clone();
        memory.transport = Transport::Memory;
        memory
    });
    scenario.runtime = options.runtime;
    let other_kind = match options.runtime {
        RuntimeKind::Virtual => RuntimeKind::Tokio,
        RuntimeKind::Tokio => RuntimeKind::Virtual,
    };
    let other_scenario = options.compare.then(|| {
        let mut other = scenario.clone();
        other.runtime = other_kind;
        other
    });
    let run_options = RunOptions {
        seed: None,
        out_dir: Some(options.out_dir.clone()),
        no_trace: !options.trace,
        recorder_thread: spare_core(),
    };
    let time_run = |scenario: &Scenario| -> Result<(RunReport, f64), RunError> {
        let began = std::time::Instant::now();
        let report = run(scenario, &run_options)?;
        Ok((report, began.elapsed().as_secs_f64()))
    };
    let time_floor = |kind: RuntimeKind| -> Result<f64, RunError> {
        let began = std::time::Instant::now();
        run_floor(&scenario, scenario.seed, kind)?;
        Ok(began.elapsed().as_secs_f64())
    };
    // One timed set of runs: the other runtime's harness and floor (its report is then
    // replaced), (the harness in memory,) the full harness, and its floor.
    type TimedSet = (RunReport, f64, f64, Option<f64>, Option<OtherRuntime>);
    let timed = || -> Result<TimedSet, RunError> {
        let other = match &other_scenario {
            Some(other) => Some(OtherRuntime {
                runtime: other_kind,
                sim_wall_secs: time_run(other)?.1,
                floor_wall_secs: time_floor(other_kind)?,
            }),
            None => None,
        };
        let memory_secs = match &memory {
            Some(memory) => Some(time_run(memory)?.1),
            None => None,
        };
        let (report, sim) = time_run(&scenario)?;
        let floor = time_floor(options.runtime)?;
        Ok((report, sim, floor, memory_secs, other))
    };
    let (mut report, sim, floor, mut memory_wall_secs, first_other) = timed()?;
    let peak = peak_rss_kib();
    let (mut sims, mut floors) = (vec![sim], vec![floor]);
    let mut others: Vec<OtherRuntime> = first_other.into_iter().collect();
    for _ in 1..options.repeat.max(1) {
        let (this, sim, floor, memory, this_other) = timed()?;
        report = this;
        sims.push(sim);
        floors.push(floor);
        memory_wall_secs = memory_wall_secs.zip(memory).map(|(a, b)| a.min(b));
        others.extend(this_other);
    }
    let fastest = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let other_sims: Vec<f64> = others.iter().map(|o| o.sim_wall_secs).collect();
    let other_floors: Vec<f64> = others.iter().map(|o| o.floor_wall_secs).collect();
    let other = others.first().map(|o| OtherRuntime {
        runtime: o.runtime,
        sim_wall_secs: fastest(&other_sims),
        floor_wall_secs: fastest(&other_floors),
    });
    let medians = Medians {
        runs: sims.len() as u32,
        sim_wall_secs: median(&sims),
        floor_wall_secs: median(&floors),
        other: other.map(|_| (median(&other_sims), median(&other_floors))),
    };
    let (sim_wall_secs, floor_wall_secs) = (fastest(&sims), fastest(&floors));
    Ok(BenchResult {
        requests: report.summary.requests,
        sim_wall_secs,
        floor_wall_secs,
        runtime: options.runtime,
        other,
        peak_rss_kib: peak,
        memory_wall_secs,
        report,
        medians,
    })
}

/// `bench --profile all`: one profile's figures, medians of the `repeat` rounds.
#[derive(Clone, Debug)]
pub struct ProfileRatios {
    /// The profile's name (`none`: no profile, the documented rules).
    pub profile: String,
    /// Requests simulated (each run).
    pub requests: u64,
    /// Median wall seconds of the harness on the virtual-time executor, traces on.
    pub traced_secs: f64,
    /// Median wall seconds of the same harness with `--trace none`.
    pub untraced_secs: f64,
    /// Median wall seconds of the tokio floor (the same traffic, no router, no reports).
    pub tokio_floor_secs: f64,
}

impl ProfileRatios {
    /// Median tokio floor ÷ median harness, traces on (above 1: the harness is faster).
    pub fn traced_ratio(&self) -> f64 {
        self.tokio_floor_secs / self.traced_secs.max(1e-9)
    }

    /// Median tokio floor ÷ median harness, `--trace none`.
    pub fn untraced_ratio(&self) -> f64 {
        self.tokio_floor_secs / self.untraced_secs.max(1e-9)
    }
}

/// The profiles `bench --profile all` times: none (the documented rules), then every profile
/// in the engine's table.
pub fn every_profile() -> Vec<Option<&'static str>> {
    std::iter::once(None)
        .chain(
            routersim_engine::profile::PROFILES
                .iter()
                .map(|p| Some(p.name())),
        )
        .collect()
}

/// `bench --profile all`: for every profile of [`every_profile`], `options.repeat` rounds of
/// the tokio floor, the harness (virtual, in memory) traces on and with `--trace none`, side by
/// side (each round's three runs one after the other, so a shared machine's load falls on all
/// three alike); each figure the median of its rounds. `options.profile`, `trace`, `runtime`,
/// `transport`, `compare` and `replicas` are not read (every run is the virtual harness in
/// memory, one router).
pub fn run_bench_profiles(options: &BenchOptions) -> Result<Vec<ProfileRatios>, RunError> {
    let mut rows = Vec::new();
    for profile in every_profile() {
        let profiled = BenchOptions {
            profile: profile.map(str::to_string),
            replicas: 1,
            ..options.clone()
        };
        let mut scenario = parse_scenario(&bench_scenario_yaml(&profiled), Path::new("<bench>"))?;
        scenario.transport = Transport::Memory;
        scenario.runtime = RuntimeKind::Virtual;
        let timed = |no_trace: bool| -> Result<(u64, f64), RunError> {
            let run_options = RunOptions {
                seed: None,
                out_dir: Some(options.out_dir.clone()),
                no_trace,
                recorder_thread: spare_core(),
            };
            let began = std::time::Instant::now();
            let report = run(&scenario, &run_options)?;
            Ok((report.summary.requests, began.elapsed().as_secs_f64()))
        };
        let (mut floors, mut traced, mut untraced) = (Vec::new(), Vec::new(), Vec::new());
        let mut requests = 0;
        for _ in 0..options.repeat.max(1) {
            let began = std::time::Instant::now();
            run_floor(&scenario, scenario.seed, RuntimeKind::Tokio)?;
            floors.push(began.elapsed().as_secs_f64());
            let (n, secs) = timed(false)?;
            traced.push(secs);
            untraced.push(timed(true)?.1);
            requests = n;
        }
        rows.push(ProfileRatios {
            profile: profile.unwrap_or("none").to_string(),
            requests,
            traced_secs: median(&traced),
            untraced_secs: median(&untraced),
            tokio_floor_secs: median(&floors),
        });
    }
    Ok(rows)
}
