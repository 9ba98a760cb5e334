//! A signal sent the instant `serve` or `proxy` says where it listens is a clean stop: the
//! handlers are installed before that line is printed, so the process is never killed by the
//! signal's default action (exit status 143 / 130) and `serve` still writes its call log.

use std::path::Path;
use std::process::Stdio;

use crate::common::scratch_dir;
use crate::common::server::Server;

const SCENARIO: &str = "\
name: signals
duration: 1s
router:
  model_list:
    - {model_name: gpt, litellm_params: {model: openai/gpt-4o}, model_info: {id: a}}
providers:
  a: {latency: 0ms}
traffic: []
";

const PROXY_CONFIG: &str = "\
model_list:
  - {model_name: gpt, litellm_params: {model: openai/gpt-4o, api_base: 'http://127.0.0.1:9/v1'}}
";

/// Starts `routersim ARGS`, sends `signal` as soon as it prints its `listening on` line, and
/// returns the exit status and everything it printed after that line.
fn signalled_at_ready(args: &[&str], signal: &str) -> (std::process::ExitStatus, String) {
    Server::start_with(args, Stdio::piped()).signalled(signal)
}

fn files(dir: &Path) -> (String, String) {
    let scenario = dir.join("signals.yaml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let config = dir.join("proxy.yaml");
    std::fs::write(&config, PROXY_CONFIG).unwrap();
    (
        scenario.to_str().unwrap().to_string(),
        config.to_str().unwrap().to_string(),
    )
}

#[test]
fn serve_stops_cleanly_on_a_signal_sent_the_moment_it_is_ready() {
    let dir = scratch_dir("signals-serve");
    let (scenario, _) = files(&dir);
    for (round, (signal, name)) in [("-TERM", "sigterm"), ("-INT", "ctrl-c")]
        .into_iter()
        .cycle()
        .take(12)
        .enumerate()
    {
        let out = dir.join(format!("out-{round}"));
        let (status, said) = signalled_at_ready(
            &["serve", &scenario, "--out", out.to_str().unwrap()],
            signal,
        );
        assert!(
            status.success(),
            "round {round} {signal}: {status:?}\n{said}"
        );
        assert!(said.contains(&format!("stopped ({name})")), "{said}");
        assert!(out.join("provider_calls.csv").is_file(), "{said}");
    }
}

#[test]
fn proxy_stops_cleanly_on_a_signal_sent_the_moment_it_is_ready() {
    let dir = scratch_dir("signals-proxy");
    let (_, config) = files(&dir);
    for (round, (signal, name)) in [("-TERM", "sigterm"), ("-INT", "ctrl-c")]
        .into_iter()
        .cycle()
        .take(12)
        .enumerate()
    {
        let (status, said) = signalled_at_ready(
            &["proxy", "--config", &config, "--listen", "127.0.0.1:0"],
            signal,
        );
        assert!(
            status.success(),
            "round {round} {signal}: {status:?}\n{said}"
        );
        assert!(said.contains(&format!("stopped ({name})")), "{said}");
    }
}
