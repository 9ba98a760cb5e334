//! HdrHistogram's quantiles of one second's samples, without scanning a histogram.
//!
//! Why: `deployments.csv` and `timeseries.csv` print percentiles for every second of a run.
//! `Histogram::value_at_quantile` walks the whole counts array (tens of thousands of buckets
//! for second-long latencies) and `reset` clears it: at 9 quantiles and 4 resets a second, that
//! was 40 % of the one-hour bench run. A second holds few samples, so they are kept as they come
//! and sorted when the second closes; the answer is the same value `value_at_quantile` gives
//! (the highest value equivalent to the sample at rank `max(1, ceil(q × n))`), so every column
//! keeps its bytes. Memory is the busiest second's sample count, reused.

use hdrhistogram::Histogram;

/// The samples of the current second.
#[derive(Debug, Default)]
pub(super) struct SecondSamples {
    values: Vec<u64>,
}

impl SecondSamples {
    /// Adds one sample.
    pub(super) fn push(&mut self, value: u64) {
        self.values.push(value);
    }

    /// Whether the second has no sample.
    pub(super) fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Sorts the samples and returns each quantile as `value_at_quantile` on a histogram
    /// shaped like `shape` would, capped at the largest sample (as the summary caps).
    pub(super) fn quantiles<const N: usize>(
        &mut self,
        shape: &Histogram<u64>,
        quantiles: [f64; N],
    ) -> [u64; N] {
        self.values.sort_unstable();
        let max = self.values.last().copied().unwrap_or(0);
        let n = self.values.len();
        quantiles.map(|q| {
            let rank = ((q.min(1.0) * n as f64).ceil() as usize).clamp(1, n.max(1));
            let value = self.values.get(rank - 1).copied().unwrap_or(0);
            let value = if q == 0.0 {
                shape.lowest_equivalent(value)
            } else {
                shape.highest_equivalent(value)
            };
            value.min(max)
        })
    }

    /// Forgets the samples (keeping the allocation).
    pub(super) fn clear(&mut self) {
        self.values.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::histogram::{new_histogram, record_us};

    /// The same answers as `value_at_quantile` on a histogram of the same samples.
    #[test]
    fn quantiles_agree_with_the_histogram() -> Result<(), Box<dyn std::error::Error>> {
        let shape = new_histogram()?;
        let cases: [&[u64]; 5] = [
            &[300_000],
            &[1, 2, 3],
            &[5_000_000, 120, 300_031, 300_000, 77_777, 1_999_999, 42],
            &[1_000; 17],
            &[u64::from(u32::MAX), 9, 1 << 40, 123_456_789],
        ];
        for samples in cases {
            let mut hist = new_histogram()?;
            let mut second = SecondSamples::default();
            for &s in samples {
                record_us(&mut hist, s, 1);
                second.push(s);
            }
            let max = samples.iter().copied().max().unwrap_or(0);
            let qs = [0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0];
            let expected = qs.map(|q| hist.value_at_quantile(q).min(max));
            assert_eq!(second.quantiles(&shape, qs), expected, "{samples:?}");
        }
        Ok(())
    }
}
