//! The scenario file: an example parses into exact values; every mistake names file, line, path.

use std::path::{Path, PathBuf};
use std::time::Duration;

use routersim_engine::config::FallbackTarget;
use routersim_engine::failure::FailureKind;
use routersim_engine::request::ResponseFormat;
use routersim_mock_providers::{
    Emit, ErrorSpec, FaultEffect, FaultSpec, FaultTarget, LatencySpec, OutcomeSpec, ProviderSpec,
    StreamCut, StreamFault,
};
use routersim_sim::scenario::{
    Expectation, RouterSource, ScenarioError, load_scenario, parse_scenario,
};
use routersim_sim::traffic::{
    ArrivalProcess, ExplicitRequest, RequestTemplate, TokenRange, TrafficSpec, TrafficStream,
};
use routersim_sim::transport::Transport;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

const EXAMPLE: &str = r#"# A rate-limit storm on one of two deployments.
name: eu-storm
description: gpt-a rate-limits between 2m and 5m
seed: 7
duration: 10m
epoch: 2026-03-01T12:00:00Z

router:
  model_list:
    - model_name: gpt-4o
      litellm_params: {model: openai/gpt-4o, rpm: 600}
      model_info: {id: gpt-a}
    - model_name: gpt-4o
      litellm_params: {model: azure/gpt-4o}
      model_info: {id: gpt-b}
    - model_name: claude
      litellm_params: {model: anthropic/claude-sonnet}
      model_info: {id: claude-a}
  router_settings:
    num_retries: 3
    model_group_alias: {smart: gpt-4o}

providers:
  gpt-a:
    latency: {p50: 800ms, p99: 4s}     # log-normal
    context_window: 8000
    script: [ok, {error: timeout, latency: 50ms}]
    then: ok
  gpt-b:
    latency: {uniform: [200ms, 900ms]}
    ttft: 300ms
    inter_token: 15ms
    output_tokens: 50..500
    emits: [thinking, tool_calls]
    script: [{stream_break: {after_tokens: 20}}]

faults:
  - {deployment: gpt-a, from: 2m, to: 5m, error: rate_limit, probability: 0.8, retry_after: 20s}
  - model_group: claude
    from: 1m
    latency: 6s
  - {deployment: gpt-b, from: 3m, to: 4m, probability: 0.5, stream_stall: {after: 1s, for: 30s}}

traffic:
  - {model: gpt-4o, rate: 20/s, input_tokens: 500..8000, metadata: {tags: [eu]}, stream: 0.3, output_tokens: 100..800}
  - {model: smart, rate: 30/m, from: 1m, to: 9m, arrival: uniform, max_tokens: 256}
  - at: 1.5s
    model: gpt-4o
    input_tokens: 12000
    count: 3
    stream: true
    output_tokens: 300
    response_format: json
    tools: true
    num_retries: 0
    fallbacks: [claude, {model: claude, temperature: 0}]
    disable_fallbacks: true

expect:
  - {metric: success_rate, min: 0.99}
  - {metric: p99_latency_ms, max: 9000}
"#;

fn template(model: &str) -> RequestTemplate {
    RequestTemplate::new(model)
}

