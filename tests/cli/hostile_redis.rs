//! `routersim proxy` with its shared state in a Redis that dies, comes back, or freezes: the
//! proxy keeps answering on its own state (fail-open), says so on stderr when it falls back
//! and when it recovers, reconnects by itself, counts the time spent degraded in its stop
//! line, and a frozen Redis costs a request at most the stated read timeout, not a connect
//! timeout per request.
//!
//! Each test starts a redis-server of its own on a free loopback port (it kills, restarts and
//! stops it; the CI's shared `ROUTERSIM_REDIS_URL` server must not be touched).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Component, free_port, runs_with, scratch_dir};
use crate::hostile_serve::{Live, exchange, post, serve, spawn_live};

/// A redis-server of this test's own, killed when dropped.
struct Redis {
    child: Child,
    port: u16,
}

impl Redis {
    fn start(port: u16) -> Self {
        let child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        let redis = Self { child, port };
        wait_for("redis-server", Duration::from_secs(10), || {
            redis.command("PING").as_deref() == Some("+PONG")
        });
        redis
    }

    fn signal(&self, name: &str) {
        let ok = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill -{name}");
    }

    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// One inline command's first reply line, `None` when Redis does not answer within 1 s.
    fn command(&self, command: &str) -> Option<String> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(1))).ok()?;
        s.write_all(format!("{command}\r\n").as_bytes()).ok()?;
        let mut buf = [0u8; 256];
        let n = s.read(&mut buf).ok()?;
        let text = String::from_utf8_lossy(&buf[..n]);
        Some(text.lines().next().unwrap_or("").to_string())
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-CONT", &self.child.id().to_string()])
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn redis_server_present() -> bool {
    Command::new("redis-server")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn wait_for(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) {
    let begun = Instant::now();
    while !ok() {
        assert!(begun.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Serve and a proxy in front of it keeping its state in the Redis at `port`: group `m` is
/// deployment `ok` (serve's `a`), group `gpt` is `ok2` (`a` again) and `limited` (always 429,
/// Retry-After 10 s), with two retries.
fn serve_and_proxy(dir: &Path, port: u16) -> (Live, Live) {
    let server = serve(dir, &[]);
    let config = dir.join("proxy.yaml");
    std::fs::write(
        &config,
        format!(
            "model_list:
  - {{model_name: m, litellm_params: {{model: openai/m, api_base: \"http://{addr}/d/a/v1\"}}, model_info: {{id: ok}}}}
  - {{model_name: gpt, litellm_params: {{model: openai/m, api_base: \"http://{addr}/d/a/v1\"}}, model_info: {{id: ok2}}}}
  - {{model_name: gpt, litellm_params: {{model: openai/m, api_base: \"http://{addr}/d/limited/v1\"}}, model_info: {{id: limited}}}}
router_settings:
  num_retries: 2
  redis_host: 127.0.0.1
  redis_port: {port}
",
            addr = server.addr
        ),
    )
    .unwrap();
    let proxy = spawn_live(
        dir,
        "proxy",
        &[
            "proxy",
            "--config",
            config.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ],
        None,
    );
    (server, proxy)
}

/// Requests to group `gpt` until one meets `limited` and cools it; then its cooldown key must
/// be in `redis`.
fn cool_limited_through(proxy: &Live, redis: &Redis) {
    let cooling = || {
        redis
            .command("PTTL deployment:limited:cooldown")
            .is_some_and(|r| r.trim_start_matches(':').parse::<i64>().unwrap_or(-2) > 0)
    };
    for _ in 0..30 {
        assert_eq!(chat(proxy, "gpt").0, 200);
        if cooling() {
            return;
        }
    }
    wait_for("the cooldown key in Redis", Duration::from_secs(5), cooling);
}

/// `GET /metrics`: each sample's value by its name.
fn metrics(proxy: &Live) -> std::collections::BTreeMap<String, f64> {
    let reply = exchange(
        &proxy.addr,
        b"GET /metrics HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
        Duration::from_secs(10),
    )
    .expect("the proxy answers /metrics");
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(
        reply.head.contains("text/plain; version=0.0.4"),
        "{reply:?}"
    );
    reply
        .body
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (name, value) = l.split_once(' ')?;
            Some((name.to_string(), value.parse().ok()?))
        })
        .collect()
}

/// One chat request to `model`: its status and how long it took.
fn chat(proxy: &Live, model: &str) -> (u16, Duration) {
    let begun = Instant::now();
    let reply = exchange(
        &proxy.addr,
        &post(
            "/v1/chat/completions",
            &format!(r#"{{"model":"{model}","max_tokens":1,"messages":[]}}"#),
            &[],
        ),
        Duration::from_secs(30),
    )
    .expect("the proxy answers");
    (reply.status, begun.elapsed())
}

#[test]
fn the_proxy_falls_back_when_redis_dies_and_shares_again_when_it_returns() {
    if !runs_with(
        Component::Redis,
        redis_server_present(),
        "the Redis restart test",
    ) {
        return;
    }
    let dir = scratch_dir("hostile-redis-restart");
    let port = free_port();
    let redis = Redis::start(port);
    let (_server, mut proxy) = serve_and_proxy(&dir, port);
    // Shared: a 429 cools `limited` in Redis.
    cool_limited_through(&proxy, &redis);
    // Redis dies: requests go on, on this replica's own state (the reads a second apart meet
    // the dead connection), and stderr says so.
    redis.kill();
    for _ in 0..6 {
        let (status, took) = chat(&proxy, "m");
        assert_eq!(status, 200);
        assert!(took < Duration::from_secs(1), "{took:?}");
        std::thread::sleep(Duration::from_millis(300));
    }
    wait_for("the fall-back warning", Duration::from_secs(5), || {
        proxy
            .stderr()
            .contains("falling back to this replica's own state")
    });
    // /metrics says it too, while it lasts.
    let during = metrics(&proxy);
    assert_eq!(during["routersim_proxy_redis_degraded"], 1.0, "{during:?}");
    assert_eq!(
        during["routersim_proxy_redis_outages_total"], 1.0,
        "{during:?}"
    );
    assert!(during["routersim_proxy_redis_degraded_seconds_total"] > 0.0);
    // It comes back empty: the proxy reconnects by itself, says so, and writes back the
    // cooldown it still holds (10 s long), so the fleet learns it again.
    let redis = Redis::start(port);
    wait_for("the recovery line", Duration::from_secs(10), || {
        proxy.stderr().contains("answers again after")
    });
    assert!(
        proxy.stderr().contains("(1 live cooldown written back)"),
        "{}",
        proxy.stderr()
    );
    wait_for(
        "the cooldown key in the new Redis",
        Duration::from_secs(5),
        || {
            redis
                .command("PTTL deployment:limited:cooldown")
                .is_some_and(|r| r.trim_start_matches(':').parse::<i64>().unwrap_or(-2) > 0)
        },
    );
    let after = metrics(&proxy);
    assert_eq!(after["routersim_proxy_redis_degraded"], 0.0, "{after:?}");
    assert!(
        after["routersim_proxy_redis_degraded_seconds_total"]
            >= during["routersim_proxy_redis_degraded_seconds_total"],
        "{after:?}"
    );
    // At least one request to cool `limited`, then six while Redis was away.
    assert!(after["routersim_proxy_requests_total"] >= 7.0, "{after:?}");
    let stop = proxy.stop();
    let degraded = stop
        .lines()
        .find(|l| l.starts_with("redis: "))
        .unwrap_or_else(|| panic!("{stop}"));
    assert!(
        degraded.contains("degraded ") && degraded.contains("(1 outage)"),
        "{degraded}"
    );
    assert!(
        !degraded.contains("degraded 0.000 s"),
        "the outage took time: {degraded}"
    );
}

#[test]
fn a_frozen_redis_costs_a_request_at_most_the_read_timeout() {
    if !runs_with(
        Component::Redis,
        redis_server_present(),
        "the frozen Redis test",
    ) {
        return;
    }
    let dir = scratch_dir("hostile-redis-frozen");
    let port = free_port();
    let redis = Redis::start(port);
    let (_server, mut proxy) = serve_and_proxy(&dir, port);
    assert_eq!(chat(&proxy, "m").0, 200);
    redis.signal("STOP");
    // The read throttle (1 s) lets a key be read once a second: 12 requests over ~2.4 s meet
    // several reads, each bounded by the read timeout (50 ms) or skipped while degraded.
    let mut slowest = Duration::ZERO;
    for _ in 0..12 {
        let (status, took) = chat(&proxy, "m");
        assert_eq!(status, 200);
        slowest = slowest.max(took);
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        slowest < Duration::from_millis(500),
        "a frozen Redis held a request {slowest:?}"
    );
    wait_for("the fall-back warning", Duration::from_secs(5), || {
        proxy
            .stderr()
            .contains("falling back to this replica's own state")
    });
    redis.signal("CONT");
    wait_for("the recovery line", Duration::from_secs(10), || {
        proxy.stderr().contains("answers again after")
    });
    let stop = proxy.stop();
    assert!(stop.contains("(1 outage)"), "{stop}");
}
