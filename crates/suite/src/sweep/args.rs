//! The sweep's command-line arguments: `--set KEY=V1,V2,…` (split at top-level commas) and
//! `--shard K/N`.
//!
//! Separate because it is pure text parsing, tested on its own, with no IO or runs.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::error::SweepError;
use routersim_sim::scenario::parse_set_value;

/// One swept key: a router config path and the values to try, as written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepKey {
    /// The router config path (`router_settings.allowed_fails`).
    pub path: String,
    /// The values, as written on the command line (each read as YAML, see
    /// [`parse_set_value`]), then the config's own value when it is not one of them
    /// ([`baseline`](super::baseline)).
    pub values: Vec<String>,
    /// Which value is the config's own (the baseline): its combinations leave the key as the
    /// scenario has it. `None` when the sweep adds no baseline (`--no-baseline`) and the
    /// config's value is not listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<usize>,
}

impl SweepKey {
    /// Value `v` as people read it: as written, with `(config)` on the baseline.
    pub fn label(&self, v: usize) -> String {
        let text = self.values.get(v).map_or("", String::as_str);
        if self.baseline == Some(v) {
            format!("{text} {}", super::baseline::BASELINE_LABEL)
        } else {
            text.to_string()
        }
    }
}

/// A shard `K/N` (K from 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// K, from 1.
    pub index: usize,
    /// N.
    pub count: usize,
}

impl Shard {
    /// Whether job `i` (0-based) is this shard's.
    pub fn owns(&self, job: usize) -> bool {
        job % self.count == self.index - 1
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Parses `--shard K/N`.
pub fn parse_shard(text: &str) -> Result<Shard, SweepError> {
    let bad = || {
        SweepError::Usage(format!(
            "--shard {text:?}: expected K/N with 1 <= K <= N, such as 1/4"
        ))
    };
    let (k, n) = text.split_once('/').ok_or_else(bad)?;
    let index: usize = k.trim().parse().map_err(|_| bad())?;
    let count: usize = n.trim().parse().map_err(|_| bad())?;
    if index == 0 || count == 0 || index > count {
        return Err(bad());
    }
    Ok(Shard { index, count })
}

/// Splits a `--set` value list at commas outside brackets, braces and quotes, so
/// `fallbacks=[a, b],[c]` is two values.
fn split_values(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None, 0);
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// Parses one `--set KEY=V1,V2,…`.
pub fn parse_set_arg(arg: &str) -> Result<SweepKey, SweepError> {
    let Some((key, values)) = arg.split_once('=') else {
        return Err(SweepError::Usage(format!(
            "--set {arg:?}: expected KEY=V1,V2,… such as router_settings.allowed_fails=0,1,3"
        )));
    };
    let key = key.trim();
    if key.is_empty() {
        return Err(SweepError::Usage(format!(
            "--set {arg:?}: the key (a router config path) is empty"
        )));
    }
    let mut parsed = Vec::new();
    for value in split_values(values) {
        let value = value.trim();
        if value.is_empty() {
            return Err(SweepError::Usage(format!(
                "--set {arg:?}: expected values after `=`, separated by commas, none empty"
            )));
        }
        parse_set_value(value)
            .map_err(|e| SweepError::Usage(format!("--set {key}: invalid value {e}")))?;
        if parsed.iter().any(|v| v == value) {
            return Err(SweepError::Usage(format!(
                "--set {key}: the value {value} is repeated"
            )));
        }
        parsed.push(value.to_string());
    }
    Ok(SweepKey {
        path: key.to_string(),
        values: parsed,
        baseline: None,
    })
}

/// Parses every `--set`; a key given twice is an error.
pub fn parse_set_args(args: &[String]) -> Result<Vec<SweepKey>, SweepError> {
    let keys: Vec<SweepKey> = args
        .iter()
        .map(|a| parse_set_arg(a))
        .collect::<Result<_, _>>()?;
    for (i, key) in keys.iter().enumerate() {
        if keys[..i].iter().any(|k| k.path == key.path) {
            return Err(SweepError::Usage(format!(
                "--set {}: the key is given twice; list every value in one --set",
                key.path
            )));
        }
    }
    Ok(keys)
}
