//! The seed-chosen fault mix: extra fault windows and provider quotas on top of a scenario's
//! own, written as scenario YAML so a violation's scenario file replays exactly.
//!
//! Every draw comes from the ChaCha stream `explore/faults` of the seed (see
//! [`seeded_rng`]), so seed `S` always adds the same faults to the same scenario, whatever
//! the number of workers. The mix covers every kind of trouble the fake providers can make:
//! error windows (rate limits, 5xx, timeouts, context window and content policy errors,
//! auth and other 4xx) with probabilities, windows and Retry-After values in every form
//! (whole seconds, `ms`, HTTP-date, `0`, over a minute), slowdowns, stream breaks, error
//! frames, truncations, stalls and empty streams, and provider quotas (`rpm_limit`,
//! `tpm_limit`). So that stream faults bite in scenarios written without streams, a third of
//! the seeds also stream traffic entries that say nothing about streams (a share of a
//! generated stream, `stream: true|false` on an explicit request). Sizes stay within what a run can serve quickly: a window lasts at most the
//! scenario's duration, a slowdown or stall at most two minutes, a Retry-After at most an
//! hour.

use std::time::Duration;

use rand::{Rng, RngExt};
use rand_chacha::ChaCha8Rng;
use routersim_mock_providers::rng::seeded_rng;
use serde_json::{Map, Value, json};

/// Which extra faults `explore` adds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FaultMode {
    /// A seed-chosen mix (the default).
    #[default]
    Random,
    /// None: only the seed varies (traffic, latencies, picks).
    None,
}

/// What the generator needs to know about the scenario.
#[derive(Clone, Debug)]
pub struct Targets {
    /// Deployment ids, in `model_list` order.
    pub deployments: Vec<String>,
    /// Model group names, in first-seen order.
    pub groups: Vec<String>,
    /// The scenario's duration.
    pub duration: Duration,
    /// Per traffic entry: whether it is a generated stream (`rate`) rather than an explicit
    /// request (`at`).
    pub traffic: Vec<bool>,
}

/// The extra faults of one seed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FaultMix {
    /// Entries appended to `faults`.
    pub windows: Vec<Value>,
    /// Keys set under `providers.<deployment>` (`rpm_limit`, `tpm_limit`,
    /// `quota_retry_after_format`).
    pub quotas: Vec<(String, String, Value)>,
    /// `stream` values for traffic entries that set none (by index), so stream faults bite
    /// in scenarios written without streams.
    pub streamed: Vec<(usize, Value)>,
}

impl FaultMix {
    /// How many fault windows and quota keys it adds.
    pub fn len(&self) -> usize {
        self.windows.len() + self.quotas.len()
    }

    /// Whether it adds nothing at all (no windows, no quotas, no streamed traffic).
    pub fn adds_nothing(&self) -> bool {
        self.is_empty() && self.streamed.is_empty()
    }

