//! One test per rule of `profile: contract` (`reliable-llm-routing-contracts.md`), each on the
//! engine with a scripted provider under tokio's paused clock: routes filtered before ranking
//! (and never tried), validation before acceptance on every answer, the failure classes'
//! actions, the attempt cap, and the deadline budget.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "tests fail loudly, read as one story, and drive tokio's paused clock directly"
)]

use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use routersim_engine::config::{Deployment, Profile, RouterSettings};
use routersim_engine::contract::capability::SchemaMode;
use routersim_engine::contract::{Contract, FilterReason, StructuredOutput, ValidationReason};
use routersim_engine::event::{EventKind, GiveUpReason, VecSink};
use routersim_engine::failure::{FailureKind as K, ProviderFailure};
use routersim_engine::request::{Completion, Request, ResponseBody, ToolCall};

fn settings() -> RouterSettings {
    RouterSettings {
        profile: Some(Profile::Contract),
        ..RouterSettings::default()
    }
}

/// The seed's invoice workload: strict structured output, one model class, 8 s.
fn invoice() -> Arc<Contract> {
    Arc::new(Contract {
        name: "invoice_extraction".into(),
        modalities: vec!["text".into()],
        structured_output: Some(StructuredOutput {
            required: true,
            schema_id: "invoice-v3".into(),
            strict: true,
        }),
        allowed_model_classes: vec!["document-extraction".into()],
        deadline: Some(Duration::from_secs(8)),
        ..Contract::default()
    })
}

/// A deployment that can serve the invoice workload.
fn extractor(group: &str, id: &str) -> Deployment {
    Deployment {
        schema_modes: vec![SchemaMode::JsonSchema, SchemaMode::Strict],
        model_class: Some("document-extraction".into()),
        ..dep(group, id)
    }
}

fn request(id: u64, contract: Arc<Contract>) -> Request {
    Request {
        input_tokens: 1000,
        contract: Some(contract),
        ..Request::new(id, "A")
    }
}

fn answer(content: &str) -> Step {
    Step::Complete(Completion {
        output_tokens: 50,
        body: Some(Arc::new(ResponseBody {
            content: Some(content.into()),
            tool_calls: Vec::new(),
        })),
        ..Completion::default()
    })
}

const VALID: &str =
    r#"{"invoice_id": "INV-1", "currency": "EUR", "total": 12.5, "line_items": []}"#;

fn filtered(sink: &VecSink) -> Vec<(String, FilterReason)> {
    events_named(&sink.events(), "route_filtered")
        .into_iter()
        .filter_map(|e| match e {
            EventKind::RouteFiltered {
                deployment_id,
                reason,
                ..
            } => Some((deployment_id.to_string(), reason)),
            _ => None,
        })
        .collect()
}

fn rejected(sink: &VecSink) -> Vec<(String, u32, ValidationReason)> {
    events_named(&sink.events(), "validation_rejected")
        .into_iter()
        .filter_map(|e| match e {
            EventKind::ValidationRejected {
                deployment_id,
                attempt,
                reason,
                ..
            } => Some((deployment_id.to_string(), attempt, reason)),
            _ => None,
        })
        .collect()
}

