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
fn header_gate(
    listener: TcpListener,
    upstream: Arc<Mutex<Option<String>>>,
) -> Arc<Mutex<Vec<String>>> {
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
                let Ok(mut server) = TcpStream::connect(addr) else {
                    return;
                };
                let _ = server.write_all(&head);
                let (mut c2, mut s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                // drive keeps connections alive: the later requests on this one are relayed
                // too, and each head is seen before it is forwarded.
                let up = std::thread::spawn(move || {
                    let (mut pending, mut chunk) = (Vec::new(), [0u8; 16 * 1024]);
                    loop {
                        let n = c2.read(&mut chunk).unwrap_or(0);
                        if n == 0 {
                            break;
                        }
                        pending.extend_from_slice(&chunk[..n]);
                        for head in complete_heads(&mut pending) {
                            seen.lock().unwrap().push(head);
                        }
                        if s2.write_all(&chunk[..n]).is_err() {
                            break;
                        }
                    }
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

/// The heads of the whole requests (head and `content-length` body) at the front of
/// `pending`, lowercased; what they took is drained.
fn complete_heads(pending: &mut Vec<u8>) -> Vec<String> {
    let mut heads = Vec::new();
    while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
        let head = String::from_utf8_lossy(&pending[..end + 4]).to_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        if pending.len() < end + 4 + length {
            break;
        }
        pending.drain(..end + 4 + length);
        heads.push(head);
    }
    heads
}

/// Drives THREE_OK through the header gate with `headers` and `args`; (summary, request heads
/// seen, the fake providers' address).
fn drive_through_gate(name: &str, headers: &[&str], args: &[&str]) -> (Value, Vec<String>, String) {
    drive_yaml_through_gate(name, THREE_OK, headers, args, true)
}

/// [`drive_through_gate`] with the scenario `yaml`; `succeeds`: whether drive exits 0 (else it
/// must say the run tested nothing of the scenario: no call reached its providers).
fn drive_yaml_through_gate(
    name: &str,
    yaml: &str,
    headers: &[&str],
    args: &[&str],
    succeeds: bool,
) -> (Value, Vec<String>, String) {
    let dir = scratch_dir(name);
    let scenario = dir.join("drive.yaml");
    std::fs::write(&scenario, yaml).unwrap();
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
    assert_eq!(drive.0.wait().unwrap().success(), succeeds, "{rest}");
    if !succeeds {
        assert!(
            rest.contains("the run tested nothing of the scenario"),
            "{rest}"
        );
    }
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("summary.json")).unwrap())
            .unwrap();
    let heads = heads.lock().unwrap().clone();
    (summary, heads, providers)
}

/// Without `--header` a router that reads its routing from each request refuses every one
/// (drive fails: no call reached the scenario's providers); with it (given twice: both are
/// sent) every chat request passes and is served.
#[test]
fn drive_header_is_sent_on_every_request() {
    let (without, _, _) = drive_yaml_through_gate("portkey-no-header", THREE_OK, &[], &[], false);
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
            .args([
                "drive",
                "scenarios/ci/rate-limit-storm.yaml",
                "--target",
                "http://127.0.0.1:9",
            ])
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
    let (summary, heads, providers) =
        drive_through_gate("portkey-emit", &[], &["--emit-portkey-config", file_arg]);
    assert_eq!(summary["ok"], 3, "{summary:#}");
    let text = std::fs::read_to_string(&file).unwrap();
    let config: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        config["strategy"],
        serde_json::json!({"mode": "fallback"}),
        "{config:#}"
    );
    assert_eq!(config["retry"].get("use_retry_after_header"), None);
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
    assert!(
        heads
            .iter()
            .filter(|h| h.starts_with("post "))
            .all(|h| h.contains(&sent)),
        "{heads:#?}"
    );
}

