//! `include:` merges as LiteLLM 1.110.2's proxy does (`proxy/common_utils/config_includes.py`,
//! `resolve_includes`, called by `ProxyConfig._process_includes`): top-level keys only; a list
//! in both files is the including side's entries then the included file's; any other value of
//! the included file replaces the one before it as a whole (nested keys are not merged);
//! includes are read breadth first, each file once.

use std::path::{Path, PathBuf};

use routersim_config::load::{ConfigError, load_router_config_file};
use routersim_engine::config::FallbackTarget;
use routersim_engine::config::RouterConfig;

/// A fresh directory holding `files` (name → text); returns it.
fn dir_with(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("routersim-include-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (file, text) in files {
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

fn load(dir: &Path) -> RouterConfig {
    match load_router_config_file(&dir.join("root.yaml")) {
        Ok(c) => c,
        Err(e) => panic!("should load: {e}"),
    }
}

fn load_err(dir: &Path) -> ConfigError {
    match load_router_config_file(&dir.join("root.yaml")) {
        Ok(_) => panic!("should not load"),
        Err(e) => e,
    }
}

/// What a config that sets nothing gets.
fn defaults() -> routersim_engine::config::RouterSettings {
    routersim_config::load::load_router_config_str(&format!("model_list:\n{}", model("A")))
        .unwrap()
        .settings
}

fn groups(c: &RouterConfig) -> Vec<&str> {
    c.deployments.iter().map(|d| &*d.model_name).collect()
}

fn model(name: &str) -> String {
    format!("  - {{model_name: {name}, litellm_params: {{model: openai/{name}}}}}\n")
}

#[test]
fn the_reported_case_the_included_router_settings_replace_the_including_ones() {
    let dir = dir_with(
        "reported",
        &[
            (
                "root.yaml",
                &format!(
                    "include: [chain.yaml]\nmodel_list:\n{}{}router_settings:\n  num_retries: 4\n",
                    model("A"),
                    model("B")
                ),
            ),
            ("chain.yaml", "router_settings:\n  fallbacks: [{A: [B]}]\n"),
        ],
    );
    let c = load(&dir);
    assert_eq!(
        c.settings.fallbacks.get("A"),
        Some(&[FallbackTarget::group("B")][..]),
        "the included file's fallback chain is kept"
    );
    assert_eq!(
        c.settings.num_retries,
        defaults().num_retries,
        "the including file's router_settings are replaced whole, as LiteLLM does"
    );
    assert_ne!(defaults().num_retries, 4);
    let note = c
        .warnings
        .iter()
        .find(|w| w.starts_with("include[0]: router_settings"))
        .unwrap_or_else(|| panic!("a note says so: {:?}", c.warnings));
    assert!(
        note.contains("num_retries"),
        "names the keys dropped: {note}"
    );
    assert!(note.contains("chain.yaml"), "{note}");
}

#[test]
fn lists_are_appended_including_side_first_in_include_order() {
    let dir = dir_with(
        "lists",
        &[
            (
                "root.yaml",
                &format!("include: [x.yaml, y.yaml]\nmodel_list:\n{}", model("R")),
            ),
            ("x.yaml", &format!("model_list:\n{}", model("X"))),
            (
                "y.yaml",
                &format!("model_list:\n{}{}", model("Y1"), model("Y2")),
            ),
        ],
    );
    assert_eq!(groups(&load(&dir)), ["R", "X", "Y1", "Y2"]);
}

#[test]
fn nested_includes_are_read_breadth_first_and_the_last_merged_wins() {
    // root includes x and y; x includes z: LiteLLM merges x, then y, then z.
    let dir = dir_with(
        "bfs",
        &[
            (
                "root.yaml",
                &format!("include: [x.yaml, y.yaml]\nmodel_list:\n{}", model("R")),
            ),
            (
                "x.yaml",
                &format!(
                    "include: [z.yaml]\nmodel_list:\n{}router_settings: {{num_retries: 1}}\n",
                    model("X")
                ),
            ),
            (
                "y.yaml",
                &format!(
                    "model_list:\n{}router_settings: {{num_retries: 2}}\n",
                    model("Y")
                ),
            ),
            (
                "z.yaml",
                &format!(
                    "model_list:\n{}router_settings: {{num_retries: 3}}\n",
                    model("Z")
                ),
            ),
        ],
    );
    let c = load(&dir);
    assert_eq!(groups(&c), ["R", "X", "Y", "Z"]);
    assert_eq!(c.settings.num_retries, 3);
}

#[test]
fn a_mapping_replaces_a_mapping_whole_and_null_replaces_too() {
    let dir = dir_with(
        "replace",
        &[
            (
                "root.yaml",
                &format!(
                    "include: [s.yaml]\nmodel_list:\n{}litellm_settings: {{num_retries: 5}}\nrouter_settings: {{allowed_fails: 7}}\n",
                    model("A")
                ),
            ),
            (
                "s.yaml",
                "litellm_settings: {request_timeout: 5}\nrouter_settings:\n",
            ),
        ],
    );
    let c = load(&dir);
    assert_eq!(
        c.settings.num_retries,
        defaults().num_retries,
        "litellm_settings replaced whole"
    );
    assert_ne!(defaults().num_retries, 5);
    assert_eq!(c.settings.timeout, Some(std::time::Duration::from_secs(5)));
    assert_eq!(
        c.settings.allowed_fails,
        defaults().allowed_fails,
        "an empty router_settings in the included file replaces the including one"
    );
}

#[test]
fn each_file_is_read_once_cycles_and_repeats_included() {
    let dir = dir_with(
        "once",
        &[
            (
                "root.yaml",
                &format!("include: [x.yaml, x.yaml]\nmodel_list:\n{}", model("R")),
            ),
            (
                "x.yaml",
                &format!("include: [root.yaml, x.yaml]\nmodel_list:\n{}", model("X")),
            ),
        ],
    );
    let c = load(&dir);
    assert_eq!(groups(&c), ["R", "X"]);
}

#[test]
fn include_must_be_a_list_of_file_paths() {
    for (value, path) in [
        ("x.yaml", "include"),
        ("", "include"),
        ("[x.yaml, 3]", "include[1]"),
    ] {
        let dir = dir_with(
            "shape",
            &[
                (
                    "root.yaml",
                    &format!("include: {value}\nmodel_list:\n{}", model("R")),
                ),
                ("x.yaml", &format!("model_list:\n{}", model("X"))),
            ],
        );
        let e = load_err(&dir);
        assert_eq!(e.path, path, "{value}: {e}");
        assert!(e.message.contains("a list of file paths"), "{value}: {e}");
    }
}

#[test]
fn an_empty_included_file_adds_nothing_a_list_is_an_error_as_in_litellm() {
    let dir = dir_with(
        "empty",
        &[
            (
                "root.yaml",
                &format!("include: [x.yaml]\nmodel_list:\n{}", model("R")),
            ),
            ("x.yaml", "# nothing\n"),
        ],
    );
    assert_eq!(groups(&load(&dir)), ["R"]);

    let dir = dir_with(
        "not-a-mapping",
        &[
            (
                "root.yaml",
                &format!("include: [x.yaml]\nmodel_list:\n{}", model("R")),
            ),
            ("x.yaml", "- a\n"),
        ],
    );
    let e = load_err(&dir);
    assert_eq!(e.path, "include[0]", "{e}");
    assert!(e.message.contains("must be a mapping"), "{e}");
}

#[test]
fn a_nested_include_is_read_next_to_its_file_else_next_to_the_root_with_a_note() {
    let dir = dir_with(
        "relative",
        &[
            (
                "root.yaml",
                &format!("include: [sub/x.yaml]\nmodel_list:\n{}", model("R")),
            ),
            ("sub/x.yaml", "include: [y.yaml, w.yaml]\n"),
            ("y.yaml", &format!("model_list:\n{}", model("Y_root"))),
            ("w.yaml", &format!("model_list:\n{}", model("W_root"))),
            ("sub/w.yaml", &format!("model_list:\n{}", model("W_sub"))),
        ],
    );
    let c = load(&dir);
    assert_eq!(groups(&c), ["R", "Y_root", "W_sub"]);
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("y.yaml") && w.contains("next to the root config")),
        "{:?}",
        c.warnings
    );
}

