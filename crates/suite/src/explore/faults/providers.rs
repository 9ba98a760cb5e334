//! Seed-chosen keys under `providers.<deployment>`: the provider's own quotas (`rpm_limit`,
//! `tpm_limit`, `quota_retry_after_format`), non-text chunks a stream starts with (`emits`),
//! and degenerate answers at the head of its `script` (`{malformed: empty_choices}`,
//! `{finish_reason: content_filter}`) on a deployment whose scenario scripts nothing.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

use super::target::Targets;
use super::windows::pick;

/// One or two provider keys on a seed-chosen deployment, appended to `out`.
pub(super) fn provider_keys(
    rng: &mut ChaCha8Rng,
    targets: &Targets,
    out: &mut Vec<(String, String, Value)>,
) {
    let d = targets.deployments[rng.random_range(0..targets.deployments.len())].clone();
    match rng.random_range(0..10u32) {
        0..=5 => quota(rng, d, out),
        6 | 7 => {
            const EMITS: [&str; 4] = ["tool_calls", "thinking", "audio", "image"];
            let first = pick(rng, &EMITS);
            let emits = if rng.random_bool(0.3) {
                json!([first, pick(rng, &EMITS)])
            } else {
                json!([first])
            };
            // Two of the same are one emit: the scenario format takes a set.
            let emits = dedup(emits);
            out.push((d, "emits".into(), emits));
        }
        _ if targets.scripted.contains(&d) => quota(rng, d, out),
        _ => {
            let degenerate = if rng.random_bool(0.5) {
                json!({"malformed": "empty_choices"})
            } else {
                json!({"finish_reason": "content_filter"})
            };
            let oks = rng.random_range(0..4usize);
            let mut script: Vec<Value> = vec![json!("ok"); oks];
            script.push(degenerate);
            out.push((d, "script".into(), Value::Array(script)));
        }
    }
}

fn dedup(list: Value) -> Value {
    match list {
        Value::Array(mut items) => {
            items.dedup();
            Value::Array(items)
        }
        other => other,
    }
}

fn quota(rng: &mut ChaCha8Rng, d: String, out: &mut Vec<(String, String, Value)>) {
    match rng.random_range(0..3u32) {
        0 => out.push((
            d.clone(),
            "rpm_limit".into(),
            json!(rng.random_range(1..=600u64)),
        )),
        1 => out.push((
            d.clone(),
            "tpm_limit".into(),
            json!(rng.random_range(1_000..=2_000_000u64)),
        )),
        _ => {
            out.push((
                d.clone(),
                "rpm_limit".into(),
                json!(rng.random_range(1..=600u64)),
            ));
            out.push((
                d.clone(),
                "tpm_limit".into(),
                json!(rng.random_range(1_000..=2_000_000u64)),
            ));
        }
    }
    if rng.random_bool(0.5) {
        let format = pick(rng, &["seconds", "ms", "http-date"]);
        out.push((d, "quota_retry_after_format".into(), json!(format)));
    }
}
