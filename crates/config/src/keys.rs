//! Which router config keys exist: the one table of known keys, and the closest one to a typo.
//!
//! LiteLLM's proxy hands its `Router` only the `router_settings` keys the `Router` accepts and
//! ignores the rest with a log line nobody reads, so a misspelt `allowed_fail: 3` silently
//! leaves `allowed_fails` unset. routersim loads such files too (they are real configs), but it
//! sorts every key it does not use into one of two classes and says so:
//!
//! - **unknown** ([`UnknownKey`]): LiteLLM itself would not know it — a `router_settings` key
//!   that is not a parameter of `litellm.Router.__init__` nor one of routersim's own
//!   extensions, or a top-level key within two edits of a section routersim reads
//!   (`router_setting:`), or a field of a `retry_policy`, `model_group_retry_policy` entry or
//!   `allowed_fails_policy` that LiteLLM's pydantic model does not have (it ignores such
//!   fields: `max_retries: 3`). A warning each, with the closest known key.
//! - **not modelled** ([`RouterConfig::ignored_keys`](routersim_engine::config::RouterConfig::ignored_keys)):
//!   LiteLLM knows it (or may: `litellm_settings` keys are set on the `litellm` module as they
//!   are, and `litellm_params` are forwarded to the provider, so no list of valid ones exists
//!   to check them against) but routersim does not simulate it. One note for all of them.

//!
//! The lists are in `known_keys.rs`, the spelling suggestions in `spelling.rs`, and the
//! modelled keys come from the loader's one table of keys and readers.

pub use crate::known_keys::{
    LITELLM_ROUTER_INIT_ARGS, MAX_SECTION_TYPO, MODELLED_SECTIONS, ROUTERSIM_ROUTER_KEYS,
    is_known_router_key, known_router_keys,
};
pub use crate::load::settings::{MODELLED_LITELLM_KEYS, MODELLED_ROUTER_KEYS};
pub use crate::spelling::{closest_key, closest_within, edit_distance};
pub use routersim_engine::config::UnknownKey;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_modelled_router_key_is_litellms_or_routersims_own() {
        for key in MODELLED_ROUTER_KEYS {
            assert!(is_known_router_key(key), "{key}");
        }
        for key in ROUTERSIM_ROUTER_KEYS {
            assert!(
                !LITELLM_ROUTER_INIT_ARGS.contains(&key),
                "{key} is LiteLLM's, not an extension"
            );
            assert!(MODELLED_ROUTER_KEYS.contains(&key), "{key} is not modelled");
        }
    }
}