#[test]
fn the_example_parses_into_exact_values() {
    let s = parse_scenario(EXAMPLE, Path::new("scenarios/eu-storm.yaml")).expect("valid");
    assert_eq!(s.name, "eu-storm");
    assert_eq!(s.description, "gpt-a rate-limits between 2m and 5m");
    assert_eq!(s.seed, 7);
    assert_eq!(s.duration, ms(600_000));
    assert_eq!(s.epoch_unix_ms, 1_772_366_400_000);
    assert_eq!(s.router_source, RouterSource::Inline);
    let ids: Vec<&str> = s.router.deployments.iter().map(|d| &*d.id).collect();
    assert_eq!(ids, ["gpt-a", "gpt-b", "claude-a"]);
    assert_eq!(s.router.settings.num_retries, 3);

    assert_eq!(
        s.providers.get("gpt-a"),
        Some(&ProviderSpec {
            latency: LatencySpec::LogNormal {
                p50: ms(800),
                p99: ms(4000)
            },
            context_window: Some(8000),
            script: vec![
                OutcomeSpec::Ok { latency: None },
                OutcomeSpec::Error(ErrorSpec {
                    latency: Some(LatencySpec::Fixed(ms(50))),
                    ..ErrorSpec::new(FailureKind::Timeout)
                }),
            ],
            then: Some(OutcomeSpec::Ok { latency: None }),
            ..ProviderSpec::default()
        })
    );
    assert_eq!(
        s.providers.get("gpt-b"),
        Some(&ProviderSpec {
            latency: LatencySpec::Uniform {
                min: ms(200),
                max: ms(900)
            },
            ttft: Some(LatencySpec::Fixed(ms(300))),
            inter_token: LatencySpec::Fixed(ms(15)),
            output_tokens: Some(TokenRange { min: 50, max: 500 }),
            emits: vec![Emit::Thinking, Emit::ToolCalls],
            script: vec![OutcomeSpec::Stream(StreamFault::Break {
                at: StreamCut::Tokens(20),
                error: ErrorSpec::new(FailureKind::ApiConnection),
            })],
            ..ProviderSpec::default()
        })
    );
    assert_eq!(
        s.faults,
        vec![
            FaultSpec {
                target: FaultTarget::Deployment("gpt-a".into()),
                from: ms(120_000),
                to: Some(ms(300_000)),
                probability: 0.8,
                effect: FaultEffect::Error(ErrorSpec {
                    retry_after: Some(ms(20_000)),
                    ..ErrorSpec::new(FailureKind::RateLimit)
                }),
            },
            FaultSpec {
                target: FaultTarget::ModelGroup("claude".into()),
                from: ms(60_000),
                to: None,
                probability: 1.0,
                effect: FaultEffect::Slowdown(LatencySpec::Fixed(ms(6000))),
            },
            FaultSpec {
                target: FaultTarget::Deployment("gpt-b".into()),
                from: ms(180_000),
                to: Some(ms(240_000)),
                probability: 0.5,
                effect: FaultEffect::Stream(StreamFault::Stall {
                    at: StreamCut::Time(ms(1000)),
                    pause: ms(30_000),
                }),
            },
        ]
    );
    assert_eq!(
        s.traffic,
        vec![
            TrafficSpec::Stream(TrafficStream {
                rate_per_sec: 20.0,
                from: Duration::ZERO,
                to: ms(600_000),
                arrival: ArrivalProcess::Poisson,
                input_tokens: TokenRange {
                    min: 500,
                    max: 8000
                },
                stream: 0.3,
                output_tokens: Some(TokenRange { min: 100, max: 800 }),
                template: RequestTemplate {
                    tags: vec!["eu".into()],
                    ..template("gpt-4o")
                },
                ramp: None,
            }),
            TrafficSpec::Stream(TrafficStream {
                rate_per_sec: 0.5,
                from: ms(60_000),
                to: ms(540_000),
                arrival: ArrivalProcess::Uniform,
                input_tokens: TokenRange::fixed(500),
                stream: 0.0,
                output_tokens: None,
                template: RequestTemplate {
                    max_tokens: Some(256),
                    ..template("smart")
                },
                ramp: None,
            }),
            TrafficSpec::Request(ExplicitRequest {
                at: ms(1500),
                count: 3,
                input_tokens: 12_000,
                stream: true,
                output_tokens: Some(300),
                template: RequestTemplate {
                    num_retries: Some(0),
                    fallbacks: Some(vec![
                        FallbackTarget::group("claude"),
                        FallbackTarget {
                            model: "claude".into(),
                            overrides: [("temperature".to_string(), serde_json::json!(0))]
                                .into_iter()
                                .collect(),
                            num_retries: None,
                            max_tokens: None,
                        },
                    ]),
                    disable_fallbacks: true,
                    response_format: ResponseFormat::Json,
                    tools: true,
                    ..template("gpt-4o")
                },
            }),
        ]
    );
    assert_eq!(
        s.expect,
        vec![
            Expectation {
                metric: "success_rate".into(),
                min: Some(0.99),
                max: None,
                window: None,
            },
            Expectation {
                metric: "p99_latency_ms".into(),
                min: None,
                max: Some(9000.0),
                window: None,
            },
        ]
    );
}

