//! `router_settings` (and the router keys LiteLLM also reads from `litellm_settings`).
//!
//! One table, [`ROUTER_SETTINGS`], holds every modelled key with the code that reads it; the
//! list of modelled keys ([`MODELLED_ROUTER_KEYS`](crate::keys::MODELLED_ROUTER_KEYS))
//! is derived from it, so a key can be neither read yet listed as not modelled, nor listed yet
//! never read. A new key is one entry here (and a field in
//! [`RouterSettings`](routersim_engine::config::RouterSettings)).
//!
//! Entries are read in table order, not file order: `profile` comes before `recovery` and
//! `classification`, which it presets, and the warnings come out in the same order for every
//! file.

use serde_json::{Map, Value};

use super::fallbacks::{Names, RawEntry, RawFallbacks, default_fallbacks, fallback_list};
use super::policy::{PolicyUnit, kind_policy};
use super::scalars::{
    AliasTarget, alias_target, boolean, describe, duration, retries, strategy, uint32,
};
use super::{ConfigError, Loader, Result};
use routersim_engine::config::{
    Classification, Deployment, MAX_FALLBACKS_ENV, Profile, Recovery, RouterSettings,
    resolve_max_fallbacks,
};
use routersim_engine::pattern::ModelPattern;
use routersim_engine::profile::{self, ProfileSpec, Walk};
use routersim_engine::stream::StreamRecovery;

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
    read: fn(&mut Read<'_>, &Setting) -> Result<()>,
}

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
pub(crate) const ROUTER_SETTINGS: [Setting; 41] = [
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
            r.candidate_walk_key(k);
        }
        Ok(())
    }),
    router("stream_deadline", |r, k| {
        if let Some((v, at)) = r.router(k) {
            r.settings.stream_deadline = duration(v, &at)?;
            r.candidate_walk_key(k);
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

/// What the table's readers work on.
pub(super) struct Read<'a> {
    pub(super) loader: &'a mut Loader,
    router: Option<&'a Map<String, Value>>,
    litellm: Option<&'a Map<String, Value>>,
    pub(super) settings: RouterSettings,
    later: Later,
}

/// What is read by one entry and checked once every entry is read.
#[derive(Default)]
struct Later {
    fallbacks: Option<RawFallbacks>,
    context_window: Option<RawFallbacks>,
    content_policy: Option<RawFallbacks>,
    defaults: Option<RawEntry>,
    /// `(group, path)` of each `model_group_alias` target.
    alias_paths: Vec<(String, String)>,
    /// `(group, path)` of each `model_group_retry_policy` entry.
    group_policy_paths: Vec<(String, String)>,
}

fn get<'m>(section: Option<&'m Map<String, Value>>, key: &str) -> Option<&'m Value> {
    section.and_then(|m| m.get(key)).filter(|v| !v.is_null())
}

impl<'a> Read<'a> {
    /// The setting's value in `router_settings` (unless null), with its path.
    pub(super) fn router(&self, setting: &Setting) -> Option<(&'a Value, String)> {
        get(self.router, setting.key).map(|v| (v, format!("router_settings.{}", setting.key)))
    }

