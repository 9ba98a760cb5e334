//! The provider section's YAML forms, and the errors for everything else.

use std::collections::BTreeMap;
use std::time::Duration;

use routersim_engine::config::Deployment;
use routersim_engine::failure::FailureKind;
use routersim_mock_providers::{
    Emit, EmptyStream, ErrorSpec, FaultEffect, FaultSpec, FaultTarget, LatencySpec, OutcomeSpec,
    ProviderSpec, RetryAfterFormat, SpecError, StreamCut, StreamFault, TokenRange,
    validate_targets,
};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn provider(yaml: &str) -> Result<ProviderSpec, String> {
    serde_saphyr::from_str(yaml).map_err(|e| e.to_string())
}

fn fault(yaml: &str) -> Result<FaultSpec, String> {
    serde_saphyr::from_str(yaml).map_err(|e| e.to_string())
}

#[test]
fn every_latency_form_parses() {
    assert_eq!(
        provider("{}").map(|p| p.latency),
        Ok(LatencySpec::Fixed(ms(200)))
    );
    assert_eq!(
        provider("latency: 300ms").map(|p| p.latency),
        Ok(LatencySpec::Fixed(ms(300)))
    );
    assert_eq!(
        provider("latency: 0").map(|p| p.latency),
        Ok(LatencySpec::Fixed(ms(0)))
    );
    assert_eq!(
        provider("latency: {p50: 800ms, p99: 4s}").map(|p| p.latency),
        Ok(LatencySpec::LogNormal {
            p50: ms(800),
            p99: ms(4000)
        })
    );
    assert_eq!(
        provider("latency: {uniform: [200ms, 900ms]}").map(|p| p.latency),
        Ok(LatencySpec::Uniform {
            min: ms(200),
            max: ms(900)
        })
    );
}

#[test]
fn bad_latencies_say_what_was_expected() {
    for (yaml, needle) in [
        ("latency: 300", "needs a unit"),
        ("latency: fast", "expected a duration"),
        ("latency: {p50: 800ms}", "expected a latency"),
        (
            "latency: {p50: 800ms, p99: 4s, uniform: [1s, 2s]}",
            "expected a latency",
        ),
        ("latency: {p50: 4s, p99: 1s}", "must be at least p50"),
        ("latency: {uniform: [2s, 1s]}", "wrong way round"),
        ("latency: {p95: 1s}", "unknown field `p95`"),
    ] {
        let err = provider(yaml).expect_err(yaml);
        assert!(err.contains(needle), "{yaml}: {err}");
    }
}

#[test]
fn every_outcome_form_parses() {
    let spec = provider(
        "script:\n  - ok\n  - rate_limit\n  - {ok: {latency: 50ms}}\n  - {ok: }\n  - {error: rate_limit, status: 503, retry_after: 2s, retry_after_format: http-date, latency: 10ms}\nthen: {error: timeout}\ncontext_window: 8000\n",
    )
    .expect("parses");
    assert_eq!(
        spec.script,
        vec![
            OutcomeSpec::Ok { latency: None },
            OutcomeSpec::Error(ErrorSpec::new(FailureKind::RateLimit)),
            OutcomeSpec::Ok {
                latency: Some(LatencySpec::Fixed(ms(50)))
            },
            OutcomeSpec::Ok { latency: None },
            OutcomeSpec::Error(ErrorSpec {
                kind: FailureKind::RateLimit,
                status: Some(503),
                retry_after: Some(ms(2000)),
                retry_after_format: RetryAfterFormat::HttpDate,
                latency: Some(LatencySpec::Fixed(ms(10))),
                lost_after_send: None,
            }),
        ]
    );
    assert_eq!(
        spec.then,
        Some(OutcomeSpec::Error(ErrorSpec::new(FailureKind::Timeout)))
    );
    assert_eq!(spec.context_window, Some(8000));
}

