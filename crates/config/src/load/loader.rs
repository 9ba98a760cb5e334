//! What the walk keeps beside the config it builds: the options it was given, the keys it
//! passed over (not modelled, or unknown to LiteLLM) and its warnings.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::Value;

use super::error::Result;
use super::scalars::{duration, opt};
use crate::known_keys::{MAX_SECTION_TYPO, MODELLED_SECTIONS};
use crate::spelling::closest_within;
use routersim_engine::config::{UnknownKey, UnreadKey};

pub(super) const EMPTY_MODEL_LIST: &str =
    "model_list is empty: routersim needs the deployments in the file";

/// What the loader takes from outside the file. Nothing here is read by the loader itself:
/// the caller fills it (the CLI from its environment, once), so a run depends only on what it
/// was given, and every value used is recorded in the config's warnings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// The value of `ROUTER_MAX_FALLBACKS` ([`MAX_FALLBACKS_ENV`](routersim_engine::config::MAX_FALLBACKS_ENV)),
    /// if set: LiteLLM's default for `max_fallbacks` when the config sets none.
    pub max_fallbacks_env: Option<String>,
}

/// What the walk has found besides the config: keys it passed over, and warnings.
#[derive(Default)]
pub(super) struct Loader {
    pub(super) options: LoadOptions,
    pub(super) ignored: BTreeSet<String>,
    pub(super) unknown: BTreeSet<UnknownKey>,
    pub(super) warnings: Vec<String>,
    pub(super) unread: Vec<UnreadKey>,
}

impl Loader {
    pub(super) fn ignore(&mut self, path: String) {
        self.ignored.insert(path);
    }

    pub(super) fn warn(&mut self, warning: String) {
        self.warnings.push(warning);
    }

    /// A key the chosen profile does not read: a warning, and an error under `--strict`.
    pub(super) fn unread(&mut self, key: UnreadKey) {
        self.warnings.push(key.to_string());
        self.unread.push(key);
    }

    /// A top-level key other than the sections read: a misspelt section, or a note.
    pub(super) fn section_key(&mut self, key: &str) {
        match closest_within(key, MODELLED_SECTIONS, MAX_SECTION_TYPO) {
            Some(section) => {
                self.unknown.insert(UnknownKey {
                    path: key.to_string(),
                    suggestion: Some(section.to_string()),
                });
            }
            None => self.ignore(key.to_string()),
        }
    }

    /// A timeout (`timeout`, `stream_timeout`, `request_timeout`). LiteLLM picks one with
    /// `a or b or c`, where 0 is false, so 0 is "not set" there: the next source applies
    /// (the deployment's, then the router's, then `litellm_settings.request_timeout` for
    /// `timeout`; the deployment's, then the router's for `stream_timeout`). routersim does
    /// the same, and says so in a warning.
    pub(super) fn timeout(&mut self, v: &Value, path: &str) -> Result<Option<Duration>> {
        match opt(v, |v| duration(v, path))? {
            Some(d) if d.is_zero() => {
                self.warn(format!(
                    "{path}: 0 means not set, as in LiteLLM (where 0 counts as false): the \
                     next timeout that is set applies, else none; remove the key, or set \
                     the deadline you mean"
                ));
                Ok(None)
            }
            other => Ok(other),
        }
    }
}
