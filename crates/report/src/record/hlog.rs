//! The V2 bytes of one `latency.hlog` interval histogram, from the interval's samples.
//!
//! Why: `V2Serializer` walks every bucket up to the interval's maximum (thousands of mostly
//! empty buckets for second-long latencies) to emit counts and zero runs, and a histogram
//! per interval must be filled and reset (clearing all its buckets). An interval holds a few
//! hundred samples: sorted, each maps to its bucket index with the histogram's own
//! arithmetic, so equal indices give the non-zero counts in order and the gaps between them
//! the zero runs. Only the histogram's range (its auto-resized `high()`) is needed, and a
//! histogram that records just each new maximum resizes exactly as one recording every
//! sample (a value at or below a recorded one always fits). The bytes are `V2Serializer`'s
//! exactly (the tests compare them); a shape this does not cover (lowest discernible value
//! other than 1) is filled and goes through `V2Serializer` instead.

use std::io;

use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer, V2Serializer};

use super::histogram::record_us;

/// `V2_COOKIE` of the `hdrhistogram` crate (`0x1c849303 | 0x10`), not exported there.
const V2_COOKIE: u32 = 0x1c84_9303 | 0x10;

/// Appends to `out` what `V2Serializer` writes for a histogram shaped like `range` (see the
/// module docs) holding exactly `sorted` (ascending, recorded with `record_us`), and returns
/// that histogram's `max()`.
pub(super) fn encode_v2(
    range: &Histogram<u64>,
    sorted: &[u64],
    v2: &mut V2Serializer,
    out: &mut Vec<u8>,
) -> io::Result<u64> {
    if let Some((indexer, max)) = Indexer::for_samples(range, sorted) {
        write_v2(range, indexer, sorted, out);
        return Ok(max);
    }
    let mut h = range.clone();
    h.reset();
    for &v in sorted {
        record_us(&mut h, v, 1);
    }
    v2.serialize(&h, out)
        .map_err(|e| io::Error::other(e.to_string()))?;
    Ok(h.max())
}

/// `hdrhistogram`'s private `index_for` for a histogram whose lowest discernible value is 1
/// (unit magnitude 0).
#[derive(Debug, Clone, Copy)]
struct Indexer {
    /// `sub_bucket_count_magnitude`: a bucket has `2^m` sub-buckets.
    m: u32,
}

impl Indexer {
    /// The arithmetic of `h` and the maximum of `sorted` as `max()`, if every sample has a
    /// bucket (so none would be clamped) and `sorted` is not empty.
    fn for_samples(h: &Histogram<u64>, sorted: &[u64]) -> Option<(Self, u64)> {
        let &max = sorted.last()?;
        if h.low() != 1 || h.sigfig() > 5 {
            return None;
        }
        // The smallest power of two reaching 2·10^sigfig (the crate's `log2().ceil()`).
        let largest = 2 * 10_u64.pow(u32::from(h.sigfig()));
        let indexer = Self {
            m: 64 - (largest - 1).leading_zeros(),
        };
        // `max()` is the highest value equivalent to the largest sample (0 stays 0).
        (indexer.index(max) < h.distinct_values()).then(|| (indexer, h.highest_equivalent(max)))
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
fn write_v2(h: &Histogram<u64>, indexer: Indexer, sorted: &[u64], out: &mut Vec<u8>) {
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

/// Appends `data` in standard base64 with padding (RFC 4648 §4), as the interval log writes.
pub(super) fn base64_into(data: &[u8], out: &mut Vec<u8>) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let sextet = |n: u32, shift: u32| ALPHABET[((n >> shift) & 63) as usize];
    let mut chunks = data.chunks_exact(3);
    for c in &mut chunks {
        let n = u32::from(c[0]) << 16 | u32::from(c[1]) << 8 | u32::from(c[2]);
        out.extend_from_slice(&[sextet(n, 18), sextet(n, 12), sextet(n, 6), sextet(n, 0)]);
    }
    match *chunks.remainder() {
        [a] => {
            let n = u32::from(a) << 16;
            out.extend_from_slice(&[sextet(n, 18), sextet(n, 12), b'=', b'=']);
        }
        [a, b] => {
            let n = u32::from(a) << 16 | u32::from(b) << 8;
            out.extend_from_slice(&[sextet(n, 18), sextet(n, 12), sextet(n, 6), b'=']);
        }
        _ => {}
    }
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

    /// Records `values` into `before` as `record_us` does, and into a copy only each new
    /// maximum (the range); checks the range's encoding of the samples gives the bytes and
    /// `max()` of `V2Serializer` on the full histogram. Returns whether the samples path (not
    /// the fallback) wrote them.
    fn check(before: Histogram<u64>, values: &[u64]) -> bool {
        let mut h = before.clone();
        let mut range = before;
        let mut range_max = 0;
        for &v in values {
            record_us(&mut h, v, 1);
            if v > range_max {
                record_us(&mut range, v, 1);
                range_max = v;
            }
        }
        assert_eq!(
            (range.high(), range.distinct_values()),
            (h.high(), h.distinct_values())
        );
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        let mut expected = Vec::new();
        V2Serializer::new().serialize(&h, &mut expected).unwrap();
        let mut got = vec![7]; // appends after what is already there
        let max = encode_v2(&range, &sorted, &mut V2Serializer::new(), &mut got).unwrap();
        assert_eq!(max, h.max());
        assert_eq!(
            got[1..],
            expected[..],
            "{} values, max {:?}",
            values.len(),
            sorted.last()
        );
        Indexer::for_samples(&range, &sorted).is_some()
    }

    /// The fast path applies to the report's histograms (so the tests exercise it).
    #[test]
    fn fast_path_taken_for_report_histograms() {
        let mut h = Histogram::<u64>::new(3).unwrap();
        h.record(12_345).unwrap();
        assert!(Indexer::for_samples(&h, &[12_345]).is_some());
        assert!(Indexer::for_samples(&h, &[]).is_none());
        assert!(Indexer::for_samples(&h, &[1 << 40]).is_none()); // beyond the range
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

    #[test]
    fn base64_matches_the_crate() {
        use base64::Engine;
        for len in 0..40 {
            let data: Vec<u8> = (0..len).map(|i| (i * 97 + len * 13) as u8).collect();
            let mut got = b"x".to_vec();
            base64_into(&data, &mut got);
            let expected = base64::engine::general_purpose::STANDARD.encode(&data);
            assert_eq!(got[1..], *expected.as_bytes(), "{len}");
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
