//! `router_settings` (and the router keys LiteLLM also reads from `litellm_settings`).
//!
//! One table, [`ROUTER_SETTINGS`], holds every modelled key with the code that reads it; the
//! list of modelled keys ([`MODELLED_ROUTER_KEYS`])
//! is derived from it, so a key can be neither read yet listed as not modelled, nor listed yet
//! never read. A new key is one entry here (and a field in
//! [`RouterSettings`](routersim_engine::config::RouterSettings)).
//!
//! Entries are read in table order, not file order: `profile` comes before `recovery` and
//! `classification`, which it presets, and the warnings come out in the same order for every
//! file.

use serde_json::{Map, Value};

use super::error::{ConfigError, Result};
use super::fallbacks::{Names, default_fallbacks, fallback_list};
use super::loader::Loader;
use super::policy::{PolicyUnit, kind_policy};
use super::read::{Later, Read, Setting, Source};
use super::readers::{max_fallbacks, model_group_alias, model_group_retry_policy, timeout};
use super::scalars::{describe, duration, retries, status_codes, strategy, uint32};
use crate::known_keys::{is_known_router_key, known_router_keys};
use crate::spelling::closest_key;
use routersim_engine::config::{
    Classification, Deployment, PortkeyStrategy, Profile, Recovery, RouterSettings, UnknownKey,
    UnreadKey,
};
use routersim_engine::pattern::ModelPattern;
use routersim_engine::stream::StreamRecovery;

const fn router(key: &'static str, read: fn(&mut Read<'_>, &Setting) -> Result<()>) -> Setting {
    Setting {
        key,
        source: Source::Router,
        read,
    }
}

const fn either(key: &'static str, read: fn(&mut Read<'_>, &Setting) -> Result<()>) -> Setting {
    Setting {
        key,
        source: Source::RouterOrLitellm,
        read,
    }
}

