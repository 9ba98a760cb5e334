//! `routersim serve` as a real client sees it: curl, and the official `openai` Python client
//! when the CI venv has it (`target/ci-venv/bin/python`).

use std::io::{BufRead, Read};
use std::path::Path;
use std::process::Command;

use crate::common::server::Server;
use crate::common::{Component, openai_python, runs_with};
use crate::common::{curl, curl_present, scratch_dir};

const SCENARIO: &str = "
name: serve-test
duration: 10m
router:
  model_list:
    - {model_name: gpt, litellm_params: {model: openai/gpt-4o}, model_info: {id: gpt-a}}
    - {model_name: gpt, litellm_params: {model: openai/gpt-4o}, model_info: {id: limited}}
    - {model_name: claude, litellm_params: {model: anthropic/claude}, model_info: {id: claude-a}}
providers:
  gpt-a: {latency: 5ms, ttft: 5ms, inter_token: 1ms, output_tokens: 5}
  limited: {latency: 1ms, then: {error: rate_limit, retry_after: 2s}}
  claude-a: {latency: 5ms, output_tokens: 3}
traffic: []
";

/// `routersim serve` of [`SCENARIO`] written into `dir`, with `extra` flags.
fn start(dir: &Path, extra: &[&str]) -> Server {
    let scenario = dir.join("serve.yaml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let mut args = vec!["serve", scenario.to_str().unwrap()];
    args.extend_from_slice(extra);
    Server::start(&args)
}

#[test]
fn serve_answers_curl_and_logs_every_call() {
    if !runs_with(
        Component::Curl,
        curl_present(),
        "the `routersim serve` curl test",
    ) {
        return;
    }
    let dir = scratch_dir("serve-curl");
    let out = dir.join("out");
    let config = dir.join("litellm.yaml");
    let mut server = start(
        &dir,
        &[
            "--out",
            out.to_str().unwrap(),
            "--emit-litellm-config",
            config.to_str().unwrap(),
        ],
    );
    let base = format!("http://{}", server.addr);
    let body = r#"{"model":"gpt-4o","messages":[{"role":"user","content":"hello"}]}"#;

    let reply = curl(&[&format!("{base}/d/gpt-a/v1/chat/completions"), "-d", body]);
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(
        reply.contains(r#""content":"tok tok tok tok tok""#),
        "{reply}"
    );
    assert!(reply.contains(r#""finish_reason":"stop""#), "{reply}");

    let reply = curl(&[&format!("{base}/d/limited/v1/chat/completions"), "-d", body]);
    assert!(reply.starts_with("HTTP/1.1 429"), "{reply}");
    assert!(reply.contains("\nretry-after: 2\n"), "{reply}");
    assert!(reply.contains(r#""code":"rate_limit_exceeded""#), "{reply}");

    let stream = r#"{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"stream":true}"#;
    let reply = curl(&[
        "-N",
        &format!("{base}/d/gpt-a/v1/chat/completions"),
        "-d",
        stream,
    ]);
    assert!(reply.contains("content-type: text/event-stream"), "{reply}");
    assert!(reply.contains("data: {"), "{reply}");
    assert!(reply.trim_end().ends_with("data: [DONE]"), "{reply}");

    let reply = curl(&[&format!("{base}/d/claude-a/v1/messages"), "-d", body]);
    assert!(reply.contains(r#""type":"message""#), "{reply}");

    let text = std::fs::read_to_string(&config).unwrap();
    assert!(
        text.contains(&format!("api_base: \"{base}/d/gpt-a/v1\"")),
        "{text}"
    );
    assert!(
        text.contains(&format!("api_base: \"{base}/d/claude-a\"")),
        "{text}"
    );
    assert!(text.contains("api_key: \"sk-routersim-dummy\""), "{text}");

    // Ctrl-C: the server stops, and provider_calls.csv is in place.
    let pid = server.child.id().to_string();
    let status = Command::new("kill").args(["-INT", &pid]).status().unwrap();
    assert!(status.success());
    let exit = server.child.wait().unwrap();
    let mut rest = String::new();
    server.stdout.read_to_string(&mut rest).unwrap();
    assert!(exit.success(), "{rest}");
    assert!(rest.contains("stopped (ctrl-c): 4 calls served"), "{rest}");
    let csv = std::fs::read_to_string(out.join("provider_calls.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "at_ms,deployment_id,path,stream,outcome,status,retry_after_ms,latency_ms,tokens,request_id"
    );
    assert_eq!(lines.len(), 5, "{csv}");
    assert!(
        lines[1].contains(",gpt-a,/d/gpt-a/v1/chat/completions,false,ok,200,,"),
        "{csv}"
    );
    assert!(
        lines[2].contains(",limited,/d/limited/v1/chat/completions,false,rate_limit,429,2000,"),
        "{csv}"
    );
    assert!(
        lines[3].contains(",gpt-a,/d/gpt-a/v1/chat/completions,true,ok,200,,"),
        "{csv}"
    );
    // 5 tokens; no request id (curl sends none).
    assert!(lines[3].ends_with(",5,"), "{csv}");
}

#[test]
fn serve_refuses_a_remote_address_without_allow_remote() {
    let dir = scratch_dir("serve-remote");
    let scenario = dir.join("serve.yaml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_routersim"))
        .args(["serve", scenario.to_str().unwrap(), "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("not a loopback address") && stderr.contains("--allow-remote"),
        "{stderr}"
    );
}

const PYTHON_CLIENT: &str = r#"
import sys, openai
base = sys.argv[1]
client = openai.OpenAI(base_url=base + "/d/gpt-a/v1", api_key="sk-routersim-dummy", max_retries=0)
r = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hello"}])
assert r.choices[0].message.content == "tok tok tok tok tok", r
assert r.usage.completion_tokens == 5, r
text = ""
for chunk in client.chat.completions.create(model="gpt-4o", stream=True,
        messages=[{"role": "user", "content": "hello"}]):
    if chunk.choices and chunk.choices[0].delta.content:
        text += chunk.choices[0].delta.content
assert text.split() == ["tok"] * 5, text
limited = openai.OpenAI(base_url=base + "/d/limited/v1", api_key="sk-routersim-dummy", max_retries=0)
try:
    limited.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    raise SystemExit("expected a RateLimitError")
except openai.RateLimitError as e:
    assert e.status_code == 429
    assert e.response.headers["retry-after"] == "2"
    assert e.body["code"] == "rate_limit_exceeded", e.body
print("openai client ok")
"#;

#[test]
fn serve_answers_the_official_openai_python_client() {
    let python = openai_python();
    if !runs_with(
        Component::OpenAiClient,
        python.is_some(),
        "the openai client test",
    ) {
        return;
    }
    let python = python.unwrap();
    let dir = scratch_dir("serve-python");
    let server = start(&dir, &[]);
    let output = Command::new(&python)
        .args(["-c", PYTHON_CLIENT, &format!("http://{}", server.addr)])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    assert!(stdout.contains("openai client ok"), "{stdout}");
}

#[test]
fn port_per_deployment_serves_without_the_prefix() {
    if !runs_with(
        Component::Curl,
        curl_present(),
        "the --port-per-deployment test",
    ) {
        return;
    }
    let dir = scratch_dir("serve-ports");
    let mut server = start(&dir, &["--port-per-deployment"]);
    // The deployment lines follow the address: `  gpt-a (openai/gpt-4o): … own port: http://H:P`.
    let mut own = None;
    for _ in 0..3 {
        let mut line = String::new();
        server.stdout.read_line(&mut line).unwrap();
        if line.trim_start().starts_with("gpt-a ") {
            own = line
                .split("own port: http://")
                .nth(1)
                .map(|s| s.trim().to_string());
        }
    }
    let own = own.expect("gpt-a's own port is printed");
    assert_ne!(own, server.addr);
    let body = r#"{"model":"gpt-4o","messages":[{"role":"user","content":"hello"}]}"#;
    let reply = curl(&[&format!("http://{own}/v1/chat/completions"), "-d", body]);
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(
        reply.contains(r#""content":"tok tok tok tok tok""#),
        "{reply}"
    );
    let reply = curl(&[&format!("http://{own}/v1/models")]);
    assert!(reply.contains(r#""id":"gpt-4o""#), "{reply}");

    // SIGTERM stops it as Ctrl-C does.
    let pid = server.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let exit = server.child.wait().unwrap();
    let mut rest = String::new();
    server.stdout.read_to_string(&mut rest).unwrap();
    assert!(exit.success(), "{rest}");
    assert!(rest.contains("stopped (sigterm): 1 calls served"), "{rest}");
}