#[test]
fn defaults_fill_what_a_minimal_scenario_leaves_out() {
    let text = "duration: 1m\nrouter:\n  model_list:\n    - {model_name: m, litellm_params: {model: openai/m}}\n";
    let s = parse_scenario(text, Path::new("dir/minimal.yaml")).expect("valid");
    assert_eq!(s.name, "minimal");
    assert_eq!(s.description, "");
    assert_eq!(s.seed, 0);
    assert_eq!(s.epoch_unix_ms, 1_767_225_600_000);
    assert!(
        s.providers.is_empty()
            && s.faults.is_empty()
            && s.traffic.is_empty()
            && s.expect.is_empty()
    );
}

/// A minimal valid scenario with `extra` appended (top-level YAML).
fn with(extra: &str) -> String {
    format!(
        "name: t\nduration: 10m\nrouter:\n  model_list:\n    - model_name: gpt\n      litellm_params: {{model: openai/gpt}}\n      model_info: {{id: gpt-a}}\n    - model_name: \"openai/*\"\n      litellm_params: {{model: \"openai/*\"}}\n{extra}"
    )
}

fn error(text: &str) -> ScenarioError {
    parse_scenario(text, Path::new("s.yaml")).expect_err("should fail")
}

fn check(extra: &str, expected: &str) {
    assert_eq!(error(&with(extra)).to_string(), expected, "for:\n{extra}");
}

// Lines 1–9 are `with`'s preamble; `extra` starts on line 10.

#[test]
fn an_unknown_key_at_a_nested_path() {
    check(
        "providers:\n  gpt-a:\n    latency:\n      p50: 1s\n      p95: 2s\n",
        "s.yaml:14:7: providers.gpt-a.latency.p95: unknown field `p95`, expected one of p50, p99, uniform",
    );
    check(
        "traffic:\n  - {model: gpt, rate: 20/s, colour: red}\n",
        "s.yaml:11:30: traffic[0].colour: unknown field `colour`, expected one of model, at, count, \
         rate, from, to, arrival, stages, input_tokens, max_tokens, num_retries, fallbacks, \
         disable_fallbacks, allow_fallbacks, models, metadata, stream, output_tokens, \
         response_format, tools, workload",
    );
    check(
        "durationn: 1m\n",
        "s.yaml:10:1: durationn: unknown field `durationn`, expected one of \
        name, description, seed, duration, epoch, router, router_file, set, providers, faults, traffic, \
        traffic_file, expect, transport, contracts, client_retries, golden",
    );
}

#[test]
fn transport_is_memory_or_http() {
    let s = parse_scenario(&with(""), Path::new("s.yaml")).expect("valid");
    assert_eq!(s.transport, Transport::Memory, "the default");
    let s = parse_scenario(&with("transport: http\n"), Path::new("s.yaml")).expect("valid");
    assert_eq!(s.transport, Transport::Http);
    let s = parse_scenario(&with("transport: memory\n"), Path::new("s.yaml")).expect("valid");
    assert_eq!(s.transport, Transport::Memory);
    check(
        "transport: tcp\n",
        "s.yaml:10:12: transport: expected `memory` or `http`, found \"tcp\"",
    );
    check(
        "transport: [http]\n",
        "s.yaml:10:12: transport: expected a single value (text or a number), not a list or mapping",
    );
}

#[test]
fn a_wrong_type() {
    check(
        "seed: abc\n",
        "s.yaml:10:7: seed: expected a whole number from 0 to 18446744073709551615",
    );
    check(
        "traffic:\n  - {model: gpt, rate: 1/s, max_tokens: lots}\n",
        "s.yaml:11:41: traffic[0].max_tokens: expected a whole number from 0 to 4294967295",
    );
    check("faults: {}\n", "s.yaml:10:9: faults: expected a list");
    check(
        "traffic:\n  - {model: gpt, rate: 1/s, disable_fallbacks: yes}\n",
        "s.yaml:11:48: traffic[0].disable_fallbacks: expected true or false",
    );
}

