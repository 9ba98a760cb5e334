//! `GET /metrics` scraped while `routersim proxy` serves traffic in front of `routersim serve`:
//! the counters a Prometheus sees agree with the requests sent and with the calls the fake
//! providers logged; serve's own `/metrics` agrees with its call log; and `routersim drive
//! --metrics-addr` serves, while it runs, the counts its report then writes.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::server::Server;
use crate::common::{free_port, routersim, scratch_dir, spawn_drive_emitting_config, spawn_proxy};

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
    let serve = Server::start_with(
        &[
            "serve",
            scenario.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--emit-litellm-config",
            config.to_str().unwrap(),
        ],
        Stdio::null(),
    );
    // A scrape before any traffic is answered (no call yet) and starts no fault timeline: the
    // first call below is at the timeline's start, not half a second after this scrape.
    let (status, _, early) = http(&serve.addr, "GET", "/metrics", "");
    assert_eq!(status, 200);
    assert!(
        !early.contains("routersim_provider_calls_total{"),
        "{early}"
    );
    let quiet = Duration::from_millis(500);
    std::thread::sleep(quiet);
    let proxy = Server::start_with(
        &[
            "proxy",
            "--config",
            config.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ],
        Stdio::null(),
    );

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
    // Serve's own `/metrics`, scraped twice: a scrape is no provider call (the second would
    // count the first, and the call log would have a row more than the counters).
    let (status, head, _) = http(&serve.addr, "GET", "/metrics", "");
    assert_eq!(status, 200);
    assert!(
        head.contains("content-type: text/plain; version=0.0.4"),
        "{head}"
    );
    let (_, _, served) = http(&serve.addr, "GET", "/metrics", "");
    serve.stop_with("-TERM");
    let calls = std::fs::read_to_string(out.join("provider_calls.csv")).unwrap();
    assert_eq!(attempts, calls.lines().count() as u64 - 1, "{calls}");
    assert!(attempts > sent, "hot was called twice: {attempts}");

    // Serve's counters are the call log's rows, by deployment and outcome, and nothing more.
    let mut rows: BTreeMap<String, u64> = BTreeMap::new();
    let mut per_deployment: BTreeMap<String, u64> = BTreeMap::new();
    for line in calls.lines().skip(1) {
        let cols: Vec<&str> = line.split(',').collect();
        let series = format!(
            "routersim_provider_calls_total{{deployment=\"{}\",outcome=\"{}\"}}",
            cols[1], cols[4]
        );
        *rows.entry(series).or_default() += 1;
        *per_deployment.entry(cols[1].to_string()).or_default() += 1;
    }
    assert!(rows.len() >= 3, "ok, 503 and 429 rows: {calls}");
    let first_at_ms: u128 = calls
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().parse::<u128>().unwrap())
        .min()
        .unwrap();
    assert!(first_at_ms < quiet.as_millis(), "{calls}");
    let counted: BTreeMap<String, u64> = served
        .lines()
        .filter(|l| l.starts_with("routersim_provider_calls_total{"))
        .map(|l| {
            let (series, n) = l.rsplit_once(' ').unwrap();
            (series.to_string(), n.parse().unwrap())
        })
        .collect();
    assert_eq!(counted, rows, "{served}");
    for (deployment, n) in per_deployment {
        let count =
            format!("routersim_provider_call_latency_seconds_count{{deployment=\"{deployment}\"}}");
        assert_eq!(sample(&served, &count), n, "{served}");
    }
    // Provider-side names only: serve sees calls, not requests.
    assert!(!served.contains("routersim_requests_total"), "{served}");
}

/// `gpt` answers; `down` always answers 503. Four requests to `gpt` and two to `down` in the
/// first second, then two quiet seconds in which drive still runs (and serves `/metrics`).
const DRIVE_SCENARIO: &str = "
name: drive-metrics
seed: 1
duration: 3s
router:
  model_list:
    - {model_name: gpt, litellm_params: {model: openai/gpt-4o}, model_info: {id: good}}
    - {model_name: down, litellm_params: {model: openai/down}, model_info: {id: broken}}
  router_settings: {num_retries: 0}
