//! `routersim serve` and `routersim proxy` under hostile input: counts a client or an
//! upstream supplies that would take gigabytes to render, slow and half-sent requests, too
//! many connections, malformed bodies, a port already taken. Each case holds the live path to
//! the simulator's standard: never crash, never lose the call log, never a wrong number, and
//! every limit it applies is the documented one.
//!
//! Raw HTTP/1.1 over `std::net::TcpStream` (no curl): the cases need byte-level control of
//! what is sent and when. Every wait is bounded.

use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::common::server::listening_addr;
use crate::common::{repo, scratch_dir};

/// The cap on output tokens a request may ask for (docs/limits.md).
pub(crate) const CAP: u64 = 1_000_000;

/// Deployments: `a` answers at once (its length from `max_tokens`), `slow` streams a token a
/// second, `limited` always answers 429 with Retry-After 10 s.
pub(crate) const SCENARIO: &str = "
name: hostile
duration: 10m
router:
  model_list:
    - {model_name: gpt, litellm_params: {model: openai/gpt-4o}, model_info: {id: a}}
    - {model_name: slow, litellm_params: {model: openai/gpt-4o}, model_info: {id: slow}}
    - {model_name: limited, litellm_params: {model: openai/gpt-4o}, model_info: {id: limited}}
  router_settings: {num_retries: 0}
providers:
  a: {latency: 0ms}
  slow: {latency: 0ms, ttft: 0ms, inter_token: 1s, output_tokens: 100}
  limited: {latency: 0ms, then: {error: rate_limit, retry_after: 10s}}
traffic: []
";

/// A running `routersim serve` or `proxy`, killed when dropped unless stopped.
pub(crate) struct Live {
    pub child: Child,
    pub stdout: BufReader<ChildStdout>,
    pub addr: String,
    pub stderr: PathBuf,
}

impl Drop for Live {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Live {
    /// SIGTERM, then the rest of stdout (the stop lines).
    pub fn stop(&mut self) -> String {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let mut rest = String::new();
        self.stdout.read_to_string(&mut rest).unwrap();
        let exit = self.child.wait().unwrap();
        assert!(exit.success(), "{exit:?}: {rest}");
        rest
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

/// Spawns `routersim ARGS…` (through `sh -c` with `shell_prefix` before it when given, e.g. a
/// `ulimit`) and waits for its `listening on http://ADDR` line.
pub(crate) fn spawn_live(
    dir: &Path,
    name: &str,
    args: &[&str],
    shell_prefix: Option<&str>,
) -> Live {
    let stderr = dir.join(format!("{name}.err"));
    let mut command = match shell_prefix {
        Some(prefix) => {
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg(format!("{prefix}; exec \"$0\" \"$@\""))
                .arg(env!("CARGO_BIN_EXE_routersim"))
                .args(args);
            c
        }
        None => {
            let mut c = Command::new(env!("CARGO_BIN_EXE_routersim"));
            c.args(args);
            c
        }
    };
    let mut child = command
        .current_dir(repo())
        .stdout(Stdio::piped())
        .stderr(File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let addr = listening_addr(&mut stdout);
    let Some(addr) = addr else {
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "{name} did not start: {}",
            std::fs::read_to_string(&stderr).unwrap_or_default()
        );
    };
    Live {
        child,
        stdout,
        addr,
        stderr,
    }
}

/// `routersim serve` on the hostile scenario, with `extra` flags.
pub(crate) fn serve(dir: &Path, extra: &[&str]) -> Live {
    let scenario = dir.join("hostile.yaml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let mut args = vec!["serve", scenario.to_str().unwrap()];
    args.extend_from_slice(extra);
    spawn_live(dir, "serve", &args, None)
}

/// A LiteLLM config with one model group per `(group, api_base)`, no retries.
pub(crate) fn proxy_config(dir: &Path, groups: &[(&str, &str)]) -> PathBuf {
    let mut text = String::from("model_list:\n");
    for (group, base) in groups {
        text.push_str(&format!(
            "  - model_name: {group}\n    litellm_params: {{model: openai/gpt-4o, api_base: \"{base}\", api_key: x}}\n    model_info: {{id: {group}-d}}\n"
        ));
    }
    text.push_str("router_settings: {num_retries: 0}\n");
    let file = dir.join("proxy.yaml");
    std::fs::write(&file, text).unwrap();
    file
}

/// `routersim proxy --config CONFIG --listen 127.0.0.1:0` with `extra` flags.
pub(crate) fn proxy(dir: &Path, config: &Path, extra: &[&str]) -> Live {
    let mut args = vec![
        "proxy",
        "--config",
        config.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
    ];
    args.extend_from_slice(extra);
    spawn_live(dir, "proxy", &args, None)
}

/// A response as read off the socket.
#[derive(Debug)]
pub(crate) struct Reply {
    pub status: u16,
    pub head: String,
    pub body: String,
}

/// Sends `raw` on a fresh connection and reads the answer until the server closes it (send
/// `connection: close`). `None` when the connection closed with no answer.
pub(crate) fn exchange(addr: &str, raw: &[u8], limit: Duration) -> Option<Reply> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(limit)).unwrap();
    s.write_all(raw).unwrap();
    read_reply(&mut s)
}

fn read_reply(s: &mut TcpStream) -> Option<Reply> {
    let mut bytes = Vec::new();
    let _ = s.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes).replace("\r\n", "\n");
    let (head, body) = text.split_once("\n\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    Some(Reply {
        status,
        head: head.to_string(),
        body: body.to_string(),
    })
}

