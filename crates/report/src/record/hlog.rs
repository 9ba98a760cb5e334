//! The V2 bytes of one `latency.hlog` interval histogram, from the interval's samples.
//!
//! Why: `V2Serializer` walks every bucket up to the interval's maximum (thousands of mostly
//! empty buckets for second-long latencies) to emit counts and zero runs. An interval holds a
//! few hundred samples: sorted, each maps to its bucket index with the histogram's own
//! arithmetic, so equal indices give the non-zero counts in order and the gaps between them
//! the zero runs. The bytes are `V2Serializer`'s exactly (the tests compare them); a histogram
//! this does not cover (lowest discernible value other than 1, samples that disagree with the
//! histogram) goes through `V2Serializer` instead.

use std::io;

use hdrhistogram::serialization::{Serializer, V2Serializer};
use hdrhistogram::{Counter, Histogram};

/// `V2_COOKIE` of the `hdrhistogram` crate (`0x1c849303 | 0x10`), not exported there.
const V2_COOKIE: u32 = 0x1c84_9303 | 0x10;

/// Appends to `out` what `V2Serializer` writes for `h`, given `sorted`: exactly the values
/// recorded in `h` (with `record_n`) since it was created or reset, in ascending order.
pub(super) fn encode_v2<T: Counter>(
    h: &Histogram<T>,
    sorted: &[u64],
    v2: &mut V2Serializer,
    out: &mut Vec<u8>,
) -> io::Result<()> {
    if let Some(indexer) = Indexer::for_samples(h, sorted) {
        write_v2(h, &indexer, sorted, out);
        return Ok(());
    }
    v2.serialize(h, out)
        .map(drop)
        .map_err(|e| io::Error::other(e.to_string()))
}

/// `hdrhistogram`'s private `index_for` for a histogram whose lowest discernible value is 1
/// (unit magnitude 0).
#[derive(Debug, Clone, Copy)]
struct Indexer {
    /// `sub_bucket_count_magnitude`: a bucket has `2^m` sub-buckets.
    m: u32,
}

impl Indexer {
    /// The arithmetic of `h`, if `sorted` is what it holds and every sample has a bucket.
    fn for_samples<T: Counter>(h: &Histogram<T>, sorted: &[u64]) -> Option<Self> {
        let &max = sorted.last()?;
        if h.low() != 1 || h.sigfig() > 5 || h.len() != sorted.len() as u64 {
            return None;
        }
        // The smallest power of two reaching 2·10^sigfig (the crate's `log2().ceil()`).
        let largest = 2 * 10_u64.pow(u32::from(h.sigfig()));
        let indexer = Self {
            m: 64 - (largest - 1).leading_zeros(),
        };
        // A clamped (saturating) record would show as a different maximum.
        let fits = indexer.index(max) < h.distinct_values();
        (fits && h.highest_equivalent(max) == h.max()).then_some(indexer)
    }

    /// The counts-array index of `value`.
    fn index(self, value: u64) -> usize {
        let mask = (1_u64 << self.m) - 1;
        let bucket = (64 - self.m) - (value | mask).leading_zeros();
        let sub = value >> bucket;
        let half = 1_u64 << (self.m - 1);
        ((u64::from(bucket) + 1) * half + sub - half) as usize
    }
}

/// The header and counts, as `V2Serializer::serialize` lays them out.
fn write_v2<T: Counter>(h: &Histogram<T>, indexer: &Indexer, sorted: &[u64], out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&V2_COOKIE.to_be_bytes());
    out.extend_from_slice(&[0; 4]); // counts length, set below
    out.extend_from_slice(&0_u32.to_be_bytes()); // normalizing index offset
    out.extend_from_slice(&u32::from(h.sigfig()).to_be_bytes());
    out.extend_from_slice(&h.low().to_be_bytes());
    out.extend_from_slice(&h.high().to_be_bytes());
    out.extend_from_slice(&1.0_f64.to_be_bytes()); // int to double conversion
    let counts_start = out.len();
    let mut next = 0; // the first index not yet written
    let mut rest = sorted;
    while let Some(&first) = rest.first() {
        let index = indexer.index(first);
        // Values of one bucket are contiguous: count up to the first above its highest value.
        let top = h.highest_equivalent(first);
        let count = rest.iter().position(|&v| v > top).unwrap_or(rest.len());
        rest = &rest[count..];
        match index - next {
            0 => {}
            // A single empty bucket is written as a count of 0, a longer run as -length.
            1 => varint(0, out),
            zeros => varint(zig_zag(-(zeros as i64)), out),
        }
        varint(zig_zag(count as i64), out);
        next = index + 1;
    }
    let counts_len = (out.len() - counts_start) as u32;
    out[start + 4..start + 8].copy_from_slice(&counts_len.to_be_bytes());
}

