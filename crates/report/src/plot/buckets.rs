//! Time buckets a person reads: per second, per 10 s, per minute, per hour — never "per 9 s".
//!
//! Why one chain: the recorder keeps the served and latency series at a bucket size that grows
//! as the run does (memory stays bounded whatever its length), and a plot draws them summed into
//! a coarser bucket. Every size in [`CHAIN`] is a multiple of the one before, so a series kept at
//! one size sums exactly into any later one, and every size reads as a round span.

/// The bucket sizes, seconds; past the last one the size doubles (2 d, 4 d, …).
pub(crate) const CHAIN: [u64; 13] = [
    1, 2, 10, 30, 60, 120, 600, 1800, 3600, 7200, 21_600, 43_200, 86_400,
];

/// The size after `bucket` in the chain (a size not in it goes to the next one above it).
pub(crate) fn next(bucket: u64) -> u64 {
    CHAIN
        .iter()
        .copied()
        .find(|&b| b > bucket)
        .unwrap_or_else(|| bucket.max(1).saturating_mul(2))
}

/// The smallest size of the chain, at least `kept` (the size the series was kept at), that
/// cuts `seconds` into at most `target` buckets.
pub(crate) fn drawn(seconds: u64, kept: u64, target: u64) -> u64 {
    let least = seconds.div_ceil(target.max(1)).max(kept).max(1);
    let mut bucket = kept.max(1);
    while bucket < least {
        bucket = next(bucket);
    }
    bucket
}

/// How an axis says the bucket: `per second`, `per 10 s`, `per minute`, `per 2 min`,
/// `per hour`, `per 6 h`, `per day`, `per 2 d`.
pub(crate) fn per(bucket: u64) -> String {
    let (n, unit, one) = if bucket.is_multiple_of(86_400) {
        (bucket / 86_400, "d", "day")
    } else if bucket.is_multiple_of(3600) {
        (bucket / 3600, "h", "hour")
    } else if bucket.is_multiple_of(60) {
        (bucket / 60, "min", "minute")
    } else {
        (bucket, "s", "second")
    };
    if n == 1 {
        format!("per {one}")
    } else {
        format!("per {n} {unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_size_divides_the_next_and_reads_round() {
        let mut b = 1;
        for _ in 0..20 {
            let n = next(b);
            assert!(n > b && n.is_multiple_of(b), "{b} → {n}");
            b = n;
        }
        let names: Vec<String> = CHAIN.iter().map(|b| per(*b)).collect();
        assert_eq!(
            names,
            [
                "per second",
                "per 2 s",
                "per 10 s",
                "per 30 s",
                "per minute",
                "per 2 min",
                "per 10 min",
                "per 30 min",
                "per hour",
                "per 2 h",
                "per 6 h",
                "per 12 h",
                "per day"
            ]
        );
        assert_eq!(per(2 * 86_400), "per 2 d");
    }

    #[test]
    fn the_drawn_size_is_the_smallest_that_fits() {
        // A 7-minute run in at most 60 buckets: 10 s (43 buckets), not 421/60 = 7.02 → 8 s.
        assert_eq!(drawn(421, 1, 60), 10);
        assert_eq!(drawn(60, 1, 60), 1);
        assert_eq!(drawn(3600, 1, 60), 60);
        assert_eq!(drawn(86_400, 1, 60), 1800);
        // Never finer than what was kept.
        assert_eq!(drawn(30, 10, 60), 10);
        assert_eq!(drawn(365 * 86_400, 86_400, 60), 8 * 86_400);
    }
}