/// `portkey_use_retry_after_header` and `portkey_fallback_on_status_codes` become the
/// config's `retry.use_retry_after_header` and `strategy.on_status_codes`.
#[test]
fn emit_portkey_config_carries_the_portkey_keys() {
    let file = scratch_dir("portkey-emit-keys-file").join("portkey.json");
    let file_arg = file.to_str().unwrap();
    let yaml = THREE_OK.replace(
        "model_info: {id: gpt-a}}\n",
        "model_info: {id: gpt-a}}\n  router_settings:\n    profile: portkey\n    \
         portkey_use_retry_after_header: true\n    portkey_fallback_on_status_codes: [429, 503]\n",
    );
    assert_ne!(yaml, THREE_OK);
    let (summary, _, _) = drive_yaml_through_gate(
        "portkey-emit-keys",
        &yaml,
        &[],
        &["--emit-portkey-config", file_arg],
        true,
    );
    assert_eq!(summary["ok"], 3, "{summary:#}");
    let config: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        config["strategy"],
        serde_json::json!({"mode": "fallback", "on_status_codes": [429, 503]}),
        "{config:#}"
    );
    assert_eq!(
        config["retry"]["use_retry_after_header"], true,
        "{config:#}"
    );
}

/// The installed gateway's entry point (`tools/portkey/install`).
fn gateway_installed() -> bool {
    repo()
        .join("target/portkey/node_modules/@portkey-ai/gateway/build/start-server.js")
        .exists()
        && Command::new("node")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
}

