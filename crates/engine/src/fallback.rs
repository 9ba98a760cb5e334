//! Where the fallback walk goes next.
//!
//! Seed (LiteLLM): *"Each fallback list is a list of single-key dicts, each mapping a model
//! group to an ordered list of model groups to try. […] `default_fallbacks=["gpt-4o-mini"]`
//! becomes the catch-all entry `{"*": ["gpt-4o-mini"]}`. The router looks up the group being
//! served first and then the group the request asked for, so a fallback target's own fallbacks
//! apply on the next hop. […] A request can also carry its own `fallbacks`, which win for that
//! request."*
//!
//! Which list: as in LiteLLM's `async_function_with_fallbacks`, a context-window error uses
//! `context_window_fallbacks` when that list is set (and stops when it has no entry for the
//! group), a content-policy error likewise; every other failure — and those two when their list
//! is not set — uses the general list, then the `"*"` entry.

use crate::config::{FallbackMap, FallbackTarget, RouterSettings};
use crate::event::FallbackLevel;
use crate::failure::FailureKind;
use crate::request::Request;

/// The targets chosen for a failure, and which list they came from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FallbackChoice<'a> {
    /// The targets, in order.
    pub targets: &'a [FallbackTarget],
    /// Which list.
    pub level: FallbackLevel,
}

fn lookup<'a>(
    map: &'a FallbackMap,
    serving: &str,
    requested: &str,
) -> Option<&'a [FallbackTarget]> {
    map.get(serving).or_else(|| map.get(requested))
}

/// Whether general fallbacks exist for this request (its own, or the router's).
pub fn general_fallbacks_configured(settings: &RouterSettings, request: &Request) -> bool {
    request.fallbacks.as_ref().is_some_and(|f| !f.is_empty()) || !settings.fallbacks.is_empty()
}

/// Chooses the fallback list a failure walks next (tower style: the router asks the policy
/// which targets, never which profile it is).
pub trait FallbackPolicy {
    /// The targets for a failure of `kind` while serving `serving` for a request that asked
    /// for `requested` (`None`: no fallback).
    fn choose<'a>(
        &self,
        settings: &'a RouterSettings,
        request: &'a Request,
        kind: FailureKind,
        serving: &str,
        requested: &str,
    ) -> Option<FallbackChoice<'a>>;
}

/// The documented rules: a dedicated list that is set but has no entry stops the walk.
#[derive(Clone, Copy, Debug, Default)]
pub struct DocumentedFallbacks;

impl FallbackPolicy for DocumentedFallbacks {
    fn choose<'a>(
        &self,
        settings: &'a RouterSettings,
        request: &'a Request,
        kind: FailureKind,
        serving: &str,
        requested: &str,
    ) -> Option<FallbackChoice<'a>> {
        choose(settings, request, kind, serving, requested)
    }
}

/// The fallback targets for a failure of `kind` while serving `serving` for a request that
/// asked for `requested`, under the documented rules.
pub fn choose<'a>(
    settings: &'a RouterSettings,
    request: &'a Request,
    kind: FailureKind,
    serving: &str,
    requested: &str,
) -> Option<FallbackChoice<'a>> {
    choose_falling_through(settings, request, kind, serving, requested, false)
}

/// [`choose`], where `falls_through` says whether a failure whose own list
/// (`context_window_fallbacks`, `content_policy_fallbacks`) is set but has no entry for the
/// group goes on to the general fallbacks (the documented rules: no, it stops there).
pub fn choose_falling_through<'a>(
    settings: &'a RouterSettings,
    request: &'a Request,
    kind: FailureKind,
    serving: &str,
    requested: &str,
    falls_through: bool,
) -> Option<FallbackChoice<'a>> {
    let specific = match kind {
        FailureKind::ContextWindowExceeded => Some((
            &settings.context_window_fallbacks,
            FallbackLevel::ContextWindow,
        )),
        FailureKind::ContentPolicyViolation => Some((
            &settings.content_policy_fallbacks,
            FallbackLevel::ContentPolicy,
        )),
        _ => None,
    };
    if let Some((map, level)) = specific
        && !map.is_empty()
    {
        let found =
            lookup(map, serving, requested).map(|targets| FallbackChoice { targets, level });
        if found.is_some() || !falls_through {
            return found;
        }
    }
    if let Some(own) = &request.fallbacks {
        return Some(FallbackChoice {
            targets: own,
            level: FallbackLevel::General,
        });
    }
    if let Some(targets) = lookup(&settings.fallbacks, serving, requested) {
        return Some(FallbackChoice {
            targets,
            level: FallbackLevel::General,
        });
    }
    settings.fallbacks.get("*").map(|targets| FallbackChoice {
        targets,
        level: FallbackLevel::Default,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(entries: &[(&str, &[&str])]) -> FallbackMap {
        FallbackMap {
            entries: entries
                .iter()
                .map(|(k, v)| {
                    (
                        (*k).to_string(),
                        v.iter().map(|t| FallbackTarget::group(*t)).collect(),
                    )
                })
                .collect(),
        }
    }

    #[test]
    fn lookup_tries_serving_group_then_requested_then_star() {
        let settings = RouterSettings {
            fallbacks: map(&[("A", &["B"]), ("B", &["C"]), ("*", &["Z"])]),
            context_window_fallbacks: map(&[("A", &["A-long"])]),
            ..RouterSettings::default()
        };
        let request = Request::new(1, "A");
        let kind = FailureKind::ServiceUnavailable;
        let pick = |serving, requested| {
            choose(&settings, &request, kind, serving, requested)
                .map(|c| (c.targets[0].model.clone(), c.level))
        };
        assert_eq!(pick("B", "A"), Some(("C".into(), FallbackLevel::General)));
        assert_eq!(pick("X", "A"), Some(("B".into(), FallbackLevel::General)));
        assert_eq!(pick("X", "Y"), Some(("Z".into(), FallbackLevel::Default)));
        let cw = choose(
            &settings,
            &request,
            FailureKind::ContextWindowExceeded,
            "A",
            "A",
        );
        assert_eq!(cw.map(|c| c.level), Some(FallbackLevel::ContextWindow));
        // The context-window list is set but has no entry for X: no fallback at all.
        assert_eq!(
            choose(
                &settings,
                &request,
                FailureKind::ContextWindowExceeded,
                "X",
                "X"
            ),
            None
        );
    }
}
