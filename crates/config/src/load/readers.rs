//! The readers of the table's keys that are more than a line: `model_group_retry_policy`,
//! `max_fallbacks` (with `ROUTER_MAX_FALLBACKS`), `timeout` (with `request_timeout`),
//! `model_group_alias`.

use serde_json::Value;

use super::error::{ConfigError, Result};
use super::policy::{PolicyUnit, kind_policy};
use super::read::{Read, Setting, get};
use super::scalars::{AliasTarget, alias_target, describe, uint32};
use routersim_engine::config::{MAX_FALLBACKS_ENV, resolve_max_fallbacks};

pub(super) fn model_group_retry_policy(r: &mut Read<'_>, setting: &Setting) -> Result<()> {
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
pub(super) fn max_fallbacks(r: &mut Read<'_>, setting: &Setting) -> Result<()> {
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

pub(super) fn timeout(r: &mut Read<'_>, setting: &Setting) -> Result<()> {
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

pub(super) fn model_group_alias(r: &mut Read<'_>, setting: &Setting) -> Result<()> {
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
