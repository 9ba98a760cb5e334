//! `model_group_alias` values LiteLLM 1.110.2 loads but cannot route (a list, a number, null,
//! a mapping without a string `model`): the file loads with a note, a request for that alias
//! fails with `bad_request` (a `give_up` event naming the alias, reason `unroutable_alias`)
//! and then walks the alias's fallbacks, as LiteLLM's does; every other request is unaffected.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "tests fail loudly, read as one story, and drive tokio's paused clock directly"
)]

use crate::common::*;
use routersim_config::load::load_router_config_str;
use routersim_engine::config::RouterConfig;
use routersim_engine::event::{EventKind, GiveUpReason};
use routersim_engine::failure::FailureKind;
use routersim_engine::request::Request;

const MODELS: &str = "model_list:\n  - {model_name: a, litellm_params: {model: openai/a}}\n  - {model_name: b, litellm_params: {model: openai/b}}\n";

fn load(yaml: &str) -> RouterConfig {
    match load_router_config_str(yaml) {
        Ok(c) => c,
        Err(e) => panic!("should load: {e}\n{yaml}"),
    }
}

#[test]
fn an_alias_to_a_list_loads_with_a_note_naming_alias_and_path() {
    let c = load(&format!(
        "{MODELS}router_settings:\n  model_group_alias:\n    best: [a, b]\n    ok: a\n"
    ));
    assert_eq!(
        c.settings.model_group_alias.get("ok").map(String::as_str),
        Some("a")
    );
    assert!(!c.settings.model_group_alias.contains_key("best"));
    assert_eq!(
        c.settings
            .unroutable_aliases
            .get("best")
            .map(String::as_str),
        Some("a list")
    );
    let note = c
        .warnings
        .iter()
        .find(|w| w.starts_with("router_settings.model_group_alias.best:"))
        .unwrap_or_else(|| panic!("no note for the alias: {:?}", c.warnings));
    assert!(note.contains("\"best\""), "{note}");
    assert!(note.contains("a list"), "{note}");
    assert!(note.contains("bad_request"), "{note}");
}

#[test]
fn other_shapes_litellm_cannot_route_load_the_same_way() {
    for (value, found) in [
        ("5", "the number 5"),
        ("null", "null"),
        ("true", "the boolean true"),
        ("{hidden: true}", "a mapping without a `model` string"),
        (
            "{model: [a], hidden: false}",
            "a mapping without a `model` string",
        ),
    ] {
        let c = load(&format!(
            "{MODELS}router_settings:\n  model_group_alias:\n    x: {value}\n"
        ));
        assert_eq!(
            c.settings.unroutable_aliases.get("x").map(String::as_str),
            Some(found),
            "{value}"
        );
        assert!(
            c.warnings
                .iter()
                .any(|w| w.starts_with("router_settings.model_group_alias.x:")),
            "{value}: {:?}",
            c.warnings
        );
    }
}

#[test]
fn the_mapping_form_still_routes() {
    let c = load(&format!(
        "{MODELS}router_settings:\n  model_group_alias:\n    x: {{model: b, hidden: true}}\n"
    ));
    assert_eq!(
        c.settings.model_group_alias.get("x").map(String::as_str),
        Some("b")
    );
    assert!(c.settings.unroutable_aliases.is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_request_for_the_alias_fails_with_bad_request_naming_it_others_are_served() {
    let c = load(&format!(
        "{MODELS}router_settings:\n  num_retries: 3\n  model_group_alias:\n    best: [a, b]\n    ok: a\n"
    ));
    let (router, sink) = make_router(c, Scripted::new());
    let r = router.completion(Request::new(1, "best")).await;
    assert_eq!(outcome(&r), "bad_request");
    assert!(r.attempts.is_empty());
    assert_eq!(r.retries, 0, "LiteLLM does not retry it");
    assert_eq!(r.outcome.as_ref().err().and_then(|f| f.status), Some(400));
    let give_ups = events_named(&sink.events(), "give_up");
    assert_eq!(
        give_ups,
        [EventKind::GiveUp {
            model_group: "best".into(),
            failure: FailureKind::BadRequest,
            reason: GiveUpReason::UnroutableAlias,
        }]
    );
    assert_eq!(GiveUpReason::UnroutableAlias.as_str(), "unroutable_alias");

    for (id, model, served) in [(2, "ok", "a"), (3, "a", "a"), (4, "b", "b")] {
        let r = router.completion(Request::new(id, model)).await;
        assert_eq!(outcome(&r), "ok", "{model}");
        assert_eq!(&*r.final_model_group, served, "{model}");
    }
}

#[tokio::test(start_paused = true)]
async fn the_failed_alias_walks_its_fallbacks_as_litellm_does() {
    // LiteLLM 1.110.2: `fallbacks: [{best: [b]}]` serves a request for the broken alias from b
    // (x-litellm-attempted-fallbacks: 1).
    let c = load(&format!(
        "{MODELS}router_settings:\n  model_group_alias:\n    best: [a, b]\n  fallbacks: [{{best: [b]}}]\n"
    ));
    let (router, sink) = make_router(c, Scripted::new());
    let r = router.completion(Request::new(1, "best")).await;
    assert_eq!(outcome(&r), "ok");
    assert_eq!(r.fallbacks, 1);
    assert_eq!(&*r.final_model_group, "b");
    let hops = events_named(&sink.events(), "fallback");
    assert!(
        matches!(&hops[..], [EventKind::Fallback { source, target, failure: FailureKind::BadRequest, .. }]
            if &**source == "best" && &**target == "b"),
        "{hops:?}"
    );
}
