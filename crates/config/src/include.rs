//! `include: [other.yaml, …]`: LiteLLM's proxy config split over several files.
//!
//! Merged as LiteLLM 1.110.2's proxy merges them (`ProxyConfig._process_includes` in
//! `litellm/proxy/proxy_server.py` calls `resolve_includes` in
//! `litellm/proxy/common_utils/config_includes.py`), rule for rule:
//! - only top-level keys merge: a list in both (`model_list`) is the including side's entries
//!   then the included file's; any other value of the included file — a mapping such as
//!   `router_settings` included — replaces the one before it whole (`_merged_value`), so the
//!   included file wins a conflict and nested keys are not merged (a note names the keys no
//!   longer read);
//! - files are merged breadth first: the root's includes in order, then the includes those
//!   files name, in order (`_resolve`'s queue), so the last file merged wins;
//! - each file is read once: an include of a file already read (the root, a cycle, a repeat)
//!   is skipped (with a note here; LiteLLM is silent);
//! - an entry is read next to the file that names it; when only a file next to the root config
//!   exists, that one is read, with a note (`resolve_include_file_path`);
//! - `include:` must be a list of strings, an included file a mapping (an empty file is an
//!   empty mapping: `_load_yaml_file` reads it as `{}`).
//!
//! The merge remembers where every entry and section came from ([`Origins`]), so an error found later in the merged tree
//! names the included file and the path in it, not a path of the including file that does not
//! exist there.
//!
//! Included files are where deployments keep their keys, so nothing of an included file's
//! text is ever put into an error: a YAML syntax error gives the file, line and column and
//! the parser's words (serde-saphyr prints no snippet: `with_snippet: false`), and an error
//! about a value ([`Origins::attribute`]) has that value's strings replaced by [`HIDDEN`].

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::input::read_text_file;
use crate::load::scalars::kind;
use crate::load::{ConfigError, parse_yaml_located};

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

/// Resolves `root`'s top-level `include:` (and the includes of the files it includes), read
/// from `file`, merging every included file into `root` as LiteLLM's proxy does
/// (`config_includes.py` `resolve_includes`, `_resolve`, `_merged`): breadth first, each file
/// once, top-level keys only — a list in both is extended, any other value replaced.
pub(super) fn resolve_includes(
    root: &mut Value,
    file: &Path,
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
    let mut pending: VecDeque<Pending> = include_entries(include)?
        .into_iter()
        .enumerate()
        .map(|(index, name)| Pending {
            name,
            declared_in: None,
            index,
        })
        .collect();
    let mut loaded = vec![identity(file)];
    while let Some(next) = pending.pop_front() {
        let at = next.at();
        let in_declaring = |mut e: ConfigError| {
            if e.file.is_none() {
                e.file.clone_from(&next.declared_in);
            }
            e
        };
        let target = locate(&next, file, warnings);
        let id = identity(&target);
        if loaded.contains(&id) {
            warnings.push(format!(
                "{at}: {} is already included; as in LiteLLM, each file is read once",
                target.display()
            ));
            continue;
        }
        loaded.push(id);
        let included = read_included(&target, &at).map_err(in_declaring)?;
        let in_target = |mut e: ConfigError| {
            e.file.get_or_insert_with(|| target.clone());
            e
        };
        let mut included = match included {
            Value::Null => Map::new(),
            Value::Object(included) => included,
            other => {
                return Err(in_declaring(ConfigError::new(
                    at,
                    format!(
                        "included file {} must be a mapping, found {}",
                        target.display(),
                        kind(&other)
                    ),
                )));
            }
        };
        if let Some(nested) = included.shift_remove("include") {
            let names = include_entries(nested).map_err(in_target)?;
            pending.extend(names.into_iter().enumerate().map(|(index, name)| Pending {
                name,
                declared_in: Some(target.clone()),
                index,
            }));
        }
        let source = Source {
            at: &at,
            target: &target,
            root: file,
        };
        for (key, value) in included {
            merge_key(map, &mut origins, key, value, &source, warnings);
        }
    }
    Ok(origins)
}

/// One `include:` entry waiting to be read.
struct Pending {
    name: String,
    /// The included file that names it; `None` for the file being loaded.
    declared_in: Option<PathBuf>,
    index: usize,
}

impl Pending {
    /// Where it is written, for notes: `include[0]`, or `other.yaml: include[0]`.
    fn at(&self) -> String {
        match &self.declared_in {
            None => format!("include[{}]", self.index),
            Some(file) => format!("{}: include[{}]", file.display(), self.index),
        }
    }
}

