//! Which swept keys changed nothing, and why where the engine can tell.
//!
//! A key has **no effect** when, with every other key held at each of its values, all of its
//! values give byte-identical `summary.json` files for every seed: a capacity decision must
//! not be read off rows that differ only in their label. The analysis needs every run of the
//! sweep, so a shard does not make it; `routersim merge` does, from the shards' run
//! directories, and writes the same lines an unsharded sweep writes.
//!
//! The reason comes from the runs' [`RunFacts`], summed over every run of the sweep, and is
//! given only for a `router_settings` or `litellm_settings` key whose every use the facts
//! rule out (for example `cooldown_time` when every cooldown took its length from the
//! provider's Retry-After, which wins over it).

use std::path::{Path, PathBuf};

use super::manifest::Manifest;
use routersim_sim::facts::RunFacts;

/// Each run's facts, beside its `summary.json` in a sweep's run directory.
pub const FACTS_JSON: &str = "facts.json";
/// Each run's summary in a sweep's run directory.
const SUMMARY_JSON: &str = "summary.json";

/// Writes a run's facts into its sweep run directory.
pub fn write_facts(dir: &Path, facts: &RunFacts) -> std::io::Result<()> {
    let text = serde_json::to_string(facts).map_err(std::io::Error::other)?;
    std::fs::write(dir.join(FACTS_JSON), text + "\n")
}

/// One line per swept key that had no effect, in `--set` order:
/// `"<key>: no effect on any metric in this scenario[; <why>]"`. `run_dir` gives job `j`'s
/// run directory (combination `j / seeds`, seed index `j % seeds`). Nothing is claimed when a
/// run's summary cannot be read.
pub fn no_effect_lines(manifest: &Manifest, run_dir: &dyn Fn(usize) -> PathBuf) -> Vec<String> {
    let seeds = manifest.seeds.len();
    // Read on demand (memory stays flat however many runs); a key with an effect usually
    // shows it in its first few comparisons.
    let summary = |job: usize| std::fs::read(run_dir(job).join(SUMMARY_JSON)).ok();
    let sizes: Vec<usize> = manifest.keys.iter().map(|k| k.values.len()).collect();
    let combos = manifest.combinations();
    let mut unmoved = Vec::new();
    for (k, key) in manifest.keys.iter().enumerate() {
        if sizes[k] < 2 {
            continue;
        }
        let stride: usize = sizes[k + 1..].iter().product();
        let mut same = true;
        'combos: for (c, values) in combos.iter().enumerate() {
            if values[k] != 0 {
                continue;
            }
            for s in 0..seeds {
                let Some(first) = summary(c * seeds + s) else {
                    return Vec::new();
                };
                for v in 1..sizes[k] {
                    let Some(other) = summary((c + v * stride) * seeds + s) else {
                        return Vec::new();
                    };
                    if other != first {
                        same = false;
                        break 'combos;
                    }
                }
            }
        }
        if same {
            unmoved.push(key.path.as_str());
        }
    }
    if unmoved.is_empty() {
        return Vec::new();
    }
    let facts = total_facts(manifest.job_count(), run_dir);
    unmoved
        .into_iter()
        .map(|path| {
            let mut line = format!("{path}: no effect on any metric in this scenario");
            if let Some(why) = facts.as_ref().and_then(|f| reason(path, f)) {
                line.push_str("; ");
                line.push_str(why);
            }
            line
        })
        .collect()
}

/// Every run's facts summed; `None` when one cannot be read (a sweep of an older version).
fn total_facts(jobs: usize, run_dir: &dyn Fn(usize) -> PathBuf) -> Option<RunFacts> {
    let mut total = RunFacts::default();
    for job in 0..jobs {
        let text = std::fs::read_to_string(run_dir(job).join(FACTS_JSON)).ok()?;
        let facts: RunFacts = serde_json::from_str(&text).ok()?;
        total.add(&facts);
    }
    Some(total)
}

/// Why a router key could not have mattered, when every run's facts show it.
fn reason(path: &str, f: &RunFacts) -> Option<&'static str> {
    let setting = path
        .strip_prefix("router_settings.")
        .or_else(|| path.strip_prefix("litellm_settings."))?;
    let never_failed = (f.failed_attempts == 0).then_some("no deployment call ever failed");
    match setting {
        "cooldown_time" => match (
            f.cooldowns(),
            f.cooldowns_from_router,
            f.cooldowns_from_deployment,
            f.cooldowns_from_retry_after,
        ) {
            (0, ..) => Some("no deployment was ever cooled down"),
            (_, 0, 0, _) => Some(
                "every cooldown took its length from the provider's Retry-After, which wins over \
                 cooldown_time",
            ),
            (_, 0, _, 0) => Some(
                "every cooldown took its length from the deployment's own cooldown_time, which \
                 wins over the router's",
            ),
            (_, 0, _, _) => Some(
                "every cooldown took its length from the deployment's own cooldown_time or the \
                 provider's Retry-After, which win over the router's cooldown_time",
            ),
            _ => None,
        },
        "allowed_fails" | "allowed_fails_policy" | "disable_cooldowns" => never_failed,
        "num_retries" | "retry_policy" | "model_group_retry_policy" => {
            never_failed.or((f.retryable_failures == 0).then_some("no failure was retryable"))
        }
        "retry_after" => never_failed.or((f.retries == 0).then_some("no request was retried")),
        "fallbacks"
        | "context_window_fallbacks"
        | "content_policy_fallbacks"
        | "default_fallbacks"
        | "max_fallbacks" => (f.give_ups == 0)
            .then_some("no model group ever gave up on a request, so no fallback was looked up"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_given_only_for_router_keys_the_facts_rule_out() {
        let retry_after_only = RunFacts {
            failed_attempts: 3,
            retryable_failures: 3,
            retries: 3,
            give_ups: 1,
            cooldowns_from_retry_after: 2,
            ..RunFacts::default()
        };
        assert!(
            reason("router_settings.cooldown_time", &retry_after_only)
                .is_some_and(|r| r.contains("Retry-After"))
        );
        assert_eq!(
            reason("router_settings.num_retries", &retry_after_only),
            None
        );
        assert_eq!(reason("router_settings.fallbacks", &retry_after_only), None);
        // A deployment's own cooldown_time is not the router's.
        assert_eq!(
            reason(
                "model_list[0].litellm_params.cooldown_time",
                &retry_after_only
            ),
            None
        );
        let mixed = RunFacts {
            cooldowns_from_router: 1,
            ..retry_after_only
        };
        assert_eq!(reason("router_settings.cooldown_time", &mixed), None);
    }
}