#[test]
fn a_bad_duration_or_rate_or_range() {
    check(
        "traffic:\n  - {model: gpt, at: 10 minutes}\n",
        "s.yaml:11:22: traffic[0].at: expected a duration such as 300ms, 1.5s, 2m or 1h, found \"10 minutes\"",
    );
    check(
        "providers:\n  gpt-a: {latency: 300}\n",
        "s.yaml:11:20: providers.gpt-a.latency: a duration needs a unit: write 300s or 300ms, not 300",
    );
    check(
        "traffic:\n  - {model: gpt, rate: fast}\n",
        "s.yaml:11:24: traffic[0].rate: expected a rate such as 20/s, 1200/m, 50/h or 20 (per second), found \"fast\"",
    );
    check(
        "traffic:\n  - {model: gpt, rate: 0/s}\n",
        "s.yaml:11:24: traffic[0].rate: a rate must be above 0, found 0",
    );
    check(
        "traffic:\n  - {model: gpt, rate: 1/s, input_tokens: 900..100}\n",
        "s.yaml:11:43: traffic[0].input_tokens: the range \"900..100\" is the wrong way round",
    );
    check(
        "epoch: yesterday\n",
        "s.yaml:10:8: epoch: expected an RFC 3339 UTC time such as 2026-01-01T00:00:00Z, found \"yesterday\"",
    );
}

#[test]
fn stream_traffic_keys_are_checked() {
    check(
        "traffic:\n  - {model: gpt, rate: 1/s, stream: 1.5}\n",
        "s.yaml:11:37: traffic[0].stream: stream must be true, false, or a share of requests \
         between 0 and 1 (0.3), found 1.5",
    );
    check(
        "traffic:\n  - {model: gpt, rate: 1/s, stream: often}\n",
        "s.yaml:11:37: traffic[0].stream: stream must be true, false, or a share of requests \
         between 0 and 1 (0.3), found \"often\"",
    );
    check(
        "traffic:\n  - {model: gpt, at: 1s, stream: 0.5}\n",
        "s.yaml:11:34: traffic[0].stream: an explicit request is streamed or not: true or false; \
         a share (0.5) belongs to a generated stream (with `rate`)",
    );
    check(
        "traffic:\n  - {model: gpt, at: 1s, output_tokens: 10..20}\n",
        "s.yaml:11:41: traffic[0].output_tokens: an explicit request has one answer length: a \
         number, not a range",
    );
    check(
        "traffic:\n  - {model: gpt, rate: 1/s, output_tokens: 20..10}\n",
        "s.yaml:11:44: traffic[0].output_tokens: the range \"20..10\" is the wrong way round",
    );
    check(
        "traffic:\n  - {model: gpt, rate: 1/s, response_format: xml}\n",
        "s.yaml:11:46: traffic[0].response_format: response_format must be text or json \
         (json_object and json_schema are json too), found \"xml\"",
    );
    check(
        "traffic:\n  - {model: gpt, rate: 1/s, tools: yes}\n",
        "s.yaml:11:36: traffic[0].tools: expected true or false",
    );
    check(
        "providers:\n  gpt-a:\n    script: [{stream_stall: {after_tokens: 3}}]\n",
        "s.yaml:12:14: providers.gpt-a.script[0]: stream_stall needs `for: <duration>` (how long \
         nothing arrives)",
    );
    check(
        "faults:\n  - {deployment: gpt-a, stream_break: {after_tokens: 1}, error: timeout}\n",
        "s.yaml:11:5: faults[0]: a fault is an error (`error`), a slowdown (`latency`) or a \
         stream fault, not both an error and a stream fault",
    );
    // Each accepted form.
    let s = parse_scenario(
        &with(
            "traffic:\n  - {model: gpt, rate: 1/s, stream: true}\n  - {model: gpt, rate: 1/s, stream: false}\n  - {model: gpt, rate: 1/s, stream: 0}\n  - {model: gpt, rate: 1/s, stream: 1, response_format: json_schema}\n  - {model: gpt, at: 1s, stream: false, response_format: text}\n",
        ),
        Path::new("s.yaml"),
    )
    .expect("valid");
    let shares: Vec<f64> = s
        .traffic
        .iter()
        .filter_map(|t| match t {
            TrafficSpec::Stream(s) => Some(s.stream),
            TrafficSpec::Request(_) => None,
        })
        .collect();
    assert_eq!(shares, [1.0, 0.0, 0.0, 1.0]);
    let TrafficSpec::Stream(json) = &s.traffic[3] else {
        panic!("a stream")
    };
    assert_eq!(json.template.response_format, ResponseFormat::Json);
}