/// A `POST path` with a JSON body, `connection: close`, and `headers` (`name: value` lines).
pub(crate) fn post(path: &str, body: &str, headers: &[&str]) -> Vec<u8> {
    let mut raw = format!(
        "POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    for h in headers {
        raw.push_str(h);
        raw.push_str("\r\n");
    }
    raw.push_str("\r\n");
    raw.push_str(body);
    raw.into_bytes()
}

/// Whether the server closed `s` (EOF or reset) within `limit`; `false` if it is still open.
fn closed_within(s: &mut TcpStream, limit: Duration) -> bool {
    s.set_read_timeout(Some(limit)).unwrap();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return false;
            }
            Err(_) => return true,
        }
    }
}

const CHAT: &str = "/d/a/v1/chat/completions";

#[test]
fn serve_refuses_output_counts_over_the_cap_and_keeps_its_call_log() {
    let dir = scratch_dir("hostile-counts");
    let out = dir.join("out");
    let mut server = serve(&dir, &["--out", out.to_str().unwrap()]);
    let ask = |body: &str, headers: &[&str]| {
        exchange(
            &server.addr,
            &post(CHAT, body, headers),
            Duration::from_secs(30),
        )
        .expect("an answer, not a dropped connection")
    };
    // Each of the three ways a client names an answer's length, past the cap.
    for (body, headers, named) in [
        (
            r#"{"model":"m","max_tokens":100000000}"#,
            &[][..],
            "max_tokens",
        ),
        (
            r#"{"model":"m","max_completion_tokens":4294967295}"#,
            &[][..],
            "max_completion_tokens",
        ),
        (
            r#"{"model":"m"}"#,
            &["x-routersim-output-tokens: 4294967295"][..],
            "x-routersim-output-tokens",
        ),
    ] {
        let reply = ask(body, headers);
        assert_eq!(reply.status, 400, "{reply:?}");
        assert!(
            reply.body.contains(named) && reply.body.contains(&CAP.to_string()),
            "the refusal names the count and the cap: {reply:?}"
        );
        assert!(reply.body.len() < 1000, "{} bytes", reply.body.len());
    }
    // At the cap: served, one word a token.
    let reply = ask(&format!(r#"{{"model":"m","max_tokens":{CAP}}}"#), &[]);
    assert_eq!(reply.status, 200, "{}", reply.head);
    let v: serde_json::Value = serde_json::from_str(&reply.body).unwrap();
    assert_eq!(v["usage"]["completion_tokens"], CAP);
    let content = v["choices"][0]["message"]["content"].as_str().unwrap();
    assert_eq!(content.split(' ').count() as u64, CAP);
    // Still up, and its call log is whole: four rows, the three refusals among them.
    let stop = server.stop();
    assert!(stop.contains("4 calls served"), "{stop}");
    let log = std::fs::read_to_string(out.join("provider_calls.csv")).unwrap();
    assert_eq!(log.lines().count(), 5, "{log}");
    assert_eq!(log.matches(",bad_request,400,").count(), 3, "{log}");
}

#[test]
fn serve_refuses_a_scenario_whose_answers_exceed_the_cap() {
    let dir = scratch_dir("hostile-scenario-cap");
    let file = dir.join("big.yaml");
    std::fs::write(
        &file,
        SCENARIO.replace("duration: 10m", "duration: 1s").replace(
            "a: {latency: 0ms}",
            "a: {latency: 0ms, output_tokens: 5..2000000}",
        ),
    )
    .unwrap();
    let out = crate::common::routersim(&["serve", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("providers.a.output_tokens") && err.contains("1000000"),
        "{err}"
    );
}

/// A fake upstream for the proxy: `/sane/…` answers with 5 output tokens, `/junk/…` with
/// `count`, as a JSON `usage.completion_tokens` or as one SSE chunk's `x_routersim.tokens`.
fn garbage_upstream(count: u64) -> (String, Arc<AtomicBool>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    listener.set_nonblocking(true).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    std::thread::spawn(move || {
        let begun = Instant::now();
        while !stopped.load(Ordering::Relaxed) && begun.elapsed() < Duration::from_secs(60) {
            match listener.accept() {
                Ok((s, _)) => {
                    std::thread::spawn(move || answer_upstream(s, count));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    });
    (addr, stop)
}

fn answer_upstream(mut s: TcpStream, count: u64) {
    s.set_nonblocking(false).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut request = Vec::new();
    let mut buf = [0u8; 4096];
    // The head, then the body by its content-length.
    let (head, body_len) = loop {
        let Ok(n) = s.read(&mut buf) else { return };
        if n == 0 {
            return;
        }
        request.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&request).to_string();
        if let Some(end) = text.find("\r\n\r\n") {
            let length: usize = text[..end]
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse().unwrap())
                })
                .unwrap_or(0);
            break (text[..end].to_string(), length + end + 4);
        }
    };
    while request.len() < body_len {
        let Ok(n) = s.read(&mut buf) else { return };
        if n == 0 {
            return;
        }
        request.extend_from_slice(&buf[..n]);
    }
    let count = if head.contains(" /sane/") { 5 } else { count };
    let stream = String::from_utf8_lossy(&request).contains(r#""stream":true"#);
    let (kind, body) = if stream {
        (
            "text/event-stream",
            format!(
                "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"tok\"}}}}],\"x_routersim\":{{\"tokens\":{count},\"span_us\":0}}}}\n\n\
                 data: {{\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"stop\"}}]}}\n\n\
                 data: [DONE]\n\n"
            ),
        )
    } else {
        (
            "application/json",
            format!(
                "{{\"id\":\"x\",\"object\":\"chat.completion\",\"created\":0,\"model\":\"gpt-4o\",\"choices\":[{{\"index\":0,\"message\":{{\"role\":\"assistant\",\"content\":\"tok\"}},\"finish_reason\":\"stop\"}}],\"usage\":{{\"prompt_tokens\":1,\"completion_tokens\":{count},\"total_tokens\":{count}}}}}"
            ),
        )
    };
    let _ = write!(
        s,
        "HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
}

#[test]
fn proxy_survives_upstream_counts_over_the_cap() {
    let dir = scratch_dir("hostile-upstream");
    let (upstream, stop_upstream) = garbage_upstream(u64::from(u32::MAX));
    let config = proxy_config(
        &dir,
        &[
            ("sane", &format!("http://{upstream}/sane/v1")),
            ("junk", &format!("http://{upstream}/junk/v1")),
        ],
    );
    let mut proxy = proxy(&dir, &config, &[]);
    let chat = |model: &str, stream: bool| {
        let body = format!(r#"{{"model":"{model}","stream":{stream},"messages":[]}}"#);
        exchange(
            &proxy.addr,
            &post("/v1/chat/completions", &body, &[]),
            Duration::from_secs(30),
        )
        .expect("the proxy answers")
    };
    // The fake upstream speaks the contract: 5 tokens come through as 5 words.
    for stream in [false, true] {
        let reply = chat("sane", stream);
        assert_eq!(reply.status, 200, "{reply:?}");
        assert!(reply.body.contains("tok tok tok tok tok"), "{reply:?}");
    }
    // 4294967295 tokens are not an answer: a malformed response (JSON) or an unreadable
    // stream (`api_connection`, as LiteLLM reads a stream it cannot parse), never 17 GB.
    let reply = chat("junk", false);
    assert_eq!(reply.status, 500, "{reply:?}");
    assert!(
        reply.body.contains(r#""kind":"malformed_response""#),
        "{reply:?}"
    );
    let reply = chat("junk", true);
    assert_eq!(reply.status, 500, "{reply:?}");
    assert!(
        reply.body.contains(r#""kind":"api_connection""#),
        "{reply:?}"
    );
    let stop = proxy.stop();
    assert!(stop.contains("4 requests served, 2 ok, 2 failed"), "{stop}");
    stop_upstream.store(true, Ordering::Relaxed);
}

/// The slow-client cases for one server: a trickled head, a silent connection, an idle
/// keep-alive connection and a stalled body are each cut at the stated timeout.
fn slow_clients_are_cut(addr: &str, path: &str) {
    // A head trickled a line at a time never completes: cut at the header timeout (0.5 s).
    let begun = Instant::now();
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(format!("POST {path} HTTP/1.1\r\n").as_bytes())
        .unwrap();
    let mut cut = false;
    for i in 0..40 {
        std::thread::sleep(Duration::from_millis(100));
        if s.write_all(format!("x-slow-{i}: 1\r\n").as_bytes())
            .is_err()
            || closed_within(&mut s, Duration::from_millis(1))
        {
            cut = true;
            break;
        }
    }
    let took = begun.elapsed();
    assert!(cut, "a trickled head was never cut");
    assert!(
        took >= Duration::from_millis(400) && took < Duration::from_secs(3),
        "cut after {took:?}"
    );

    // A connection that sends nothing: cut at the header timeout too.
    let begun = Instant::now();
    let mut s = TcpStream::connect(addr).unwrap();
    assert!(closed_within(&mut s, Duration::from_secs(3)));
    let took = begun.elapsed();
    assert!(took >= Duration::from_millis(400), "cut after {took:?}");

    // Keep-alive: answered, then open past the header timeout, closed at the idle timeout
    // (1.5 s).
    let mut s = TcpStream::connect(addr).unwrap();
    let body = r#"{"model":"m","max_tokens":2}"#;
    let keep = String::from_utf8(post(path, body, &[]))
        .unwrap()
        .replace("connection: close\r\n", "");
    s.write_all(keep.as_bytes()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut buf = [0u8; 8192];
    let n = s.read(&mut buf).unwrap();
    assert!(
        String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&buf[..n])
    );
    let answered = Instant::now();
    assert!(
        !closed_within(&mut s, Duration::from_millis(800)),
        "an idle keep-alive connection is not cut at the header timeout"
    );
    assert!(closed_within(&mut s, Duration::from_secs(3)));
    let idle = answered.elapsed();
    assert!(
        idle >= Duration::from_millis(1300) && idle < Duration::from_secs(4),
        "idle cut after {idle:?}"
    );

    // A body that stops arriving: 408, within the header timeout of the request's start.
    let begun = Instant::now();
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(
        format!("POST {path} HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{{\"model\"")
            .as_bytes(),
    )
    .unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let reply = read_reply(&mut s).expect("a 408, not a dropped connection");
    assert_eq!(reply.status, 408, "{reply:?}");
    assert!(reply.body.contains("--header-timeout"), "{reply:?}");
    assert!(begun.elapsed() < Duration::from_secs(3));
}

const SLOW_FLAGS: [&str; 4] = ["--header-timeout", "500ms", "--idle-timeout", "1500ms"];

#[test]
fn serve_cuts_slow_clients_at_its_timeouts() {
    let dir = scratch_dir("hostile-slow-serve");
    let server = serve(&dir, &SLOW_FLAGS);
    slow_clients_are_cut(&server.addr, CHAT);
}

#[test]
fn proxy_cuts_slow_clients_at_its_timeouts() {
    let dir = scratch_dir("hostile-slow-proxy");
    let server = serve(&dir, &[]);
    let config = proxy_config(&dir, &[("m", &format!("http://{}/d/a/v1", server.addr))]);
    let proxy = proxy(&dir, &config, &SLOW_FLAGS);
    slow_clients_are_cut(&proxy.addr, "/v1/chat/completions");
}

#[test]
fn half_sent_requests_do_not_starve_serve() {
    // 300 half-sent requests against a process allowed 256 open files: without a header
    // timeout they hold every descriptor forever and a legitimate request never gets in.
    let dir = scratch_dir("hostile-starve");
    let scenario = dir.join("hostile.yaml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let server = spawn_live(
        &dir,
        "serve",
        &[
            "serve",
            scenario.to_str().unwrap(),
            "--header-timeout",
            "1s",
        ],
        Some("ulimit -n 256"),
    );
    let mut held = Vec::new();
    for _ in 0..300 {
        let mut s = TcpStream::connect(&server.addr).unwrap();
        let _ = s.write_all(b"POST /d/a/v1/chat/completions HTTP/1.1\r\nhost: x\r\n");
        held.push(s);
    }
    let begun = Instant::now();
    let reply = exchange(
        &server.addr,
        &post(CHAT, r#"{"model":"m","max_tokens":1}"#, &[]),
        Duration::from_secs(10),
    )
    .expect("the legitimate request is answered");
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(
        begun.elapsed() < Duration::from_secs(5),
        "{:?}",
        begun.elapsed()
    );
    drop(held);
}

#[test]
fn max_connections_holds_new_connections_in_the_accept_queue() {
    let dir = scratch_dir("hostile-max-conn");
    let server = serve(&dir, &["--max-connections", "2"]);
    let first = TcpStream::connect(&server.addr).unwrap();
    let _second = TcpStream::connect(&server.addr).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let mut third = TcpStream::connect(&server.addr).unwrap();
    third
        .write_all(&post(CHAT, r#"{"model":"m","max_tokens":1}"#, &[]))
        .unwrap();
    third
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut buf = [0u8; 64];
    assert!(
        third.read(&mut buf).is_err(),
        "a third connection is not served while two are open"
    );
    first.shutdown(Shutdown::Both).unwrap();
    drop(first);
    let reply = read_reply(&mut {
        third
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        third
    })
    .expect("served once a slot frees");
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(
        server.stderr().contains("--max-connections 2"),
        "the saturation is said: {}",
        server.stderr()
    );
}

#[test]
fn malformed_and_empty_bodies_are_bad_requests() {
    let dir = scratch_dir("hostile-bodies");
    let server = serve(&dir, &[]);
    let config = proxy_config(&dir, &[("m", &format!("http://{}/d/a/v1", server.addr))]);
    let proxy = proxy(&dir, &config, &[]);
    let chunked = |path: &str| {
        format!(
            "POST {path} HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\nzz\r\n{{}}\r\n0\r\n\r\n"
        )
        .into_bytes()
    };
    for (addr, path) in [(&server.addr, CHAT), (&proxy.addr, "/v1/chat/completions")] {
        let reply = exchange(addr, &chunked(path), Duration::from_secs(10)).expect("an answer");
        assert_eq!(reply.status, 400, "{path}: {reply:?}");
    }
    let reply = exchange(&server.addr, &post(CHAT, "", &[]), Duration::from_secs(10)).unwrap();
    assert_eq!(reply.status, 400, "an empty body: {reply:?}");
    assert!(reply.body.contains("empty"), "{reply:?}");
}

#[test]
fn a_port_clash_names_the_address() {
    let dir = scratch_dir("hostile-port");
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let scenario = dir.join("hostile.yaml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let config = proxy_config(&dir, &[("m", "http://127.0.0.1:9/v1")]);
    for args in [
        vec!["serve", scenario.to_str().unwrap(), "--listen", &addr],
        vec![
            "proxy",
            "--config",
            config.to_str().unwrap(),
            "--listen",
            &addr,
        ],
    ] {
        let out = crate::common::routersim(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("--listen {addr}")) && err.contains("in use"),
            "{args:?}: {err}"
        );
    }
    drop(taken);
}

#[test]
fn the_proxy_stop_line_counts_the_streams_it_cut() {
    let dir = scratch_dir("hostile-cut");
    let server = serve(&dir, &[]);
    let config = proxy_config(
        &dir,
        &[("slow", &format!("http://{}/d/slow/v1", server.addr))],
    );
    let mut proxy = proxy(&dir, &config, &[]);
    let mut s = TcpStream::connect(&proxy.addr).unwrap();
    s.write_all(&post(
        "/v1/chat/completions",
        r#"{"model":"slow","stream":true,"messages":[]}"#,
        &[],
    ))
    .unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = [0u8; 4096];
    let n = s.read(&mut buf).unwrap();
    assert!(
        String::from_utf8_lossy(&buf[..n]).contains("text/event-stream"),
        "the stream began"
    );
    let stop = proxy.stop();
    assert!(
        stop.contains("0 requests served, 0 ok, 0 failed, 1 cut at stop (1 stream)"),
        "{stop}"
    );
}

#[test]
fn a_redis_url_error_names_redis_url() {
    let dir = scratch_dir("hostile-redis-url");
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let config = dir.join("proxy.yaml");
    std::fs::write(
        &config,
        format!(
            "model_list:\n  - {{model_name: m, litellm_params: {{model: openai/m, api_base: \"http://127.0.0.1:9/v1\"}}}}\nrouter_settings:\n  redis_url: redis://127.0.0.1:{port}\n"
        ),
    )
    .unwrap();
    let out = crate::common::routersim(&["proxy", "--config", config.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("router_settings.redis_url") && !err.contains("redis_host"),
        "{err}"
    );
}

#[test]
fn drive_refuses_a_host_name_before_resolving_it() {
    let dir = scratch_dir("hostile-drive-name");
    let scenario = dir.join("hostile.yaml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    // `.invalid` never resolves (RFC 6761): a lookup would fail with a resolver error; the
    // refusal must come first, naming the rule.
    for target in [
        "http://routersim-test.invalid:4000",
        "http://127.0.0.1:4000,http://replica.invalid:4001",
    ] {
        let out =
            crate::common::routersim(&["drive", scenario.to_str().unwrap(), "--target", target]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("not a loopback address"), "{target}: {err}");
    }
}
