//! `set`: overrides applied to the router config's tree before it is validated, inline or
//! from a `router_file`; errors name `set.<path>` with the scenario's file and line.

use std::path::{Path, PathBuf};
use std::time::Duration;

use routersim_engine::config::{Profile, RoutingStrategyName};
use routersim_sim::scenario::{apply_set, load_scenario, parse_scenario, parse_set_value};
use serde_json::{Value, json};

const ROUTER: &str = "router:
  model_list:
    - model_name: gpt
      litellm_params: {model: openai/a, rpm: 100}
      model_info: {id: a}
    - model_name: gpt
      litellm_params: {model: openai/b}
      model_info: {id: b}
  router_settings:
    routing_strategy: simple-shuffle
    num_retries: 2
";

fn scenario(set: &str) -> Result<routersim_sim::scenario::Scenario, String> {
    let text = format!("duration: 1m\n{ROUTER}{set}");
    parse_scenario(&text, Path::new("s.yaml")).map_err(|e| e.to_string())
}

#[test]
fn set_overrides_a_strategy_and_nested_values_and_creates_missing_mappings() {
    let s = scenario(
        "set:
  router_settings.routing_strategy: least-busy
  \"router_settings.allowed_fails\": 3
  model_list[0].litellm_params.rpm: 250
  model_list[1].model_info.priority: 1
  litellm_settings.request_timeout: 30
",
    )
    .expect("valid");
    let settings = &s.router.settings;
    assert_eq!(settings.routing_strategy, RoutingStrategyName::LeastBusy);
    assert_eq!(settings.allowed_fails, Some(3));
    assert_eq!(settings.num_retries, 2, "untouched keys stay");
    assert_eq!(settings.timeout, Some(Duration::from_secs(30)));
    assert_eq!(s.router.deployments[0].rpm, Some(250));
    assert_eq!(s.router.deployments[1].priority, Some(1));
    assert_eq!(
        s.set,
        vec![
            (
                "router_settings.routing_strategy".into(),
                json!("least-busy")
            ),
            ("router_settings.allowed_fails".into(), json!(3)),
            ("model_list[0].litellm_params.rpm".into(), json!(250)),
            ("model_list[1].model_info.priority".into(), json!(1)),
            ("litellm_settings.request_timeout".into(), json!(30)),
        ]
    );
    // Without `set`, nothing changes.
    let plain = scenario("").expect("valid");
    assert_eq!(
        plain.router.settings.routing_strategy,
        RoutingStrategyName::SimpleShuffle
    );
    assert!(plain.set.is_empty());
}

#[test]
fn later_entries_win() {
    let s = scenario(
        "set:\n  router_settings: {routing_strategy: weighted}\n  router_settings.num_retries: 0\n",
    )
    .expect("valid");
    // The whole mapping was replaced, then a key added to it.
    assert_eq!(
        s.router.settings.routing_strategy,
        RoutingStrategyName::Weighted
    );
    assert_eq!(s.router.settings.num_retries, 0);
}

#[test]
fn bad_paths_name_set_with_the_scenario_line() {
    let line = ROUTER.lines().count() as u64 + 3;
    let cases = [
        (
            "  model_list[5].litellm_params.rpm: 1\n",
            "set.model_list[5].litellm_params.rpm: model_list[5] is past the end of the list \
             (model_list has 2 entries)",
        ),
        (
            "  router_settings.num_retries.max: 1\n",
            "set.router_settings.num_retries.max: router_settings.num_retries is the number 2, \
             not a mapping: it has no key \"max\"",
        ),
        (
            "  router_settings[0]: 1\n",
            "set.router_settings[0]: router_settings is a mapping, not a list: it has no [0]",
        ),
        (
            "  litellm_settings.fallbacks[0]: x\n",
            "set.litellm_settings.fallbacks[0]: litellm_settings.fallbacks does not exist: an \
             index needs an existing list",
        ),
        (
            "  model_list[x].rpm: 1\n",
            "set.model_list[x].rpm: [x] is not a list index in \"model_list[x].rpm\"",
        ),
        (
            "  router_settings..x: 1\n",
            "set.router_settings..x: an empty key",
        ),
    ];
    for (entry, expected) in cases {
        let e = scenario(&format!("set:\n{entry}")).expect_err(entry);
        assert!(
            e.starts_with(&format!("s.yaml:{line}:")),
            "{entry}: located at the set entry, got {e}"
        );
        assert!(e.contains(expected), "{entry}: {e}");
    }
}