/// The included file being merged, for notes.
struct Source<'a> {
    at: &'a str,
    target: &'a Path,
    root: &'a Path,
}

/// `include:`'s entries: LiteLLM reads only a list of strings (`include_entries`).
fn include_entries(include: Value) -> Result<Vec<String>> {
    let Value::Array(items) = include else {
        return Err(ConfigError::new(
            "include",
            format!(
                "expected a list of file paths (as LiteLLM's proxy requires), found {}",
                kind(&include)
            ),
        ));
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| match item {
            Value::String(name) => Ok(name),
            other => Err(ConfigError::new(
                format!("include[{i}]"),
                format!(
                    "expected a file path (include is a list of file paths), found {}",
                    kind(&other)
                ),
            )),
        })
        .collect()
}

/// The file an entry names: next to the file that declares it; else, when only that exists,
/// next to the root config, with a note (`resolve_include_file_path`).
fn locate(entry: &Pending, root: &Path, warnings: &mut Vec<String>) -> PathBuf {
    let dir = |f: &Path| f.parent().unwrap_or_else(|| Path::new("")).to_path_buf();
    let declaring = entry.declared_in.as_deref().unwrap_or(root);
    let declared = dir(declaring).join(&entry.name);
    let root_relative = dir(root).join(&entry.name);
    if identity(&declared) == identity(&root_relative) || !root_relative.exists() {
        return declared;
    }
    let at = entry.at();
    if declared.exists() {
        warnings.push(format!(
            "{at}: \"{}\" names both {} and {} (next to the root config); as in LiteLLM, the \
             one next to the file that declares it is read",
            entry.name,
            declared.display(),
            root_relative.display()
        ));
        return declared;
    }
    warnings.push(format!(
        "{at}: \"{}\" is not next to {}; as in LiteLLM, {} (next to the root config) is read \
         instead",
        entry.name,
        declaring.display(),
        root_relative.display()
    ));
    root_relative
}

/// What makes two include entries the same file.
fn identity(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Merges one top-level key of an included file into `map` (LiteLLM's `_merged_value`): a
/// list onto a list is appended; anything else replaces what was there, whole.
fn merge_key(
    map: &mut Map<String, Value>,
    origins: &mut Origins,
    key: String,
    value: Value,
    source: &Source<'_>,
    warnings: &mut Vec<String>,
) {
    let entries = |list: &[Value]| {
        (0..list.len())
            .map(|j| Some((source.target.to_path_buf(), j)))
            .collect::<Vec<EntryOrigin>>()
    };
    match (map.get_mut(&key), value) {
        (Some(Value::Array(list)), Value::Array(more)) => {
            if key == "model_list" {
                origins.model_list.extend(entries(&more));
            }
            list.extend(more);
        }
        (previous, value) => {
            if let Some(previous) = previous.filter(|p| !p.is_null() && **p != value) {
                let from = origins
                    .sections
                    .get(&key)
                    .map_or(source.root, PathBuf::as_path);
                warnings.push(replaced_note(&key, previous, &value, from, source));
            }
            if key == "model_list" {
                origins.model_list = value.as_array().map(|l| entries(l)).unwrap_or_default();
            }
            origins
                .sections
                .insert(key.clone(), source.target.to_path_buf());
            map.insert(key, value);
        }
    }
}

/// The note for a top-level value an included file replaces: which keys are no longer read.
fn replaced_note(
    key: &str,
    previous: &Value,
    value: &Value,
    from: &Path,
    source: &Source<'_>,
) -> String {
    let dropped: Vec<&str> = match previous {
        Value::Object(old) => old
            .keys()
            .filter(|k| value.as_object().is_none_or(|new| !new.contains_key(*k)))
            .map(String::as_str)
            .collect(),
        _ => Vec::new(),
    };
    let not_read = if dropped.is_empty() {
        String::new()
    } else {
        format!("; not read: {}", dropped.join(", "))
    };
    format!(
        "{}: {key} in {} is replaced as a whole by the one in {} (LiteLLM's proxy merges an \
         included file key by key at the top level only: a list is appended to, any other \
         value replaced){not_read}",
        source.at,
        from.display(),
        source.target.display()
    )
}

/// Reads and parses one included file. An error in it names it.
fn read_included(target: &Path, at: &str) -> Result<Value> {
    let text = read_text_file(target).map_err(|e| {
        ConfigError::new(
            at,
            format!("cannot read included file {}: {e}", target.display()),
        )
    })?;
    parse_yaml_located(&text).map_err(|mut e| {
        e.file.get_or_insert_with(|| target.to_path_buf());
        e
    })
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
