//! Two real `routersim proxy` processes sharing one real `redis-server` through
//! `router_settings.redis_host` / `redis_port`: after proxy A cools a deployment that answers
//! 429 with Retry-After, proxy B (which never called it) leaves it alone for the cooldown, and
//! calls it again once the key has expired. A third proxy with the same config but no Redis is
//! the control: it does not know, and calls the failing deployment.
//!
//! Needs `ROUTERSIM_REDIS_URL` (`.ci/run` starts a server); skips with a warning without it,
//! fails instead under `ROUTERSIM_REQUIRE_REDIS=1`. Also needs curl (as tests/proxy.rs).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::{Component, runs_with};
use crate::common::{
    Killed, curl, curl_present, free_port, redis_host_port, redis_url, scratch_dir, spawn_proxy,
};
use routersim_config::load::parse_yaml;
use serde_json::{Value, json};

/// Ids unique to this run, so a shared server's keys never collide.
fn tag() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("{}x{nanos:x}", std::process::id())
}

fn scenario(a: &str, b: &str) -> String {
    format!(
        "name: proxy-redis
seed: 1
duration: 10m
router:
  model_list:
    - {{model_name: gpt, litellm_params: {{model: openai/a}}, model_info: {{id: {a}}}}}
    - {{model_name: gpt, litellm_params: {{model: openai/b}}, model_info: {{id: {b}}}}}
  router_settings:
    routing_strategy: simple-shuffle
    num_retries: 2
providers:
  {a}: {{latency: 5ms}}
  {b}: {{latency: 5ms}}
faults:
  - {{deployment: {a}, from: 0s, to: 10m, error: rate_limit, probability: 1.0, retry_after: 2s}}
traffic:
  - {{model: gpt, rate: 1/s, to: 1s}}
"
    )
}

fn wait_for(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) {
    let begun = Instant::now();
    while !ok() {
        assert!(begun.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn start_proxy(dir: &Path, name: &str, config: &Path) -> (Killed, u16) {
    let port = free_port();
    let proxy = spawn_proxy(dir, name, config, port);
    wait_for(name, Duration::from_secs(30), || {
        curl(&[&format!("http://127.0.0.1:{port}/health/liveliness")]).contains("200 OK")
    });
    (proxy, port)
}

/// One chat request with request id `id`: (attempts, deployment that answered).
fn chat(port: u16, id: u64) -> (u32, String) {
    let body = r#"{"model":"gpt","messages":[{"role":"user","content":"hi"}],"max_tokens":5}"#;
    let response = curl(&[
        "-H",
        "content-type: application/json",
        "-H",
        &format!("x-routersim-request-id: {id}"),
        "-d",
        body,
        &format!("http://127.0.0.1:{port}/v1/chat/completions"),
    ]);
    let header = |name: &str| {
        response
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}: ")))
            .unwrap_or_else(|| panic!("no {name} in {response}"))
            .trim()
            .to_string()
    };
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    (
        header("x-routersim-attempts").parse().unwrap(),
        header("x-litellm-model-id"),
    )
}

fn pttl(url: &str, key: &str) -> i64 {
    let out = Command::new("redis-cli")
        .args(["-u", url, "pttl", key])
        .output()
        .expect("redis-cli runs (Debian's redis-tools, a dependency of redis-server)");
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// Provider calls as (deployment, request id).
fn provider_calls(dir: &Path) -> Vec<(String, u64)> {
    let text = std::fs::read_to_string(dir.join("provider/provider_calls.csv")).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[1].to_string(), f[9].parse().unwrap_or(0))
        })
        .collect()
}

