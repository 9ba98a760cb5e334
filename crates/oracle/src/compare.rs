//! Decision-by-decision comparison of one request: the first disagreement in each kind of
//! decision (attempts, waits, hops, cooldowns) is reported, then the end and the header
//! counts. Later steps of a kind are not reported after its first disagreement: they follow
//! from it.

use std::fmt;

use crate::decisions::{Decisions, End, JITTER};
use crate::replay::Ran;

/// Slack for float seconds read from JSON.
const EPSILON: f64 = 1e-6;

/// One disagreement between routersim and real LiteLLM.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// The scenario.
    pub scenario: String,
    /// The request's index in the trace.
    pub request: usize,
    /// Which decision (`attempt 3`, `wait 1`, `end`, ...).
    pub step: String,
    /// What LiteLLM 1.110.2 did.
    pub expected: String,
    /// What routersim did.
    pub got: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} request {} {}: expected {}, got {}",
            self.scenario, self.request, self.step, self.expected, self.got
        )
    }
}

fn show<T: fmt::Debug>(v: Option<&T>) -> String {
    v.map_or_else(|| "nothing".to_string(), |v| format!("{v:?}"))
}

/// The first position where two sequences disagree under `same`.
fn first_diff<T>(a: &[T], b: &[T], same: impl Fn(&T, &T) -> bool) -> Option<usize> {
    (0..a.len().max(b.len())).find(|&i| match (a.get(i), b.get(i)) {
        (Some(x), Some(y)) => !same(x, y),
        _ => true,
    })
}

/// Every disagreement of request `index`.
pub fn compare(scenario: &str, index: usize, want: &Decisions, ran: &Ran) -> Vec<Mismatch> {
    let got = &ran.decisions;
    let mut out = Vec::new();
    let mut push = |step: String, expected: String, got: String| {
        out.push(Mismatch {
            scenario: scenario.to_string(),
            request: index,
            step,
            expected,
            got,
        });
    };
    for (pick, want_id, candidates) in &ran.misses {
        push(
            format!("pick {pick}"),
            format!("{want_id} (LiteLLM's pick)"),
            format!("candidates {candidates:?}"),
        );
    }
    if let Some(i) = first_diff(&want.attempts, &got.attempts, |a, b| a == b) {
        let s = |d: &Decisions| {
            d.attempts
                .get(i)
                .map_or("nothing".into(), |a| a.to_string())
        };
        push(format!("attempt {}", i + 1), s(want), s(got));
    }
    let in_jitter =
        |base: &f64, wait: &f64| *wait >= base - EPSILON && *wait <= base + JITTER + EPSILON;
    if let Some(i) = first_diff(&want.waits, &got.waits, in_jitter) {
        push(
            format!("wait {} (non-zero waits)", i + 1),
            want.waits.get(i).map_or("no wait".into(), |b| {
                format!("base {b:.3}s (+ jitter < 0.75s)")
            }),
            got.waits
                .get(i)
                .map_or("no wait".into(), |w| format!("{w:.3}s")),
        );
    }
    if let Some(i) = first_diff(&want.hops, &got.hops, |a, b| a == b) {
        push(
            format!("fallback hop {}", i + 1),
            show(want.hops.get(i)),
            show(got.hops.get(i)),
        );
    }
    let same_cooldown =
        |a: &(String, f64), b: &(String, f64)| a.0 == b.0 && (a.1 - b.1).abs() < EPSILON;
    if let Some(i) = first_diff(&want.cooldowns, &got.cooldowns, same_cooldown) {
        push(
            format!("cooldown_set {}", i + 1),
            show(want.cooldowns.get(i)),
            show(got.cooldowns.get(i)),
        );
    }
    if want.end != got.end {
        let s = |e: &Option<End>| match e {
            Some(End::Ok(id)) => format!("ok on {id}"),
            Some(End::Failed(kind)) => format!("failed: {kind}"),
            None => "no end".into(),
        };
        push("end".into(), s(&want.end), s(&got.end));
    }
    for (name, w, g) in [
        (
            "x-litellm-attempted-retries",
            want.attempted_retries,
            got.attempted_retries,
        ),
        (
            "x-litellm-attempted-fallbacks",
            want.attempted_fallbacks,
            got.attempted_fallbacks,
        ),
    ] {
        if let Some(w) = w
            && Some(w) != g
        {
            push(name.into(), w.to_string(), show(g.as_ref()));
        }
    }
    out
}
