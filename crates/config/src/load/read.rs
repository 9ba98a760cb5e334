//! What the table's readers share: where a key is read from ([`Setting`], [`Source`]), and
//! [`Read`], the state they work on with its helpers (a key from `router_settings`, or from
//! either section; a flag; a named value; the warnings of a key the profile does not read).

use serde_json::{Map, Value};

use super::error::{ConfigError, Result};
use super::fallbacks::{RawEntry, RawFallbacks};
use super::loader::Loader;
use super::scalars::{boolean, describe};
use routersim_engine::config::{RouterSettings, UnreadKey};
use routersim_engine::profile::{self, ProfileSpec, Walk};

/// Where a modelled key is read from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// `router_settings` only.
    Router,
    /// `router_settings`, else `litellm_settings` (where real configs often put it).
    RouterOrLitellm,
}

/// One modelled `router_settings` key and the code that reads it.
pub(crate) struct Setting {
    /// The key.
    pub(crate) key: &'static str,
    /// Where it is read from.
    pub(crate) source: Source,
    pub(super) read: fn(&mut Read<'_>, &Setting) -> Result<()>,
}

/// What the table's readers work on.
pub(super) struct Read<'a> {
    pub(super) loader: &'a mut Loader,
    pub(super) router: Option<&'a Map<String, Value>>,
    pub(super) litellm: Option<&'a Map<String, Value>>,
    pub(super) settings: RouterSettings,
    pub(super) later: Later,
}

/// What is read by one entry and checked once every entry is read.
#[derive(Default)]
pub(super) struct Later {
    pub(super) fallbacks: Option<RawFallbacks>,
    pub(super) context_window: Option<RawFallbacks>,
    pub(super) content_policy: Option<RawFallbacks>,
    pub(super) defaults: Option<RawEntry>,
    /// `(group, path)` of each `model_group_alias` target.
    pub(super) alias_paths: Vec<(String, String)>,
    /// `(group, path)` of each `model_group_retry_policy` entry.
    pub(super) group_policy_paths: Vec<(String, String)>,
}

pub(super) fn get<'m>(section: Option<&'m Map<String, Value>>, key: &str) -> Option<&'m Value> {
    section.and_then(|m| m.get(key)).filter(|v| !v.is_null())
}

impl<'a> Read<'a> {
    /// The setting's value in `router_settings` (unless null), with its path.
    pub(super) fn router(&self, setting: &Setting) -> Option<(&'a Value, String)> {
        get(self.router, setting.key).map(|v| (v, format!("router_settings.{}", setting.key)))
    }

    /// The profile's entry in the engine's profile table (none set: `litellm`'s).
    pub(super) fn profile(&self) -> &'static ProfileSpec {
        profile::spec(self.settings.profile)
    }

    /// A key only the profiles for which `reads` holds read: said loudly when set under
    /// another profile, where it does nothing (`note` added to the warning).
    pub(super) fn profile_key(
        &mut self,
        setting: &Setting,
        reads: fn(&ProfileSpec) -> bool,
        note: &str,
    ) {
        if !reads(self.profile()) && self.router(setting).is_some() {
            self.loader.unread(UnreadKey::new(
                format!("router_settings.{}", setting.key),
                format!(
                    "read by profile: {} only; it does nothing here{note}",
                    profile::names_where(reads)
                ),
            ));
        }
    }

    /// A key of the candidate walk (`allow_fallbacks`, the deadlines).
    pub(super) fn candidate_walk_key(&mut self, setting: &Setting) {
        self.profile_key(setting, |p| p.walk == Walk::Candidates, "");
    }

    /// A deadline of the candidate walk (`request_deadline`, `stream_deadline`): read by the
    /// profiles whose walk has one.
    pub(super) fn walk_deadline_key(&mut self, setting: &Setting) {
        self.profile_key(setting, |p| p.walk_deadline, "");
    }

    /// A key only a profile that reads contracts reads.
    pub(super) fn contract_key(&mut self, setting: &Setting) {
        self.profile_key(setting, |p| p.reads_contracts, "");
    }

    /// A key of the Portkey gateway's config (`portkey_*`): read by `profile: portkey` only.
    pub(super) fn portkey_key(&mut self, setting: &Setting) {
        self.profile_key(setting, |p| p.reads_portkey_keys, "");
    }

    /// `attempts_per_candidate`: under a profile that walks candidates without reading it,
    /// the warning says what that profile reads instead.
    pub(super) fn attempts_per_candidate_key(&mut self, setting: &Setting) {
        let profile = self.profile();
        if profile.walk != Walk::Candidates {
            return self.candidate_walk_key(setting);
        }
        let note = if profile.reads_contracts {
            format!(
                " (profile: {} retries a route same_route_retries times)",
                profile.name()
            )
        } else {
            String::new()
        };
        self.profile_key(setting, |p| p.reads_attempts_per_candidate, &note);
    }

    /// A boolean setting.
    pub(super) fn flag(
        &mut self,
        setting: &Setting,
        field: fn(&mut RouterSettings) -> &mut bool,
    ) -> Result<()> {
        if let Some((v, at)) = self.router(setting) {
            *field(&mut self.settings) = boolean(v, &at)?;
        }
        Ok(())
    }

    /// A setting that names one of a few values (`choices`, parsed by `parse`), if set.
    pub(super) fn named<T>(
        &self,
        setting: &Setting,
        choices: fn() -> String,
        parse: fn(&str) -> Option<T>,
    ) -> Result<Option<T>> {
        match self.router(setting) {
            None => Ok(None),
            Some((Value::String(text), at)) => parse(text).map(Some).ok_or_else(|| {
                ConfigError::new(at, format!("expected {}, found \"{text}\"", choices()))
            }),
            Some((other, at)) => Err(ConfigError::new(
                at,
                format!("expected {}, found {}", choices(), describe(other)),
            )),
        }
    }

    /// Reads the setting from `router_settings`, else (for [`Source::RouterOrLitellm`]) from
    /// `litellm_settings`; both are validated. `router_settings` wins when its value
    /// `is_set`; LiteLLM reads fallback lists as `router_value or litellm_value`, so an empty
    /// router list gives way to a non-empty one.
    pub(super) fn either<T>(
        &mut self,
        setting: &Setting,
        parse: impl Fn(&Value, &str) -> Result<T>,
        is_set: impl Fn(&T) -> bool,
    ) -> Result<Option<T>> {
        let key = setting.key;
        let rp = format!("router_settings.{key}");
        let lp = format!("litellm_settings.{key}");
        let from_router = get(self.router, key).map(|v| parse(v, &rp)).transpose()?;
        let from_litellm = if setting.source == Source::RouterOrLitellm {
            get(self.litellm, key).map(|v| parse(v, &lp)).transpose()?
        } else {
            None
        };
        Ok(match (from_router, from_litellm) {
            (Some(r), Some(l)) => {
                if is_set(&r) || !is_set(&l) {
                    self.loader.warn(format!(
                        "{lp}: also set in router_settings; router_settings.{key} wins"
                    ));
                    Some(r)
                } else {
                    self.loader.warn(format!(
                        "{lp}: used as the router's {key} because router_settings.{key} is empty"
                    ));
                    Some(l)
                }
            }
            (None, Some(l)) => {
                self.loader.warn(format!(
                    "{lp}: a router setting placed in litellm_settings; honored as the router's {key}"
                ));
                Some(l)
            }
            (r, None) => r,
        })
    }
}
