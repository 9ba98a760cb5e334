//! `routersim drive` end to end: a short scenario sent in real time to a router, with the
//! fake providers either a running `routersim serve` (which is OpenAI-compatible, so with one
//! deployment it is a trivial router with no retries) or drive's own in-process providers
//! behind a byte-for-byte TCP relay (a "router" that forwards every header).

use std::io::{BufRead, BufReader, Read};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::server::Server;
use crate::common::{Killed, repo, scratch_dir};
use serde_json::Value;

/// Six requests, one deployment; the provider's script answers ok, 429, 503, then ok.
const SCENARIO: &str = "
name: drive-test
duration: 2s
router:
  model_list:
    - {model_name: gpt, litellm_params: {model: openai/gpt-4o}, model_info: {id: gpt-a}}
providers:
  gpt-a:
    latency: 5ms
    ttft: 5ms
    inter_token: 1ms
    output_tokens: 4
    script: [ok, {error: rate_limit, retry_after: 2s}, service_unavailable]
    then: ok
traffic:
  - {at: 200ms, model: gpt}
  - {at: 400ms, model: gpt}
  - {at: 600ms, model: gpt}
  - {at: 800ms, model: gpt}
  - {at: 1s, model: gpt}
  - {at: 1.2s, model: gpt, stream: true}
