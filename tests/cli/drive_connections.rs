//! `routersim drive`'s connections: kept alive and reused, bounded by a file-descriptor budget
//! (requests beyond it wait, and the report says so, instead of failing with `Too many open
//! files`), and a keep-alive connection the target closes under a request costs no request.
//! Each is a second or two of real time against a keep-alive peer made here, on loopback.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::common::{repo, scratch_dir};
use serde_json::Value;

const COMPLETION: &str = r#"{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"tok tok tok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":3,"total_tokens":4}}"#;

/// How the peer treats a connection.
#[derive(Clone, Copy)]
enum Peer {
    /// Answers every request on it after `delay` (keep-alive, as a router does).
    KeepAlive { delay: Duration },
    /// Answers its first request, then reads the next one and closes without an answer: the
    /// race of a keep-alive timeout expiring as the client reuses the connection.
    ClosesOnReuse,
}

/// Serves every connection on a thread of its own; the count of connections accepted.
fn peer(kind: Peer) -> (u16, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicU64::new(0));
    let count = accepted.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            count.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || serve_connection(stream, kind));
        }
    });
    (port, accepted)
}

/// Reads one request (head and body); `false` at the connection's end.
fn read_request(reader: &mut BufReader<TcpStream>) -> bool {
    let mut first = String::new();
    if reader.read_line(&mut first).unwrap_or(0) == 0 {
        return false;
    }
    let mut length = 0_usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).is_ok()
}

fn serve_connection(stream: TcpStream, kind: Peer) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut stream = stream;
    let mut answered = 0;
    while read_request(&mut reader) {
        match kind {
            Peer::KeepAlive { delay } => std::thread::sleep(delay),
            Peer::ClosesOnReuse if answered > 0 => return,
            Peer::ClosesOnReuse => {}
        }
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            COMPLETION.len()
        );
        if stream
            .write_all(format!("{head}{COMPLETION}").as_bytes())
            .is_err()
        {
            return;
        }
        answered += 1;
    }
}

fn write_scenario(dir: &Path, traffic: &str) -> std::path::PathBuf {
    let path = dir.join("scenario.yaml");
    let text = format!(
        "name: drive-connections
duration: 1s
router:
  model_list:
    - {{model_name: gpt, litellm_params: {{model: openai/gpt-4o}}, model_info: {{id: gpt-a}}}}
providers:
  gpt-a: {{latency: 5ms}}
traffic:
{traffic}
"
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn summary(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn beyond_the_fd_budget_requests_wait_for_a_connection_instead_of_failing() {
    let dir = scratch_dir("drive-fd-budget");
    // 100 requests in 100 ms, each answered 300 ms later: 100 in flight at once.
    let scenario = write_scenario(
        &dir,
        "  - {model: gpt, rate: 1000/s, to: 100ms, arrival: uniform}",
    );
    let (port, accepted) = peer(Peer::KeepAlive {
        delay: Duration::from_millis(300),
    });
    let url = format!("http://127.0.0.1:{port}");
    let out = dir.join("live");
    // 64 descriptors: a budget of 64 / 4 = 16 connections. One connection per request would
    // run out of descriptors (`Too many open files`) long before 100.
    let o = Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -n 64 && exec "$0" "$@""#)
        .arg(env!("CARGO_BIN_EXE_routersim"))
        .arg("drive")
        .arg(&scenario)
        .args(["--target", &url, "--providers", &url, "--out"])
        .arg(&out)
        .current_dir(repo())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let s = summary(&out);
    assert_eq!(s["requests"], 100, "{s:#}");
    assert_eq!(s["ok"], 100, "{s:#}");
    let live = &s["live"];
    assert_eq!(live["max_connections"], 16, "{live:#}");
    assert_eq!(live["not_sent"], 0, "{live:#}");
    // 100 requests over at most 16 connections: at least 84 waited for one.
    assert!(live["connection_waits"].as_u64().unwrap() >= 84, "{live:#}");
    assert!(
        live["max_connection_wait_ms"].as_f64().unwrap() > 0.0,
        "{live:#}"
    );
    assert!(
        live["connections_opened"].as_u64().unwrap() <= 16,
        "{live:#}"
    );
    // The peer saw at most the budget, plus drive's clock connection to `--providers`.
    assert!(accepted.load(Ordering::SeqCst) <= 17);
    let warnings = live["warnings"].to_string();
    assert!(
        warnings.contains("waited for one of drive's 16 connections"),
        "{warnings}"
    );
    // Their latency counts from when they were sent: within a 300 ms answer, not queued.
    let csv = std::fs::read_to_string(out.join("live_requests.csv")).unwrap();
    assert!(
        csv.lines().next().unwrap().ends_with(",connection_wait_ms"),
        "{csv}"
    );
}

#[test]
fn a_keep_alive_connection_closed_under_a_request_costs_no_request() {
    let dir = scratch_dir("drive-reuse-race");
    let scenario = write_scenario(
        &dir,
        "  - {model: gpt, rate: 10/s, to: 1s, arrival: uniform}",
    );
    let (port, accepted) = peer(Peer::ClosesOnReuse);
    let url = format!("http://127.0.0.1:{port}");
    let out = dir.join("live");
    let o = Command::new(env!("CARGO_BIN_EXE_routersim"))
        .arg("drive")
        .arg(&scenario)
        .args(["--target", &url, "--providers", &url, "--out"])
        .arg(&out)
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = summary(&out);
    assert_eq!(s["requests"], 10, "{s:#}");
    assert_eq!(s["ok"], 10, "{s:#}");
    let live = &s["live"];
    // Every request after the first found its reused connection closed under it and was
    // sent again, once, on a fresh one.
    assert!(live["resent"].as_u64().unwrap() >= 9, "{live:#}");
    assert!(accepted.load(Ordering::SeqCst) >= 10);
}

#[test]
fn sequential_requests_reuse_one_connection() {
    let dir = scratch_dir("drive-keep-alive");
    let scenario = write_scenario(
        &dir,
        "  - {model: gpt, rate: 20/s, to: 1s, arrival: uniform}",
    );
    let (port, accepted) = peer(Peer::KeepAlive {
        delay: Duration::from_millis(1),
    });
    let url = format!("http://127.0.0.1:{port}");
    let out = dir.join("live");
    let o = Command::new(env!("CARGO_BIN_EXE_routersim"))
        .arg("drive")
        .arg(&scenario)
        .args(["--target", &url, "--providers", &url, "--out"])
        .arg(&out)
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = summary(&out);
    assert_eq!(s["ok"], 20, "{s:#}");
    let live = &s["live"];
    assert_eq!(live["resent"], 0, "{live:#}");
    // 20 requests 50 ms apart, each answered in about a millisecond: one connection serves
    // them all (two at most, should the router's probes overlap the first request).
    assert!(
        live["connections_opened"].as_u64().unwrap() <= 2,
        "{live:#}"
    );
    // Drive's clock connection to `--providers` plus the one or two above.
    assert!(accepted.load(Ordering::SeqCst) <= 3);
}