/// Every modelled `router_settings` key, in the order they are read.
pub(crate) const ROUTER_SETTINGS: [Setting; 45] = [
    router("routing_strategy", |r, k| {
        if let Some((v, at)) = r.router(k) {
            r.settings.routing_strategy = strategy(v, &at)?;
        }
        Ok(())
    }),
    either("num_retries", |r, k| {
        if let Some(n) = r.either(k, retries, |_| true)? {
            r.settings.num_retries = n;
        }
        Ok(())
    }),
    either("retry_after", |r, k| {
        if let Some(d) = r.either(k, duration, |_| true)? {
            r.settings.retry_after = d;
        }
        Ok(())
    }),
    either("cooldown_time", |r, k| {
        if let Some(d) = r.either(k, duration, |_| true)? {
            r.settings.cooldown_time = d;
        }
        Ok(())
    }),
    either("allowed_fails", |r, k| {
        r.settings.allowed_fails = r.either(k, uint32, |_| true)?;
        Ok(())
    }),
    router("allowed_fails_policy", |r, k| {
        if let Some((v, at)) = r.router(k) {
            r.settings.allowed_fails_policy =
                kind_policy(v, &at, PolicyUnit::AllowedFails, &mut r.loader.unknown)?;
        }
        Ok(())
    }),
    router("retry_policy", |r, k| {
        if let Some((v, at)) = r.router(k) {
            r.settings.retry_policy =
                kind_policy(v, &at, PolicyUnit::Retries, &mut r.loader.unknown)?;
        }
        Ok(())
    }),
    router("model_group_retry_policy", model_group_retry_policy),
    router("max_fallbacks", max_fallbacks),
    router("enable_weighted_failover", |r, k| {
        r.flag(k, |s| &mut s.enable_weighted_failover)
    }),
    router("disable_cooldowns", |r, k| {
        r.flag(k, |s| &mut s.disable_cooldowns)
    }),
    router("enable_health_check_routing", |r, k| {
        r.flag(k, |s| &mut s.enable_health_check_routing)
    }),
    router("timeout", timeout),
    router("enable_pre_call_checks", |r, k| {
        r.flag(k, |s| &mut s.enable_pre_call_checks)
    }),
    router("health_check_interval", |r, k| {
        if let Some((v, at)) = r.router(k) {
            r.settings.health_check_interval = Some(duration(v, &at)?);
        }
        Ok(())
    }),
    router("profile", |r, k| {
        if let Some(profile) = r.named(k, Profile::choices, Profile::from_name)? {
            let presets = profile.spec().presets;
            r.settings.recovery = presets.recovery;
            r.settings.classification = presets.classification;
            r.settings.stream_recovery = presets.stream_recovery;
            r.settings.replay = presets.replay;
            r.settings.profile = Some(profile);
        }
        Ok(())
    }),
    router("attempts_per_candidate", |r, k| {
        if let Some((v, at)) = r.router(k) {
            let n = uint32(v, &at)?;
            if n == 0 {
                return Err(ConfigError::new(
                    at,
                    "at least 1 attempt per candidate is expected (the first included), found 0",
                ));
            }
            r.settings.attempts_per_candidate = n;
            r.attempts_per_candidate_key(k);
        }
        Ok(())
    }),
    router("allow_fallbacks", |r, k| {
        r.flag(k, |s| &mut s.allow_fallbacks)?;
        r.candidate_walk_key(k);
        Ok(())
    }),
    router("request_deadline", |r, k| {
        if let Some((v, at)) = r.router(k) {
            r.settings.request_deadline = duration(v, &at)?;
            r.walk_deadline_key(k);
        }
        Ok(())
    }),
    router("stream_deadline", |r, k| {
        if let Some((v, at)) = r.router(k) {
            r.settings.stream_deadline = duration(v, &at)?;
            r.walk_deadline_key(k);
        }
        Ok(())
    }),
    router("max_attempts", |r, k| {
        if let Some((v, at)) = r.router(k) {
            let n = uint32(v, &at)?;
            if n == 0 {
                return Err(ConfigError::new(
                    at,
                    "at least 1 attempt per request is expected, found 0",
                ));
            }
            r.settings.max_attempts = n;
            r.contract_key(k);
        }
        Ok(())
    }),
    router("same_route_retries", |r, k| {
        if let Some((v, at)) = r.router(k) {
            r.settings.same_route_retries = uint32(v, &at)?;
            r.contract_key(k);
        }
        Ok(())
    }),
    router("connect_allowance", |r, k| {
        if let Some((v, at)) = r.router(k) {
            r.settings.connect_allowance = duration(v, &at)?;
            r.contract_key(k);
        }
        Ok(())
    }),
    router("generation_allowance", |r, k| {
        if let Some((v, at)) = r.router(k) {
            r.settings.generation_allowance = Some(duration(v, &at)?);
            r.contract_key(k);
        }
        Ok(())
    }),
    router("validation_allowance", |r, k| {
        if let Some((v, at)) = r.router(k) {
            r.settings.validation_allowance = duration(v, &at)?;
            r.contract_key(k);
        }
        Ok(())
    }),
    router("recovery", |r, k| {
        if let Some(recovery) = r.named(k, Recovery::choices, Recovery::from_name)? {
            r.settings.recovery = recovery;
        }
        Ok(())
    }),
    router("classification", |r, k| {
        let read = r.named(k, Classification::choices, Classification::from_name)?;
        if let Some(classification) = read {
            r.settings.classification = classification;
        }
        Ok(())
    }),
    router("stream_timeout", |r, k| {
        if let Some((v, at)) = r.router(k) {
            r.settings.stream_timeout = r.loader.timeout(v, &at)?;
        }
        Ok(())
    }),
    router("stream_stall_timeout", |r, k| {
        if let Some((v, at)) = r.router(k) {
            r.settings.stream_stall_timeout = Some(duration(v, &at)?);
        }
        Ok(())
    }),
    router("enable_mid_stream_fallback_continuation", |r, k| {
        r.flag(k, |s| &mut s.enable_mid_stream_fallback_continuation)
    }),
    router("stream_recovery", |r, k| {
        if let Some((v, at)) = r.router(k) {
            r.settings.stream_recovery = v
                .as_str()
                .and_then(StreamRecovery::from_name)
                .ok_or_else(|| {
                    ConfigError::new(
                        at,
                        format!("expected litellm or multigrid, found {}", describe(v)),
                    )
                })?;
        }
        Ok(())
    }),
    router("retry_budget", super::alternatives::retry_budget),
    router("retry_throttling", super::alternatives::retry_throttling),
    router("outlier_detection", super::alternatives::outlier_detection),
    router("hedge_after", super::alternatives::hedge_after),
    router("replay", |r, k| {
        if let Some((v, at)) = r.router(k) {
            r.settings.replay = v
                .as_str()
                .and_then(routersim_engine::replay::Replay::from_name)
                .ok_or_else(|| {
                    ConfigError::new(
                        at,
                        format!("expected always, dedupe or never, found {}", describe(v)),
                    )
                })?;
        }
        Ok(())
    }),
    router("portkey_use_retry_after_header", |r, k| {
        r.flag(k, |s| &mut s.portkey_use_retry_after_header)?;
        r.portkey_key(k);
        Ok(())
    }),
    router("portkey_strategy", |r, k| {
        let (choices, parse) = (PortkeyStrategy::choices, PortkeyStrategy::from_name);
        if let Some(strategy) = r.named(k, choices, parse)? {
            r.settings.portkey_strategy = strategy;
            r.portkey_key(k);
        }
        Ok(())
    }),
    router("portkey_retry_on_status_codes", |r, k| {
        if let Some((v, at)) = r.router(k) {
            r.settings.portkey_retry_on_status_codes = Some(status_codes(v, &at)?);
            r.portkey_key(k);
        }
        Ok(())
    }),
    router("portkey_fallback_on_status_codes", |r, k| {
        if let Some((v, at)) = r.router(k) {
            r.settings.portkey_fallback_on_status_codes = Some(status_codes(v, &at)?);
            r.portkey_key(k);
            // `loadbalance` never falls back: the list has nothing to decide.
            if r.profile().reads_portkey_keys
                && r.settings.portkey_strategy == PortkeyStrategy::Loadbalance
            {
                r.loader.unread(UnreadKey::new(
                    at,
                    "read by portkey_strategy: fallback only (loadbalance never moves to \
                     another target); it does nothing here",
                ));
            }
        }
        Ok(())
    }),
    router("model_group_alias", model_group_alias),
    either("fallbacks", |r, k| {
        r.later.fallbacks = r.either(k, fallback_list, |f| !f.is_empty())?;
        Ok(())
    }),
    either("context_window_fallbacks", |r, k| {
        r.later.context_window = r.either(k, fallback_list, |f| !f.is_empty())?;
        Ok(())
    }),
    either("content_policy_fallbacks", |r, k| {
        r.later.content_policy = r.either(k, fallback_list, |f| !f.is_empty())?;
        Ok(())
    }),
    either("default_fallbacks", |r, k| {
        r.later.defaults = r.either(k, default_fallbacks, |e| !e.targets.is_empty())?;
        Ok(())
    }),
];