/// The gateway on a free loopback port, once it says it is ready: before anything else the
/// test starts binds a port of its own (drive's fake providers once took the port the gateway
/// was still starting on, and the gateway exited with `EADDRINUSE`). A gateway that exits
/// before it is ready (its port taken meanwhile) is started again on another port, three
/// times at most. Its output is in `DIR/gateway.out` and `DIR/gateway.err`.
fn start_gateway(dir: &std::path::Path) -> (Killed, u16) {
    for _try in 0..3 {
        let port = crate::common::free_port();
        let mut gateway = Killed(
            Command::new(repo().join("tools/portkey/start"))
                .arg(port.to_string())
                .current_dir(repo())
                .stdout(std::fs::File::create(dir.join("gateway.out")).unwrap())
                .stderr(std::fs::File::create(dir.join("gateway.err")).unwrap())
                .spawn()
                .unwrap(),
        );
        let begun = std::time::Instant::now();
        while begun.elapsed() < Duration::from_secs(60) {
            let out = std::fs::read_to_string(dir.join("gateway.out")).unwrap_or_default();
            if out.contains("Ready for connections") {
                return (gateway, port);
            }
            if gateway.0.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    panic!(
        "the Portkey gateway did not start; its log: {}",
        dir.join("gateway.err").display()
    );
}

/// One attempt: (deployment, outcome, wait before it in ms), from `attempts.csv`, by request.
type Attempt = (String, String, f64);

fn attempts_by_request(report: &std::path::Path) -> std::collections::BTreeMap<u64, Vec<Attempt>> {
    let text = std::fs::read_to_string(report.join("attempts.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (id, dep, outcome, wait) = (
        col("request_id"),
        col("deployment_id"),
        col("outcome"),
        col("wait_ms"),
    );
    let mut by_request = std::collections::BTreeMap::new();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        by_request
            .entry(f[id].parse().unwrap())
            .or_insert_with(Vec::new)
            .push((
                f[dep].to_string(),
                f[outcome].to_string(),
                f[wait].parse().unwrap(),
            ));
    }
    by_request
}

/// How much later than the formula a live retry may start: the gateway's own work between
/// the answer and its timer, and the timer's lateness (Node's timers are never early). Below
/// 1 s, so that a wait of 1 s is never taken for none or for 2 s: on an idle machine the
/// gateway adds 5-40 ms; under a full parallel test run on a shared 2-core machine, up to
/// 360 ms was seen.
const LIVE_WAIT_SLACK_MS: f64 = 750.0;

/// The five incidents through the real Portkey gateway 1.15.2 (installed and patched by
/// `tools/portkey/install`, on loopback by `tools/portkey/start`), each driven with the config
/// `--emit-portkey-config` derives, against the same scenario simulated under
/// `profile: portkey`: every request makes the same calls to the same deployments with the
/// same outcomes (retries, fallback hops, a stream cut passed through, no hop after a status
/// outside `strategy.on_status_codes`), and every retry's
/// wait is node-retry's `1000 · 2^k` ms (with `use_retry_after_header`: the 429's
/// Retry-After, also before the hop after the last one) — exactly in the simulation, within
/// [`LIVE_WAIT_SLACK_MS`] live.
#[test]
fn portkey_gateway_matches_profile_portkey_call_for_call() {
    let _turn = crate::common::real_time_turn();
    let name = "portkey_gateway_matches_profile_portkey_call_for_call";
    if !crate::common::runs_with(crate::common::Component::Portkey, gateway_installed(), name) {
        return;
    }
    let dir = scratch_dir("portkey-gateway");
    let (_gateway, port) = start_gateway(&dir);
    for incident in [
        "429-storm",
        "503-outage",
        "stream-cut",
        "retry-after",
        "status-list",
        "retry-list",
        "loadbalance",
    ] {
        let scenario = format!("scenarios/live/portkey-{incident}.yaml");
        let sim = dir.join(format!("{incident}-sim"));
        let out = Command::new(env!("CARGO_BIN_EXE_routersim"))
            .args(["run", &scenario, "--out"])
            .arg(&sim)
            .current_dir(repo())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let live = dir.join(format!("{incident}-live"));
        let out = Command::new(env!("CARGO_BIN_EXE_routersim"))
            .args(["drive", &scenario])
            .args(["--target", &format!("http://127.0.0.1:{port}")])
            .arg("--emit-portkey-config")
            .arg(dir.join(format!("{incident}.json")))
            .args(["--wait-for-target", "60s", "--drain", "15s", "--out"])
            .arg(&live)
            .current_dir(repo())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{incident}: {}\ngateway log: {}",
            String::from_utf8_lossy(&out.stderr),
            dir.join("gateway.err").display()
        );
        let summary = |report: &std::path::Path| -> Value {
            serde_json::from_str(&std::fs::read_to_string(report.join("summary.json")).unwrap())
                .unwrap()
        };
        let (s_sim, s_live) = (summary(&sim), summary(&live));
        assert_eq!(s_live["live"]["unfinished"], 0, "{incident}: {s_live:#}");
        assert_eq!(
            s_live["live"]["joined_by_request_id"], s_live["live"]["provider_calls"],
            "{incident}: every call joins its request by the forwarded x-routersim-request-id"
        );
        // (`retries` is not compared: a live report cannot tell a hop to the group's next
        // deployment from a retry; the calls below are compared one by one instead. Under
        // loadbalance both sides draw at random, so the outcomes' counts may differ.)
        let loadbalance = incident == "loadbalance";
        let keys: &[&str] = if loadbalance {
            &["requests"]
        } else {
            &["requests", "ok", "failed", "attempts"]
        };
        for key in keys {
            assert_eq!(s_live[key], s_sim[key], "{incident}: {key}");
        }
        if incident == "stream-cut" {
            // The cut passes through after content: the stream answered 200 (unpatched, the
            // gateway's `TypeError: immutable` turns every stream into a 500 before a token).
            let text = std::fs::read_to_string(live.join("live_requests.csv")).unwrap();
            let streamed: Vec<&str> = text.lines().filter(|l| l.contains(",true,")).collect();
            assert_eq!(streamed.len(), 2, "{text}");
            for row in streamed {
                assert!(
                    row.contains(",200,") && row.contains("broken_after_content"),
                    "{row}"
                );
            }
        }
        let (sim, live) = (attempts_by_request(&sim), attempts_by_request(&live));
        assert_eq!(sim.len(), live.len(), "{incident}");
        // Loadbalance: a live request is compared with a simulated one that drew its target.
        let drawn = if loadbalance {
            loadbalance_draws(&sim, &live)
        } else {
            std::collections::BTreeMap::new()
        };
        for (id, measured) in &live {
            let simulated = match drawn.get(&measured[0].0) {
                Some(simulated) => simulated,
                None => &sim[id],
            };
            let calls = |a: &[Attempt]| -> Vec<(String, String)> {
                a.iter().map(|(d, o, _)| (d.clone(), o.clone())).collect()
            };
            assert_eq!(calls(measured), calls(simulated), "{incident} request {id}");
            if incident == "retry-list" {
                // 500 is not on `[503]`: gpt-a once (the default list would retry it).
                let to_a = simulated.iter().filter(|(d, _, _)| d == "gpt-a").count();
                assert_eq!((to_a, simulated.len()), (1, 3), "{simulated:?}");
            }
            let mut same_target_retries = 0;
            for i in 1..simulated.len() {
                let expected = if incident == "retry-after" {
                    // `use_retry_after_header`: after each 429 (Retry-After: 1) the gateway
                    // waits its 1 s, before a retry and before the hop after the last one.
                    if simulated[i - 1].1 == "rate_limit" {
                        1000.0
                    } else {
                        0.0
                    }
                } else if simulated[i].0 == simulated[i - 1].0 {
                    same_target_retries += 1;
                    1000.0 * 2f64.powi(same_target_retries - 1)
                } else {
                    same_target_retries = 0;
                    0.0
                };
                let (sim_wait, live_wait) = (simulated[i].2, measured[i].2);
                assert_eq!(sim_wait, expected, "{incident} request {id} attempt {i}");
                assert!(
                    live_wait >= expected - 5.0 && live_wait <= expected + LIVE_WAIT_SLACK_MS,
                    "{incident} request {id} attempt {i}: waited {live_wait} ms, formula {expected}"
                );
            }
        }
        eprintln!(
            "{incident}: {} requests, {} attempts, live = simulated",
            sim.len(),
            s_sim["attempts"]
        );
    }
    simulated_draws_follow_the_weights(&dir);
}

/// `portkey-loadbalance`'s draws (gpt-a weight 3, gpt-b 1, gpt-c 0): every request, live and
/// simulated, calls one target only (no fallback) and never gpt-c; the simulation draws both
/// others (seed 35), and live, gpt-a is drawn at least twice of 8 (a draw of weight 3/4 falls
/// below that with probability 8·¾·¼⁷ + ¼⁸ < 4·10⁻⁴). Returns, by target, the calls of a
/// simulated request that drew it.
fn loadbalance_draws<'a>(
    sim: &'a std::collections::BTreeMap<u64, Vec<Attempt>>,
    live: &std::collections::BTreeMap<u64, Vec<Attempt>>,
) -> std::collections::BTreeMap<String, &'a Vec<Attempt>> {
    let mut live_draws = std::collections::BTreeMap::<&str, u32>::new();
    for (side, requests) in [("simulated", sim), ("live", live)] {
        for (id, calls) in requests {
            let target = &calls[0].0;
            assert!(
                calls.iter().all(|(d, _, _)| d == target) && target != "gpt-c",
                "{side} request {id}: {calls:?}"
            );
            if side == "live" {
                *live_draws.entry(target).or_default() += 1;
            }
        }
    }
    let by_target: std::collections::BTreeMap<String, &Vec<Attempt>> = sim
        .values()
        .map(|calls| (calls[0].0.clone(), calls))
        .collect();
    assert_eq!(
        by_target.len(),
        2,
        "the simulation draws gpt-a and gpt-b: {sim:?}"
    );
    assert!(
        live_draws.get("gpt-a").copied().unwrap_or(0) >= 2,
        "{live_draws:?}"
    );
    eprintln!("loadbalance live draws: {live_draws:?}");
    by_target
}

