//! Router config keys that do nothing, said loudly, the same way by every command.
//!
//! LiteLLM's proxy loads a config whose `router_settings` hold a typo and ignores the key, so
//! routersim loads it too; but a capacity decision must not rest on a setting that never took
//! effect. Every command that loads a scenario prints [`config_lines`]: a warning for each key
//! LiteLLM itself would not know, with the closest known key, the loader's other warnings, and
//! one note listing the keys LiteLLM knows but routersim does not model. `--strict` turns both
//! classes into errors ([`strict_errors`]), and `sweep --set` refuses to sweep either
//! ([`set_does_nothing`]): every value would run the same.

use std::path::{Path, PathBuf};

use routersim_config::keys::{MODELLED_LITELLM_KEYS, MODELLED_ROUTER_KEYS, is_known_router_key};
use routersim_engine::config::{RouterConfig, UnreadKey};

use crate::scenario::{RouterSource, Scenario, ScenarioError};
use crate::yaml::LocationIndex;

/// What `run`, `check` and `sweep` print about a router config: `warning: router config: …`
/// for each key LiteLLM would not know and each of the loader's warnings, then one
/// `note: router config keys not modelled (ignored): …` line.
pub fn config_lines(config: &RouterConfig) -> Vec<String> {
    let mut lines: Vec<String> = config
        .unknown_keys
        .iter()
        .map(|key| format!("warning: router config: {key}"))
        .chain(
            config
                .warnings
                .iter()
                .map(|w| format!("warning: router config: {w}")),
        )
        .collect();
    if !config.ignored_keys.is_empty() {
        let keys: Vec<String> = config
            .ignored_keys
            .iter()
            .map(|key| match section_of(key) {
                Some(place) => format!("{key} (did you mean {place}?)"),
                None => key.clone(),
            })
            .collect();
        lines.push(format!(
            "note: router config keys not modelled (ignored): {}",
            keys.join(", ")
        ));
    }
    lines
}

/// Why a key routersim does not model does nothing.
const NOT_MODELLED: &str = "routersim does not model this key";

/// Where a top-level config key belongs when it is a router setting written outside its
/// section (`allowed_fails` → `router_settings.allowed_fails`): LiteLLM's proxy ignores it
/// there, and so does routersim.
pub fn section_of(key: &str) -> Option<String> {
    if key.contains(['.', '[']) {
        return None;
    }
    if MODELLED_ROUTER_KEYS.contains(&key) || is_known_router_key(key) {
        return Some(format!("router_settings.{key}"));
    }
    MODELLED_LITELLM_KEYS
        .contains(&key)
        .then(|| format!("litellm_settings.{key}"))
}

/// Why a key routersim does not model does nothing, with where it belongs when it is a
/// router setting outside its section.
fn not_modelled(key: &str) -> String {
    match section_of(key) {
        Some(place) => format!("{NOT_MODELLED} here; did you mean {place}?"),
        None => NOT_MODELLED.to_string(),
    }
}

/// Every key of the scenario's router config that routersim does not use, as an error for
/// `--strict`: the file it is in (the scenario, or its `router_file`), its line where it can be
/// found, and its YAML path in that file (`router.router_settings.allowed_fail`, or
/// `set.<key>` when the scenario's own `set` put it there). Keys the chosen profile does not
/// read count too (`router_settings.max_attempts` under `profile: litellm`, and the traffic
/// keys `models` and `workload` outside the profiles that read them).
pub fn strict_errors(scenario: &Scenario) -> Vec<ScenarioError> {
    strict_errors_where(scenario, |_| true)
}

/// [`strict_errors`] for a sweep's combinations (the first one's keys): a key one profile does
/// not read is an error only when no combination reads it (a sweep over `profile` may set
/// `max_attempts` for its `contract` runs).
pub fn strict_errors_across(scenarios: &[Scenario]) -> Vec<ScenarioError> {
    let Some(first) = scenarios.first() else {
        return Vec::new();
    };
    strict_errors_where(first, |key| {
        scenarios
            .iter()
            .all(|s| s.router.unread_keys.iter().any(|k| k.path == key.path))
    })
}

fn strict_errors_where(
    scenario: &Scenario,
    unread_everywhere: impl Fn(&UnreadKey) -> bool,
) -> Vec<ScenarioError> {
    let config = &scenario.router;
    let unread: Vec<&UnreadKey> = config
        .unread_keys
        .iter()
        .filter(|key| unread_everywhere(key))
        .collect();
    let router_keys = config
        .unknown_keys
        .iter()
        .map(|key| (key.path.as_str(), key.message()))
        .chain(
            config
                .ignored_keys
                .iter()
                .map(|key| (key.as_str(), not_modelled(key))),
        )
        .chain(
            unread
                .iter()
                .filter(|key| !is_traffic_key(&key.path))
                .map(|key| (key.path.as_str(), key.message.clone())),
        )
        .map(|(key, message)| (origin(scenario, key), message));
    let traffic_keys = unread
        .iter()
        .filter(|key| is_traffic_key(&key.path))
        .map(|key| {
            (
                (scenario.file.clone(), key.path.clone()),
                key.message.clone(),
            )
        });
    let mut texts: Vec<(PathBuf, Option<LocationIndex>)> = Vec::new();
    router_keys
        .chain(traffic_keys)
        .map(|((file, path), message)| {
            let place = index_of(&mut texts, &file).and_then(|index| index.locate(&path));
            let (line, column) = place.unzip();
            ScenarioError {
                file,
                line,
                column,
                path,
                message: format!("{message} (an error under --strict)"),
            }
        })
        .collect()
}

