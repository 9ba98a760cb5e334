//! `routersim drive` against hostile peers and interruptions: a "router" that answers garbage
//! (a 2xx cut mid-body, over the body limit, HTML, a stream claiming 2³²−1 tokens, a JSON
//! answer to a stream request), one that names a failure kind in routersim's extension, one
//! that routes to other deployments, one nobody listens for; and SIGINT at each phase of a
//! run (waiting for the router, sending, draining), and a drain that expires. Each is a few
//! seconds of real time against a peer made here, on loopback.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{Killed, free_port, repo, scratch_dir};
use serde_json::Value;

/// What a hostile peer read of one request.
struct Asked {
    path: String,
    request_id: Option<u64>,
}

/// What it does about it: bytes to write before closing, or hold the connection open until
/// the client closes it.
enum Answer {
    Bytes(Vec<u8>),
    Hang,
}

/// Serves every connection on a thread of its own with `answer`, until the test ends.
fn hostile(answer: fn(&Asked) -> Answer) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            std::thread::spawn(move || serve_one(stream, answer));
        }
    });
    port
}

fn serve_one(stream: TcpStream, answer: fn(&Asked) -> Answer) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut first = String::new();
    // A connection that sends nothing (drive's clock connection to `--providers`) ends here.
    if reader.read_line(&mut first).unwrap_or(0) == 0 {
        return;
    }
    let path = first.split_whitespace().nth(1).unwrap_or("").to_string();
    let (mut length, mut request_id) = (0_usize, None);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').unwrap_or(("", ""));
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().unwrap_or(0),
            "x-routersim-request-id" => request_id = value.trim().parse().ok(),
            _ => {}
        }
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    let mut stream = stream;
    match answer(&Asked { path, request_id }) {
        Answer::Bytes(bytes) => {
            let _ = stream.write_all(&bytes);
        }
        Answer::Hang => {
            let mut sink = Vec::new();
            let _ = stream.read_to_end(&mut sink);
        }
    }
}

/// An HTTP/1.1 response with `content-length`, closing the connection.
fn response(status: &str, headers: &[&str], body: &[u8]) -> Answer {
    let mut out = format!("HTTP/1.1 {status}\r\nconnection: close\r\n");
    for h in headers {
        out.push_str(h);
        out.push_str("\r\n");
    }
    out.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(body);
    Answer::Bytes(bytes)
}

const JSON: &str = "content-type: application/json";
const COMPLETION: &str = r#"{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"tok tok tok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":3,"total_tokens":4}}"#;