#[test]
fn two_proxies_share_cooldowns_through_redis() {
    let Some(url) = redis_url("the Redis proxy test") else {
        return;
    };
    if !runs_with(Component::Curl, curl_present(), "the Redis proxy test") {
        return;
    }
    let dir = scratch_dir("proxy-redis");
    let t = tag();
    let (a, b) = (format!("fail-{t}"), format!("ok-{t}"));
    std::fs::write(dir.join("scenario.yaml"), scenario(&a, &b)).unwrap();
    let emitted = dir.join("emitted.yaml");
    let mut serve = Killed(
        Command::new(env!("CARGO_BIN_EXE_routersim"))
            .arg("serve")
            .arg(dir.join("scenario.yaml"))
            .arg("--emit-litellm-config")
            .arg(&emitted)
            .arg("--out")
            .arg(dir.join("provider"))
            .stdout(File::create(dir.join("serve.out")).unwrap())
            .stderr(File::create(dir.join("serve.err")).unwrap())
            .spawn()
            .unwrap(),
    );
    wait_for("serve's config", Duration::from_secs(30), || {
        emitted.exists()
    });
    // The same config with and without router_settings.redis_host/redis_port (JSON is YAML).
    let mut config: Value = parse_yaml(&std::fs::read_to_string(&emitted).unwrap()).unwrap();
    let local: PathBuf = dir.join("local.yaml");
    std::fs::write(&local, serde_json::to_string_pretty(&config).unwrap()).unwrap();
    let (host, port) = redis_host_port(&url);
    config["router_settings"]["redis_host"] = json!(host);
    config["router_settings"]["redis_port"] = json!(port);
    let shared = dir.join("shared.yaml");
    std::fs::write(&shared, serde_json::to_string_pretty(&config).unwrap()).unwrap();

    let (_pa, port_a) = start_proxy(&dir, "proxy-a", &shared);
    let (_pb, port_b) = start_proxy(&dir, "proxy-b", &shared);
    let (_pc, port_c) = start_proxy(&dir, "proxy-c", &local);
    let err_a = std::fs::read_to_string(dir.join("proxy-a.err")).unwrap();
    assert!(err_a.contains("shared state: cooldowns"), "{err_a}");
    assert!(
        !err_a.contains("not modelled (ignored): router_settings.redis"),
        "{err_a}"
    );

    // Phase A: requests to proxy A until one hits the failing deployment (429, retried).
    let key = format!("deployment:{a}:cooldown");
    let mut cooled_at = None;
    for i in 0..40 {
        let (attempts, served_by) = chat(port_a, 1000 + i);
        assert_eq!(served_by, b);
        if attempts > 1 {
            cooled_at = Some(Instant::now());
            break;
        }
    }
    let cooled_at = cooled_at.expect("proxy A never picked the failing deployment in 40 requests");
    wait_for("the cooldown key", Duration::from_secs(1), || {
        pttl(&url, &key) > 0
    });
    let left = pttl(&url, &key);
    assert!(
        (1000..=2000).contains(&left),
        "PTTL {left}: Retry-After 2 s"
    );

    // Phase B, within the cooldown: proxy B never calls it (answered at once by the other).
    for i in 0..12 {
        let (attempts, served_by) = chat(port_b, 2000 + i);
        assert_eq!(
            (attempts, served_by.as_str()),
            (1, b.as_str()),
            "request {i}"
        );
    }
    assert!(
        cooled_at.elapsed() < Duration::from_millis(1800),
        "phase B overran the cooldown ({:?}); the check above proved nothing late",
        cooled_at.elapsed()
    );
    // Control, same moment: proxy C (no Redis) does not know and calls it.
    let control: u32 = (0..30).map(|i| chat(port_c, 3000 + i).0 - 1).sum();
    assert!(
        control > 0,
        "the control proxy never hit the failing deployment"
    );

    // After the key's TTL, proxy B reads Redis again (no key) and calls the deployment.
    wait_for("the key to expire", Duration::from_secs(5), || {
        pttl(&url, &key) == -2
    });
    std::thread::sleep(Duration::from_millis(1100));
    let later: u32 = (0..30).map(|i| chat(port_b, 4000 + i).0 - 1).sum();
    assert!(
        later > 0,
        "proxy B never called the deployment after the cooldown"
    );

    // The provider side agrees: no call from proxy B's phase-B requests to the failing one.
    Command::new("kill")
        .args(["-TERM", &serve.0.id().to_string()])
        .status()
        .unwrap();
    let status = serve.0.wait().unwrap();
    assert!(status.success());
    let calls = provider_calls(&dir);
    let to_a = |from: u64, to: u64| {
        calls
            .iter()
            .filter(|(d, id)| *d == a && (from..to).contains(id))
            .count()
    };
    assert_eq!(to_a(1000, 2000), 1, "{calls:?}");
    assert_eq!(to_a(2000, 3000), 0, "{calls:?}");
    assert!(to_a(3000, 4000) > 0);
    assert!(to_a(4000, 5000) > 0);
}