#[test]
fn an_unknown_deployment_id_or_fault_target() {
    check(
        "providers:\n  gpt-z: {latency: 1s}\n",
        "s.yaml:11:3: providers.gpt-z: no deployment has id \"gpt-z\"; deployment ids: gpt-a, openai/*-1",
    );
    check(
        "faults:\n  - {deployment: gpt-a, error: timeout}\n  - {model_group: claude, error: timeout}\n",
        "s.yaml:12:19: faults[1].model_group: no model group \"claude\"; model groups: gpt, openai/*",
    );
    check(
        "faults:\n  - deployment: gpt-b\n    error: timeout\n",
        "s.yaml:11:17: faults[0].deployment: no deployment has id \"gpt-b\"; deployment ids: gpt-a, openai/*-1",
    );
    check(
        "faults:\n  - {deployment: gpt-a, model_group: gpt, error: timeout}\n",
        "s.yaml:11:5: faults[0]: a fault names exactly one of `deployment` or `model_group`",
    );
}

#[test]
fn router_and_router_file_are_exclusive_and_one_is_needed() {
    check(
        "router_file: r.yaml\n",
        "s.yaml:10:14: router_file: set either `router` (the config inline) or `router_file`, not both",
    );
    assert_eq!(
        error("duration: 1m\n").to_string(),
        "s.yaml:1:1: missing the router config: set `router` (LiteLLM's config inline) or \
         `router_file` (a path relative to this file)"
    );
}

#[test]
fn an_inline_router_error_is_located_under_router() {
    let text = "duration: 1m\nrouter:\n  model_list:\n    - model_name: m\n      litellm_params:\n        model: x\n        rpm: lots\n";
    let e = error(text);
    assert_eq!((e.line, e.column), (Some(7), Some(14)));
    assert_eq!(e.path, "router.model_list[0].litellm_params.rpm");
    assert!(e.message.contains("lots"), "{e}");
}

#[test]
fn traffic_is_checked_against_the_router_and_the_duration() {
    check(
        "traffic:\n  - {model: gpt-5, rate: 1/s}\n",
        "s.yaml:11:13: traffic[0].model: no model group or alias \"gpt-5\"; the router has: gpt, openai/*",
    );
    check(
        "traffic:\n  - {model: openai/gpt-5, rate: 1/s, fallbacks: [gpt, nope]}\n",
        "s.yaml:11:55: traffic[0].fallbacks[1]: no model group or alias \"nope\"; the router has: gpt, openai/*",
    );
    check(
        "traffic:\n  - {model: gpt, at: 1s, from: 2s}\n",
        "s.yaml:11:32: traffic[0].from: `from` belongs to a stream (with `rate`); an explicit request has `at`",
    );
    check(
        "traffic:\n  - model: gpt\n",
        "s.yaml:11:5: traffic[0]: expected `at: <time>` (an explicit request), `rate: <n>/s` (a generated stream) or `stages: [{duration, target}]` (a ramping stream)",
    );
    check(
        "traffic:\n  - {model: gpt, at: 1s, rate: 1/s}\n",
        "s.yaml:11:5: traffic[0]: an entry is an explicit request (`at`) or a stream (`rate`), not both",
    );
    check(
        "traffic:\n  - {model: gpt, rate: 1/s, to: 11m}\n",
        "s.yaml:11:33: traffic[0].to: to 11m is after the scenario's duration (10m)",
    );
    check(
        "traffic:\n  - {model: gpt, at: 11m}\n",
        "s.yaml:11:22: traffic[0].at: at 11m is after the scenario's duration (10m)",
    );
    check(
        "expect:\n  - {metric: x}\n",
        "s.yaml:11:5: expect[0]: set `min`, `max`, or both",
    );
}

