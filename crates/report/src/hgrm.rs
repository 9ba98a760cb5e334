//! HdrHistogram's `.hgrm` percentile-distribution text, which the Rust crate cannot print.
//!
//! The layout is Java HdrHistogram's `outputPercentileDistribution`, so existing tools
//! (the HdrHistogram plotter, `hdr-plot`) read it: a header, one row per quantile step from
//! `iter_quantiles(5)` as `"%12.3f %2.12f %10d %14.2f"` (value, quantile, cumulative count,
//! 1/(1−q)), the final row (q = 1) without the last column, and three footer lines.
//! Values are printed in milliseconds with three decimals; the caller says how many recorded
//! units make a millisecond, so the same writer serves latency, TTFT and inter-token gaps (all
//! recorded in µs). An empty histogram prints the header and the footer with zero counts.

use std::io::{self, Write};

use hdrhistogram::Histogram;

/// Quantile steps per half distance to 100 %, as in Java's default output.
const TICKS_PER_HALF_DISTANCE: u32 = 5;

/// Writes `hist` as a `.hgrm` percentile distribution, values divided by `unit_per_ms`
/// (1000.0 for a histogram recorded in microseconds).
pub fn write_hgrm(hist: &Histogram<u64>, unit_per_ms: f64, out: &mut impl Write) -> io::Result<()> {
    // A zero or negative scale would print inf/NaN; treat it as "already in ms".
    let scale = if unit_per_ms.is_finite() && unit_per_ms > 0.0 {
        unit_per_ms
    } else {
        1.0
    };
    writeln!(
        out,
        "{:>12} {:>14} {:>10} {:>14}\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    )?;
    let mut total: u64 = 0;
    for step in hist.iter_quantiles(TICKS_PER_HALF_DISTANCE) {
        total = total.saturating_add(step.count_since_last_iteration());
        let value = step.value_iterated_to() as f64 / scale;
        let q = step.quantile_iterated_to();
        if q < 1.0 {
            writeln!(
                out,
                "{value:12.3} {q:2.12} {total:10} {:14.2}",
                1.0 / (1.0 - q)
            )?;
        } else {
            writeln!(out, "{value:12.3} {q:2.12} {total:10}")?;
        }
    }
    writeln!(
        out,
        "#[Mean    = {:12.3}, StdDeviation   = {:12.3}]",
        hist.mean() / scale,
        hist.stdev() / scale
    )?;
    let max = if hist.is_empty() { 0 } else { hist.max() };
    writeln!(
        out,
        "#[Max     = {:12.3}, Total count    = {:12}]",
        max as f64 / scale,
        hist.len()
    )?;
    writeln!(
        out,
        "#[Buckets = {:12}, SubBuckets     = {:12}]",
        hist.buckets(),
        sub_bucket_count(hist.sigfig())
    )
}

/// The sub-bucket count HdrHistogram derives from the significant digits: the power of two
/// that gives unit resolution up to 2·10^sigfig (2048 for 3 digits).
fn sub_bucket_count(sigfig: u8) -> u64 {
    let largest = 2 * 10_u64.pow(u32::from(sigfig.min(5)));
    largest.next_power_of_two()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_buckets_match_hdrhistogram() {
        assert_eq!(sub_bucket_count(3), 2048);
        assert_eq!(sub_bucket_count(2), 256);
        assert_eq!(sub_bucket_count(0), 2);
    }

    #[test]
    fn empty_histogram_prints_header_and_footer() -> Result<(), Box<dyn std::error::Error>> {
        let hist = Histogram::<u64>::new(3)?;
        let mut out = Vec::new();
        write_hgrm(&hist, 1000.0, &mut out)?;
        let text = String::from_utf8(out)?;
        assert_eq!(
            text,
            "       Value     Percentile TotalCount 1/(1-Percentile)\n\n\
             #[Mean    =        0.000, StdDeviation   =        0.000]\n\
             #[Max     =        0.000, Total count    =            0]\n\
             #[Buckets =            1, SubBuckets     =         2048]\n"
        );
        Ok(())
    }
}