#[test]
fn bad_outcomes_say_what_was_expected() {
    for (yaml, needle) in [
        ("script: [fine]", "expected an outcome"),
        ("script: [router_rate_limit]", "router's own"),
        (
            "script: [{error: rate_limt}]",
            "unknown variant `rate_limt`",
        ),
        ("script: [{ok: {}, error: timeout}]", "not both"),
        (
            "script: [{error: timeout, retry_after_format: ms}]",
            "needs a retry_after",
        ),
        (
            "script: [{error: timeout, retry_after_format: minutes, retry_after: 1s}]",
            "unknown variant `minutes`",
        ),
        ("script: [{ok: {}, latency: 1s}]", "inside it"),
        (
            "script: [{error: timeout, status: 42}]",
            "not an HTTP status",
        ),
        (
            "script: [{error: timeout, colour: red}]",
            "unknown field `colour`",
        ),
        ("scrpit: []", "unknown field `scrpit`"),
    ] {
        let err = provider(yaml).expect_err(yaml);
        assert!(err.contains(needle), "{yaml}: {err}");
    }
}

#[test]
fn fault_forms() {
    assert_eq!(
        fault(
            "{deployment: a, from: 2m, to: 5m, error: rate_limit, probability: 0.8, retry_after: 20s}"
        ),
        Ok(FaultSpec {
            target: FaultTarget::Deployment("a".into()),
            from: ms(120_000),
            to: Some(ms(300_000)),
            probability: 0.8,
            effect: FaultEffect::Error(ErrorSpec {
                retry_after: Some(ms(20_000)),
                ..ErrorSpec::new(FailureKind::RateLimit)
            }),
        })
    );
    assert_eq!(
        fault("{model_group: gpt, latency: {p50: 6s, p99: 20s}}"),
        Ok(FaultSpec {
            target: FaultTarget::ModelGroup("gpt".into()),
            from: Duration::ZERO,
            to: None,
            probability: 1.0,
            effect: FaultEffect::Slowdown(LatencySpec::LogNormal {
                p50: ms(6000),
                p99: ms(20_000)
            }),
        })
    );
    for (yaml, needle) in [
        (
            "{deployment: a, model_group: g, error: timeout}",
            "exactly one of",
        ),
        ("{error: timeout}", "exactly one of"),
        ("{deployment: a}", "sets `error`"),
        (
            "{deployment: a, latency: 1s, status: 500}",
            "need an `error`",
        ),
        (
            "{deployment: a, error: timeout, from: 5m, to: 2m}",
            "must be after",
        ),
        (
            "{deployment: a, error: timeout, probability: 1.5}",
            "between 0 and 1",
        ),
        (
            "{deployment: a, error: timeout, when: 1m}",
            "unknown field `when`",
        ),
    ] {
        let err = fault(yaml).expect_err(yaml);
        assert!(err.contains(needle), "{yaml}: {err}");
    }
}

#[test]
fn targets_must_exist() {
    let deployments = vec![Deployment {
        id: "a".into(),
        model_name: "gpt".into(),
        ..Deployment::default()
    }];
    let mut specs = BTreeMap::new();
    specs.insert("a".to_string(), ProviderSpec::default());
    assert_eq!(validate_targets(&deployments, &specs, &[]), Ok(()));
    specs.insert("zz".to_string(), ProviderSpec::default());
    let err = validate_targets(&deployments, &specs, &[]).expect_err("unknown id");
    assert_eq!(err.path, "providers.zz");
    assert!(err.message.contains("deployment ids: a"), "{err}");

    specs.remove("zz");
    let faults = [
        fault("{model_group: gpt, error: timeout}").expect("ok"),
        fault("{model_group: claude, error: timeout}").expect("ok"),
    ];
    assert_eq!(
        validate_targets(&deployments, &specs, &faults),
        Err(SpecError {
            path: "faults[1].model_group".into(),
            message: "no model group \"claude\"; model groups: gpt".into(),
        })
    );
}