/// Signed to unsigned: 0, -1, 1, -2 → 0, 1, 2, 3.
fn zig_zag(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

/// LEB128-64b9B: 7 bits a byte for the first 8 bytes, the 9th byte holds the top 8 bits whole.
fn varint(mut v: u64, out: &mut Vec<u8>) {
    for _ in 0..8 {
        if v < 0x80 {
            out.push(v as u8);
            return;
        }
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    /// Records `values` as `record_us` does and checks both encoders give the same bytes;
    /// returns whether the samples path (not the fallback) wrote them.
    fn check(mut h: Histogram<u64>, values: &[u64]) -> bool {
        for &v in values {
            if h.record_n(v, 1).is_err() {
                h.saturating_record_n(v, 1);
            }
        }
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        let mut expected = Vec::new();
        V2Serializer::new().serialize(&h, &mut expected).unwrap();
        let mut got = vec![7]; // appends after what is already there
        encode_v2(&h, &sorted, &mut V2Serializer::new(), &mut got).unwrap();
        assert_eq!(
            got[1..],
            expected[..],
            "{} values, max {:?}",
            values.len(),
            sorted.last()
        );
        Indexer::for_samples(&h, &sorted).is_some()
    }

    /// The fast path applies to the report's histograms (so the tests exercise it).
    #[test]
    fn fast_path_taken_for_report_histograms() {
        let mut h = Histogram::<u64>::new(3).unwrap();
        h.record(12_345).unwrap();
        assert!(Indexer::for_samples(&h, &[12_345]).is_some());
        assert!(Indexer::for_samples(&h, &[12_346, 12_347]).is_none());
        let mut low = Histogram::<u64>::new_with_bounds(1000, 1_000_000, 3).unwrap();
        low.record(5000).unwrap();
        assert!(Indexer::for_samples(&low, &[5000]).is_none());
    }

    /// The index arithmetic agrees with the histogram's at every bucket edge.
    #[test]
    fn index_matches_bucket_edges() {
        for sigfig in 0..=5 {
            let h = Histogram::<u64>::new_with_max(1 << 40, sigfig).unwrap();
            let indexer = Indexer {
                m: 64 - (2 * 10_u64.pow(u32::from(sigfig)) - 1).leading_zeros(),
            };
            let mut value = 0;
            let mut index = 0;
            while value < 1 << 40 {
                assert_eq!(indexer.index(value), index, "sigfig {sigfig} value {value}");
                assert_eq!(indexer.index(h.highest_equivalent(value)), index);
                value = h.next_non_equivalent(value);
                index += 1;
            }
        }
    }

    #[test]
    fn empty_and_single_values() {
        assert!(!check(Histogram::new(3).unwrap(), &[]));
        for v in [0, 1, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 1 << 40] {
            assert!(check(Histogram::new(3).unwrap(), &[v]));
        }
    }

    #[test]
    fn bucket_edges_and_repeats() {
        let mut values = Vec::new();
        for shift in 0..45 {
            let p = 1_u64 << shift;
            values.extend([p - 1, p, p + 1, p + 2]);
        }
        values.extend(std::iter::repeat_n(3_000_000, 1000));
        values.extend(std::iter::repeat_n(0, 130)); // a count above one LEB128 byte
        for sigfig in 0..=5 {
            assert!(check(Histogram::new(sigfig).unwrap(), &values));
        }
    }

    #[test]
    fn large_values() {
        let values = [5, i64::MAX as u64 / 4, 1 << 60, 1 << 61, u64::MAX / 3];
        check(Histogram::new(3).unwrap(), &values);
        assert!(check(Histogram::new(2).unwrap(), &values[..3]));
    }

    /// Gaps of every length between non-empty buckets, including long zero runs.
    #[test]
    fn seeded_random_spread() {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..40 {
            let n = (next() % 2000) as usize;
            let bits = 8 + round % 40;
            let values: Vec<u64> = (0..n).map(|_| next() % (1 << bits)).collect();
            assert_eq!(check(Histogram::new(3).unwrap(), &values), n > 0);
            assert_eq!(
                check(Histogram::new((round % 6) as u8).unwrap(), &values),
                n > 0
            );
        }
    }

    /// After a reset the histogram keeps its grown shape: the header still matches.
    #[test]
    fn reset_histogram_keeps_shape() {
        let mut h = Histogram::<u64>::new(3).unwrap();
        h.record(90_000_000).unwrap();
        h.reset();
        assert!(check(h.clone(), &[1500, 1501, 70_000]));
        let fixed = Histogram::<u64>::new_with_bounds(1000, 1 << 30, 3).unwrap();
        assert!(!check(fixed, &[1500, 1501, 70_000]));
    }
}
