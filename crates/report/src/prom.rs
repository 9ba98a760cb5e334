//! `metrics.prom`: the run's counters and latency histogram in the Prometheus text exposition
//! format (version 0.0.4), so a CI job can push a run to a Pushgateway
//! (`curl --data-binary @metrics.prom $PUSHGATEWAY/metrics/job/routersim`) or a file-based
//! collector (node_exporter's textfile collector) can hand it to Grafana.
//!
//! Why the classic format rather than OpenMetrics: the Pushgateway and the textfile collector
//! parse 0.0.4, and 0.0.4 counters are named with their `_total` suffix in `# TYPE`, which an
//! OpenMetrics parser reads differently; one format that every consumer reads beats two.
//!
//! Every series carries `scenario` and `seed` labels. Values derive from the summary and the
//! run's latency HdrHistogram only, and the lines come out in a fixed order (maps are
//! ordered), so the file is byte-identical for the same run. Latency is in virtual seconds,
//! Prometheus's base unit; the histogram's buckets have fixed bounds (so runs aggregate in a
//! dashboard), their counts come from the run's histogram (to its 3 significant digits), and
//! the `+Inf` bucket equals `_count`, the number of requests.

use std::io::{self, Write};

use hdrhistogram::Histogram;

use crate::summary::Summary;

/// The file written beside `summary.json`.
pub const METRICS_PROM: &str = "metrics.prom";

/// The latency histogram's upper bounds, in seconds (`+Inf` follows).
pub const LATENCY_BUCKETS_S: [f64; 16] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0,
];

/// Escapes a label value (backslash, double quote and line feed, as the format requires).
fn label_value(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A float as the format reads it, without float noise for whole numbers.
fn number(value: f64) -> String {
    if value.is_nan() {
        "NaN".into()
    } else if value.is_infinite() {
        if value > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        format!("{value}")
    }
}

/// Writes the run as Prometheus text: `latency_us` is the run's end-to-end latency histogram
/// (µs), `latency_sum_us` the exact sum of the latencies it holds.
pub fn write_prom(
    summary: &Summary,
    latency_us: &Histogram<u64>,
    latency_sum_us: u128,
    out: &mut impl Write,
) -> io::Result<()> {
    let base = format!(
        "scenario=\"{}\",seed=\"{}\"",
        label_value(&summary.scenario),
        summary.seed
    );
    let counters: [(&str, &str, u64); 8] = [
        (
            "routersim_requests_total",
            "Requests the run sent.",
            summary.requests,
        ),
        ("routersim_ok_total", "Requests that succeeded.", summary.ok),
        (
            "routersim_failed_total",
            "Requests that failed.",
            summary.failed,
        ),
        (
            "routersim_retries_total",
            "Retries (attempts after the first on the same model group).",
            summary.retries,
        ),
        (
            "routersim_fallbacks_total",
            "Requests that fell back to another model group.",
            summary.fallbacks,
        ),
        (
            "routersim_attempts_total",
            "Provider calls, over every request.",
            summary.attempts,
        ),
        (
            "routersim_cooldowns_total",
            "Cooldowns set (summary.json cooldowns.total: a re-set that extends a live cooldown counts again).",
            summary.cooldowns.total,
        ),
        (
            "routersim_cooldown_periods_total",
            "Cooling periods (summary.json cooldowns.periods: intervals a deployment spent cooled).",
            summary.cooldowns.periods,
        ),
    ];
    for (name, help, value) in counters {
        writeln!(out, "# HELP {name} {help}")?;
        writeln!(out, "# TYPE {name} counter")?;
        writeln!(out, "{name}{{{base}}} {value}")?;
    }
    labelled_counter(
        out,
        (
            "routersim_failed_by_kind_total",
            "Failed requests by failure kind.",
        ),
        &base,
        "kind",
        summary.failed_by_kind.iter().map(|(k, v)| (k.as_str(), *v)),
    )?;
    let cooldowns = &summary.cooldowns.by_deployment;
    labelled_counter(
        out,
        (
            "routersim_deployment_cooldowns_total",
            "Cooldowns set per deployment.",
        ),
        &base,
        "deployment",
        cooldowns.iter().map(|(d, s)| (d.as_str(), s.count)),
    )?;
    labelled_counter(
        out,
        (
            "routersim_deployment_cooldown_periods_total",
            "Cooling periods per deployment.",
        ),
        &base,
        "deployment",
        cooldowns.iter().map(|(d, s)| (d.as_str(), s.periods)),
    )?;
    write_latency(latency_us, latency_sum_us, &base, out)
}

/// One counter family with one more label: its HELP and TYPE lines, then a sample per value.
fn labelled_counter<'a>(
    out: &mut impl Write,
    (name, help): (&str, &str),
    base: &str,
    label: &str,
    values: impl Iterator<Item = (&'a str, u64)>,
) -> io::Result<()> {
    writeln!(out, "# HELP {name} {help}")?;
    writeln!(out, "# TYPE {name} counter")?;
    for (key, value) in values {
        writeln!(
            out,
            "{name}{{{base},{label}=\"{}\"}} {value}",
            label_value(key)
        )?;
    }
    Ok(())
}

fn write_latency(
    hist: &Histogram<u64>,
    sum_us: u128,
    base: &str,
    out: &mut impl Write,
) -> io::Result<()> {
    let name = "routersim_request_latency_seconds";
    writeln!(
        out,
        "# HELP {name} End-to-end request latency, virtual seconds."
    )?;
    writeln!(out, "# TYPE {name} histogram")?;
    // Each recorded value counts at the low end of its HdrHistogram bucket, so a latency of
    // exactly a bound stays in that bound's bucket.
    let recorded: Vec<(u64, u64)> = hist
        .iter_recorded()
        .map(|v| {
            (
                hist.lowest_equivalent(v.value_iterated_to()),
                v.count_at_value(),
            )
        })
        .collect();
    for bound in LATENCY_BUCKETS_S {
        let bound_us = (bound * 1_000_000.0).round() as u64;
        let count: u64 = recorded
            .iter()
            .filter(|(value, _)| *value <= bound_us)
            .map(|(_, count)| count)
            .sum();
        writeln!(
            out,
            "{name}_bucket{{{base},le=\"{}\"}} {count}",
            number(bound)
        )?;
    }
    let total = hist.len();
    writeln!(out, "{name}_bucket{{{base},le=\"+Inf\"}} {total}")?;
    writeln!(
        out,
        "{name}_sum{{{base}}} {}",
        number(sum_us as f64 / 1_000_000.0)
    )?;
    writeln!(out, "{name}_count{{{base}}} {total}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }

    #[test]
    fn numbers_print_without_float_noise() {
        assert_eq!(number(1.0), "1");
        assert_eq!(number(0.005), "0.005");
        assert_eq!(number(f64::INFINITY), "+Inf");
    }
}