#[test]
fn stream_keys_and_their_defaults() {
    let defaults = provider("{}").expect("parses");
    assert_eq!(defaults, ProviderSpec::default());
    assert_eq!(defaults.ttft, None);
    assert_eq!(defaults.inter_token, LatencySpec::Fixed(ms(20)));
    assert_eq!(defaults.output_tokens, None);
    assert!(defaults.emits.is_empty());

    let spec = provider(
        "ttft: {p50: 400ms, p99: 2s}\ninter_token: {uniform: [10ms, 30ms]}\noutput_tokens: 100..400\nemits: [thinking, tool_calls, audio, image]\n",
    )
    .expect("parses");
    assert_eq!(
        spec.ttft,
        Some(LatencySpec::LogNormal {
            p50: ms(400),
            p99: ms(2000)
        })
    );
    assert_eq!(
        spec.inter_token,
        LatencySpec::Uniform {
            min: ms(10),
            max: ms(30)
        }
    );
    assert_eq!(spec.output_tokens, Some(TokenRange { min: 100, max: 400 }));
    assert_eq!(
        spec.emits,
        [Emit::Thinking, Emit::ToolCalls, Emit::Audio, Emit::Image]
    );
    assert_eq!(
        provider("output_tokens: 64").map(|p| p.output_tokens),
        Ok(Some(TokenRange::fixed(64)))
    );
    for (yaml, needle) in [
        ("emits: [thinking, thinking]", "thinking is listed twice"),
        ("emits: [video]", "unknown variant `video`"),
        ("output_tokens: 9..3", "wrong way round"),
        ("output_tokens: lots", "expected a token count"),
        ("inter_token: 20", "needs a unit"),
    ] {
        let err = provider(yaml).expect_err(yaml);
        assert!(err.contains(needle), "{yaml}: {err}");
    }
}

#[test]
fn every_stream_fault_form_parses_in_a_script() {
    let spec = provider(
        "script:\n\
         - {stream_break: {after_tokens: 20}}\n\
         - {stream_break: {after: 1.5s, error: internal_server, status: 502}}\n\
         - {stream_error_frame: {after_tokens: 5, error: overloaded}}\n\
         - {stream_truncated: {after_tokens: 7}}\n\
         - {stream_stall: {after_tokens: 3, for: 30s}}\n\
         - {stream_empty: role_only}\n\
         - {stream_empty: true}\n\
         then: {stream_stall: {after: 2s, for: 1m}}\n",
    )
    .expect("parses");
    assert_eq!(
        spec.script,
        vec![
            OutcomeSpec::Stream(StreamFault::Break {
                at: StreamCut::Tokens(20),
                error: ErrorSpec::new(FailureKind::ApiConnection),
            }),
            OutcomeSpec::Stream(StreamFault::Break {
                at: StreamCut::Time(ms(1500)),
                error: ErrorSpec {
                    status: Some(502),
                    ..ErrorSpec::new(FailureKind::InternalServer)
                },
            }),
            OutcomeSpec::Stream(StreamFault::ErrorFrame {
                at: StreamCut::Tokens(5),
                error: ErrorSpec::new(FailureKind::Overloaded),
            }),
            OutcomeSpec::Stream(StreamFault::Truncated {
                at: StreamCut::Tokens(7)
            }),
            OutcomeSpec::Stream(StreamFault::Stall {
                at: StreamCut::Tokens(3),
                pause: ms(30_000)
            }),
            OutcomeSpec::Stream(StreamFault::Empty(EmptyStream::RoleOnly)),
            OutcomeSpec::Stream(StreamFault::Empty(EmptyStream::Nothing)),
        ]
    );
    assert_eq!(
        spec.then,
        Some(OutcomeSpec::Stream(StreamFault::Stall {
            at: StreamCut::Time(ms(2000)),
            pause: ms(60_000)
        }))
    );
}