providers:
  good: {latency: 5ms}
  broken: {latency: 1ms, then: {error: service_unavailable}}
traffic:
  - {model: gpt, rate: 4/s, to: 1s, arrival: uniform}
  - {model: down, rate: 2/s, to: 1s, arrival: uniform}
";

/// A scrape of `addr`'s `/metrics`, `None` while nothing listens there.
fn try_scrape(addr: &str) -> Option<String> {
    TcpStream::connect(addr).ok()?;
    Some(http(addr, "GET", "/metrics", "").2)
}

#[test]
fn drive_serves_its_requests_on_metrics_while_it_runs() {
    let dir = scratch_dir("drive-metrics");
    let scenario = dir.join("drive-metrics.yaml");
    std::fs::write(&scenario, DRIVE_SCENARIO).unwrap();
    let (port, metrics) = (free_port(), format!("127.0.0.1:{}", free_port()));
    let (config, live) = (dir.join("proxy.yaml"), dir.join("live"));
    let mut drive = spawn_drive_emitting_config(
        &dir,
        &scenario,
        &[
            "--target",
            &format!("http://127.0.0.1:{port}"),
            "--metrics-addr",
            &metrics,
        ],
        &config,
        &live,
    );
    let _proxy = spawn_proxy(&dir, "proxy", &config, port);

    // Scraped until every request is in, while drive still runs its quiet seconds.
    let sent = 6;
    let begun = Instant::now();
    let text = loop {
        if let Some(text) = try_scrape(&metrics)
            && sample(&text, "routersim_requests_total") == sent
        {
            break text;
        }
        assert!(begun.elapsed() < Duration::from_secs(10), "no 6 requests");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(drive.0.try_wait().unwrap().is_none(), "drive still runs");
    let status = drive.0.wait().unwrap();
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
    assert!(
        status.success(),
        "{}\n{}",
        read("drive.out"),
        read("drive.err")
    );
    assert!(read("drive.err").contains(&format!("metrics on http://{metrics}/metrics")));

    // What the scrape said is what the report says.
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(live.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["requests"], sent, "{s:#}");
    assert_eq!(
        sample(&text, "routersim_ok_total"),
        s["ok"].as_u64().unwrap()
    );
    assert_eq!(
        sample(&text, "routersim_failed_total"),
        s["failed"].as_u64().unwrap()
    );
    assert_eq!(s["failed"], 2, "{s:#}");
    for (kind, n) in s["failed_by_kind"].as_object().unwrap() {
        let series = format!("routersim_failed_by_kind_total{{kind=\"{kind}\"}}");
        assert_eq!(sample(&text, &series), n.as_u64().unwrap(), "{text}");
    }
    assert_eq!(
        sample(&text, "routersim_request_latency_seconds_count"),
        sent
    );
    assert_eq!(sample(&text, "routersim_drive_sent_total"), sent);
    assert_eq!(sample(&text, "routersim_drive_in_flight"), 0);
    // What drive cannot know during the run is left out, not written as 0.
    assert!(!text.contains("routersim_attempts_total"), "{text}");
    // The listener stopped with drive.
    assert!(try_scrape(&metrics).is_none());
}

#[test]
fn drive_refuses_a_metrics_address_off_this_machine() {
    let out = scratch_dir("drive-metrics-remote").join("live");
    let refused = routersim(&[
        "drive",
        "scenarios/rate-limit-storm.yaml",
        "--target",
        "http://127.0.0.1:9",
        "--metrics-addr",
        "0.0.0.0:9464",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("--metrics-addr 0.0.0.0:9464: not a loopback address"),
        "{err}"
    );
    assert!(!out.exists());
}
