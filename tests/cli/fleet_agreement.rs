//! The simulated shared store and the real one agree on a shared scenario: three router
//! replicas sharing their cooldowns, one of two deployments answering 429 with Retry-After 2 s
//! throughout, 5 requests/s for 14 s dealt round-robin.
//!
//! - Live: `routersim drive --target A,B,C` against three real `routersim proxy` processes whose
//!   config has `router_settings.redis_host`/`redis_port` (a real redis-server; skipped with a
//!   warning without `ROUTERSIM_REDIS_URL`, failed under `ROUTERSIM_REQUIRE_REDIS=1`). The calls
//!   to the failing deployment are counted at the provider side.
//! - Simulated: `routersim run` of the same scenario with `router.replicas: 3`,
//!   `router.state: shared` (the fleet keys of issue 16), counted in `attempts.csv`.

use std::path::Path;

use crate::common::{
    Killed, free_port, real_time_turn, redis_host_port, redis_url, routersim, scratch_dir,
    spawn_drive_emitting_config, spawn_proxy,
};
use serde_json::Value;

/// Seconds of traffic (5/s) and the failing deployment's Retry-After.
const SECONDS: u64 = 14;
const RETRY_AFTER: u64 = 2;
/// Router replicas.
const REPLICAS: usize = 3;
/// Seeds of the simulated side.
const SIM_SEEDS: u64 = 10;

/// The scenario, with `router_settings.redis_host`/`redis_port` when `redis` is given; `fleet`
/// adds the simulation's fleet keys to `router:`.
fn scenario(tag: &str, redis: Option<(&str, u16)>, fleet: bool) -> String {
    let fleet_keys = if fleet {
        format!("  replicas: {REPLICAS}\n  load_balancer: round_robin\n  state: shared\n")
    } else {
        String::new()
    };
    let redis_keys = redis.map_or_else(String::new, |(host, port)| {
        format!("    redis_host: {host}\n    redis_port: {port}\n")
    });
    format!(
        "name: fleet-agreement
description: two replicas sharing cooldowns; one deployment always 429 Retry-After {RETRY_AFTER}s
seed: 7
duration: {SECONDS}s
router:
{fleet_keys}  model_list:
    - {{model_name: gpt, litellm_params: {{model: openai/a}}, model_info: {{id: fail-{tag}}}}}
    - {{model_name: gpt, litellm_params: {{model: openai/b}}, model_info: {{id: ok-{tag}}}}}
  router_settings:
    routing_strategy: simple-shuffle
    num_retries: 2
{redis_keys}providers:
  fail-{tag}: {{latency: 20ms}}
  ok-{tag}: {{latency: 20ms}}
faults:
  - {{deployment: fail-{tag}, from: 0s, to: {SECONDS}s, error: rate_limit, probability: 1.0, retry_after: {RETRY_AFTER}s}}
traffic:
  - {{model: gpt, rate: 5/s, to: {SECONDS}s, arrival: uniform, output_tokens: 5}}
"
    )
}

fn tag() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("{}x{nanos:x}", std::process::id())
}

/// The live run (sharing `redis` when given): calls to `fail-<tag>` at the provider side.
fn live_calls(dir: &Path, redis: Option<&str>, tag: &str) -> usize {
    let redis = redis.map(redis_host_port);
    let file = dir.join("live.yaml");
    std::fs::write(
        &file,
        scenario(tag, redis.as_ref().map(|(h, p)| (h.as_str(), *p)), false),
    )
    .unwrap();
    let ports: Vec<u16> = (0..REPLICAS).map(|_| free_port()).collect();
    let (config, live) = (dir.join("proxy.yaml"), dir.join("live"));
    let targets = ports
        .iter()
        .map(|p| format!("http://127.0.0.1:{p}"))
        .collect::<Vec<_>>()
        .join(",");
    let mut drive =
        spawn_drive_emitting_config(dir, &file, &["--target", &targets], &config, &live);
    let emitted = std::fs::read_to_string(&config).unwrap();
    assert_eq!(emitted.contains("redis_host"), redis.is_some(), "{emitted}");
    let _proxies: Vec<Killed> = ports
        .iter()
        .enumerate()
        .map(|(i, &port)| spawn_proxy(dir, &format!("proxy{i}"), &config, port))
        .collect();
    let status = drive.0.wait().unwrap();
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
    assert!(
        status.success(),
        "{}\n{}\nproxy 0: {}",
        read("drive.out"),
        read("drive.err"),
        read("proxy0.err")
    );
    assert_eq!(
        read("proxy0.err").contains("shared state"),
        redis.is_some(),
        "{}",
        read("proxy0.err")
    );
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(live.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["requests"], 5 * SECONDS, "{s:#}");
    assert_eq!(s["failed"], 0, "{s:#}");
    let calls = std::fs::read_to_string(live.join("provider_calls.csv")).unwrap();
    let failing = format!("fail-{tag}");
    calls
        .lines()
        .skip(1)
        .filter(|l| l.split(',').nth(1) == Some(failing.as_str()))
        .count()
}

