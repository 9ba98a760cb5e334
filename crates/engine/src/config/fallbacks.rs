//! Fallback lists as the settings hold them: single-key entries mapping a model group (or
//! `"*"`) to ordered targets, each target with the params it overrides for its hop.

use std::collections::BTreeMap;

use serde_json::Value;

/// One fallback target: a model group, and params that override the request's for that hop.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FallbackTarget {
    /// The target model group.
    pub model: String,
    /// The target dict's other keys (e.g. `temperature: 0`), as written: merged into the
    /// hop's params.
    pub overrides: BTreeMap<String, Value>,
    /// `num_retries` among the overrides, read as a retry count (at most
    /// [`MAX_NUM_RETRIES`](load::MAX_NUM_RETRIES)): the hop's own retry count.
    pub num_retries: Option<u32>,
    /// `max_tokens` among the overrides, read as a count: the hop's own `max_tokens`.
    pub max_tokens: Option<u32>,
}

impl FallbackTarget {
    /// A plain target with no overrides.
    pub fn group(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            ..Self::default()
        }
    }
}

/// A fallback list: single-key entries mapping a model group (or `"*"`) to ordered targets.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FallbackMap {
    /// Entries in the order written; the first entry for a group wins.
    pub entries: Vec<(String, Vec<FallbackTarget>)>,
}

impl FallbackMap {
    /// The targets for `group`, if an entry names it.
    pub fn get(&self, group: &str) -> Option<&[FallbackTarget]> {
        self.entries
            .iter()
            .find(|(key, _)| key == group)
            .map(|(_, targets)| targets.as_slice())
    }

    /// True when no entry exists.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
