//! The YAML text into a [`serde_json::Value`] tree, PyYAML-compatible where real configs need
//! it (anchors, merge keys, duplicate keys with the last one winning). Includes are resolved
//! on the tree afterwards ([`include`](crate::include)).

use serde_json::Value;

use super::error::{ConfigError, Result, YAML_PATH};
use crate::input::{yaml_budget, yaml_message};

/// Parses YAML text the way the loader does (PyYAML-compatible where real configs need it:
/// merge keys incl. `<<: [*a, *b]`, duplicate keys with the last one winning, non-string keys
/// turned into strings). A syntax error names its line and column (in the message, and in
/// [`ConfigError::location`]).
pub fn parse_yaml(yaml: &str) -> Result<Value> {
    parse_yaml_located(yaml).map_err(|mut e| {
        if let Some((line, column)) = e.location {
            e.message
                .push_str(&format!(" (at line {line}, column {column})"));
        }
        e
    })
}

/// [`parse_yaml`] for a caller that prints the place itself: a syntax error's line and
/// column are only in [`ConfigError::location`] (path [`YAML_PATH`]), and its message never
/// quotes the text.
pub fn parse_yaml_located(yaml: &str) -> Result<Value> {
    let options = serde_saphyr::options! {
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::LastWins,
        merge_keys: serde_saphyr::MergeKeyPolicy::Merge,
        // `~:` as a mapping key becomes a string key instead of failing the whole file.
        null_as_string: true,
        // Only true/false (any case) are booleans, so a model named `y`, `no` or `on` stays a
        // string; the loader's own bool fields still accept yes/no/on/off.
        strict_booleans: true,
        non_finite_float_policy: serde_saphyr::NonFiniteFloatPolicy::AsString,
        with_snippet: false,
        // Comments are never read, so the parser keeps none: with them kept, more than 32
        // comment lines in a row after a key with no value failed ("too many buffered
        // comments"), and PyYAML, which LiteLLM uses, reads any number.
        emit_comments: false,
        // PyYAML (YAML 1.1, what LiteLLM reads configs with) reads `010` as octal 8.
        legacy_octal_numbers: true,
        budget: Some(yaml_budget()),
    };
    serde_saphyr::from_str_with_options::<Value>(yaml, options).map_err(|e| {
        let mut error = ConfigError::new(YAML_PATH, format!("invalid YAML: {}", yaml_message(&e)));
        error.location = e
            .location()
            .filter(|l| l.line() > 0)
            .map(|l| (l.line(), l.column()));
        error
    })
}
