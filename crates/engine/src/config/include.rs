//! `include: [other.yaml, …]`: LiteLLM's proxy config split over several files.
//!
//! The included files' `model_list` entries are appended to the including file's; their other
//! top-level sections are used where the including file has none. The merge remembers where
//! every entry and section came from ([`Origins`]), so an error found later in the merged tree
//! names the included file and the path in it, not a path of the including file that does not
//! exist there.
//!
//! Included files are where deployments keep their keys, so nothing of an included file's
//! text is ever put into an error: a YAML syntax error gives the file, line and column and
//! the parser's words (serde-saphyr prints no snippet: `with_snippet: false`), and an error
//! about a value ([`Origins::attribute`]) has that value's strings replaced by [`HIDDEN`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::input::read_text_file;
use super::load::scalars::kind;
use super::load::{ConfigError, parse_yaml_located};

type Result<T> = std::result::Result<T, ConfigError>;

/// What an error from an included file says instead of one of that file's values.
pub const HIDDEN: &str = "<hidden: from an included file>";

/// Where a merged `model_list` entry came from: the included file and its index there;
/// `None` for the including file's own entries.
type EntryOrigin = Option<(PathBuf, usize)>;

/// Where the parts of a merged config came from.
#[derive(Clone, Debug, Default)]
pub(super) struct Origins {
    /// Per entry of the merged `model_list`: the included file and the entry's index there;
    /// `None` for the including file's own entries (same index).
    model_list: Vec<EntryOrigin>,
    /// Top-level sections taken whole from an included file.
    sections: BTreeMap<String, PathBuf>,
}

impl Origins {
    /// Moves an error found in the merged tree `root` to the included file it is in (with
    /// that file's path, and the value's strings hidden); an error in the including file's
    /// own parts is returned unchanged.
    pub(super) fn attribute(&self, mut error: ConfigError, root: &Value) -> ConfigError {
        if error.file.is_some() {
            return error;
        }
        let (file, path) = if let Some(rest) = error.path.strip_prefix("model_list[") {
            let Some((index, tail)) = rest.split_once(']') else {
                return error;
            };
            let Some(Some((file, own_index))) = index
                .parse::<usize>()
                .ok()
                .and_then(|i| self.model_list.get(i))
            else {
                return error;
            };
            (file.clone(), format!("model_list[{own_index}]{tail}"))
        } else {
            let section = error.path.split(['.', '[']).next().unwrap_or("");
            let Some(file) = self.sections.get(section) else {
                return error;
            };
            (file.clone(), error.path.clone())
        };
        if let Some(value) = value_at(root, &error.path) {
            error.message = hide_strings(&error.message, value);
        }
        error.file = Some(file);
        error.path = path;
        error
    }
}

/// Resolves `root`'s top-level `include:` (recursively), relative to `file`, merging the
/// included files into `root`.
pub(super) fn resolve_includes(
    root: &mut Value,
    file: &Path,
    stack: &mut Vec<PathBuf>,
    warnings: &mut Vec<String>,
) -> Result<Origins> {
    let Value::Object(map) = root else {
        return Ok(Origins::default());
    };
    let own = match map.get("model_list") {
        Some(Value::Array(list)) => list.len(),
        _ => 0,
    };
    let mut origins = Origins {
        model_list: vec![None; own],
        sections: BTreeMap::new(),
    };
    let Some(include) = map.shift_remove("include") else {
        return Ok(origins);
    };
    let names: Vec<String> = match include {
        Value::Null => Vec::new(),
        Value::String(name) => vec![name],
        Value::Array(items) => items
            .into_iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::String(name) => Ok(name),
                other => Err(ConfigError::new(
                    format!("include[{i}]"),
                    format!("expected a file path, found {}", kind(&other)),
                )),
            })
            .collect::<Result<_>>()?,
        other => {
            return Err(ConfigError::new(
                "include",
                format!("expected a list of file paths, found {}", kind(&other)),
            ));
        }
    };
    let base = file.parent().unwrap_or_else(|| Path::new(""));
    for (i, name) in names.iter().enumerate() {
        let at = format!("include[{i}]");
        let target = base.join(name);
        let (included, inner) = read_included(&target, file, &at, stack, warnings)?;
        let included = match included {
            Value::Null => continue,
            Value::Object(included) => included,
            other => {
                return Err(ConfigError::new(
                    at,
                    format!(
                        "included file {} must be a mapping, found {}",
                        target.display(),
                        kind(&other)
                    ),
                ));
            }
        };
        for (key, value) in included {
            if key == "model_list" {
                let (entries, entry_origins) = included_model_list(value, &at, &target, &inner)?;
                match map.get_mut("model_list") {
                    Some(Value::Array(list)) => {
                        list.extend(entries);
                        origins.model_list.extend(entry_origins);
                    }
                    _ => {
                        map.insert(key, Value::Array(entries));
                        origins.model_list = entry_origins;
                    }
                }
            } else if map.get(&key).is_none_or(Value::is_null) {
                let from = inner
                    .sections
                    .get(&key)
                    .cloned()
                    .unwrap_or_else(|| target.clone());
                origins.sections.insert(key.clone(), from);
                map.insert(key, value);
            } else {
                warnings.push(format!(
                    "{at}: {key} is set both in {} and in the including file {}; \
                     the including file's value is kept",
                    target.display(),
                    file.display()
                ));
            }
        }
    }
    Ok(origins)
}

