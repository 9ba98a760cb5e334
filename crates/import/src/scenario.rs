//! The imported scenario's text: name, span, epoch, the router file, each deployment's fitted
//! provider model, the fault windows found (each with a comment saying what it rests on) and
//! the traffic; the assumptions the import made are comments at the top.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use routersim_engine::failure::FailureKind;

use crate::faults::FoundFault;
use crate::fit::{Latency, ProviderModel};
use crate::series::SeriesKind;
use crate::traffic::{seconds, yaml_string};

/// Where the traffic is.
#[derive(Clone, Debug, PartialEq)]
pub enum TrafficSection {
    /// None yet (the draft read for the report's windows).
    None,
    /// `traffic_file:` naming the file beside the scenario.
    File(String),
    /// Explicit entries (the `traffic:` section's text).
    Explicit(String),
}

/// What the scenario says.
#[derive(Clone, Debug)]
pub struct ScenarioSpec<'a> {
    /// `name`.
    pub name: &'a str,
    /// `description`.
    pub description: &'a str,
    /// The log's span, seconds.
    pub duration: f64,
    /// The log's first start, Unix seconds (the scenario's `epoch` and t = 0).
    pub t0: f64,
    /// `router_file`.
    pub router_file: &'a str,
    /// Each deployment's fitted model.
    pub providers: &'a BTreeMap<Arc<str>, ProviderModel>,
    /// The fault windows.
    pub faults: &'a [FoundFault],
    /// The traffic.
    pub traffic: &'a TrafficSection,
    /// The assumptions, one comment line each.
    pub notes: &'a [String],
}

/// Milliseconds to a tenth (`40.1ms`, `118ms`).
fn ms(seconds: f64) -> String {
    let tenths = (seconds * 10_000.0).round().max(1.0) as u64;
    if tenths.is_multiple_of(10) {
        format!("{}ms", tenths / 10)
    } else {
        format!("{}.{}ms", tenths / 10, tenths % 10)
    }
}

fn latency(l: Latency) -> String {
    match l {
        Latency::Fixed(s) => ms(s),
        Latency::LogNormal { p50, p99 } => format!("{{p50: {}, p99: {}}}", ms(p50), ms(p99)),
    }
}

/// Unix seconds as RFC 3339 UTC, to the millisecond.
pub fn rfc3339(unix: f64) -> String {
    let ms = (unix * 1000.0).round() as i64;
    let (secs, millis) = (ms.div_euclid(1000), ms.rem_euclid(1000));
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// Each window's probability as the scenario draws it: error windows of one deployment are
/// drawn in file order and the first that fires wins, so a window overlapping earlier ones
/// gets the share of the calls they leave.
pub fn drawn_probabilities(faults: &[FoundFault]) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::with_capacity(faults.len());
    for (j, f) in faults.iter().enumerate() {
        let taken: f64 = faults[..j]
            .iter()
            .zip(&out)
            .filter(|(e, _)| {
                e.deployment == f.deployment
                    && matches!(
                        (e.kind, f.kind),
                        (SeriesKind::Error(_), SeriesKind::Error(_))
                    )
                    && e.from < f.to.unwrap_or(f64::INFINITY)
                    && f.from < e.to.unwrap_or(f64::INFINITY)
            })
            .map(|(_, p)| *p)
            .sum();
        // Where the earlier windows take every call, this one never fires in the overlap, and
        // outside it its own rate holds.
        out.push(if taken < 1.0 {
            (f.probability / (1.0 - taken)).min(1.0)
        } else {
            f.probability
        });
    }
    out
}

fn provider_line(id: &str, model: &ProviderModel) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(l) = model.latency {
        parts.push(format!("latency: {}", latency(l)));
    }
    if let Some(l) = model.ttft {
        parts.push(format!("ttft: {}", latency(l)));
    }
    if let Some(i) = model.inter_token {
        parts.push(format!("inter_token: {}", ms(i)));
    }
    if let Some((lo, hi)) = model.output_tokens {
        parts.push(if lo == hi {
            format!("output_tokens: {lo}")
        } else {
            format!("output_tokens: {lo}..{hi}")
        });
    }
    (!parts.is_empty()).then(|| format!("  {}: {{{}}}\n", yaml_string(id), parts.join(", ")))
}

