//! `routersim proxy` in front of `routersim serve`, end to end: curl (skipped with a warning
//! when absent), and the official `openai` Python client when the CI venv has it
//! (`target/ci-venv/bin/python`).

use std::path::Path;
use std::process::Command;

use crate::common::server::Server;
use crate::common::{Component, openai_python, runs_with};
use crate::common::{curl, curl_present, scratch_dir};

/// `gpt` has two deployments, `limited` always 429 with a 30 s Retry-After; `solo` has one
/// deployment that is down and falls back to `gpt`; `framed`'s first stream ends in an error
/// frame after 2 tokens, `broken`'s breaks at the connection after 2 tokens.
const SCENARIO: &str = "
name: proxy-test
duration: 10m
router:
  model_list:
    - {model_name: gpt, litellm_params: {model: openai/gpt-4o}, model_info: {id: good}}
    - {model_name: gpt, litellm_params: {model: openai/gpt-4o}, model_info: {id: limited}}
    - {model_name: solo, litellm_params: {model: openai/solo}, model_info: {id: down}}
    - {model_name: framed, litellm_params: {model: openai/f}, model_info: {id: framed}}
    - {model_name: broken, litellm_params: {model: openai/b}, model_info: {id: broken}}
  router_settings:
    num_retries: 2
    fallbacks: [{solo: [gpt]}]
providers:
  good: {latency: 5ms, ttft: 5ms, inter_token: 2ms, output_tokens: 5}
  limited: {latency: 1ms, then: {error: rate_limit, retry_after: 30s}}
  down: {latency: 1ms, then: {error: service_unavailable}}
  framed: {ttft: 1ms, inter_token: 1ms, output_tokens: 5,
           script: [{stream_error_frame: {after_tokens: 2, error: overloaded}}]}
  broken: {ttft: 1ms, inter_token: 1ms, output_tokens: 5,
           script: [{stream_break: {after_tokens: 2}}]}
traffic: []
";

/// `serve` on the scenario (calls logged in `dir/out`), and `proxy` on its LiteLLM config.
fn serve_and_proxy(dir: &Path) -> (Server, Server) {
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
    (serve, proxy)
}

/// A response header's value.
fn header<'a>(reply: &'a str, name: &str) -> Option<&'a str> {
    let head = reply.split("\n\n").next().unwrap_or("");
    head.lines().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

