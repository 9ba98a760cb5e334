//! Reading our YAML formats with errors that name the line, column and YAML path.
//!
//! Two mechanisms, because errors come from two places:
//! - serde errors (unknown key, wrong type, bad duration): the document is deserialized through
//!   [`serde_path_to_error`] on serde-saphyr's streaming deserializer, which gives the path;
//!   serde-saphyr's error gives the line and column.
//! - errors found after parsing (unknown deployment id, unknown model group, a bad router
//!   config): only the path is known, so [`LocationIndex`] re-reads the text into a tree of
//!   spans and looks the path up (falling back to the nearest ancestor that exists).
//!
//! Paths are written the way `serde_path_to_error` and the engine's config loader write them:
//! `traffic[2].input_tokens`, `providers.gpt-a.latency.p50`; the document root is the empty path.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

/// An error at a place in a YAML text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct YamlError {
    /// 1-based line, when known.
    pub line: Option<u64>,
    /// 1-based column, when known.
    pub column: Option<u64>,
    /// YAML path (`traffic[2].rate`); empty for the document itself.
    pub path: String,
    /// What was expected.
    pub message: String,
}

/// The parser options for every routersim YAML file: duplicate keys are errors, merge keys
/// (`<<: *base`) work, a leading-zero integer is octal (as in PyYAML), and only
/// `true`/`false` are booleans (so a model named `no` stays a
/// string, as in the engine's config loader). Comments are not kept (nothing reads them), so a
/// comment block of any length parses, as in PyYAML.
pub fn options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::Error,
        merge_keys: serde_saphyr::MergeKeyPolicy::Merge,
        strict_booleans: true,
        non_finite_float_policy: serde_saphyr::NonFiniteFloatPolicy::AsString,
        with_snippet: false,
        emit_comments: false,
        // As PyYAML reads it (YAML 1.1, what LiteLLM reads its config with): `010` is octal 8,
        // so an inline `router:` section reads as the same text in a `router_file` does.
        legacy_octal_numbers: true,
        budget: Some(routersim_config::input::yaml_budget()),
    }
}

/// Deserializes `text` as `T`; an error names the path, line and column.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, YamlError> {
    let mut path = None;
    let result = serde_saphyr::with_deserializer_from_str_with_options(text, options(), |de| {
        serde_path_to_error::deserialize(de).map_err(|e| {
            path = Some(e.path().to_string());
            e.into_inner()
        })
    });
    result.map_err(|e| {
        let location = e.location().filter(|l| l.line() > 0);
        let mut path = normalize(path.as_deref().unwrap_or(""));
        let message = match routersim_config::input::original_error(&e) {
            serde_saphyr::Error::DuplicateMappingKey { key, .. } => {
                // The path ends at the mapping (`?` for the key it never read): name the key.
                let parent = path.strip_suffix('?').map(|p| p.trim_end_matches('.'));
                if let (Some(parent), Some(key)) = (parent, key) {
                    path = if parent.is_empty() {
                        key.clone()
                    } else {
                        format!("{parent}.{key}")
                    };
                }
                "this key is set twice in the same mapping; keep one".to_string()
            }
            other => friendly(&routersim_config::input::yaml_message(other)),
        };
        YamlError {
            line: location.map(|l| l.line()),
            column: location.map(|l| l.column()),
            path,
            message,
        }
    })
}

/// serde-saphyr's terse type errors, said the way a scenario author thinks.
fn friendly(message: &str) -> String {
    let whole = |max: &str| format!("expected a whole number from 0 to {max}");
    match message {
        "invalid u8" => whole("255"),
        "invalid u16" => whole("65535"),
        "invalid u32" => whole("4294967295"),
        "invalid u64" | "invalid usize" => whole("18446744073709551615"),
        "invalid i8" | "invalid i16" | "invalid i32" | "invalid i64" | "invalid isize" => {
            "expected a whole number".to_string()
        }
        "invalid floating point" => "expected a number".to_string(),
        "expected string scalar" => {
            "expected a single value (text or a number), not a list or mapping".to_string()
        }
        "expected sequence start" => "expected a list".to_string(),
        m if m.starts_with("invalid boolean") => "expected true or false".to_string(),
        "expected mapping start" => "expected a mapping (key: value)".to_string(),
        other => other.to_string(),
    }
}

/// `serde_path_to_error` writes the root as `.`.
fn normalize(path: &str) -> String {
    if path == "." {
        String::new()
    } else {
        path.to_string()
    }
}

/// The parent of a path: `a.b[0].c` → `a.b[0]` → `a.b` → `a` → ``.
pub fn parent(path: &str) -> Option<&str> {
    if path.is_empty() {
        return None;
    }
    Some(match path.rfind(['.', '[']) {
        Some(i) => &path[..i],
        None => "",
    })
}