/// One answer per request id (see the scenario below).
fn garbage(asked: &Asked) -> Answer {
    if !asked.path.ends_with("/chat/completions") {
        return response("404 Not Found", &[JSON], b"{}");
    }
    match asked.request_id.unwrap_or(99) {
        0 => response("200 OK", &[JSON], COMPLETION.as_bytes()),
        // A 200 whose body the connection cuts: 1000 bytes announced, 10 sent.
        1 => Answer::Bytes(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{\"id\":\"x\"".to_vec(),
        ),
        // A 200 over the 8 MiB body limit (9 MiB of JSON-looking bytes).
        2 => response("200 OK", &[JSON], &vec![b' '; 9 * 1024 * 1024]),
        3 => response(
            "200 OK",
            &["content-type: text/html"],
            b"<html><body>502 upstream</body></html>",
        ),
        // A stream whose one chunk claims 2^32 - 1 tokens for two words.
        4 => response(
            "200 OK",
            &["content-type: text/event-stream"],
            b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok tok\"}}],\"x_routersim\":{\"tokens\":4294967295}}\n\ndata: [DONE]\n\n",
        ),
        // A stream request answered with a JSON completion.
        5 => response("200 OK", &[JSON], COMPLETION.as_bytes()),
        6 => response("200 OK", &[JSON], br#"{"id":"x","object":"chat.completion"}"#),
        // routersim proxy's error bodies: the kind in the extension.
        7 => response(
            "429 Too Many Requests",
            &[JSON],
            br#"{"error":{"message":"m","type":"rate_limit_error","param":null,"code":"429","x_routersim":{"kind":"router_rate_limit","attempts":0}}}"#,
        ),
        8 => response(
            "500 Internal Server Error",
            &[JSON],
            br#"{"error":{"message":"m","type":"api_error","param":null,"code":"500","x_routersim":{"kind":"api_connection","attempts":3}}}"#,
        ),
        // A stream of garbage frames.
        9 => response(
            "200 OK",
            &["content-type: text/event-stream"],
            b"data: <html>not json</html>\n\ndata: [DONE]\n\n",
        ),
        _ => response("200 OK", &[JSON], COMPLETION.as_bytes()),
    }
}

/// Ten requests 100 ms apart (ids 0–9), the streamed ones where [`garbage`] streams.
const TEN: &str = "
name: drive-hostile
duration: 1200ms
router:
  model_list:
    - {model_name: gpt, litellm_params: {model: openai/gpt-4o}, model_info: {id: gpt-a}}
providers:
  gpt-a: {latency: 5ms}
traffic:
  - {at: 0ms, model: gpt}
  - {at: 100ms, model: gpt}
  - {at: 200ms, model: gpt}
  - {at: 300ms, model: gpt}
  - {at: 400ms, model: gpt, stream: true}
  - {at: 500ms, model: gpt, stream: true}
  - {at: 600ms, model: gpt}
  - {at: 700ms, model: gpt}
  - {at: 800ms, model: gpt}
  - {at: 900ms, model: gpt, stream: true}
";

fn write_scenario(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("scenario.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

fn drive_cmd(scenario: &Path, target: &str, out: &Path, extra: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_routersim"));
    cmd.arg("drive")
        .arg(scenario)
        .args(["--target", target])
        .arg("--out")
        .arg(out)
        .args(extra)
        .current_dir(repo());
    cmd
}

fn summary(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn garbage_answers_are_failures_of_the_right_kind_and_peer_counts_are_refused() {
    let dir = scratch_dir("drive-garbage");
    let scenario = write_scenario(&dir, TEN);
    let port = hostile(garbage);
    let url = format!("http://127.0.0.1:{port}");
    let out = dir.join("live");
    // The peer is also the `--providers` (it holds drive's clock connection): drive sees no
    // provider call, so what is checked is the client side alone.
    let o = drive_cmd(&scenario, &url, &out, &["--providers", &url])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let s = summary(&out);
    assert_eq!(s["requests"], 10, "{s:#}");
    // Only the well-formed completion and the well-formed stream are ok.
    assert_eq!(s["ok"], 2, "{s:#}");
    let kinds = &s["failed_by_kind"];
    assert_eq!(kinds["malformed_response"], 5, "{s:#}"); // 2, 3, 5, 6, 9
    assert_eq!(kinds["api_connection"], 2, "{s:#}"); // 1 (cut), 8 (named)
    assert_eq!(kinds["router_rate_limit"], 1, "{s:#}"); // 7 (named)
    assert!(kinds.get("rate_limit").is_none() && kinds.get("internal_server").is_none());
    // Two words, not 2^32 - 1; the one good stream completed, the two failed ones have no
    // outcome (failed without a break, as a simulation records them).
    assert_eq!(s["streams"]["requests"], 3);
    assert_eq!(s["streams"]["tokens_delivered"], 2, "{s:#}");
    let outcomes = s["streams"]["outcomes"].as_object().unwrap();
    assert_eq!(outcomes["completed"], 1, "{s:#}");
    assert_eq!(
        outcomes.values().map(|n| n.as_u64().unwrap()).sum::<u64>(),
        1,
        "{s:#}"
    );
    // Labelled live: in the terminal, summary.json and report.html.
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.starts_with(&format!(
            "drive-hostile (seed 0): live run against {url}, started "
        )),
        "{stdout}"
    );
    assert!(stdout.contains("s wall clock"), "{stdout}");
    assert!(
        s["live"]["started_at"].as_str().unwrap().ends_with('Z'),
        "{s:#}"
    );
    assert!(
        s["live"]["wall_clock_ms"].as_f64().unwrap() >= 1200.0,
        "{s:#}"
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains(&format!("<b>live run</b> against <b>{url}</b>")),
        "{html}"
    );
    assert!(!html.contains("virtual run end"));
    assert!(html.contains("warning: 7 failed requests the scenario did not inject"));
    // Said loudly, with counts: the scenario injects none of these.
    assert_eq!(s["live"]["not_injected"]["malformed_response"], 5, "{s:#}");
    assert_eq!(s["live"]["not_injected"]["api_connection"], 2, "{s:#}");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("warning: 7 failed requests the scenario did not inject"),
        "{stderr}"
    );
    // The per-request file says why.
    let rows = std::fs::read_to_string(out.join("live_requests.csv")).unwrap();
    assert!(rows.contains("content-type `text/html`"), "{rows}");
}

#[test]
fn a_drive_whose_every_connection_is_refused_fails_loudly() {
    let dir = scratch_dir("drive-refused");
    let scenario = write_scenario(&dir, TEN);
    let out = dir.join("live");
    let url = format!("http://127.0.0.1:{}", free_port());
    let o = drive_cmd(&scenario, &url, &out, &[]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains(&format!(
            "error: no request reached {url}: all 10 connections failed"
        )),
        "{stderr}"
    );
    // What happened is still written.
    let s = summary(&out);
    assert_eq!(s["live"]["unreached"], 10);
    assert_eq!(s["failed_by_kind"]["api_connection"], 10);
}

/// Answers every chat request ok, naming deployment `backup-1` (not the scenario's).
fn other_config(asked: &Asked) -> Answer {
    if asked.path.ends_with("/chat/completions") {
        response(
            "200 OK",
            &[JSON, "x-litellm-model-id: backup-1"],
            COMPLETION.as_bytes(),
        )
    } else {
        response("404 Not Found", &[JSON], b"{}")
    }
}

/// Says (LiteLLM's `/v1/model/info`) that it routes to `backup-1` and `gpt-b`.
fn stale_litellm(asked: &Asked) -> Answer {
    if asked.path.ends_with("/model/info") {
        response(
            "200 OK",
            &[JSON],
            br#"{"data":[{"model_name":"gpt","litellm_params":{"api_base":"http://127.0.0.1:1/d/gpt-b/v1"},"model_info":{"id":"gpt-b"}},{"model_name":"gpt","model_info":{"id":"backup-1"}}]}"#,
        )
    } else {
        other_config(asked)
    }
}

#[test]
fn a_router_routing_to_other_deployments_is_refused_or_reported() {
    let dir = scratch_dir("drive-stale");
    let scenario = write_scenario(&dir, TEN);
    // It says so up front: refused before anything is sent, nothing written.
    let url = format!("http://127.0.0.1:{}", hostile(stale_litellm));
    let out = dir.join("refused");
    let o = drive_cmd(&scenario, &url, &out, &[]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("routes to deployments backup-1, gpt-b and none of the scenario's (gpt-a)"),
        "{stderr}"
    );
    assert!(!out.exists());
    // It does not say: its answers do, and the run fails with the counts.
    let url = format!("http://127.0.0.1:{}", hostile(other_config));
    let out = dir.join("answered");
    let o = drive_cmd(&scenario, &url, &out, &["--providers", &url])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("does not route to the scenario's deployments: every answer came from others (backup-1 10)"),
        "{stderr}"
    );
    assert_eq!(summary(&out)["live"]["foreign_deployments"]["backup-1"], 10);
}

/// Spawns drive with piped output; returns once its providers listen (the stderr line).
fn spawn_until_providers(mut cmd: Command) -> (Killed, BufReader<std::process::ChildStderr>) {
    let mut child: Child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    loop {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "drive ended");
        if line.starts_with("fake providers on http://") {
            break;
        }
    }
    (Killed(child), stderr)
}

fn interrupt(child: &Child) {
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

#[test]
fn sigint_while_waiting_for_the_router_keeps_the_previous_report() {
    let dir = scratch_dir("drive-sigint-wait");
    let scenario = write_scenario(&dir, TEN);
    let out = dir.join("live");
    // A previous report in --out (a run against a router that answers).
    let url = format!("http://127.0.0.1:{}", hostile(garbage));
    let o = drive_cmd(&scenario, &url, &out, &["--providers", &url])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let before = std::fs::read(out.join("summary.json")).unwrap();
    // Now a router that never comes up; Ctrl-C while drive waits for it.
    let nobody = format!("http://127.0.0.1:{}", free_port());
    let (mut drive, mut stderr) = spawn_until_providers(drive_cmd(
        &scenario,
        &nobody,
        &out,
        &["--wait-for-target", "30s"],
    ));
    std::thread::sleep(Duration::from_millis(300));
    interrupt(&drive.0);
    let status = drive.0.wait().unwrap();
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert_eq!(status.code(), Some(130), "{rest}");
    assert!(
        rest.contains("stopped by ctrl-c before any request was sent"),
        "{rest}"
    );
    assert_eq!(std::fs::read(out.join("summary.json")).unwrap(), before);
    assert!(out.join("report.complete").exists());
}

/// 10 requests a second for a minute to providers that take 2 s, through a relay that
/// forwards every header (so the providers see each call's request id).
const SLOW: &str = "
name: drive-slow
duration: 60s
router:
  model_list:
    - {model_name: gpt, litellm_params: {model: openai/gpt-4o}, model_info: {id: gpt-a}}
providers:
  gpt-a: {latency: 2s}
traffic:
  - {model: gpt, rate: 10/s, to: 60s, arrival: uniform}
";

/// The report's attempts are the calls joined to answered requests, one each (the providers
/// never fail), and every other call is counted as unjoined.
fn assert_calls_of_unanswered_requests_join_nothing(out: &Path) -> Value {
    let s = summary(out);
    let live = &s["live"];
    let calls = live["provider_calls"].as_u64().unwrap();
    let joined = live["joined_by_request_id"].as_u64().unwrap();
    assert_eq!(live["joined_by_time"], 0, "{s:#}");
    assert_eq!(
        joined + live["unjoined_calls"].as_u64().unwrap(),
        calls,
        "{s:#}"
    );
    assert!(live["unjoined_calls"].as_u64().unwrap() > 0, "{s:#}");
    assert_eq!(s["attempts"].as_u64().unwrap(), joined, "{s:#}");
    assert_eq!(s["attempts_per_request"]["max"], 1, "{s:#}");
    let attempts = std::fs::read_to_string(out.join("attempts.csv")).unwrap();
    let rows: Vec<&str> = attempts.lines().skip(1).collect();
    assert_eq!(rows.len() as u64, joined, "{attempts}");
    assert!(rows.iter().all(|r| !r.starts_with(',')), "{attempts}");
    s
}

#[test]
fn sigint_while_sending_reports_what_was_answered_and_joins_no_call_elsewhere() {
    let dir = scratch_dir("drive-sigint-send");
    let scenario = write_scenario(&dir, SLOW);
    let out = dir.join("live");
    let relay = Relay::start();
    let (mut drive, mut stderr) = spawn_until_providers_with_relay(
        drive_cmd(&scenario, &relay.url("/d/gpt-a/v1"), &out, &[]),
        &relay,
    );
    std::thread::sleep(Duration::from_millis(2500));
    interrupt(&drive.0);
    let status = drive.0.wait().unwrap();
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert!(status.success(), "{rest}");
    let s = assert_calls_of_unanswered_requests_join_nothing(&out);
    assert_eq!(s["live"]["stopped_by"], "ctrl-c");
    assert!(s["live"]["unfinished"].as_u64().unwrap() > 0, "{s:#}");
    assert!(
        rest.contains("provider calls joined no answered request"),
        "{rest}"
    );
}

#[test]
fn an_expiring_drain_leaves_the_unanswered_calls_unjoined() {
    let dir = scratch_dir("drive-drain");
    let scenario = write_scenario(&dir, &SLOW.replace("60s", "1s"));
    let out = dir.join("live");
    let relay = Relay::start();
    let (mut drive, mut stderr) = spawn_until_providers_with_relay(
        drive_cmd(
            &scenario,
            &relay.url("/d/gpt-a/v1"),
            &out,
            &["--drain", "1500ms"],
        ),
        &relay,
    );
    let status = drive.0.wait().unwrap();
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert!(status.success(), "{rest}");
    // Requests sent before 0.5 s are answered by 2.5 s (the drain's end); the others are not.
    assert_calls_of_unanswered_requests_join_nothing(&out);
}

fn spawn_until_providers_with_relay(
    mut cmd: Command,
    relay: &Relay,
) -> (Killed, BufReader<std::process::ChildStderr>) {
    let mut child: Child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    loop {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "drive ended");
        if let Some(a) = line.trim().strip_prefix("fake providers on http://") {
            relay.point_at(a);
            break;
        }
    }
    (Killed(child), stderr)
}

/// A router that accepts every chat request and never answers it.
fn silent(asked: &Asked) -> Answer {
    if asked.path.ends_with("/chat/completions") {
        Answer::Hang
    } else {
        response("404 Not Found", &[JSON], b"{}")
    }
}

#[test]
fn sigint_while_draining_cuts_the_drain_short() {
    let dir = scratch_dir("drive-sigint-drain");
    let scenario = write_scenario(&dir, TEN);
    let out = dir.join("live");
    let url = format!("http://127.0.0.1:{}", hostile(silent));
    let (mut drive, mut stderr) =
        spawn_until_providers(drive_cmd(&scenario, &url, &out, &["--drain", "60s"]));
    // The last request is sent at 0.9 s, the scenario ends at 1.2 s: draining from then.
    std::thread::sleep(Duration::from_millis(1800));
    let begun = Instant::now();
    interrupt(&drive.0);
    let status = drive.0.wait().unwrap();
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert!(status.success(), "{rest}");
    assert!(
        begun.elapsed() < Duration::from_secs(10),
        "{:?}",
        begun.elapsed()
    );
    let s = summary(&out);
    assert_eq!(s["live"]["sent"], 10, "{s:#}");
    assert_eq!(s["live"]["unfinished"], 10, "{s:#}");
    assert_eq!(s["requests"], 0, "{s:#}");
}

/// A byte-for-byte TCP relay (a "router" that forwards every header) to an address known
/// once drive prints it.
struct Relay {
    port: u16,
    upstream: Arc<Mutex<Option<String>>>,
}

impl Relay {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let upstream: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
        let shared = upstream.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let upstream = shared.clone();
                std::thread::spawn(move || pipe(client, &upstream));
            }
        });
        Self { port, upstream }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn point_at(&self, addr: &str) {
        *self.upstream.lock().unwrap() = Some(addr.to_string());
    }
}

fn pipe(client: TcpStream, upstream: &Mutex<Option<String>>) {
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
}
