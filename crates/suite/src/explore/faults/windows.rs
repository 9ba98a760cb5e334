//! One seed-chosen fault window: a target (a deployment or a model group), a time window, a
//! probability and an effect of every kind a `faults` entry can have (mock-providers'
//! `spec/fault.rs`): an error of any failure kind a provider can send, or
//! `connection_lost_after_send`; a slowdown; one of the six stream faults; an
//! `invalid_response` defect.

use std::time::Duration;

use rand::{Rng, RngExt};
use rand_chacha::ChaCha8Rng;
use routersim_engine::event::ValidationReason;
use routersim_engine::failure::FailureKind;
use serde_json::{Map, Value, json};

use super::target::Targets;

pub(super) fn ms(d: Duration) -> Value {
    Value::String(format!("{}ms", d.as_millis()))
}

pub(super) fn pick<'a, R: Rng + ?Sized>(rng: &mut R, items: &'a [&'a str]) -> &'a str {
    items[rng.random_range(0..items.len())]
}

fn millis<R: Rng + ?Sized>(rng: &mut R, lo: u64, hi: u64) -> Duration {
    Duration::from_millis(rng.random_range(lo..=hi))
}

/// One fault window: a target, a time window, a probability and an effect.
pub(super) fn window(rng: &mut ChaCha8Rng, targets: &Targets) -> Value {
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
    match rng.random_range(0..20u32) {
        0..=8 => error_effect(rng, &mut entry),
        9 => lost_after_send(rng, &mut entry),
        10 | 11 => {
            entry.insert("latency".into(), latency(rng));
        }
        12 => {
            let reason = ValidationReason::ALL[rng.random_range(0..ValidationReason::ALL.len())];
            entry.insert("invalid_response".into(), json!(reason.as_str()));
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

/// Every failure kind a provider can send (`router_rate_limit` is the router's own), the
/// common ones weighted up.
fn error_kind(rng: &mut ChaCha8Rng) -> FailureKind {
    const COMMON: [FailureKind; 4] = [
        FailureKind::RateLimit,
        FailureKind::RateLimit,
        FailureKind::ServiceUnavailable,
        FailureKind::InternalServer,
    ];
    if rng.random_bool(0.4) {
        return COMMON[rng.random_range(0..COMMON.len())];
    }
    let sendable: Vec<FailureKind> = FailureKind::ALL
        .into_iter()
        .filter(|k| *k != FailureKind::RouterRateLimit)
        .collect();
    sendable[rng.random_range(0..sendable.len())]
}

/// An explicit status for an error: one of its kind's family, or any other error status
/// (a status a provider maps oddly), one error in eight.
fn status(rng: &mut ChaCha8Rng, fault: &mut Map<String, Value>) {
    if rng.random_bool(0.125) {
        const STATUSES: [u16; 10] = [400, 401, 403, 404, 408, 409, 422, 429, 500, 529];
        let status = if rng.random_bool(0.8) {
            STATUSES[rng.random_range(0..STATUSES.len())]
        } else {
            rng.random_range(400..=599u16)
        };
        fault.insert("status".into(), json!(status));
    }
}

fn error_effect(rng: &mut ChaCha8Rng, entry: &mut Map<String, Value>) {
    let kind = error_kind(rng);
    entry.insert("error".into(), json!(kind.as_str()));
    status(rng, entry);
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

/// `error: connection_lost_after_send`: the connection drops after the request was sent, and
/// the provider executed it with some chance (ambiguous execution).
fn lost_after_send(rng: &mut ChaCha8Rng, entry: &mut Map<String, Value>) {
    entry.insert("error".into(), json!("connection_lost_after_send"));
    if rng.random_bool(0.5) {
        let executed = f64::from(rng.random_range(0..=100u32)) / 100.0;
        entry.insert("executed".into(), json!(executed));
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

/// Where a stream fault cuts: after a number of content tokens (most often) or a time.
pub(super) fn cut(rng: &mut ChaCha8Rng, fault: &mut Map<String, Value>) {
    if rng.random_bool(0.7) {
        fault.insert("after_tokens".into(), json!(rng.random_range(0..=60u32)));
    } else {
        fault.insert("after".into(), ms(millis(rng, 0, 5_000)));
    }
}

/// The error a `stream_break` or `stream_error_frame` carries: any kind a provider can send.
pub(super) fn stream_error(rng: &mut ChaCha8Rng, fault: &mut Map<String, Value>) {
    fault.insert("error".into(), json!(error_kind(rng).as_str()));
    status(rng, fault);
}

/// `role_only` or `true`, for `stream_empty` and `stream_no_finish`.
fn empty_kind(rng: &mut ChaCha8Rng) -> Value {
    if rng.random_bool(0.5) {
        json!("role_only")
    } else {
        json!(true)
    }
}

fn stream_effect(rng: &mut ChaCha8Rng, entry: &mut Map<String, Value>) {
    let mut fault = Map::new();
    let key = match rng.random_range(0..6u32) {
        0 => {
            cut(rng, &mut fault);
            if rng.random_bool(0.5) {
                stream_error(rng, &mut fault);
            }
            "stream_break"
        }
        1 => {
            cut(rng, &mut fault);
            stream_error(rng, &mut fault);
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
        4 => {
            entry.insert("stream_empty".into(), empty_kind(rng));
            return;
        }
        _ => {
            entry.insert("stream_no_finish".into(), empty_kind(rng));
            return;
        }
    };
    entry.insert(key.into(), Value::Object(fault));
}
