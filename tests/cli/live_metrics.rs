//! `GET /metrics` scraped while `routersim proxy` serves traffic in front of `routersim serve`:
//! the counters a Prometheus sees agree with the requests sent and with the calls the fake
//! providers logged.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

use crate::common::{repo, scratch_dir};

/// `gpt` has one healthy deployment; `down`'s lone deployment always answers 503; `hot`'s two
/// deployments both answer 429 with a 30 s Retry-After, so one request to `hot` cools each of
/// them once (a 429 cools a deployment of a multi-deployment group at once) and then finds
/// nothing left to call.
const SCENARIO: &str = "
name: metrics-test
duration: 10m
router:
  model_list:
    - {model_name: gpt, litellm_params: {model: openai/gpt-4o}, model_info: {id: good}}
    - {model_name: down, litellm_params: {model: openai/down}, model_info: {id: broken}}
    - {model_name: hot, litellm_params: {model: openai/hot}, model_info: {id: hot-a}}
    - {model_name: hot, litellm_params: {model: openai/hot}, model_info: {id: hot-b}}
  router_settings: {num_retries: 2}
providers:
  good: {latency: 2ms}
  broken: {latency: 1ms, then: {error: service_unavailable}}
  hot-a: {latency: 1ms, then: {error: rate_limit, retry_after: 30s}}
  hot-b: {latency: 1ms, then: {error: rate_limit, retry_after: 30s}}
traffic: []
";

struct Server {
    child: Child,
    _stdout: BufReader<ChildStdout>,
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_routersim"))
            .args(args)
            .current_dir(repo())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut addr = None;
        for _ in 0..20 {
            let mut line = String::new();
            if stdout.read_line(&mut line).unwrap() == 0 {
                break;
            }
            if let Some(a) = line.trim().strip_prefix("listening on http://") {
                addr = Some(a.to_string());
                break;
            }
        }
        Server {
            child,
            _stdout: stdout,
            addr: addr.expect("the server prints `listening on http://ADDR`"),
        }
    }

    /// SIGTERM, then wait: `serve` writes its call log when it stops.
    fn stop(mut self) {
        let pid = self.child.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-TERM", &pid])
                .status()
                .unwrap()
                .success()
        );
        assert!(self.child.wait().unwrap().success());
    }
}

/// One HTTP/1.1 exchange (`Connection: close`): the status code and the body.
fn http(addr: &str, method: &str, path: &str, body: &str) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\
         content-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    let (head, body) = reply.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head.to_ascii_lowercase(), body.to_string())
}

/// A sample's value in an exposition (the series exactly as written).
fn sample(text: &str, series: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("{series} in\n{text}"))
        .parse()
        .unwrap()
}

#[test]
fn metrics_are_scraped_from_a_live_proxy_and_count_the_traffic_sent() {
    let dir = scratch_dir("live-metrics");
    let scenario = dir.join("scenario.yaml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let config = dir.join("litellm.yaml");
    let out = dir.join("out");
    let serve = Server::start(&[
        "serve",
        scenario.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--emit-litellm-config",
        config.to_str().unwrap(),
    ]);
    let proxy = Server::start(&[
        "proxy",
        "--config",
        config.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
    ]);

    // Before any traffic: every counter is there, at 0.
    let (status, head, before) = http(&proxy.addr, "GET", "/metrics", "");
    assert_eq!(status, 200);
    assert!(
        head.contains("content-type: text/plain; version=0.0.4"),
        "{head}"
    );
    assert_eq!(sample(&before, "routersim_requests_total"), 0);

    let chat = |model: &str| {
        let body = format!(
            r#"{{"model":"{model}","num_retries":0,"messages":[{{"role":"user","content":"hi"}}]}}"#
        );
        http(&proxy.addr, "POST", "/v1/chat/completions", &body).0
    };
    let (ok_sent, down_sent) = (5, 3);
    for _ in 0..ok_sent {
        assert_eq!(chat("gpt"), 200);
    }
    for _ in 0..down_sent {
        assert_eq!(chat("down"), 503);
    }
    // `hot` with its retries: both deployments are cooled by this one request.
    let hot = r#"{"model":"hot","messages":[{"role":"user","content":"hi"}]}"#;
    assert_eq!(
        http(&proxy.addr, "POST", "/v1/chat/completions", hot).0,
        429
    );

    let (_, _, text) = http(&proxy.addr, "GET", "/metrics", "");
    let sent = ok_sent + down_sent + 1;
    assert_eq!(sample(&text, "routersim_requests_total"), sent);
    assert_eq!(sample(&text, "routersim_ok_total"), ok_sent);
    assert_eq!(sample(&text, "routersim_failed_total"), down_sent + 1);
    assert_eq!(
        sample(
            &text,
            "routersim_failed_by_kind_total{kind=\"service_unavailable\"}"
        ),
        down_sent
    );
    for deployment in ["hot-a", "hot-b"] {
        let series = format!("routersim_deployment_cooldowns_total{{deployment=\"{deployment}\"}}");
        assert_eq!(sample(&text, &series), 1, "{text}");
    }
    assert_eq!(sample(&text, "routersim_cooldowns_total"), 2);
    // Every request is in the histogram, and all of them took under 2.5 s.
    let count = "routersim_request_latency_seconds_count";
    assert_eq!(sample(&text, count), sent);
    assert_eq!(
        sample(
            &text,
            "routersim_request_latency_seconds_bucket{le=\"2.5\"}"
        ),
        sent
    );
    assert!(!text.contains("cooldown_periods"), "{text}");

    // Attempts: what the providers logged, one row per call.
    let attempts = sample(&text, "routersim_attempts_total");
    drop(proxy);
    serve.stop();
    let calls = std::fs::read_to_string(out.join("provider_calls.csv")).unwrap();
    assert_eq!(attempts, calls.lines().count() as u64 - 1, "{calls}");
    assert!(attempts > sent, "hot was called twice: {attempts}");
}