    /// Whether it adds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The purpose string of the generator's random stream.
pub const PURPOSE: &str = "explore/faults";

/// The fault mix of `seed` for a scenario with these targets.
pub fn generate(seed: u64, targets: &Targets) -> FaultMix {
    let mut rng = seeded_rng(seed, PURPOSE);
    let mut mix = FaultMix::default();
    if targets.deployments.is_empty() {
        return mix;
    }
    // About one seed in eight adds no window: the scenario's own faults under new draws.
    let windows = match rng.random_range(0..8u32) {
        0 => 0,
        n => n.min(6),
    };
    for _ in 0..windows {
        mix.windows.push(window(&mut rng, targets));
    }
    if rng.random_bool(0.3) {
        for _ in 0..rng.random_range(1..=2u32) {
            quota(&mut rng, targets, &mut mix.quotas);
        }
    }
    // A third of the seeds stream some traffic (entries that say nothing about streams).
    if rng.random_bool(0.3) {
        for (i, &generated) in targets.traffic.iter().enumerate() {
            let value = if generated {
                json!(f64::from(rng.random_range(1..=10u32)) / 10.0)
            } else {
                json!(rng.random_bool(0.5))
            };
            mix.streamed.push((i, value));
        }
    }
    mix
}

fn ms(d: Duration) -> Value {
    Value::String(format!("{}ms", d.as_millis()))
}

fn pick<'a, R: Rng + ?Sized>(rng: &mut R, items: &'a [&'a str]) -> &'a str {
    items[rng.random_range(0..items.len())]
}

fn millis<R: Rng + ?Sized>(rng: &mut R, lo: u64, hi: u64) -> Duration {
    Duration::from_millis(rng.random_range(lo..=hi))
}

/// One fault window: a target, a time window, a probability and an effect.
fn window(rng: &mut ChaCha8Rng, targets: &Targets) -> Value {
    let mut entry = Map::new();
    if rng.random_bool(0.7) || targets.groups.is_empty() {
        let d = &targets.deployments[rng.random_range(0..targets.deployments.len())];
        entry.insert("deployment".into(), json!(d));
    } else {
        let g = &targets.groups[rng.random_range(0..targets.groups.len())];
        entry.insert("model_group".into(), json!(g));
    }
    let total = targets.duration.as_millis().max(1) as u64;
    let from = rng.random_range(0..total);
    entry.insert("from".into(), ms(Duration::from_millis(from)));
    // One window in ten never ends.
    if !rng.random_bool(0.1) {
        let length = rng.random_range(1..=total);
        entry.insert("to".into(), ms(Duration::from_millis(from + length)));
    }
    let probability = match rng.random_range(0..6u32) {
        0 | 1 => 1.0,
        2 => 0.5,
        3 => 0.1,
        // Two decimals: the file reads back to the same number.
        _ => f64::from(rng.random_range(1..=99u32)) / 100.0,
    };
    if probability < 1.0 {
        entry.insert("probability".into(), json!(probability));
    }
    match rng.random_range(0..10u32) {
        0..=4 => error_effect(rng, &mut entry),
        5 => {
            entry.insert("latency".into(), latency(rng));
        }
        _ => stream_effect(rng, &mut entry),
    }
    Value::Object(entry)
}

fn latency(rng: &mut ChaCha8Rng) -> Value {
    if rng.random_bool(0.5) {
        ms(millis(rng, 1, 120_000))
    } else {
        let p50 = rng.random_range(1..=20_000u64);
        let p99 = p50 + rng.random_range(0..=100_000u64);
        json!({"p50": ms(Duration::from_millis(p50)), "p99": ms(Duration::from_millis(p99))})
    }
}

const ERRORS: [&str; 16] = [
    "rate_limit",
    "rate_limit",
    "rate_limit",
    "service_unavailable",
    "internal_server",
    "bad_gateway",
    "overloaded",
    "timeout",
    "api_connection",
    "context_window_exceeded",
    "content_policy_violation",
    "authentication",
    "permission_denied",
    "not_found",
    "bad_request",
    "conflict",
];

fn error_effect(rng: &mut ChaCha8Rng, entry: &mut Map<String, Value>) {
    let kind = pick(rng, &ERRORS);
    entry.insert("error".into(), json!(kind));
    if rng.random_bool(0.6) {
        let (delay, format) = retry_after(rng);
        entry.insert("retry_after".into(), ms(delay));
        if let Some(format) = format {
            entry.insert("retry_after_format".into(), json!(format));
        }
    }
    if rng.random_bool(0.3) {
        entry.insert("latency".into(), latency(rng));
    }
}

/// A Retry-After: zero, a few seconds, sub-second, up to a minute, or over it (up to an
/// hour), in any of the three forms.
fn retry_after(rng: &mut ChaCha8Rng) -> (Duration, Option<&'static str>) {
    let delay = match rng.random_range(0..6u32) {
        0 => Duration::ZERO,
        1 => millis(rng, 1, 999),
        2 | 3 => millis(rng, 1_000, 60_000),
        4 => Duration::from_secs(60),
        _ => millis(rng, 60_001, 3_600_000),
    };
    let format = match rng.random_range(0..4u32) {
        0 => Some("ms"),
        1 => Some("http-date"),
        2 => Some("seconds"),
        _ => None,
    };
    (delay, format)
}

const STREAM_ERRORS: [&str; 6] = [
    "api_connection",
    "internal_server",
    "overloaded",
    "rate_limit",
    "timeout",
    "content_policy_violation",
];

fn cut(rng: &mut ChaCha8Rng, fault: &mut Map<String, Value>) {
    if rng.random_bool(0.7) {
        fault.insert("after_tokens".into(), json!(rng.random_range(0..=60u32)));
    } else {
        fault.insert("after".into(), ms(millis(rng, 0, 5_000)));
    }
}

fn stream_effect(rng: &mut ChaCha8Rng, entry: &mut Map<String, Value>) {
    let mut fault = Map::new();
    let key = match rng.random_range(0..5u32) {
        0 => {
            cut(rng, &mut fault);
            if rng.random_bool(0.5) {
                fault.insert("error".into(), json!(pick(rng, &STREAM_ERRORS)));
            }
            "stream_break"
        }
        1 => {
            cut(rng, &mut fault);
            fault.insert("error".into(), json!(pick(rng, &STREAM_ERRORS)));
            "stream_error_frame"
        }
        2 => {
            cut(rng, &mut fault);
            "stream_truncated"
        }
        3 => {
            cut(rng, &mut fault);
            fault.insert("for".into(), ms(millis(rng, 1, 120_000)));
            "stream_stall"
        }
        _ => {
            let value = if rng.random_bool(0.5) {
                json!("role_only")
            } else {
                json!(true)
            };
            entry.insert("stream_empty".into(), value);
            return;
        }
    };
    entry.insert(key.into(), Value::Object(fault));
}

fn quota(rng: &mut ChaCha8Rng, targets: &Targets, out: &mut Vec<(String, String, Value)>) {
    let d = targets.deployments[rng.random_range(0..targets.deployments.len())].clone();
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

#[cfg(test)]
mod tests {
    use super::*;

    fn targets() -> Targets {
        Targets {
            deployments: vec!["a".into(), "b".into()],
            groups: vec!["g".into()],
            duration: Duration::from_secs(120),
            traffic: vec![true, false],
        }
    }

    #[test]
    fn a_seed_always_gives_the_same_mix_and_seeds_differ() {
        let t = targets();
        assert_eq!(generate(7, &t), generate(7, &t));
        let distinct: std::collections::BTreeSet<String> =
            (0..50).map(|s| format!("{:?}", generate(s, &t))).collect();
        assert!(distinct.len() > 40, "{} distinct mixes", distinct.len());
    }

    #[test]
    fn the_mix_covers_every_kind_of_fault() {
        let t = targets();
        let text: String = (0..400)
            .map(|s| serde_json::to_string(&generate(s, &t).windows).unwrap_or_default())
            .collect();
        for needle in [
            "\"error\":\"rate_limit\"",
            "\"error\":\"timeout\"",
            "context_window_exceeded",
            "content_policy_violation",
            "\"retry_after\":\"0ms\"",
            "http-date",
            "\"retry_after_format\":\"ms\"",
            "stream_break",
            "stream_error_frame",
            "stream_truncated",
            "stream_stall",
            "stream_empty",
            "\"latency\"",
            "model_group",
        ] {
            assert!(text.contains(needle), "no {needle} in 400 seeds");
        }
        let over_a_minute = (0..400).any(|s| {
            generate(s, &t).windows.iter().any(|w| {
                w.get("retry_after")
                    .and_then(Value::as_str)
                    .and_then(|v| v.strip_suffix("ms"))
                    .and_then(|v| v.parse::<u64>().ok())
                    .is_some_and(|v| v > 60_000)
            })
        });
        assert!(over_a_minute);
        assert!((0..400).any(|s| !generate(s, &t).quotas.is_empty()));
        assert!((0..400).any(|s| generate(s, &t).windows.is_empty()));
        assert!((0..400).any(|s| !generate(s, &t).streamed.is_empty()));
    }
}