#[test]
fn a_config_error_from_an_override_is_located_at_the_set_entry() {
    let e = scenario("set:\n  router_settings.routing_strategy: fastest\n").expect_err("bad");
    let line = ROUTER.lines().count() + 3;
    assert!(
        e.starts_with(&format!(
            "s.yaml:{line}:37: set.router_settings.routing_strategy: "
        )),
        "{e}"
    );
    assert!(e.contains("fastest"), "{e}");
}

/// A fresh directory for file-based tests.
fn temp_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("scenario-set-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn set_works_on_a_router_file_and_its_own_errors_stay_in_that_file() {
    let dir = temp_dir("router-file");
    let router = dir.join("router.yaml");
    std::fs::write(
        &router,
        "model_list:\n  - model_name: m\n    litellm_params: {model: openai/m, rpm: 10}\n    model_info: {id: m1}\nrouter_settings:\n  routing_strategy: simple-shuffle\n",
    )
    .expect("write");
    let scenario = dir.join("s.yaml");
    std::fs::write(
        &scenario,
        "duration: 1m\nrouter_file: router.yaml\nset:\n  router_settings.routing_strategy: priority-based-routing\n  router_settings.profile: deltallm\n  model_list[0].litellm_params.rpm: 99\n",
    )
    .expect("write");
    let s = load_scenario(&scenario).expect("valid");
    assert_eq!(
        s.router.settings.routing_strategy,
        RoutingStrategyName::PriorityBased
    );
    assert_eq!(s.router.settings.profile, Some(Profile::DeltaLlm));
    assert_eq!(s.router.deployments[0].rpm, Some(99));
    // The file itself is untouched.
    assert!(
        std::fs::read_to_string(&router)
            .expect("read")
            .contains("simple-shuffle")
    );

    // An override's error is the scenario's.
    std::fs::write(
        &scenario,
        "duration: 1m\nrouter_file: router.yaml\nset:\n  model_list[3].model_info.id: x\n",
    )
    .expect("write");
    let e = load_scenario(&scenario).expect_err("past the list");
    assert_eq!(e.file, scenario);
    assert_eq!(
        (e.line, e.path.as_str()),
        (Some(4), "set.model_list[3].model_info.id")
    );

    // An error the override did not cause is the router file's, with its line.
    std::fs::write(
        &router,
        "model_list:\n  - model_name: m\n    litellm_params: {model: openai/m, tpm: lots}\n",
    )
    .expect("write");
    std::fs::write(
        &scenario,
        "duration: 1m\nrouter_file: router.yaml\nset:\n  router_settings.num_retries: 1\n",
    )
    .expect("write");
    let e = load_scenario(&scenario).expect_err("bad router");
    assert_eq!(e.file, router);
    assert_eq!(e.path, "model_list[0].litellm_params.tpm");
    assert_eq!(e.line, Some(3));
}

#[test]
fn apply_set_on_a_tree() {
    let mut tree = json!({"model_list": [{"model_name": "m"}], "router_settings": null});
    apply_set(&mut tree, "router_settings.cooldown_time", json!(30)).expect("null is missing");
    apply_set(&mut tree, "model_list[0].litellm_params.rpm", json!(5)).expect("creates");
    apply_set(&mut tree, "model_list[0].model_name", json!("n")).expect("replaces");
    assert_eq!(
        tree,
        json!({
            "model_list": [{"model_name": "n", "litellm_params": {"rpm": 5}}],
            "router_settings": {"cooldown_time": 30}
        })
    );
    let before = tree.clone();
    assert!(apply_set(&mut tree, "model_list[1]", json!({})).is_err());
    assert!(apply_set(&mut tree, "other[0].x", json!(1)).is_err());
    assert!(apply_set(&mut tree, "", json!(1)).is_err());
    assert!(apply_set(&mut tree, "a[0", json!(1)).is_err());
    assert_eq!(
        tree, before,
        "a failed set changes nothing it did not have to"
    );

    assert_eq!(parse_set_value("3"), Ok(json!(3)));
    assert_eq!(parse_set_value("least-busy"), Ok(json!("least-busy")));
    assert_eq!(parse_set_value("true"), Ok(Value::Bool(true)));
    assert_eq!(parse_set_value("[a, b]"), Ok(json!(["a", "b"])));
}
