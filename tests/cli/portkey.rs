//! The Portkey gateway under test: `drive --header` (the gateway reads its routing from each
//! request), `--emit-portkey-config`, and the real gateway's decisions compared call for call
//! with `profile: portkey`'s simulation.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::{Killed, repo, scratch_dir};
use serde_json::Value;

/// Three requests to one deployment that always answers.
const THREE_OK: &str = "
name: header-test
duration: 1s
router:
  model_list:
    - {model_name: gpt, litellm_params: {model: openai/gpt-4o}, model_info: {id: gpt-a}}
providers:
  gpt-a: {latency: 5ms, output_tokens: 4}
traffic:
  - {at: 100ms, model: gpt}
  - {at: 200ms, model: gpt}
  - {at: 300ms, model: gpt, stream: true}
";

/// A router stand-in that, like the Portkey gateway, refuses (400) a request without
/// `x-portkey-config`, and otherwise relays it byte for byte to the address in `upstream`;
/// every request head it saw is kept in `heads`.
fn header_gate(listener: TcpListener, upstream: Arc<Mutex<Option<String>>>) -> Arc<Mutex<Vec<String>>> {
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(mut client) = client else { return };
            let upstream = upstream.clone();
            let seen = seen.clone();
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if client.read(&mut byte).unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                let text = String::from_utf8_lossy(&head).to_lowercase();
                seen.lock().unwrap().push(text.clone());
                if !text.contains("\r\nx-portkey-config: ") {
                    let body = r#"{"status":"failure","message":"Either x-portkey-config or x-portkey-provider header is required"}"#;
                    let _ = write!(
                        client,
                        "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    return;
                }
                let addr = loop {
                    if let Some(a) = upstream.lock().unwrap().clone() {
                        break a;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                };
                let Ok(mut server) = TcpStream::connect(addr) else { return };
                let _ = server.write_all(&head);
                let (mut c2, mut s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let up = std::thread::spawn(move || {
                    let _ = std::io::copy(&mut c2, &mut s2);
                    let _ = s2.shutdown(std::net::Shutdown::Write);
                });
                let _ = std::io::copy(&mut server, &mut client);
                let _ = client.shutdown(std::net::Shutdown::Write);
                let _ = up.join();
            });
        }
    });
    heads
}

/// Drives THREE_OK through the header gate with `headers` and `args`; (summary, request heads
/// seen, the fake providers' address).
fn drive_through_gate(name: &str, headers: &[&str], args: &[&str]) -> (Value, Vec<String>, String) {
    let dir = scratch_dir(name);
    let scenario = dir.join("drive.yaml");
    std::fs::write(&scenario, THREE_OK).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let upstream = Arc::new(Mutex::new(None));
    let heads = header_gate(listener, upstream.clone());
    let report = dir.join("live");
    let mut command = Command::new(env!("CARGO_BIN_EXE_routersim"));
    command
        .arg("drive")
        .arg(&scenario)
        .args(["--target", &format!("http://127.0.0.1:{port}/d/gpt-a/v1")])
        .args(["--drain", "5s"])
        .arg("--out")
        .arg(&report);
    for header in headers {
        command.args(["--header", header]);
    }
    command.args(args);
    let mut drive = Killed(
        command
            .current_dir(repo())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut stderr = BufReader::new(drive.0.stderr.take().unwrap());
    let providers = loop {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "drive ended");
        if let Some(a) = line.trim().strip_prefix("fake providers on http://") {
            *upstream.lock().unwrap() = Some(a.to_string());
            break a.to_string();
        }
    };
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert!(drive.0.wait().unwrap().success(), "{rest}");
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("summary.json")).unwrap())
            .unwrap();
    let heads = heads.lock().unwrap().clone();
    (summary, heads, providers)
}

/// Without `--header` a router that reads its routing from each request refuses every one;
/// with it (given twice: both are sent) every chat request passes and is served.
#[test]
fn drive_header_is_sent_on_every_request() {
    let (without, _, _) = drive_through_gate("portkey-no-header", &[], &[]);
    assert_eq!(without["requests"], 3, "{without:#}");
    assert_eq!(without["ok"], 0, "{without:#}");
    let config = r#"x-portkey-config: {"provider":"openai","api_key":"sk"}"#;
    let (with, heads, _) = drive_through_gate(
        "portkey-header",
        &[config, "x-portkey-trace-id: routersim"],
        &[],
    );
    assert_eq!(with["ok"], 3, "{with:#}");
    let chats: Vec<&String> = heads
        .iter()
        .filter(|h| h.starts_with("post ") && h.contains("/chat/completions"))
        .collect();
    assert_eq!(chats.len(), 3, "{heads:#?}");
    for head in chats {
        assert!(
            head.contains(r#"x-portkey-config: {"provider":"openai","api_key":"sk"}"#),
            "{head}"
        );
        assert!(head.contains("x-portkey-trace-id: routersim"), "{head}");
        assert!(head.contains("x-routersim-request-id: "), "{head}");
    }
}

#[test]
fn drive_refuses_a_malformed_header_or_one_of_routersims_own() {
    for (header, why) in [
        ("no-colon", "NAME: VALUE"),
        ("x-routersim-request-id: 1", "routersim's own"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_routersim"))
            .args(["drive", "scenarios/ci/rate-limit-storm.yaml", "--target", "http://127.0.0.1:9"])
            .args(["--header", header])
            .current_dir(repo())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{header}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(why), "{stderr}");
    }
}

/// `--emit-portkey-config FILE` writes the config derived from the scenario's router (its
/// deployment as a fallback target at the fake provider, `num_retries` as `retry.attempts`,
/// drive's `x-routersim-*` headers forwarded) and sends it on every request.
#[test]
fn emit_portkey_config_writes_the_config_and_sends_it_on_every_request() {
    let file = scratch_dir("portkey-emit-file").join("portkey.json");
    let file_arg = file.to_str().unwrap();
    let (summary, heads, providers) = drive_through_gate(
        "portkey-emit",
        &[],
        &["--emit-portkey-config", file_arg],
    );
    assert_eq!(summary["ok"], 3, "{summary:#}");
    let text = std::fs::read_to_string(&file).unwrap();
    let config: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(config["strategy"]["mode"], "fallback", "{config:#}");
    // THREE_OK sets no num_retries: LiteLLM's default, 2.
    assert_eq!(config["retry"]["attempts"], 2, "{config:#}");
    assert_eq!(
        config["retry"]["on_status_codes"],
        serde_json::json!([429, 500, 502, 503, 504])
    );
    assert_eq!(
        config["forward_headers"],
        serde_json::json!([
            "x-routersim-request-id",
            "x-routersim-input-tokens",
            "x-routersim-output-tokens"
        ])
    );
    let targets = config["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 1);
    assert_eq!(targets[0]["provider"], "openai");
    assert_eq!(
        targets[0]["custom_host"],
        format!("http://{providers}/d/gpt-a/v1")
    );
    assert_eq!(targets[0]["override_params"]["model"], "gpt-4o");
    let sent = format!("x-portkey-config: {}", text.trim()).to_lowercase();
    let chats = heads.iter().filter(|h| h.starts_with("post ")).count();
    assert_eq!(chats, 3, "{heads:#?}");
    assert!(heads.iter().filter(|h| h.starts_with("post ")).all(|h| h.contains(&sent)), "{heads:#?}");
}