#[test]
fn an_error_in_an_included_section_names_the_file_that_wrote_it() {
    let dir = dir_with(
        "origin",
        &[
            (
                "root.yaml",
                &format!(
                    "include: [x.yaml]\nmodel_list:\n{}router_settings: {{num_retries: 1}}\n",
                    model("A")
                ),
            ),
            ("x.yaml", "include: [y.yaml]\n"),
            (
                "y.yaml",
                &format!(
                    "model_list:\n{}router_settings: {{num_retries: many}}\n",
                    model("B")
                ),
            ),
        ],
    );
    let e = load_err(&dir);
    assert_eq!(e.file.as_deref(), Some(dir.join("y.yaml").as_path()), "{e}");
    assert_eq!(e.path, "router_settings.num_retries", "{e}");

    let dir = dir_with(
        "origin-entry",
        &[
            (
                "root.yaml",
                &format!("include: [x.yaml]\nmodel_list:\n{}", model("A")),
            ),
            (
                "x.yaml",
                "include: [y.yaml]\nmodel_list:\n  - {model_name: X}\n",
            ),
            (
                "y.yaml",
                "model_list:\n  - {model_name: Y, litellm_params: {model: openai/y, rpm: lots}}\n",
            ),
        ],
    );
    let e = load_err(&dir);
    assert_eq!(e.file.as_deref(), Some(dir.join("x.yaml").as_path()), "{e}");
    assert_eq!(e.path, "model_list[0].litellm_params", "{e}");
}