/// The simulated run with `seed`: attempts on `fail-<tag>`.
fn simulated_calls(dir: &Path, url: &str, tag: &str, seed: u64) -> usize {
    let (host, port) = redis_host_port(url);
    let file = dir.join("sim.yaml");
    std::fs::write(&file, scenario(tag, Some((&host, port)), true)).unwrap();
    let out = dir.join(format!("sim-{seed}"));
    let seed = seed.to_string();
    let run = routersim(&[
        "run",
        file.to_str().unwrap(),
        "--seed",
        &seed,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // A simulator without the fleet keys would run one replica and compare nonsense.
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let replicas = match &summary["by_replica"] {
        Value::Array(a) => a.len(),
        Value::Object(o) => o.len(),
        _ => 0,
    };
    assert_eq!(
        replicas, REPLICAS,
        "summary.json has no by_replica for {REPLICAS} replicas: the simulator ran no fleet"
    );
    let attempts = std::fs::read_to_string(out.join("attempts.csv")).unwrap();
    let failing = format!("fail-{tag}");
    attempts
        .lines()
        .skip(1)
        .filter(|l| l.split(',').nth(5) == Some(failing.as_str()))
        .count()
}

/// One cooldown period per Retry-After, at least; sharing keeps the calls near that (each
/// extra is a replica whose trusted Redis miss straddled another's write), below the
/// per-process count of the same three proxies without Redis (each discovers each period).
#[test]
fn real_proxies_sharing_redis_call_the_failing_deployment_about_once_per_cooldown() {
    let _turn = real_time_turn();
    let Some(url) = redis_url("the fleet agreement test") else {
        return;
    };
    let periods = usize::try_from(SECONDS / RETRY_AFTER).unwrap();
    let shared = live_calls(&scratch_dir("fleet-agreement-shared"), Some(&url), &tag());
    let per_process = live_calls(&scratch_dir("fleet-agreement-local"), None, &tag());
    eprintln!(
        "calls to the failing deployment in {SECONDS} s over {REPLICAS} proxies: shared \
         {shared}, per process {per_process}"
    );
    assert!(
        shared >= periods - 1 && shared <= periods + 4,
        "{shared} calls with shared state; about {periods} expected"
    );
    assert!(
        per_process > shared,
        "per process {per_process} vs shared {shared}: sharing saved nothing"
    );
}

#[test]
fn the_simulated_shared_store_and_the_real_one_make_the_same_cooldown_decisions() {
    let _turn = real_time_turn();
    let Some(url) = redis_url("the fleet agreement test") else {
        return;
    };
    let dir = scratch_dir("fleet-agreement");
    let tag = tag();
    // One live run is one draw (which deployment the shuffle picks, where a replica's trusted
    // miss falls); the simulation gives the distribution of the same draws over ten seeds. The
    // live count must be one the simulation produces, and near its mean.
    let sims: Vec<usize> = (1..=SIM_SEEDS)
        .map(|seed| simulated_calls(&dir, &url, &tag, seed))
        .collect();
    let live = live_calls(&dir, Some(&url), &tag);
    let (lo, hi) = (*sims.iter().min().unwrap(), *sims.iter().max().unwrap());
    let mean = sims.iter().sum::<usize>() as f64 / sims.len() as f64;
    eprintln!("calls to the failing deployment: simulated {sims:?} (mean {mean:.1}), live {live}");
    assert!(
        (lo..=hi).contains(&live),
        "live {live} calls is outside the simulated range {lo}..={hi} ({sims:?})"
    );
    assert!(
        (mean - live as f64).abs() <= (0.2 * live as f64).max(1.5),
        "simulated mean {mean:.1} vs live {live} calls to the failing deployment"
    );
}
