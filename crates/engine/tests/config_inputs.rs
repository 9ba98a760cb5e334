//! Config values LiteLLM reads differently from their face value, and budget errors.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "tests fail loudly, read as one story, and drive tokio's paused clock directly"
)]

use std::time::Duration;

use routersim_engine::config::load::load_router_config_str;

const MODEL: &str = "model_list:\n  - model_name: m\n    litellm_params:\n      model: openai/m\n";

/// LiteLLM picks a timeout with `a or b or c`, where 0 is false: `timeout: 0` is "not set" and
/// the next source applies. routersim does the same, and says so.
#[test]
fn a_zero_timeout_is_unset_as_in_litellm_and_said() {
    let c = load_router_config_str(&format!(
        "{MODEL}      timeout: 0\n      stream_timeout: 0s\nrouter_settings:\n  timeout: 30\n  stream_timeout: 0\n"
    ))
    .expect("loads");
    assert_eq!(c.deployments[0].timeout, None);
    assert_eq!(c.deployments[0].stream_timeout, None);
    assert_eq!(c.settings.timeout, Some(Duration::from_secs(30)));
    assert_eq!(c.settings.stream_timeout, None);
    let said: Vec<&String> = c
        .warnings
        .iter()
        .filter(|w| w.contains("0 means not set"))
        .collect();
    assert_eq!(said.len(), 3, "{:?}", c.warnings);
    assert!(
        said[0].starts_with("model_list[0].litellm_params.timeout: "),
        "{said:?}"
    );

    // router_settings.timeout: 0 falls through to litellm_settings.request_timeout.
    let c = load_router_config_str(&format!(
        "{MODEL}router_settings:\n  timeout: 0\nlitellm_settings:\n  request_timeout: 45\n"
    ))
    .expect("loads");
    assert_eq!(c.settings.timeout, Some(Duration::from_secs(45)));
    let c = load_router_config_str(&format!("{MODEL}litellm_settings:\n  request_timeout: 0\n"))
        .expect("loads");
    assert_eq!(c.settings.timeout, None);
    assert!(
        c.warnings
            .iter()
            .any(|w| w.starts_with("litellm_settings.request_timeout: 0 means not set")),
        "{:?}",
        c.warnings
    );
}

#[test]
fn a_budget_breach_is_said_in_words() {
    let deep = format!(
        "{MODEL}router_settings:\n  x: {}1{}\n",
        "[".repeat(80),
        "]".repeat(80)
    );
    let e = load_router_config_str(&deep).expect_err("too deep");
    assert_eq!(e.path, "(yaml)");
    assert!(e.message.contains("nested more than 64 levels deep"), "{e}");
    assert!(!e.message.contains("budget breached"), "{e}");
}