fn give_ups(sink: &VecSink) -> Vec<GiveUpReason> {
    events_named(&sink.events(), "give_up")
        .into_iter()
        .filter_map(|e| match e {
            EventKind::GiveUp { reason, .. } => Some(reason),
            _ => None,
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn incompatible_routes_are_filtered_in_the_seeds_order_and_never_tried() {
    let contract = Arc::new(Contract {
        modalities: vec!["text".into(), "image".into()],
        requires_tools: true,
        max_cost_usd: Some(0.01),
        ..(*invoice()).clone()
    });
    let vision = |id: &str| Deployment {
        modalities: vec!["text".into(), "image".into()],
        supports_function_calling: true,
        ..extractor("A", id)
    };
    let deployments = vec![
        // Text only: modalities.
        Deployment {
            supports_function_calling: true,
            ..extractor("A", "text-only")
        },
        // 500 tokens of context for a 1000-token prompt.
        Deployment {
            max_input_tokens: Some(500),
            ..vision("small")
        },
        Deployment {
            supports_function_calling: false,
            ..vision("no-tools")
        },
        Deployment {
            schema_modes: vec![SchemaMode::JsonObject, SchemaMode::JsonSchema],
            ..vision("no-strict")
        },
        Deployment {
            model_class: Some("general-chat".into()),
            ..vision("chat")
        },
        // 1000 input tokens at $0.00002 = $0.02, over the $0.01 budget.
        Deployment {
            input_cost_per_token: Some(0.000_02),
            ..vision("pricey")
        },
        vision("fit"),
    ];
    let provider = Scripted::new().always("fit", answer(VALID));
    let (router, sink) = make_router(config(deployments, settings()), provider);
    let result = router.completion(request(1, contract)).await;
    assert_eq!(attempts(&result), ["fit:ok"]);
    assert_eq!(
        filtered(&sink),
        [
            ("text-only".to_string(), FilterReason::Modalities),
            ("small".to_string(), FilterReason::Context),
            ("no-tools".to_string(), FilterReason::Tools),
            ("no-strict".to_string(), FilterReason::SchemaMode),
            ("chat".to_string(), FilterReason::ModelClass),
            ("pricey".to_string(), FilterReason::Cost),
        ]
    );
    let seen: Vec<String> = router
        .provider()
        .seen
        .borrow()
        .iter()
        .map(|(id, _)| id.clone())
        .collect();
    assert_eq!(seen, ["fit"], "a filtered route is never called");
}

#[tokio::test(start_paused = true)]
async fn the_fallback_must_still_satisfy_the_contract() {
    // A's only compatible route fails; B is a general-chat model that would answer 200.
    let deployments = vec![
        extractor("A", "a1"),
        Deployment {
            model_class: Some("general-chat".into()),
            ..extractor("B", "b1")
        },
    ];
    let provider = Scripted::new()
        .always("a1", fail(K::ServiceUnavailable))
        .always("b1", answer(VALID));
    let (router, sink) = make_router(config(deployments, settings()), provider);
    let req = Request {
        models: vec![Arc::from("B")].into(),
        ..request(1, invoice())
    };
    let result = router.completion(req).await;
    assert_eq!(attempts(&result), ["a1:service_unavailable"]);
    assert_eq!(outcome(&result), "service_unavailable");
    assert_eq!(
        filtered(&sink),
        [("b1".to_string(), FilterReason::ModelClass)]
    );
}

#[tokio::test(start_paused = true)]
async fn a_200_that_fails_validation_is_rejected_then_a_compatible_route_answers() {
    let provider = Scripted::new()
        .always("a1", answer(r#"{"invoice_id": "INV-1", "currency": "EUR""#))
        .always("a2", answer(VALID));
    let (router, sink) = make_router(
        config(vec![extractor("A", "a1"), extractor("A", "a2")], settings()),
        provider,
    );
    let result = router.completion(request(1, invoice())).await;
    assert_eq!(attempts(&result), ["a1:malformed_response", "a2:ok"]);
    assert_eq!(
        rejected(&sink),
        [("a1".to_string(), 1, ValidationReason::MalformedJson)]
    );
    assert_eq!(
        result.attempts[0].failure.as_ref().unwrap().status,
        Some(200)
    );
    assert_eq!(give_ups(&sink), [GiveUpReason::InvalidResponse]);
}

#[tokio::test(start_paused = true)]
async fn a_rejected_answer_with_no_compatible_fallback_fails_with_status_200() {
    let provider = Scripted::new().always(
        "a1",
        answer(r#"{"invoice_id": "INV-1", "currency": "EUR", "total": -3, "line_items": []}"#),
    );
    let (router, sink) = make_router(config(vec![extractor("A", "a1")], settings()), provider);
    let result = router.completion(request(1, invoice())).await;
    assert_eq!(attempts(&result), ["a1:malformed_response"]);
    let failure = result.outcome.unwrap_err();
    assert_eq!(
        (failure.kind, failure.status),
        (K::MalformedResponse, Some(200))
    );
    assert_eq!(
        rejected(&sink),
        [("a1".to_string(), 1, ValidationReason::InvariantViolated)]
    );
}

#[tokio::test(start_paused = true)]
async fn tool_calls_must_name_a_registered_tool_with_valid_arguments() {
    let tools = Arc::new(Contract {
        name: "support".into(),
        requires_tools: true,
        ..Contract::default()
    });
    let call = |name: &str, arguments: &str| {
        Step::Complete(Completion {
            output_tokens: 20,
            body: Some(Arc::new(ResponseBody {
                content: None,
                tool_calls: vec![ToolCall {
                    name: name.into(),
                    arguments: arguments.into(),
                }],
            })),
            ..Completion::default()
        })
    };
    let tool_dep = |id: &str| Deployment {
        supports_function_calling: true,
        ..dep("A", id)
    };
    let provider = Scripted::new()
        .always("t1", call("delete_everything", "{}"))
        .always("t2", call("lookup_order", r#"{"order": 7}"#))
        .always("t3", call("lookup_order", r#"{"order_id": "A-7"}"#));
    let settings = RouterSettings {
        max_attempts: 3,
        ..settings()
    };
    let (router, sink) = make_router(
        config(
            vec![tool_dep("t1"), tool_dep("t2"), tool_dep("t3")],
            settings,
        ),
        provider,
    );
    let result = router.completion(request(1, tools)).await;
    assert_eq!(
        attempts(&result),
        ["t1:malformed_response", "t2:malformed_response", "t3:ok"]
    );
    assert_eq!(
        rejected(&sink),
        [
            ("t1".to_string(), 1, ValidationReason::UnknownTool),
            ("t2".to_string(), 2, ValidationReason::InvalidToolArguments),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn other_profiles_accept_what_the_contract_profile_rejects() {
    let provider = Scripted::new().always("a1", answer("not json"));
    let litellm = RouterSettings {
        profile: Some(Profile::LiteLlm),
        ..RouterSettings::default()
    };
    let (router, sink) = make_router(config(vec![extractor("A", "a1")], litellm), provider);
    let result = router.completion(request(1, invoice())).await;
    assert_eq!(attempts(&result), ["a1:ok"]);
    assert!(rejected(&sink).is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_permanent_failure_stops_the_walk() {
    let provider = Scripted::new()
        .always("a1", fail(K::Authentication))
        .always("a2", answer(VALID));
    let (router, sink) = make_router(
        config(vec![extractor("A", "a1"), extractor("A", "a2")], settings()),
        provider,
    );
    let result = router.completion(request(1, invoice())).await;
    assert_eq!(attempts(&result), ["a1:authentication"]);
    assert_eq!(give_ups(&sink), [GiveUpReason::PermanentFailure]);
}

#[tokio::test(start_paused = true)]
async fn one_primary_attempt_plus_one_fallback_by_default() {
    // Capacity failures without a hint: fall back at once, and stop after two attempts.
    let provider = Scripted::new()
        .always("a1", fail(K::ServiceUnavailable))
        .always("a2", fail(K::ServiceUnavailable))
        .always("a3", answer(VALID));
    let deployments = vec![
        extractor("A", "a1"),
        extractor("A", "a2"),
        extractor("A", "a3"),
    ];
    let (router, _) = make_router(config(deployments.clone(), settings()), provider);
    let result = router.completion(request(1, invoice())).await;
    assert_eq!(
        attempts(&result),
        ["a1:service_unavailable", "a2:service_unavailable"]
    );

    let provider = Scripted::new()
        .always("a1", fail(K::ServiceUnavailable))
        .always("a2", fail(K::ServiceUnavailable))
        .always("a3", answer(VALID));
    let three = RouterSettings {
        max_attempts: 3,
        ..settings()
    };
    let (router, _) = make_router(config(deployments, three), provider);
    let result = router.completion(request(1, invoice())).await;
    assert_eq!(
        attempts(&result),
        ["a1:service_unavailable", "a2:service_unavailable", "a3:ok"]
    );
}

#[tokio::test(start_paused = true)]
async fn only_an_early_connection_failure_is_retried_on_the_same_route() {
    let provider = Scripted::new()
        .script("a1", vec![fail(K::ApiConnection)])
        .always("a1", answer(VALID))
        .always("a2", answer(VALID));
    let (router, _) = make_router(
        config(vec![extractor("A", "a1"), extractor("A", "a2")], settings()),
        provider,
    );
    let result = router.completion(request(1, invoice())).await;
    assert_eq!(attempts(&result), ["a1:api_connection", "a1:ok"]);

    // A timeout is not retried on the route that timed out: the walk falls back.
    let provider = Scripted::new()
        .script("a1", vec![fail(K::Timeout)])
        .always("a1", answer(VALID))
        .always("a2", answer(VALID));
    let (router, _) = make_router(
        config(vec![extractor("A", "a1"), extractor("A", "a2")], settings()),
        provider,
    );
    let result = router.completion(request(2, invoice())).await;
    assert_eq!(attempts(&result), ["a1:timeout", "a2:ok"]);
}

#[tokio::test(start_paused = true)]
async fn a_retry_after_is_honoured_only_when_it_fits_the_deadline() {
    // 2 s fits the 8 s deadline: the same route after 2 s.
    let provider = Scripted::new()
        .script("a1", vec![fail_after(K::RateLimit, ms(2000))])
        .always("a1", answer(VALID))
        .always("a2", answer(VALID));
    let (router, _) = make_router(
        config(vec![extractor("A", "a1"), extractor("A", "a2")], settings()),
        provider,
    );
    let result = router.completion(request(1, invoice())).await;
    assert_eq!(attempts(&result), ["a1:rate_limit", "a1:ok"]);
    assert_eq!(waits_ms(&result), [0, 2000]);

    // 10 s does not: a healthy fallback now.
    let provider = Scripted::new()
        .script("a1", vec![fail_after(K::RateLimit, ms(10_000))])
        .always("a1", answer(VALID))
        .always("a2", answer(VALID));
    let (router, sink) = make_router(
        config(vec![extractor("A", "a1"), extractor("A", "a2")], settings()),
        provider,
    );
    let result = router.completion(request(2, invoice())).await;
    assert_eq!(attempts(&result), ["a1:rate_limit", "a2:ok"]);
    assert_eq!(waits_ms(&result), [0, 0]);
    assert_eq!(give_ups(&sink), [GiveUpReason::DeadlineExhausted]);
}

#[tokio::test(start_paused = true)]
async fn no_attempt_starts_without_its_connect_generation_and_validation_allowance() {
    // Deadline 1 s; the first attempt fails after 100 ms; 900 ms are left, under
    // 300 + 800 + 50: the fallback is not launched.
    let contract = Arc::new(Contract {
        deadline: Some(Duration::from_secs(1)),
        ..(*invoice()).clone()
    });
    let tight = RouterSettings {
        generation_allowance: Some(ms(600)),
        ..settings()
    };
    let provider = Scripted::new()
        .always("a1", fail(K::ServiceUnavailable))
        .always("a2", answer(VALID));
    let (router, sink) = make_router(
        config(vec![extractor("A", "a1"), extractor("A", "a2")], tight),
        provider,
    );
    let result = router.completion(request(1, contract.clone())).await;
    assert_eq!(attempts(&result), ["a1:service_unavailable"]);
    assert_eq!(
        give_ups(&sink),
        [
            GiveUpReason::RetriesExhausted,
            GiveUpReason::DeadlineExhausted
        ]
    );

    // With a 500 ms generation allowance the fallback fits (100 + 300 + 500 + 50 < 1000).
    let roomy = RouterSettings {
        generation_allowance: Some(ms(500)),
        ..settings()
    };
    let provider = Scripted::new()
        .always("a1", fail(K::ServiceUnavailable))
        .always("a2", answer(VALID));
    let (router, _) = make_router(
        config(vec![extractor("A", "a1"), extractor("A", "a2")], roomy),
        provider,
    );
    let result = router.completion(request(2, contract)).await;
    assert_eq!(attempts(&result), ["a1:service_unavailable", "a2:ok"]);
}

#[tokio::test(start_paused = true)]
async fn a_fallback_stopped_by_the_deadline_budget_is_no_hop() {
    // A's route fails after 100 ms; 900 ms are left of the 1 s deadline, under the 950 ms an
    // attempt on B's route needs (300 + 600 + 50): the walk stops there. No call goes to B,
    // so the request did not fall back: a `deadline_exhausted` stop, not a `fallback`.
    let contract = Arc::new(Contract {
        deadline: Some(Duration::from_secs(1)),
        ..(*invoice()).clone()
    });
    let budget = |generation: u64| RouterSettings {
        generation_allowance: Some(ms(generation)),
        ..settings()
    };
    let run = |settings: RouterSettings| async {
        let provider = Scripted::new()
            .always("a1", fail(K::ServiceUnavailable))
            .always("b1", answer(VALID));
        let (router, sink) = make_router(
            config(vec![extractor("A", "a1"), extractor("B", "b1")], settings),
            provider,
        );
        let req = Request {
            models: vec![Arc::from("B")].into(),
            ..request(1, contract.clone())
        };
        let result = router.completion(req).await;
        (result, sink)
    };
    let (result, sink) = run(budget(600)).await;
    assert_eq!(attempts(&result), ["a1:service_unavailable"]);
    assert_eq!(result.fallbacks, 0, "no attempt on the fallback route");
    assert_eq!(result.attempted_fallbacks, 0);
    assert!(events_named(&sink.events(), "fallback").is_empty());
    assert_eq!(
        give_ups(&sink),
        [
            GiveUpReason::RetriesExhausted,
            GiveUpReason::DeadlineExhausted
        ]
    );

    // With room for B's attempt (300 + 500 + 50 < 900) the hop happens and is counted once,
    // when B's attempt starts.
    let (result, sink) = run(budget(500)).await;
    assert_eq!(attempts(&result), ["a1:service_unavailable", "b1:ok"]);
    assert_eq!(result.fallbacks, 1);
    let hops = events_named(&sink.events(), "fallback");
    assert_eq!(hops.len(), 1);
    assert!(
        matches!(&hops[0], EventKind::Fallback { source, target, depth: 1, .. }
            if &**source == "A" && &**target == "B"),
        "{hops:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn routes_are_ranked_by_measured_latency() {
    // a1 took 2 s to time out, a2 answered in 100 ms: the next request goes to a2 first.
    let provider = Scripted::new()
        .script(
            "a1",
            vec![Step::SlowFail(ms(2000), ProviderFailure::new(K::Timeout))],
        )
        .always("a1", answer(VALID))
        .always("a2", answer(VALID));
    let (router, _) = make_router(
        config(vec![extractor("A", "a1"), extractor("A", "a2")], settings()),
        provider,
    );
    let first = router.completion(request(1, invoice())).await;
    assert_eq!(attempts(&first), ["a1:timeout", "a2:ok"]);
    let second = router.completion(request(2, invoice())).await;
    assert_eq!(attempts(&second), ["a2:ok"]);
}

#[tokio::test(start_paused = true)]
async fn unmeasured_routes_of_equal_health_are_ranked_by_estimated_cost() {
    // Nothing measured yet, nothing failed: the cheaper route goes first, whatever the order
    // of the config; at equal cost the config order decides.
    let priced = |id: &str, usd_per_token: f64| Deployment {
        input_cost_per_token: Some(usd_per_token),
        output_cost_per_token: Some(usd_per_token),
        ..extractor("A", id)
    };
    let provider = Scripted::new()
        .always("a1", answer(VALID))
        .always("a2", answer(VALID))
        .always("a3", answer(VALID));
    let (router, _) = make_router(
        config(
            vec![
                priced("a1", 0.00003),
                priced("a2", 0.00001),
                priced("a3", 0.00002),
            ],
            settings(),
        ),
        provider,
    );
    let first = router.completion(request(1, invoice())).await;
    assert_eq!(attempts(&first), ["a2:ok"]);

    let provider = Scripted::new()
        .always("a1", answer(VALID))
        .always("a2", answer(VALID));
    let (router, _) = make_router(
        config(
            vec![priced("a1", 0.00002), priced("a2", 0.00002)],
            settings(),
        ),
        provider,
    );
    let tie = router.completion(request(1, invoice())).await;
    assert_eq!(attempts(&tie), ["a1:ok"]);
}

#[test]
fn capability_profiles_are_read_from_model_info() {
    let config = routersim_config::load::load_router_config_str(
        r"
model_list:
  - model_name: invoice
    litellm_params: {model: openai/gpt-4o, input_cost_per_token: 0.000002}
    model_info:
      id: a
      modalities: [text, image]
      max_input_tokens: 128000
      supports_function_calling: true
      schema_modes: [json_schema, strict]
      model_class: document-extraction
      region: eu-west
  - model_name: invoice
    litellm_params: {model: openai/gpt-4o-mini}
    model_info: {id: b, supports_response_schema: true, some_unknown_key: 1}
router_settings:
  profile: contract
  max_attempts: 3
  same_route_retries: 0
  connect_allowance: 200ms
  generation_allowance: 2s
  validation_allowance: 10ms
",
    )
    .unwrap();
    let a = &config.deployments[0];
    assert_eq!(a.modalities, ["text", "image"]);
    assert_eq!(a.max_input_tokens, Some(128_000));
    assert!(a.supports_function_calling);
    assert_eq!(a.schema_modes, [SchemaMode::JsonSchema, SchemaMode::Strict]);
    assert_eq!(a.model_class.as_deref(), Some("document-extraction"));
    assert_eq!(a.region.as_deref(), Some("eu-west"));
    let b = &config.deployments[1];
    assert_eq!(
        b.schema_modes,
        [SchemaMode::JsonObject, SchemaMode::JsonSchema]
    );
    assert!(!b.supports_function_calling);
    assert!(
        config
            .ignored_keys
            .iter()
            .any(|k| k.contains("some_unknown_key")),
        "{:?}",
        config.ignored_keys
    );
    let s = &config.settings;
    assert_eq!(s.profile, Some(Profile::Contract));
    assert_eq!((s.max_attempts, s.same_route_retries), (3, 0));
    assert_eq!(s.connect_allowance, ms(200));
    assert_eq!(s.generation_allowance, Some(ms(2000)));
    assert_eq!(s.validation_allowance, ms(10));
    assert!(config.warnings.is_empty(), "{:?}", config.warnings);

    let err = routersim_config::load::load_router_config_str(
        "model_list:\n  - {model_name: m, litellm_params: {model: x}, model_info: {schema_modes: [strictest]}}\n",
    )
    .unwrap_err();
    assert_eq!(err.path, "model_list[0].model_info.schema_modes[0]");

    let other = routersim_config::load::load_router_config_str(
        "model_list:\n  - {model_name: m, litellm_params: {model: x}}\nrouter_settings: {max_attempts: 3}\n",
    )
    .unwrap();
    assert_eq!(
        other.warnings,
        ["router_settings.max_attempts: read by profile: contract only; it does nothing here"]
    );
}

#[test]
fn attempts_per_candidate_does_nothing_under_contract_and_says_so() {
    let config = routersim_config::load::load_router_config_str(
        "model_list:\n  - {model_name: m, litellm_params: {model: x}}\nrouter_settings: {profile: contract, attempts_per_candidate: 3, request_deadline: 10s}\n",
    )
    .unwrap();
    assert_eq!(config.warnings.len(), 1, "{:?}", config.warnings);
    assert!(
        config.warnings[0]
            .starts_with("router_settings.attempts_per_candidate: read by profile: multigrid only")
    );
}

#[tokio::test(start_paused = true)]
async fn a_rejected_answer_spends_the_cost_budget() {
    // Each answer costs 1000 × $0.00001 = $0.01 of a $0.015 budget: both routes fit before the
    // first answer; once a1's (rejected) answer is paid for, a2 no longer does.
    let contract = Arc::new(Contract {
        max_cost_usd: Some(0.015),
        ..(*invoice()).clone()
    });
    let priced = |id: &str| Deployment {
        input_cost_per_token: Some(0.000_01),
        output_cost_per_token: Some(0.0),
        ..extractor("A", id)
    };
    let provider = Scripted::new()
        .always("a1", answer("{}"))
        .always("a2", answer(VALID));
    let (router, sink) = make_router(
        config(vec![priced("a1"), priced("a2")], settings()),
        provider,
    );
    let result = router.completion(request(1, contract)).await;
    assert_eq!(attempts(&result), ["a1:malformed_response"]);
    assert_eq!(filtered(&sink), [("a2".to_string(), FilterReason::Cost)]);
}

#[tokio::test(start_paused = true)]
async fn a_streamed_answer_is_not_validated_after_it_reached_the_caller() {
    // The stream ends with finish_reason length (truncated): a non-streamed answer so cut
    // would be rejected, but this one's tokens were already passed on.
    let plan = vec![
        (ms(100), text(5)),
        (
            ms(10),
            Play::Item(routersim_engine::stream::StreamItem::Done(
                routersim_engine::stream::FinishReason::Length,
            )),
        ),
    ];
    let provider = Scripted::new()
        .always("a1", Step::Stream(plan))
        .always("a2", answer(VALID));
    let (router, sink) = make_router(
        config(vec![extractor("A", "a1"), extractor("A", "a2")], settings()),
        provider,
    );
    let req = Request {
        stream: true,
        ..request(1, invoice())
    };
    let result = router.completion(req).await;
    assert_eq!(attempts(&result), ["a1:ok"]);
    assert!(rejected(&sink).is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_route_whose_answers_were_rejected_ranks_behind_a_healthy_one() {
    // Both answer in 100 ms; a1's first answer is rejected, so the next request tries a2 first.
    let provider = Scripted::new()
        .script("a1", vec![answer("{}")])
        .always("a1", answer(VALID))
        .always("a2", answer(VALID));
    let (router, _) = make_router(
        config(vec![extractor("A", "a1"), extractor("A", "a2")], settings()),
        provider,
    );
    let first = router.completion(request(1, invoice())).await;
    assert_eq!(attempts(&first), ["a1:malformed_response", "a2:ok"]);
    let second = router.completion(request(2, invoice())).await;
    assert_eq!(attempts(&second), ["a2:ok"]);
}
