//! Ambiguous execution (`router_settings.replay`, `crate::replay`): an attempt whose
//! connection was lost after the request was sent is reported as an `ambiguous_outcome`, and
//! the replay policy decides whether anything sends the operation again — under LiteLLM's
//! rules and Multigrid's walk alike.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "tests fail loudly, read as one story, and drive tokio's paused clock directly"
)]

use crate::common::*;
use routersim_config::load_router_config_str;
use routersim_engine::config::{Profile, RouterSettings};
use routersim_engine::event::{EventKind, GiveUpReason, VecSink};
use routersim_engine::failure::{Ambiguity, FailureKind as K, ProviderFailure};
use routersim_engine::replay::Replay;
use routersim_engine::request::Request;

fn lost_after_send(executed: bool) -> Step {
    Step::Fail(
        ProviderFailure::new(K::ApiConnection).with_ambiguity(Ambiguity {
            executed: Some(executed),
        }),
    )
}

/// Every `ambiguous_outcome` event: (deployment, operation, replay, executed).
fn ambiguous(sink: &VecSink) -> Vec<(String, u64, Replay, Option<bool>)> {
    events_named(&sink.events(), "ambiguous_outcome")
        .into_iter()
        .filter_map(|e| match e {
            EventKind::AmbiguousOutcome {
                deployment_id,
                operation_id,
                replay,
                executed,
                ..
            } => Some((deployment_id.to_string(), operation_id, replay, executed)),
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

/// Group A (a1 then ambiguous, a2 fine) with a fallback to B, under `replay`.
async fn run(replay: Replay, profile: Option<Profile>) -> (Vec<String>, VecSinkEvents) {
    let provider = Scripted::new()
        .script("a1", vec![lost_after_send(true)])
        .always("a2", Step::Ok)
        .always("b1", Step::Ok);
    let settings = RouterSettings {
        replay,
        profile,
        fallbacks: fallbacks(&[("A", &["B"])]),
        ..RouterSettings::default()
    };
    let deployments = vec![dep("A", "a1"), dep("A", "a2"), dep("B", "b1")];
    let (router, sink) = make_router(config(deployments, settings), provider);
    let mut request = Request::new(42, "A");
    request.models = vec![std::sync::Arc::from("B")].into();
    // Under LiteLLM's rules the seeded simple-shuffle pick happens to take a1 first.
    let result = router.completion(request).await;
    let mut all = attempts(&result);
    all.push(outcome(&result));
    (all, VecSinkEvents(sink))
}

struct VecSinkEvents(std::sync::Arc<VecSink>);

#[tokio::test(start_paused = true)]
async fn always_replays_an_ambiguous_attempt_like_any_connection_error() {
    for profile in [None, Some(Profile::Multigrid)] {
        let (trace, events) = run(Replay::Always, profile).await;
        assert_eq!(trace.first().map(String::as_str), Some("a1:api_connection"));
        assert_eq!(trace.last().map(String::as_str), Some("ok"), "{trace:?}");
        assert!(trace.len() >= 3, "replayed: {trace:?}");
        assert_eq!(
            ambiguous(&events.0),
            [("a1".to_string(), 42, Replay::Always, Some(true))]
        );
    }
}

#[tokio::test(start_paused = true)]
async fn dedupe_replays_with_the_operation_id() {
    let (trace, events) = run(Replay::Dedupe, Some(Profile::Multigrid)).await;
    // Multigrid retries the same candidate: the replay goes to a1 again, with the key.
    assert_eq!(trace, ["a1:api_connection", "a1:ok", "ok"]);
    assert_eq!(
        ambiguous(&events.0),
        [("a1".to_string(), 42, Replay::Dedupe, Some(true))]
    );
}

#[tokio::test(start_paused = true)]
async fn never_fails_the_request_at_once_no_retry_no_fallback() {
    for profile in [None, Some(Profile::Multigrid)] {
        let (trace, events) = run(Replay::Never, profile).await;
        assert_eq!(
            trace,
            ["a1:api_connection", "api_connection"],
            "{profile:?}"
        );
        assert_eq!(give_ups(&events.0), [GiveUpReason::AmbiguousNotReplayed]);
        assert!(events_named(&events.0.events(), "fallback").is_empty());
    }
}

#[test]
fn replay_loads_and_a_wrong_value_names_its_path() {
    let model_list = "model_list:\n  - model_name: A\n    litellm_params: {model: openai/a}\n";
    let c = load_router_config_str(&format!("{model_list}router_settings:\n  replay: dedupe\n"))
        .unwrap();
    assert_eq!(c.settings.replay, Replay::Dedupe);
    let default = load_router_config_str(model_list).unwrap();
    assert_eq!(default.settings.replay, Replay::Always);
    let err = load_router_config_str(&format!("{model_list}router_settings:\n  replay: twice\n"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("router_settings.replay"), "{err}");
    assert!(err.contains("expected always, dedupe or never"), "{err}");
}

/// `profile: contract` presets `replay: dedupe` (the contracts seed: "Deduplicate before
/// replaying"); every other profile `always`; an explicit `replay` wins either way.
#[test]
fn profile_contract_presets_dedupe_and_an_explicit_replay_wins() {
    let model_list = "model_list:\n  - model_name: A\n    litellm_params: {model: openai/a}\n";
    let load = |settings: &str| {
        load_router_config_str(&format!("{model_list}router_settings: {{{settings}}}\n"))
            .unwrap()
            .settings
            .replay
    };
    assert_eq!(load("profile: contract"), Replay::Dedupe);
    assert_eq!(load("profile: contract, replay: always"), Replay::Always);
    assert_eq!(load("replay: never, profile: contract"), Replay::Never);
    for profile in ["litellm", "deltallm", "litellm-1.110", "multigrid"] {
        assert_eq!(
            load(&format!("profile: {profile}")),
            Replay::Always,
            "{profile}"
        );
    }
}