#[test]
fn proxy_routes_through_serve_cools_the_429_deployment_and_streams() {
    if !runs_with(
        Component::Curl,
        curl_present(),
        "the `routersim proxy` curl test",
    ) {
        return;
    }
    let dir = scratch_dir("proxy-curl");
    let (serve, proxy) = serve_and_proxy(&dir);
    let url = format!("http://{}/v1/chat/completions", proxy.addr);
    let body = r#"{"model":"gpt","messages":[{"role":"user","content":"hello"}]}"#;

    // 20 requests: the one that lands on `limited` is retried on `good`, and `limited` is
    // then cooled for its Retry-After (30 s), so it sees exactly one call.
    let mut retried = 0;
    for _ in 0..20 {
        let reply = curl(&[&url, "-d", body]);
        assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
        assert!(
            reply.contains(r#""content":"tok tok tok tok tok""#),
            "{reply}"
        );
        assert!(reply.contains(r#""completion_tokens":5"#), "{reply}");
        assert_eq!(
            header(&reply, "x-litellm-model-id"),
            Some("good"),
            "{reply}"
        );
        assert_eq!(header(&reply, "x-litellm-model-group"), Some("gpt"));
        assert_eq!(header(&reply, "x-litellm-attempted-fallbacks"), Some("0"));
        assert_eq!(
            header(&reply, "x-routersim-version"),
            Some(env!("CARGO_PKG_VERSION"))
        );
        assert!(header(&reply, "x-litellm-call-id").is_some(), "{reply}");
        let retries: u32 = header(&reply, "x-litellm-attempted-retries")
            .unwrap()
            .parse()
            .unwrap();
        retried += retries;
    }
    assert_eq!(retried, 1, "one request hit `limited` and was retried");

    // `solo` is down: its request falls back to `gpt`. The request id hint is echoed.
    let reply = curl(&[
        &url,
        "-H",
        "x-routersim-request-id: 77",
        "-d",
        r#"{"model":"solo","messages":[{"role":"user","content":"hi"}],"num_retries":0}"#,
    ]);
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert_eq!(
        header(&reply, "x-litellm-attempted-fallbacks"),
        Some("1"),
        "{reply}"
    );
    assert_eq!(
        header(&reply, "x-litellm-model-group"),
        Some("gpt"),
        "{reply}"
    );
    assert_eq!(
        header(&reply, "x-routersim-request-id"),
        Some("77"),
        "{reply}"
    );

    // A stream: chunks as they come, the finish chunk, [DONE].
    let reply = curl(&[
        "-N",
        &url,
        "-d",
        r#"{"model":"gpt","messages":[{"role":"user","content":"hi"}],"stream":true}"#,
    ]);
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert_eq!(header(&reply, "content-type"), Some("text/event-stream"));
    let frames: Vec<&str> = reply
        .split("\n\n")
        .skip(1)
        .filter(|f| f.starts_with("data: "))
        .collect();
    let text: String = frames
        .iter()
        .filter_map(|f| serde_json::from_str::<serde_json::Value>(&f["data: ".len()..]).ok())
        .filter_map(|v| {
            v["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_string)
        })
        .collect();
    let words = text.split_whitespace().filter(|w| *w == "tok").count();
    assert_eq!(words, 5, "{reply}");
    assert!(reply.contains(r#""finish_reason":"stop""#), "{reply}");
    assert_eq!(frames.last().copied(), Some("data: [DONE]"), "{reply}");

    // Streams that fail after content end as the engine ended them: an error frame (no
    // [DONE]) for an error frame, an abrupt close for a connection break.
    let stream_of = |model: &str| {
        format!(
            r#"{{"model":"{model}","messages":[{{"role":"user","content":"hi"}}],"stream":true}}"#
        )
    };
    let reply = curl(&["-N", &url, "-d", &stream_of("framed")]);
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.contains(r#""content":"tok"#), "{reply}");
    let last = reply.trim_end().rsplit("\n\n").next().unwrap();
    assert!(last.starts_with(r#"data: {"error":{"#), "{reply}");
    assert!(last.contains(r#""status":529"#), "{reply}");
    assert!(!reply.contains("[DONE]"), "{reply}");
    let output = Command::new("curl")
        .args([
            "-s",
            "-N",
            "--max-time",
            "20",
            &url,
            "-d",
            &stream_of("broken"),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains(r#""content":"tok"#), "{text}");
    assert!(
        !text.contains("[DONE]") && !text.contains(r#""error""#),
        "{text}"
    );
    assert!(
        !output.status.success(),
        "curl sees the transfer cut short: {text}"
    );

    // Unknown model: a 400 with an OpenAI error body; unknown path: 404.
    let reply = curl(&[&url, "-d", r#"{"model":"nope","messages":[]}"#]);
    assert!(reply.starts_with("HTTP/1.1 400"), "{reply}");
    assert!(
        reply.contains(r#""message":"Invalid model name passed in model=nope"#),
        "{reply}"
    );
    assert!(reply.contains(r#""code":"400""#), "{reply}");
    let reply = curl(&[&format!("http://{}/v2/nothing", proxy.addr)]);
    assert!(reply.starts_with("HTTP/1.1 404"), "{reply}");
    assert!(reply.contains(r#""error":{"#), "{reply}");
    let reply = curl(&[&format!("http://{}/health/liveliness", proxy.addr)]);
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.ends_with("\"I'm alive!\""), "{reply}");
    let reply = curl(&[&format!("http://{}/v1/models", proxy.addr)]);
    assert!(reply.contains(r#""id":"gpt""#) && reply.contains(r#""id":"solo""#));

    let rest = proxy.stop_with("-INT");
    assert!(
        rest.contains("stopped (ctrl-c): 25 requests served, 22 ok, 3 failed"),
        "{rest}"
    );
    serve.stop_with("-INT");
    // The provider side: `limited` got one call, then nothing (cooled for 30 s).
    let csv = std::fs::read_to_string(dir.join("out/provider_calls.csv")).unwrap();
    let calls = |id: &str| {
        csv.lines()
            .filter(|l| l.split(',').nth(1) == Some(id))
            .collect::<Vec<_>>()
    };
    let limited = calls("limited");
    assert_eq!(limited.len(), 1, "{csv}");
    assert!(limited[0].contains(",rate_limit,429,30000,"), "{csv}");
    assert_eq!(calls("good").len(), 22, "{csv}");
    let down = calls("down");
    assert_eq!(down.len(), 1, "{csv}");
    assert!(down[0].contains(",service_unavailable,503,"), "{csv}");
    // A stream that failed after content is not retried.
    let framed = calls("framed");
    assert_eq!(framed.len(), 1, "{csv}");
    assert!(framed[0].contains(",error_frame:overloaded,"), "{csv}");
    let broken = calls("broken");
    assert_eq!(broken.len(), 1, "{csv}");
    assert!(broken[0].contains(",break:api_connection,"), "{csv}");
}

#[test]
fn proxy_refuses_a_remote_address_and_a_bad_config() {
    let dir = scratch_dir("proxy-refuse");
    let config = dir.join("config.yaml");
    std::fs::write(
        &config,
        "model_list:\n  - {model_name: m, litellm_params: {model: openai/m, api_base: 'not a url'}}\n",
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_routersim"))
        .args(["proxy", "--config", config.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("config.yaml") && stderr.contains("api_base"),
        "{stderr}"
    );
    // No api_base: the provider's https default, which the proxy cannot call.
    std::fs::write(
        &config,
        "model_list:\n  - {model_name: m, litellm_params: {model: openai/m}}\n",
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_routersim"))
        .args(["proxy", "--config", config.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("model_list[0].litellm_params.api_base")
            && stderr.contains("https://api.openai.com"),
        "{stderr}"
    );
    std::fs::write(
        &config,
        "model_list:\n  - {model_name: m, litellm_params: {model: openai/m, api_base: 'http://127.0.0.1:9/v1'}}\n",
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_routersim"))
        .args([
            "proxy",
            "--config",
            config.to_str().unwrap(),
            "--listen",
            "0.0.0.0:0",
        ])
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
client = openai.OpenAI(base_url=sys.argv[1] + "/v1", api_key="sk-anything", max_retries=0)
r = client.chat.completions.create(model="gpt", messages=[{"role": "user", "content": "hello"}])
assert r.choices[0].message.content == "tok tok tok tok tok", r
assert r.usage.completion_tokens == 5, r
text = ""
for chunk in client.chat.completions.create(model="gpt", stream=True,
        messages=[{"role": "user", "content": "hello"}]):
    if chunk.choices and chunk.choices[0].delta.content:
        text += chunk.choices[0].delta.content
assert text.split() == ["tok"] * 5, text
try:
    client.chat.completions.create(model="nope", messages=[{"role": "user", "content": "hi"}])
    raise SystemExit("expected a BadRequestError")
except openai.BadRequestError as e:
    assert e.status_code == 400
    assert "Invalid model name" in e.body["message"], e.body
assert [m.id for m in client.models.list()] == ["gpt", "solo", "framed", "broken"]
print("openai client ok")
"#;

#[test]
fn proxy_answers_the_official_openai_python_client() {
    let python = openai_python();
    if !runs_with(
        Component::OpenAiClient,
        python.is_some(),
        "the openai client test of `routersim proxy`",
    ) {
        return;
    }
    let python = python.unwrap();
    let dir = scratch_dir("proxy-python");
    let (_serve, proxy) = serve_and_proxy(&dir);
    let output = Command::new(&python)
        .args(["-c", PYTHON_CLIENT, &format!("http://{}", proxy.addr)])
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
