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

use routersim_config::load::load_router_config_str;

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

/// `lines` full-line comments, each indented by `indent` spaces.
fn comment_block(lines: usize, indent: usize) -> String {
    let pad = " ".repeat(indent);
    (0..lines)
        .map(|i| format!("{pad}# comment line {i}: keep: [this, out] # and this\n"))
        .collect()
}

/// PyYAML (which LiteLLM uses) reads a comment block of any length; serde-saphyr's default
/// budget rejected more than 32 buffered comments in a row ("too many buffered comments while
/// looking ahead").
#[test]
fn a_long_comment_block_loads_in_every_position() {
    let block = comment_block(500, 0);
    let nested = comment_block(500, 4);
    let configs = [
        // top level, before the first key
        format!("{block}{MODEL}router_settings:\n  num_retries: 2\n"),
        // inside model_list, between two entries
        format!(
            "model_list:\n  - model_name: m\n    litellm_params:\n      model: openai/m\n{nested}  - model_name: n\n    litellm_params:\n      model: openai/n\nrouter_settings:\n  num_retries: 2\n"
        ),
        // after a key with no value, before its indented mapping / list
        format!(
            "model_list:\n{block}  - model_name: m\n    litellm_params:\n      model: openai/m\nrouter_settings:\n{nested}  num_retries: 2\n"
        ),
        // between top-level keys, at the end
        format!("{MODEL}{block}router_settings:\n  num_retries: 2\n{block}"),
    ];
    let failed: Vec<String> = configs
        .iter()
        .enumerate()
        .filter_map(|(i, config)| match load_router_config_str(config) {
            Ok(c) if c.settings.num_retries == 2 && !c.deployments.is_empty() => None,
            Ok(c) => Some(format!(
                "config {i}: loaded wrong: {:?}",
                c.settings.num_retries
            )),
            Err(e) => Some(format!("config {i}: {e}")),
        })
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn a_syntax_error_after_a_long_comment_block_names_its_line() {
    let block = comment_block(500, 2);
    // MODEL is 4 lines, `router_settings:` line 5, the block lines 6-505: the bad escape is on
    // line 506.
    let e = load_router_config_str(&format!(
        "{MODEL}router_settings:\n{block}  routing_strategy: \"x\\q\"\n"
    ))
    .expect_err("bad escape");
    assert_eq!(e.location.map(|l| l.0), Some(506), "{e}");
    assert!(e.message.contains("line 506"), "{e}");
}