/// Reads, parses and resolves (recursively) one included file: its tree and where its parts
/// came from. An error in it names it.
fn read_included(
    target: &Path,
    file: &Path,
    at: &str,
    stack: &mut Vec<PathBuf>,
    warnings: &mut Vec<String>,
) -> Result<(Value, Origins)> {
    let text = read_text_file(target).map_err(|e| {
        ConfigError::new(
            at,
            format!(
                "cannot read included file {} (included from {}): {e}",
                target.display(),
                file.display()
            ),
        )
    })?;
    let canonical = std::fs::canonicalize(target).unwrap_or_else(|_| target.to_path_buf());
    if stack.contains(&canonical) {
        return Err(ConfigError::new(
            at,
            format!(
                "include cycle: {} is already being included",
                target.display()
            ),
        ));
    }
    let in_target = |mut e: ConfigError| {
        e.file.get_or_insert_with(|| target.to_path_buf());
        e
    };
    let mut included = parse_yaml_located(&text).map_err(in_target)?;
    stack.push(canonical);
    let inner = resolve_includes(&mut included, target, stack, warnings).map_err(in_target)?;
    stack.pop();
    Ok((included, inner))
}

/// An included file's `model_list`, and where each entry came from (in that file, or deeper).
fn included_model_list(
    value: Value,
    at: &str,
    target: &Path,
    inner: &Origins,
) -> Result<(Vec<Value>, Vec<EntryOrigin>)> {
    let entries = match value {
        Value::Null => Vec::new(),
        Value::Array(entries) => entries,
        other => {
            return Err(ConfigError::new(
                format!("{at}.model_list"),
                format!(
                    "expected a list of deployments in {}, found {}",
                    target.display(),
                    kind(&other)
                ),
            ));
        }
    };
    let entry_origins = (0..entries.len()).map(|j| match inner.model_list.get(j) {
        Some(Some(deeper)) => Some(deeper.clone()),
        _ => Some((target.to_path_buf(), j)),
    });
    Ok((entries, entry_origins.collect()))
}

/// The node at a loader error path (`router_settings.fallbacks[0].gpt-4o`). Keys may hold
/// dots, so each step takes the longest key the rest of the path continues with.
fn value_at<'v>(root: &'v Value, path: &str) -> Option<&'v Value> {
    let mut node = root;
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            let (index, tail) = after.split_once(']')?;
            node = node.as_array()?.get(index.parse::<usize>().ok()?)?;
            rest = tail;
        } else {
            let key_and_rest = rest.strip_prefix('.').unwrap_or(rest);
            let map = node.as_object()?;
            let (key, tail) = map
                .keys()
                .filter_map(|k| {
                    key_and_rest
                        .strip_prefix(k.as_str())
                        .filter(|t| t.is_empty() || t.starts_with(['.', '[']))
                        .map(|t| (k, t))
                })
                .max_by_key(|(k, _)| k.len())?;
            node = map.get(key)?;
            rest = tail;
        }
    }
    Some(node)
}

/// `message` with every string of `value` (and below it) replaced by [`HIDDEN`]: quoted as
/// the loader quotes them, and bare where they stand as a word of their own.
fn hide_strings(message: &str, value: &Value) -> String {
    let mut strings = Vec::new();
    collect_strings(value, &mut strings);
    // Longest first, so a string that contains another is hidden whole.
    strings.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let mut out = message.to_string();
    for s in strings {
        out = out.replace(&format!("{s:?}"), HIDDEN);
        out = out.replace(&format!("\"{s}\""), HIDDEN);
        out = replace_word(&out, s);
    }
    out
}

fn collect_strings<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
    match value {
        Value::String(s) if !s.is_empty() => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

/// Replaces `word` in `text` where it is not part of a longer name.
fn replace_word(text: &str, word: &str) -> String {
    let name_char = |c: char| c.is_alphanumeric() || matches!(c, '-' | '_' | '/' | '.');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(word) {
        let before = rest[..i].chars().next_back();
        let after = rest[i + word.len()..].chars().next();
        out.push_str(&rest[..i]);
        if before.is_some_and(name_char) || after.is_some_and(name_char) {
            out.push_str(word);
        } else {
            out.push_str(HIDDEN);
        }
        rest = &rest[i + word.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_find_keys_with_dots() {
        let root = json!({"a": {"b.c": [1, {"d": "x"}]}});
        assert_eq!(value_at(&root, "a.b.c[1].d"), Some(&json!("x")));
        assert_eq!(value_at(&root, "a.b"), None);
        assert_eq!(value_at(&root, ""), Some(&root));
    }

    #[test]
    fn strings_are_hidden_quoted_and_as_words() {
        let v = json!({"k": "sk-1", "g": "gpt", "e": ""});
        assert_eq!(
            hide_strings(
                "found the string \"sk-1\"; write `- gpt: [x]`, not gpt-4o",
                &v
            ),
            format!("found the string {HIDDEN}; write `- {HIDDEN}: [x]`, not gpt-4o")
        );
    }
}