    /// The profile's entry in the engine's profile table (none set: `litellm`'s).
    fn profile(&self) -> &'static ProfileSpec {
        profile::spec(self.settings.profile)
    }

    /// A key only the profiles for which `reads` holds read: said loudly when set under
    /// another profile, where it does nothing (`note` added to the warning).
    fn profile_key(&mut self, setting: &Setting, reads: fn(&ProfileSpec) -> bool, note: &str) {
        if !reads(self.profile()) && self.router(setting).is_some() {
            self.loader.warn(format!(
                "router_settings.{}: read by profile: {} only; it does nothing here{note}",
                setting.key,
                profile::names_where(reads)
            ));
        }
    }

    /// A key of the candidate walk (`allow_fallbacks`, the deadlines).
    fn candidate_walk_key(&mut self, setting: &Setting) {
        self.profile_key(setting, |p| p.walk == Walk::Candidates, "");
    }

    /// A key only a profile that reads contracts reads.
    fn contract_key(&mut self, setting: &Setting) {
        self.profile_key(setting, |p| p.reads_contracts, "");
    }

    /// `attempts_per_candidate`: under a profile that walks candidates without reading it,
    /// the warning says what that profile reads instead.
    fn attempts_per_candidate_key(&mut self, setting: &Setting) {
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
    fn flag(
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
    fn named<T>(
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
    fn either<T>(
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

fn model_group_retry_policy(r: &mut Read<'_>, setting: &Setting) -> Result<()> {
    let Some((v, at)) = r.router(setting) else {
        return Ok(());
    };
    let Value::Object(groups) = v else {
        return Err(ConfigError::new(
            at,
            format!(
                "expected a mapping of model group to retry policy, found {}",
                describe(v)
            ),
        ));
    };
    for (group, policy) in groups {
        let group_path = format!("{at}.{group}");
        if let Some(policy) = kind_policy(
            policy,
            &group_path,
            PolicyUnit::Retries,
            &mut r.loader.unknown,
        )? {
            r.settings
                .model_group_retry_policy
                .insert(group.clone(), policy);
            r.later.group_policy_paths.push((group.clone(), group_path));
        }
    }
    Ok(())
}

/// `max_fallbacks`: the config's, else `ROUTER_MAX_FALLBACKS` as the caller passed it in
/// [`LoadOptions`](super::LoadOptions), else 5. A value from the environment is recorded in
/// the warnings (whether used or not), so a run never changes silently with it.
fn max_fallbacks(r: &mut Read<'_>, setting: &Setting) -> Result<()> {
    let env = r.loader.options.max_fallbacks_env.clone();
    let configured = match r.router(setting) {
        Some((v, at)) => Some(uint32(v, &at)?),
        None => None,
    };
    let n = resolve_max_fallbacks(configured, env.as_deref());
    r.settings.max_fallbacks = n;
    let Some(env) = env else {
        return Ok(());
    };
    let var = format!("{MAX_FALLBACKS_ENV}={env:?} from the environment");
    r.loader.warn(if configured.is_some() {
        format!("router_settings.max_fallbacks: {n} is used; {var} is not")
    } else if env.trim().parse::<u32>().is_ok() {
        format!(
            "{var}: max_fallbacks is {n} (router_settings.max_fallbacks is not set; LiteLLM \
             reads the same variable)"
        )
    } else {
        format!("{var} is not a whole number and is ignored: max_fallbacks is {n}")
    });
    Ok(())
}

fn timeout(r: &mut Read<'_>, setting: &Setting) -> Result<()> {
    if let Some((v, at)) = r.router(setting) {
        r.settings.timeout = r.loader.timeout(v, &at)?;
    }
    if r.settings.timeout.is_none()
        && let Some(v) = get(r.litellm, "request_timeout")
    {
        // LiteLLM's Router falls back on `litellm.request_timeout` for its timeout.
        r.settings.timeout = r.loader.timeout(v, "litellm_settings.request_timeout")?;
    }
    Ok(())
}

fn model_group_alias(r: &mut Read<'_>, setting: &Setting) -> Result<()> {
    let Some((v, at)) = r.router(setting) else {
        return Ok(());
    };
    let Value::Object(aliases) = v else {
        return Err(ConfigError::new(
            at,
            format!(
                "expected a mapping of alias to model group, found {}",
                describe(v)
            ),
        ));
    };
    for (alias, target) in aliases {
        let alias_path = format!("{at}.{alias}");
        let mut notes = Vec::new();
        let target = alias_target(target, &alias_path, &mut notes)?;
        for note in notes {
            r.loader.warn(note);
        }
        match target {
            AliasTarget::Group(group) => {
                r.later.alias_paths.push((group.clone(), alias_path));
                r.settings.model_group_alias.insert(alias.clone(), group);
            }
            AliasTarget::Unroutable(found) => {
                r.loader.warn(format!(
                    "{alias_path}: the alias \"{alias}\" maps to {found}, not to one model \
                     group; LiteLLM loads this and fails every request for \"{alias}\" \
                     (400, before any attempt), so routersim does too: such a request ends in \
                     bad_request (give_up reason unroutable_alias), then tries the alias's \
                     fallbacks; name one model group, or give several deployments the same \
                     model_name"
                ));
                r.settings.unroutable_aliases.insert(alias.clone(), found);
            }
        }
    }
    Ok(())
}

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
                if !crate::keys::MODELLED_LITELLM_KEYS.contains(&key.as_str()) {
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
        Ok(settings)
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