/// Keys read only from `litellm_settings` (by the reader of another key).
pub(crate) const LITELLM_ONLY_KEYS: [&str; 1] = ["request_timeout"];

/// The keys of [`ROUTER_SETTINGS`], in table order.
pub(crate) const fn router_keys() -> [&'static str; ROUTER_SETTINGS.len()] {
    let mut keys = [""; ROUTER_SETTINGS.len()];
    let mut i = 0;
    while i < keys.len() {
        keys[i] = ROUTER_SETTINGS[i].key;
        i += 1;
    }
    keys
}

/// How many keys are read from `litellm_settings`.
pub(crate) const fn litellm_key_count() -> usize {
    let mut n = LITELLM_ONLY_KEYS.len();
    let mut i = 0;
    while i < ROUTER_SETTINGS.len() {
        if matches!(ROUTER_SETTINGS[i].source, Source::RouterOrLitellm) {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The keys read from `litellm_settings`: [`LITELLM_ONLY_KEYS`], then the table's keys read
/// from either section.
pub(crate) const fn litellm_keys() -> [&'static str; litellm_key_count()] {
    let mut keys = [""; litellm_key_count()];
    let mut n = 0;
    while n < LITELLM_ONLY_KEYS.len() {
        keys[n] = LITELLM_ONLY_KEYS[n];
        n += 1;
    }
    let mut i = 0;
    while i < ROUTER_SETTINGS.len() {
        if matches!(ROUTER_SETTINGS[i].source, Source::RouterOrLitellm) {
            keys[n] = ROUTER_SETTINGS[i].key;
            n += 1;
        }
        i += 1;
    }
    keys
}

/// `router_settings` keys the engine models (LiteLLM's and routersim's own), in the order they
/// are read: the keys of the loader's one table of keys and readers, so a key is listed here
/// exactly when it is read.
pub const MODELLED_ROUTER_KEYS: [&str; ROUTER_SETTINGS.len()] = router_keys();

/// Router keys that are also read from `litellm_settings` (where real configs often put them),
/// from the same table.
pub const MODELLED_LITELLM_KEYS: [&str; litellm_key_count()] = litellm_keys();

impl Loader {
    /// `router_settings` and the router keys of `litellm_settings`, read by
    /// [`ROUTER_SETTINGS`], then checked against the deployments (warnings only).
    pub(super) fn settings(
        &mut self,
        router: Option<&Map<String, Value>>,
        litellm: Option<&Map<String, Value>>,
        deployments: &[Deployment],
    ) -> Result<RouterSettings> {
        if let Some(router) = router {
            for key in router.keys() {
                self.router_key(key);
            }
        }
        if let Some(litellm) = litellm {
            for key in litellm.keys() {
                if !MODELLED_LITELLM_KEYS.contains(&key.as_str()) {
                    self.ignore(format!("litellm_settings.{key}"));
                }
            }
        }
        let mut read = Read {
            loader: self,
            router,
            litellm,
            settings: RouterSettings::default(),
            later: Later::default(),
        };
        for setting in &ROUTER_SETTINGS {
            (setting.read)(&mut read, setting)?;
        }
        let Read {
            mut settings,
            later,
            ..
        } = read;
        self.check_names(&mut settings, later, deployments);
        if let Some(warning) = super::alternatives::never_ejects(&settings, deployments) {
            self.warn(warning);
        }
        Ok(settings)
    }

    /// A `router_settings` key: modelled, LiteLLM's but not modelled (a note), or unknown to
    /// LiteLLM (a typo, with the closest known key).
    fn router_key(&mut self, key: &str) {
        if MODELLED_ROUTER_KEYS.contains(&key) {
            return;
        }
        let path = format!("router_settings.{key}");
        if is_known_router_key(key) {
            self.ignore(path);
        } else {
            let suggestion = closest_key(key, known_router_keys())
                .map(|known| format!("router_settings.{known}"));
            self.unknown.insert(UnknownKey { path, suggestion });
        }
    }

    /// Warns about fallbacks, aliases and group policies naming groups no deployment serves,
    /// and stores the fallback lists.
    fn check_names(&mut self, s: &mut RouterSettings, later: Later, deployments: &[Deployment]) {
        let mut fallbacks = later.fallbacks.unwrap_or_default();
        if let Some(defaults) = later.defaults {
            fallbacks.entries.push(defaults);
        }
        let context_window = later.context_window.unwrap_or_default();
        let content_policy = later.content_policy.unwrap_or_default();

        let names = Names {
            groups: deployments.iter().map(|d| d.model_name.as_ref()).collect(),
            wildcards: deployments
                .iter()
                .map(|d| d.model_name.as_ref())
                .filter(|n| n.contains('*'))
                .collect(),
            aliases: s
                .model_group_alias
                .keys()
                .chain(s.unroutable_aliases.keys())
                .cloned()
                .collect(),
        };
        for raw in [&fallbacks, &context_window, &content_policy] {
            self.check_fallbacks(raw, &names);
        }
        for (group, at) in later.alias_paths {
            if !names.groups.contains(group.as_str())
                && !names
                    .wildcards
                    .iter()
                    .any(|p| ModelPattern::new(p).matches(&group))
            {
                self.warn(format!(
                    "{at}: \"{group}\" is not a model_name in model_list"
                ));
            }
        }
        for (group, at) in later.group_policy_paths {
            if !names.knows(&group) {
                self.warn(format!(
                    "{at}: \"{group}\" is not a model_name in model_list (nor an alias)"
                ));
            }
        }

        s.fallbacks = fallbacks.into_map();
        s.context_window_fallbacks = context_window.into_map();
        s.content_policy_fallbacks = content_policy.into_map();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_keys_are_unique() {
        let keys = router_keys();
        let unique: std::collections::BTreeSet<_> = keys.iter().collect();
        assert_eq!(unique.len(), keys.len());
    }
}