/// A fresh directory for file-based tests.
fn temp_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("scenario-parse-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("routers")).expect("temp dir");
    dir
}

#[test]
fn router_file_is_read_relative_to_the_scenario_and_its_errors_name_that_file() {
    let dir = temp_dir("router-file");
    let router = dir.join("routers/r.yaml");
    std::fs::write(
        &router,
        "model_list:\n  - model_name: m\n    litellm_params: {model: openai/m}\n",
    )
    .expect("write");
    let scenario = dir.join("s.yaml");
    std::fs::write(
        &scenario,
        "duration: 1m\nrouter_file: routers/r.yaml\ntraffic:\n  - {model: m, at: 0s}\n",
    )
    .expect("write");
    let s = load_scenario(&scenario).expect("valid");
    assert_eq!(
        s.router_source,
        RouterSource::File(dir.join("routers/r.yaml"))
    );
    assert_eq!(s.router.deployments.len(), 1);

    // An error inside the router file names it, with the line and path there.
    std::fs::write(
        &router,
        "model_list:\n  - model_name: m\n    litellm_params:\n      model: openai/m\n      rpm: lots\n",
    )
    .expect("write");
    let e = load_scenario(&scenario).expect_err("bad router");
    assert_eq!(e.file, router);
    assert_eq!((e.line, e.column), (Some(5), Some(12)));
    assert_eq!(e.path, "model_list[0].litellm_params.rpm");

    // A missing router file is the scenario's mistake.
    std::fs::write(
        &scenario,
        "duration: 1m\nrouter_file: routers/missing.yaml\n",
    )
    .expect("write");
    let e = load_scenario(&scenario).expect_err("missing");
    assert_eq!(e.file, scenario);
    assert_eq!((e.line, e.path.as_str()), (Some(2), "router_file"));
    assert!(e.message.starts_with("cannot read "), "{e}");

    // So is a missing scenario.
    let e = load_scenario(&dir.join("nope.yaml")).expect_err("missing");
    assert_eq!((e.line, e.path.as_str()), (None, ""));
    assert!(
        e.to_string().contains("nope.yaml: cannot read the file"),
        "{e}"
    );
}

#[test]
fn a_connection_lost_after_send_takes_executed_and_nothing_of_an_answer() {
    let s = parse_scenario(
        &with(
            "faults:\n  - {deployment: gpt-a, error: connection_lost_after_send, executed: 0.25}\n",
        ),
        Path::new("s.yaml"),
    )
    .unwrap();
    let FaultEffect::Error(spec) = &s.faults[0].effect else {
        panic!("an error fault: {:?}", s.faults[0]);
    };
    assert_eq!(spec.kind, FailureKind::ApiConnection);
    assert_eq!(spec.lost_after_send, Some(0.25));
    let s = parse_scenario(
        &with("faults:\n  - {deployment: gpt-a, error: connection_lost_after_send}\n"),
        Path::new("s.yaml"),
    )
    .unwrap();
    let FaultEffect::Error(spec) = &s.faults[0].effect else {
        panic!("an error fault");
    };
    assert_eq!(spec.lost_after_send, Some(1.0), "executed defaults to 1");
    check(
        "faults:\n  - {deployment: gpt-a, error: connection_lost_after_send, executed: 2}\n",
        "s.yaml:11:5: faults[0]: executed must be between 0 and 1, found 2",
    );
    check(
        "faults:\n  - {deployment: gpt-a, error: timeout, executed: 0.5}\n",
        "s.yaml:11:5: faults[0]: executed belongs to `error: connection_lost_after_send`",
    );
    check(
        "faults:\n  - {deployment: gpt-a, error: connection_lost_after_send, status: 503}\n",
        "s.yaml:11:5: faults[0]: connection_lost_after_send has no status and no retry_after: \
         the connection is lost before any answer",
    );
    let e = error(&with("faults:\n  - {deployment: gpt-a, error: lost}\n")).to_string();
    assert!(
        e.contains("unknown error `lost`") && e.contains("connection_lost_after_send"),
        "{e}"
    );
}