/// Whether an unread key is the scenario's own (`traffic[0].models`), not the router config's.
fn is_traffic_key(path: &str) -> bool {
    path.starts_with("traffic[")
}

/// The file a config key is in and its YAML path there.
fn origin(scenario: &Scenario, key: &str) -> (PathBuf, String) {
    let from_set = scenario
        .set
        .iter()
        .rev()
        .find(|(set, _)| covers(key, &pattern(set)) || covers(&pattern(set), key));
    if let Some((set, _)) = from_set {
        return (scenario.file.clone(), format!("set.{set}"));
    }
    match &scenario.router_source {
        RouterSource::Inline => (scenario.file.clone(), format!("router.{key}")),
        RouterSource::File(file) => (file.clone(), key.to_string()),
    }
}

/// The location index of `file`, read once (only to place an error; `None` if unreadable).
fn index_of<'t>(
    texts: &'t mut Vec<(PathBuf, Option<LocationIndex>)>,
    file: &Path,
) -> Option<&'t LocationIndex> {
    let at = match texts.iter().position(|(f, _)| f == file) {
        Some(at) => at,
        None => {
            let index = std::fs::read_to_string(file)
                .ok()
                .map(|text| LocationIndex::new(&text));
            texts.push((file.to_path_buf(), index));
            texts.len() - 1
        }
    };
    texts[at].1.as_ref()
}

/// A path with every list index written `[*]`, the way the loader names deployment keys
/// (`model_list[0].litellm_params.api_key` → `model_list[*].litellm_params.api_key`).
fn pattern(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut rest = path;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        match rest.find(']') {
            Some(close) if rest[..close].trim().chars().all(|c| c.is_ascii_digit()) => {
                out.push('*');
                rest = &rest[close..];
            }
            _ => {}
        }
    }
    out.push_str(rest);
    out
}

/// Whether `outer` is `inner` or one of its ancestors (`a.b` covers `a.b`, `a.b.c`, `a.b[0]`).
fn covers(outer: &str, inner: &str) -> bool {
    inner
        .strip_prefix(outer)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
}

/// Why sweeping `set_path` would compare nothing, if it would: the path is (or is under) a key
/// LiteLLM would not know or routersim does not model in `config` (the config with the swept
/// value applied), or the value brought in such a key that `base` (the scenario as written)
/// does not have. The text names the key when it is not `set_path` itself.
pub fn set_does_nothing(
    config: &RouterConfig,
    base: &RouterConfig,
    set_path: &str,
) -> Option<String> {
    let set = pattern(set_path);
    let unknown = config
        .unknown_keys
        .iter()
        .map(|key| (key.path.as_str(), key.message()));
    let ignored = config
        .ignored_keys
        .iter()
        .map(|key| (key.as_str(), not_modelled(key)));
    let is_new = |key: &str| {
        !base.unknown_keys.iter().any(|k| k.path == key)
            && !base.ignored_keys.iter().any(|k| k == key)
    };
    let (key, message) = unknown
        .chain(ignored)
        .find(|(key, _)| covers(key, &set) || (covers(&set, key) && is_new(key)))?;
    let named = if key == set {
        String::new()
    } else {
        format!("{key}: ")
    };
    let stop = if message.ends_with('?') { " " } else { ". " };
    Some(format!(
        "{named}{message}{stop}Every value would run the same"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_indices_become_stars_and_ancestors_cover() {
        assert_eq!(
            pattern("model_list[0].litellm_params.api_key"),
            "model_list[*].litellm_params.api_key"
        );
        assert_eq!(pattern("a[12][3].b"), "a[*][*].b");
        assert_eq!(pattern("a[x]"), "a[x]");
        assert!(covers("a.b", "a.b"));
        assert!(covers("a.b", "a.b.c"));
        assert!(covers("a.b", "a.b[*]"));
        assert!(!covers("a.b", "a.bc"));
    }

    #[test]
    fn a_router_setting_outside_its_section_is_pointed_to_it() {
        assert_eq!(
            section_of("allowed_fails").as_deref(),
            Some("router_settings.allowed_fails")
        );
        assert_eq!(
            section_of("num_retries").as_deref(),
            Some("router_settings.num_retries")
        );
        assert_eq!(section_of("general_settings"), None);
        assert_eq!(section_of("router_settings.allowed_fails"), None);
    }
}