/// Where each YAML path of a document is: for a mapping entry its key (the line a reader
/// looks at), except that a scalar value points at the value itself.
#[derive(Clone, Debug, Default)]
pub struct LocationIndex {
    places: BTreeMap<String, (u64, u64)>,
}

impl LocationIndex {
    /// Indexes `text`; a text that does not parse gives an empty index (its parse error is
    /// reported elsewhere).
    pub fn new(text: &str) -> Self {
        let mut index = Self::default();
        if let Ok(root) = serde_saphyr::from_str_with_options::<Spanned<Node>>(text, options()) {
            index.add(String::new(), None, &root);
        }
        index
    }

    fn add(&mut self, path: String, key: Option<&Spanned<String>>, node: &Spanned<Node>) {
        let at = match (&node.value, key) {
            (Node::Scalar, _) | (_, None) => &node.referenced,
            (_, Some(key)) => &key.referenced,
        };
        if at.line() > 0 {
            self.places.insert(path.clone(), (at.line(), at.column()));
        }
        match &node.value {
            Node::Scalar => {}
            Node::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.add(format!("{path}[{i}]"), None, item);
                }
            }
            Node::Map(entries) => {
                for (k, v) in entries {
                    let child = if path.is_empty() {
                        k.value.clone()
                    } else {
                        format!("{path}.{}", k.value)
                    };
                    self.add(child, Some(k), v);
                }
            }
        }
    }

    /// The line and column of `path`, else of its nearest ancestor in the document.
    pub fn locate(&self, path: &str) -> Option<(u64, u64)> {
        let mut p = Some(path);
        while let Some(current) = p {
            if let Some(place) = self.places.get(current) {
                return Some(*place);
            }
            p = parent(current);
        }
        None
    }
}

/// A YAML node's shape, for [`LocationIndex`].
enum Node {
    Scalar,
    Seq(Vec<Spanned<Node>>),
    Map(Vec<(Spanned<String>, Spanned<Node>)>),
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Node;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any YAML node")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Node, E> {
                Ok(Node::Scalar)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Node, E> {
                Ok(Node::Scalar)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Node, E> {
                Ok(Node::Scalar)
            }
            fn visit_i128<E>(self, _: i128) -> Result<Node, E> {
                Ok(Node::Scalar)
            }
            fn visit_u128<E>(self, _: u128) -> Result<Node, E> {
                Ok(Node::Scalar)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Node, E> {
                Ok(Node::Scalar)
            }
            fn visit_str<E>(self, _: &str) -> Result<Node, E> {
                Ok(Node::Scalar)
            }
            fn visit_bytes<E>(self, _: &[u8]) -> Result<Node, E> {
                Ok(Node::Scalar)
            }
            fn visit_unit<E>(self) -> Result<Node, E> {
                Ok(Node::Scalar)
            }
            fn visit_none<E>(self) -> Result<Node, E> {
                Ok(Node::Scalar)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
                Node::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Node::Seq(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<Spanned<KeyText>>()? {
                    let value = map.next_value()?;
                    let key = Spanned::new(key.value.0, key.referenced, key.defined);
                    entries.push((key, value));
                }
                Ok(Node::Map(entries))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// A mapping key as text, whatever scalar it is.
struct KeyText(String);

impl<'de> Deserialize<'de> for KeyText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = KeyText;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a scalar key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<KeyText, E> {
                Ok(KeyText("null".to_string()))
            }
        }
        deserializer.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_map_to_keys_and_scalar_values() {
        let text = "a:\n  b: 1\n  c:\n    - x\n    - y: 2\n      z: [1, 2]\nd: {e: 1}\n";
        let index = LocationIndex::new(text);
        assert_eq!(index.locate("a"), Some((1, 1)));
        assert_eq!(index.locate("a.b"), Some((2, 6)));
        assert_eq!(index.locate("a.c"), Some((3, 3)));
        assert_eq!(index.locate("a.c[1].z[1]"), Some((6, 14)));
        assert_eq!(index.locate("d.e"), Some((7, 8)));
        assert_eq!(index.locate("a.c[1].nope.deeper"), Some((5, 7)));
        assert_eq!(index.locate("zzz"), Some((1, 1)));
    }

    #[test]
    fn parents() {
        assert_eq!(parent("a.b[0].c"), Some("a.b[0]"));
        assert_eq!(parent("a.b[0]"), Some("a.b"));
        assert_eq!(parent("a"), Some(""));
        assert_eq!(parent(""), None);
    }
}