fn fault_lines(out: &mut String, f: &FoundFault, probability: f64, t0: f64) {
    let to =
        f.to.map_or("the end of the log".to_string(), |to| seconds(to - t0));
    let mut why = format!(
        "  # {}: {} of {} calls failed from {} to {to}",
        f.kind.name(),
        f.failures,
        f.calls,
        seconds(f.from - t0)
    );
    if f.background {
        why = format!(
            "  # {}: {} of {} calls failed across the log (its baseline)",
            f.kind.name(),
            f.failures,
            f.calls
        );
    }
    if f.unobserved > 0.0 {
        let _ = write!(
            why,
            "; {} without a call to it (cooling?): assumed still failing, to halfway from its last failure to the next success",
            seconds(f.unobserved)
        );
    }
    if let Some((lo, hi)) = f.retry_after_range.filter(|(lo, hi)| lo != hi) {
        let _ = write!(why, "; Retry-After from {} to {}", seconds(lo), seconds(hi));
    }
    let _ = writeln!(out, "{why}");
    let mut entry = format!("  - {{deployment: {}", yaml_string(&f.deployment));
    if !f.background {
        let _ = write!(entry, ", from: {}", seconds(f.from - t0));
        if let Some(to) = f.to {
            let _ = write!(
                entry,
                ", to: {}",
                seconds((to - t0).max(f.from - t0 + 0.001))
            );
        }
    }
    let p = (probability * 1000.0).round() / 1000.0;
    match f.kind {
        SeriesKind::Error(kind) => {
            let _ = write!(entry, ", error: {}, probability: {p}", kind.as_str());
            if let Some(ra) = f.retry_after {
                let _ = write!(entry, ", retry_after: {}", seconds(ra));
            }
            if let Some(l) = f.latency {
                let _ = write!(entry, ", latency: {}", ms(l));
            }
        }
        SeriesKind::Cut(kind) => {
            let _ = write!(
                entry,
                ", probability: {p}, stream_break: {{after_tokens: {}",
                f.after_tokens.unwrap_or(0)
            );
            if kind != FailureKind::ApiConnection {
                let _ = write!(entry, ", error: {}", kind.as_str());
            }
            entry.push('}');
        }
    }
    let _ = writeln!(out, "{entry}}}");
}

/// The scenario's YAML text.
pub fn render(spec: &ScenarioSpec) -> String {
    let mut out = String::from(
        "# Imported by `routersim import`: it replays the incident in the log with the router\n# config given (router.yaml); edit the router to ask what another config would have done.\n",
    );
    if !spec.notes.is_empty() {
        out.push_str("#\n# Where the import had to assume:\n");
        for note in spec.notes {
            let _ = writeln!(out, "#  - {}", note.replace('\n', " "));
        }
    }
    let _ = writeln!(out, "name: {}", yaml_string(spec.name));
    let _ = writeln!(out, "description: {}", yaml_string(spec.description));
    out.push_str("seed: 1\n");
    let _ = writeln!(out, "duration: {}", seconds(spec.duration.max(0.001)));
    let _ = writeln!(out, "epoch: {}", rfc3339(spec.t0));
    let _ = writeln!(out, "router_file: {}", yaml_string(spec.router_file));
    let lines: Vec<String> = spec
        .providers
        .iter()
        .filter_map(|(id, m)| provider_line(id, m))
        .collect();
    if !lines.is_empty() {
        out.push_str("providers:\n");
        lines.iter().for_each(|l| out.push_str(l));
    }
    if !spec.faults.is_empty() {
        out.push_str("faults:\n");
        let drawn = drawn_probabilities(spec.faults);
        for (f, p) in spec.faults.iter().zip(drawn) {
            fault_lines(&mut out, f, p, spec.t0);
        }
    }
    match spec.traffic {
        TrafficSection::None => {}
        TrafficSection::File(name) => {
            let _ = writeln!(out, "traffic_file: {}", yaml_string(name));
        }
        TrafficSection::Explicit(text) => out.push_str(text),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(from: f64, to: f64, probability: f64) -> FoundFault {
        FoundFault {
            deployment: Arc::from("east-2"),
            kind: SeriesKind::Error(FailureKind::ServiceUnavailable),
            from,
            to: Some(to),
            healthy_at: Some(to),
            probability,
            rate: probability,
            retry_after: None,
            retry_after_range: None,
            after_tokens: None,
            latency: Some(0.015),
            calls: 48,
            failures: 3,
            unobserved: 0.0,
            background: false,
        }
    }

    #[test]
    fn a_window_overlapping_a_certain_one_keeps_its_own_rate() {
        let faults = [window(7.7, 25.6, 1.0), window(24.3, 34.9, 0.0625)];
        assert_eq!(drawn_probabilities(&faults), vec![1.0, 0.0625]);
        let faults = [window(7.7, 25.6, 0.5), window(24.3, 34.9, 0.25)];
        assert_eq!(drawn_probabilities(&faults), vec![0.5, 0.5]);
    }

    #[test]
    fn an_error_window_answers_in_its_failures_own_time() {
        let mut out = String::new();
        fault_lines(&mut out, &window(7.7, 25.6, 1.0), 1.0, 0.0);
        assert!(
            out.ends_with(
                "  - {deployment: east-2, from: 7.7s, to: 25.6s, error: service_unavailable, probability: 1, latency: 15ms}\n"
            ),
            "{out}"
        );
    }

    #[test]
    fn epochs_and_milliseconds_are_written_as_the_loader_reads_them() {
        assert_eq!(rfc3339(1_796_195_201.739_807), "2026-12-02T07:06:41.740Z");
        assert_eq!(rfc3339(0.0), "1970-01-01T00:00:00.000Z");
        assert_eq!(ms(0.0401), "40.1ms");
        assert_eq!(ms(0.118), "118ms");
    }
}
