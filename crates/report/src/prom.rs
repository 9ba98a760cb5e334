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
pub(crate) fn label_value(text: &str) -> String {
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
pub(crate) fn number(value: f64) -> String {
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
    let cooldowns = &summary.cooldowns.by_deployment;
    let values = PromValues {
        requests: summary.requests,
        ok: summary.ok,
        failed: summary.failed,
        retries: summary.retries,
        fallbacks: summary.fallbacks,
        attempts: summary.attempts,
        cooldowns: summary.cooldowns.total,
        cooldown_periods: Some(summary.cooldowns.periods),
        failed_by_kind: summary
            .failed_by_kind
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect(),
        deployment_cooldowns: cooldowns
            .iter()
            .map(|(d, s)| (d.as_str(), s.count))
            .collect(),
        deployment_cooldown_periods: Some(
            cooldowns
                .iter()
                .map(|(d, s)| (d.as_str(), s.periods))
                .collect(),
        ),
        latency: LatencyBuckets::of_hdr(latency_us, latency_sum_us),
        clock: "virtual",
        requests_only: false,
    };
    write_values(&values, &base, out)
}

/// What one exposition holds: a finished run's summary ([`write_prom`]) or a live process's
/// counters so far ([`LiveMetrics`](crate::live_metrics::LiveMetrics)), written by the one
/// writer [`write_values`] so both carry the same names.
#[derive(Clone, Debug, Default)]
pub struct PromValues<'a> {
    /// `routersim_requests_total`.
    pub requests: u64,
    /// `routersim_ok_total`.
    pub ok: u64,
    /// `routersim_failed_total`.
    pub failed: u64,
    /// `routersim_retries_total`.
    pub retries: u64,
    /// `routersim_fallbacks_total`.
    pub fallbacks: u64,
    /// `routersim_attempts_total`.
    pub attempts: u64,
    /// `routersim_cooldowns_total`.
    pub cooldowns: u64,
    /// `routersim_cooldown_periods_total`, when known (a live process does not close periods).
    pub cooldown_periods: Option<u64>,
    /// `routersim_failed_by_kind_total{kind}`.
    pub failed_by_kind: Vec<(&'a str, u64)>,
    /// `routersim_deployment_cooldowns_total{deployment}`.
    pub deployment_cooldowns: Vec<(&'a str, u64)>,
    /// `routersim_deployment_cooldown_periods_total{deployment}`, when known.
    pub deployment_cooldown_periods: Option<Vec<(&'a str, u64)>>,
    /// `routersim_request_latency_seconds`.
    pub latency: LatencyBuckets,
    /// Whose seconds the latency counts (`virtual` or `wall-clock`), for its HELP line.
    pub clock: &'static str,
    /// Only the requests' families are known (a client such as `routersim drive` sees its
    /// requests end, not the provider calls behind them): retries, fallbacks, attempts and
    /// cooldowns are left out rather than written as 0.
    pub requests_only: bool,
}

/// The latency histogram as the format holds it: a count per [`LATENCY_BUCKETS_S`] bound
/// (cumulative), the total count and the sum.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LatencyBuckets {
    /// Requests at or below each bound of [`LATENCY_BUCKETS_S`].
    pub le: [u64; LATENCY_BUCKETS_S.len()],
    /// Every request (the `+Inf` bucket).
    pub count: u64,
    /// The latencies' sum, µs.
    pub sum_us: u128,
}

impl LatencyBuckets {
    /// The buckets of an HdrHistogram of µs.
    pub fn of_hdr(hist: &Histogram<u64>, sum_us: u128) -> Self {
        // Each recorded value counts at the low end of its HdrHistogram bucket, so a latency
        // of exactly a bound stays in that bound's bucket.
        let recorded: Vec<(u64, u64)> = hist
            .iter_recorded()
            .map(|v| {
                (
                    hist.lowest_equivalent(v.value_iterated_to()),
                    v.count_at_value(),
                )
            })
            .collect();
        let mut le = [0; LATENCY_BUCKETS_S.len()];
        for (slot, bound) in le.iter_mut().zip(LATENCY_BUCKETS_S) {
            let bound_us = bound_us(bound);
            *slot = recorded
                .iter()
                .filter(|(value, _)| *value <= bound_us)
                .map(|(_, count)| count)
                .sum();
        }
        Self {
            le,
            count: hist.len(),
            sum_us,
        }
    }

    /// Adds one latency of `us` microseconds.
    pub fn record(&mut self, us: u64) {
        for (slot, bound) in self.le.iter_mut().zip(LATENCY_BUCKETS_S) {
            if us <= bound_us(bound) {
                *slot += 1;
            }
        }
        self.count += 1;
        self.sum_us += u128::from(us);
    }
}

fn bound_us(bound_s: f64) -> u64 {
    (bound_s * 1_000_000.0).round() as u64
}

/// A series name with its labels (`base` may be empty).
pub(crate) fn series(name: &str, base: &str, extra: &str) -> String {
    let labels = match (base.is_empty(), extra.is_empty()) {
        (true, true) => return name.to_string(),
        (false, true) => base.to_string(),
        (true, false) => extra.to_string(),
        (false, false) => format!("{base},{extra}"),
    };
    format!("{name}{{{labels}}}")
}

/// The one writer of routersim's Prometheus text; `base` is the labels every series carries
/// (`scenario="…",seed="…"`, or empty).
pub fn write_values(values: &PromValues<'_>, base: &str, out: &mut impl Write) -> io::Result<()> {
    let mut counters: Vec<(&str, &str, u64)> = vec![
        (
            "routersim_requests_total",
            "Requests the run sent.",
            values.requests,
        ),
        ("routersim_ok_total", "Requests that succeeded.", values.ok),
        (
            "routersim_failed_total",
            "Requests that failed.",
            values.failed,
        ),
        (
            "routersim_retries_total",
            "Retries (attempts after the first on the same model group).",
            values.retries,
        ),
        (
            "routersim_fallbacks_total",
            "Requests that fell back to another model group.",
            values.fallbacks,
        ),
        (
            "routersim_attempts_total",
            "Provider calls, over every request.",
            values.attempts,
        ),
        (
            "routersim_cooldowns_total",
            "Cooldowns set (summary.json cooldowns.total: a re-set that extends a live cooldown counts again).",
            values.cooldowns,
        ),
    ];
    if values.requests_only {
        counters.retain(|(name, _, _)| {
            matches!(
                *name,
                "routersim_requests_total" | "routersim_ok_total" | "routersim_failed_total"
            )
        });
    }
    if let Some(periods) = values.cooldown_periods.filter(|_| !values.requests_only) {
        counters.push((
            "routersim_cooldown_periods_total",
            "Cooling periods (summary.json cooldowns.periods: intervals a deployment spent cooled).",
            periods,
        ));
    }
    for (name, help, value) in counters {
        writeln!(out, "# HELP {name} {help}")?;
        writeln!(out, "# TYPE {name} counter")?;
        writeln!(out, "{} {value}", series(name, base, ""))?;
    }
    labelled_counter(
        out,
        (
            "routersim_failed_by_kind_total",
            "Failed requests by failure kind.",
        ),
        base,
        "kind",
        &values.failed_by_kind,
    )?;
    if !values.requests_only {
        labelled_counter(
            out,
            (
                "routersim_deployment_cooldowns_total",
                "Cooldowns set per deployment.",
            ),
            base,
            "deployment",
            &values.deployment_cooldowns,
        )?;
    }
    if let Some(periods) = values
        .deployment_cooldown_periods
        .as_ref()
        .filter(|_| !values.requests_only)
    {
        labelled_counter(
            out,
            (
                "routersim_deployment_cooldown_periods_total",
                "Cooling periods per deployment.",
            ),
            base,
            "deployment",
            periods,
        )?;
    }
    write_latency(&values.latency, values.clock, base, out)
}

/// One counter family with one more label: its HELP and TYPE lines, then a sample per value.
fn labelled_counter(
    out: &mut impl Write,
    (name, help): (&str, &str),
    base: &str,
    label: &str,
    values: &[(&str, u64)],
) -> io::Result<()> {
    writeln!(out, "# HELP {name} {help}")?;
    writeln!(out, "# TYPE {name} counter")?;
    for (key, value) in values {
        let extra = format!("{label}=\"{}\"", label_value(key));
        writeln!(out, "{} {value}", series(name, base, &extra))?;
    }
    Ok(())
}

fn write_latency(
    latency: &LatencyBuckets,
    clock: &str,
    base: &str,
    out: &mut impl Write,
) -> io::Result<()> {
    let name = "routersim_request_latency_seconds";
    let help = format!("End-to-end request latency, {clock} seconds.");
    writeln!(out, "# HELP {name} {help}")?;
    writeln!(out, "# TYPE {name} histogram")?;
    write_histogram_samples(name, latency, base, out)
}

/// One histogram's samples (buckets, `+Inf`, `_sum`, `_count`) for the series labelled
/// `labels` (may be empty); its HELP and TYPE lines are the caller's.
pub(crate) fn write_histogram_samples(
    name: &str,
    latency: &LatencyBuckets,
    labels: &str,
    out: &mut impl Write,
) -> io::Result<()> {
    let bucket = format!("{name}_bucket");
    for (bound, count) in LATENCY_BUCKETS_S.iter().zip(latency.le) {
        let le = format!("le=\"{}\"", number(*bound));
        writeln!(out, "{} {count}", series(&bucket, labels, &le))?;
    }
    let total = latency.count;
    writeln!(out, "{} {total}", series(&bucket, labels, "le=\"+Inf\""))?;
    writeln!(
        out,
        "{} {}",
        series(&format!("{name}_sum"), labels, ""),
        number(latency.sum_us as f64 / 1_000_000.0)
    )?;
    writeln!(
        out,
        "{} {total}",
        series(&format!("{name}_count"), labels, "")
    )
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