/// The simulated draws of `portkey-loadbalance` over seeds 1-50 (8 requests each, 400 draws;
/// a request's final route, `latency_by_final_route`, is the target it drew): gpt-a (weight 3
/// of 4) is drawn `k` times with `k` within 5 standard deviations of 300 (`sqrt(400·¾·¼)` ≈
/// 8.7: 257-343; a fair draw lands outside less than once in a million; the seeds make it
/// deterministic), gpt-b the rest, gpt-c (weight 0) never; no run has a fallback or a request
/// of more than 2 attempts.
fn simulated_draws_follow_the_weights(dir: &std::path::Path) {
    let out = dir.join("loadbalance-seeds");
    let run = Command::new(env!("CARGO_BIN_EXE_routersim"))
        .args([
            "sweep",
            "scenarios/live/portkey-loadbalance.yaml",
            "--seeds",
            "1..50",
        ])
        .args([
            "--set",
            "router_settings.portkey_strategy=loadbalance",
            "--no-baseline",
        ])
        .arg("--out")
        .arg(&out)
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let mut draws = std::collections::BTreeMap::<String, u64>::new();
    let mut runs = 0;
    for entry in walk_files(&out) {
        if entry.file_name().is_some_and(|n| n == "summary.json")
            && entry.parent() != Some(out.as_path())
        {
            let s: Value = serde_json::from_str(&std::fs::read_to_string(&entry).unwrap()).unwrap();
            if s.get("requests").is_none() {
                continue;
            }
            runs += 1;
            for (target, route) in s["latency_by_final_route"].as_object().unwrap() {
                *draws.entry(target.clone()).or_default() += route["count"].as_u64().unwrap();
            }
            assert_eq!(s["fallbacks"], 0, "{}", entry.display());
            let most = s["attempts_per_request"]["max"].as_u64().unwrap();
            assert!(most <= 2, "{}", entry.display());
        }
    }
    let count = |target: &str| draws.get(target).copied().unwrap_or(0);
    assert_eq!(runs, 50, "{}", out.display());
    assert_eq!(count("gpt-a") + count("gpt-b"), 400, "{draws:?}");
    assert_eq!(count("gpt-c"), 0, "{draws:?}");
    let sigma = (400.0f64 * 0.75 * 0.25).sqrt();
    assert!(
        (count("gpt-a") as f64 - 300.0).abs() <= 5.0 * sigma,
        "{draws:?}"
    );
    eprintln!("loadbalance simulated draws, seeds 1-50: {draws:?}");
}

/// Every file under `dir`, depth first.
fn walk_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk_files(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// `explore`'s wait bound follows the profile: Portkey's waits double without a cap, so with
/// `num_retries: 5` its last retry waits 16 s, which is no violation there (LiteLLM's cap,
/// 8 s plus jitter, would call it one).
#[test]
fn explore_allows_portkeys_uncapped_waits() {
    let dir = scratch_dir("portkey-explore");
    let scenario = dir.join("pk.yaml");
    std::fs::write(
        &scenario,
        "
name: pk-explore
seed: 1
duration: 1m
router:
  model_list:
    - {model_name: g, litellm_params: {model: openai/a}, model_info: {id: a}}
    - {model_name: g, litellm_params: {model: openai/b}, model_info: {id: b}}
  router_settings: {profile: portkey, num_retries: 5}
providers:
  a: {latency: 10ms}
  b: {latency: 10ms}
faults:
  - {deployment: a, error: service_unavailable, probability: 1.0}
traffic:
  - {at: 1s, model: g}
",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_routersim"))
        .arg("explore")
        .arg(&scenario)
        .args(["--seeds", "1..2", "--faults", "none", "--out"])
        .arg(dir.join("explore"))
        .current_dir(repo())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("0 violating seed(s)"), "{text}");
}