";

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The `status` column of `live_requests.csv`, in arrival order.
fn statuses(report: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(report.join("live_requests.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "status").unwrap();
    lines
        .map(|l| l.split(',').nth(col).unwrap().to_string())
        .collect()
}

fn assert_report(report: &Path) -> Value {
    assert!(report.join("report.complete").exists());
    for file in [
        "requests.csv",
        "attempts.csv",
        "events.csv",
        "timeseries.csv",
        "latency.hgrm",
        "report.html",
        "live_requests.csv",
    ] {
        assert!(report.join(file).exists(), "{file} missing");
    }
    let summary = read_json(&report.join("summary.json"));
    assert_eq!(summary["source"], "live");
    assert_eq!(summary["requests"], 6, "{summary:#}");
    assert_eq!(summary["ok"], 4);
    assert_eq!(summary["failed_by_kind"]["rate_limit"], 1);
    assert_eq!(summary["failed_by_kind"]["service_unavailable"], 1);
    assert_eq!(summary["live"]["sent"], 6);
    assert_eq!(summary["live"]["unfinished"], 0);
    assert_eq!(statuses(report), ["200", "429", "503", "200", "200", "200"]);
    let requests = std::fs::read_to_string(report.join("requests.csv")).unwrap();
    assert_eq!(requests.lines().count(), 7, "{requests}");
    summary
}

#[test]
fn drive_against_serve_records_every_request_and_serve_sees_the_request_ids() {
    let dir = scratch_dir("drive-serve");
    let scenario = dir.join("drive.yaml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let served = dir.join("served");
    let serve = Server::start(&[
        "serve",
        scenario.to_str().unwrap(),
        "--out",
        served.to_str().unwrap(),
    ]);
    let addr = serve.addr.clone();
    let report = dir.join("live");
    let out = Command::new(env!("CARGO_BIN_EXE_routersim"))
        .args(["drive"])
        .arg(&scenario)
        .args(["--target", &format!("http://{addr}/d/gpt-a/v1")])
        .args(["--providers", &format!("http://{addr}")])
        .arg("--out")
        .arg(&report)
        .current_dir(repo())
        .output()
        .unwrap();
    let stdout_text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout_text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = assert_report(&report);
    assert_eq!(summary["live"]["providers"], format!("http://{addr}"));
    assert!(stdout_text.contains("report: "), "{stdout_text}");
    // serve stops at the scenario's end and writes what it served: every call, with the
    // request id drive sent.
    serve.wait_to_end();
    let calls = std::fs::read_to_string(served.join("provider_calls.csv")).unwrap();
    let ids: Vec<&str> = calls
        .lines()
        .skip(1)
        .map(|l| l.rsplit(',').next().unwrap())
        .collect();
    assert_eq!(ids, ["0", "1", "2", "3", "4", "5"], "{calls}");
}

/// Relays every connection on `listener` to the address in `upstream` once it is known.
fn relay(listener: TcpListener, upstream: Arc<Mutex<Option<String>>>) {
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { return };
            let upstream = upstream.clone();
            std::thread::spawn(move || {
                let addr = loop {
                    if let Some(a) = upstream.lock().unwrap().clone() {
                        break a;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                };
                let Ok(server) = TcpStream::connect(addr) else {
                    return;
                };
                let (mut c2, mut s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let up = std::thread::spawn(move || {
                    let _ = std::io::copy(&mut c2, &mut s2);
                    let _ = s2.shutdown(std::net::Shutdown::Write);
                });
                let (mut c, mut s) = (client, server);
                let _ = std::io::copy(&mut s, &mut c);
                let _ = c.shutdown(std::net::Shutdown::Write);
                let _ = up.join();
            });
        }
    });
}

#[test]
fn drive_with_in_process_providers_joins_every_call_to_its_request() {
    let dir = scratch_dir("drive-in-process");
    let scenario = dir.join("drive.yaml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let upstream = Arc::new(Mutex::new(None));
    relay(listener, upstream.clone());
    let report = dir.join("live");
    let mut drive = Killed(
        Command::new(env!("CARGO_BIN_EXE_routersim"))
            .arg("drive")
            .arg(&scenario)
            .args(["--target", &format!("http://127.0.0.1:{port}/d/gpt-a/v1")])
            .arg("--out")
            .arg(&report)
            .current_dir(repo())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut stderr = BufReader::new(drive.0.stderr.take().unwrap());
    loop {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "drive ended");
        if let Some(a) = line.trim().strip_prefix("fake providers on http://") {
            *upstream.lock().unwrap() = Some(a.to_string());
            break;
        }
    }
    let mut stdout = String::new();
    drive
        .0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert!(drive.0.wait().unwrap().success(), "{stdout}\n{rest}");
    let summary = assert_report(&report);
    assert_eq!(summary["live"]["providers"], "in-process");
    assert_eq!(summary["live"]["provider_calls"], 6);
    assert_eq!(summary["live"]["joined_by_request_id"], 6);
    assert_eq!(summary["attempts"], 6);
    assert_eq!(summary["streams"]["requests"], 1);
    assert_eq!(summary["streams"]["tokens_delivered"], 4, "{summary:#}");
    let calls = std::fs::read_to_string(report.join("provider_calls.csv")).unwrap();
    assert_eq!(calls.lines().count(), 7, "{calls}");
    let attempts = std::fs::read_to_string(report.join("attempts.csv")).unwrap();
    let rows: Vec<&str> = attempts.lines().skip(1).collect();
    assert_eq!(rows.len(), 6, "{attempts}");
    assert!(rows.iter().all(|r| !r.starts_with(',')), "{attempts}");
}

#[test]
fn drive_refuses_a_remote_target_without_allow_remote() {
    let dir = scratch_dir("drive-remote");
    let scenario = dir.join("drive.yaml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_routersim"))
        .arg("drive")
        .arg(&scenario)
        .args(["--target", "http://192.0.2.1:4000"])
        .arg("--out")
        .arg(dir.join("live"))
        .current_dir(repo())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not a loopback address"), "{stderr}");
    assert!(!dir.join("live").exists());
}

#[test]
fn sigterm_ends_the_run_with_a_complete_report() {
    let dir = scratch_dir("drive-sigterm");
    let scenario = dir.join("drive.yaml");
    std::fs::write(
        &scenario,
        "
name: drive-sigterm
duration: 60s
router:
  model_list:
    - {model_name: gpt, litellm_params: {model: openai/gpt-4o}, model_info: {id: gpt-a}}
providers:
  gpt-a: {latency: 5ms}
traffic:
  - {model: gpt, rate: 10/s, to: 60s, arrival: uniform}
",
    )
    .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let upstream = Arc::new(Mutex::new(None));
    relay(listener, upstream.clone());
    let report = dir.join("live");
    let mut drive = Killed(
        Command::new(env!("CARGO_BIN_EXE_routersim"))
            .arg("drive")
            .arg(&scenario)
            .args(["--target", &format!("http://127.0.0.1:{port}/d/gpt-a/v1")])
            .arg("--out")
            .arg(&report)
            .current_dir(repo())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut stderr = BufReader::new(drive.0.stderr.take().unwrap());
    loop {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "drive ended");
        if let Some(a) = line.trim().strip_prefix("fake providers on http://") {
            *upstream.lock().unwrap() = Some(a.to_string());
            break;
        }
    }
    std::thread::sleep(Duration::from_millis(1500));
    let killed = Command::new("kill")
        .args(["-TERM", &drive.0.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let mut stdout = String::new();
    drive
        .0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert!(drive.0.wait().unwrap().success(), "{stdout}");
    assert!(report.join("report.complete").exists());
    let summary = read_json(&report.join("summary.json"));
    assert_eq!(summary["live"]["stopped_by"], "sigterm");
    let sent = summary["live"]["sent"].as_u64().unwrap();
    assert!((5..=40).contains(&sent), "{summary:#}");
    assert_eq!(summary["requests"].as_u64().unwrap(), sent);
    assert_eq!(summary["live"]["provider_calls"].as_u64().unwrap(), sent);
}