#[test]
fn bad_stream_faults_say_what_was_expected() {
    for (yaml, needle) in [
        (
            "script: [{stream_break: {}}]",
            "exactly one of `after_tokens: N`",
        ),
        (
            "script: [{stream_break: {after_tokens: 1, after: 1s}}]",
            "exactly one of `after_tokens: N`",
        ),
        (
            "script: [{stream_error_frame: {after_tokens: 1}}]",
            "needs `error: <kind>`",
        ),
        (
            "script: [{stream_truncated: {after_tokens: 1, error: timeout}}]",
            "sends no error",
        ),
        (
            "script: [{stream_stall: {after_tokens: 1}}]",
            "needs `for: <duration>`",
        ),
        (
            "script: [{stream_break: {after_tokens: 1, for: 1s}}]",
            "`for` belongs to stream_stall",
        ),
        (
            "script: [{stream_break: {after_tokens: 1, error: router_rate_limit}}]",
            "router's own",
        ),
        (
            "script: [{stream_break: {after_tokens: 1}, stream_truncated: {after_tokens: 1}}]",
            "not several",
        ),
        (
            "script: [{stream_break: {after_tokens: 1}, error: timeout}]",
            "not several",
        ),
        (
            "script: [{stream_break: {after_tokens: 1}, latency: 1s}]",
            "takes its keys inside it",
        ),
        ("script: [{stream_empty: false}]", "no fault"),
        ("script: [{stream_empty: maybe}]", "expected role_only"),
        (
            "script: [{stream_break: {after_tokens: 1, colour: red}}]",
            "unknown field `colour`",
        ),
    ] {
        let err = provider(yaml).expect_err(yaml);
        assert!(err.contains(needle), "{yaml}: {err}");
    }
}

#[test]
fn stream_fault_windows() {
    assert_eq!(
        fault(
            "{model_group: gpt, from: 1m, to: 2m, probability: 0.5, stream_break: {after: 1.5s}}"
        ),
        Ok(FaultSpec {
            target: FaultTarget::ModelGroup("gpt".into()),
            from: ms(60_000),
            to: Some(ms(120_000)),
            probability: 0.5,
            effect: FaultEffect::Stream(StreamFault::Break {
                at: StreamCut::Time(ms(1500)),
                error: ErrorSpec::new(FailureKind::ApiConnection),
            }),
        })
    );
    assert_eq!(
        fault("{deployment: a, stream_empty: role_only}").map(|f| f.effect),
        Ok(FaultEffect::Stream(StreamFault::Empty(
            EmptyStream::RoleOnly
        )))
    );
    for (yaml, needle) in [
        (
            "{deployment: a, error: timeout, stream_truncated: {after_tokens: 1}}",
            "not both an error and a stream fault",
        ),
        (
            "{deployment: a, latency: 1s, stream_truncated: {after_tokens: 1}}",
            "takes no latency",
        ),
        (
            "{deployment: a, stream_stall: {after_tokens: 1, for: 1s}, stream_empty: true}",
            "not several",
        ),
    ] {
        let err = fault(yaml).expect_err(yaml);
        assert!(err.contains(needle), "{yaml}: {err}");
    }
}

#[test]
fn malformed_and_content_filter_outcomes_parse() {
    use routersim_mock_providers::spec::{Degenerate, OutcomeSpec};
    let parse = |text: &str| serde_saphyr::from_str::<OutcomeSpec>(text);
    assert!(matches!(
        parse("{malformed: empty_choices}"),
        Ok(OutcomeSpec::Degenerate {
            kind: Degenerate::EmptyChoices,
            latency: None
        })
    ));
    assert!(matches!(
        parse("{finish_reason: content_filter, latency: 50ms}"),
        Ok(OutcomeSpec::Degenerate {
            kind: Degenerate::ContentFilter,
            latency: Some(_)
        })
    ));
    assert!(parse("{malformed: empty_choices, error: rate_limit}").is_err());
    assert!(parse("{malformed: half}").is_err());
}
