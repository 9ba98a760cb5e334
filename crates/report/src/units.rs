//! Time as integer microseconds: every time the report prints goes through here, so a time is
//! never rounded through a float and the bytes are the same on every machine.

use std::fmt;
use std::time::Duration;

use tokio::time::Instant;

pub(crate) const MICROS_PER_SECOND: u64 = 1_000_000;

/// Whole microseconds of a duration (saturating; sub-microsecond parts are dropped).
pub(crate) fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// Microseconds from `start` to `at` (0 when `at` is earlier).
pub(crate) fn micros_since(start: Instant, at: Instant) -> u64 {
    micros(at.saturating_duration_since(start))
}

/// The virtual second a time falls in.
pub(crate) fn second_of(us: u64) -> u64 {
    us / MICROS_PER_SECOND
}

/// Prints microseconds as milliseconds with exactly three decimals: `1234567` → `1234.567`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ms(pub(crate) u64);

impl fmt::Display for Ms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:03}", self.0 / 1000, self.0 % 1000)
    }
}

/// Microseconds as float milliseconds (for JSON), rounded to 6 decimals.
pub(crate) fn ms_f64(us: u64) -> f64 {
    round6(us as f64 / 1000.0)
}

/// Rounds to 6 decimals so JSON bytes do not depend on float noise; non-finite values become 0.
pub(crate) fn round6(x: f64) -> f64 {
    if x.is_finite() {
        (x * 1e6).round() / 1e6
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ms_has_three_decimals() {
        assert_eq!(Ms(0).to_string(), "0.000");
        assert_eq!(Ms(1).to_string(), "0.001");
        assert_eq!(Ms(1_234_567).to_string(), "1234.567");
        assert_eq!(micros(Duration::from_nanos(1_999)), 1);
        assert_eq!(ms_f64(1_234_567), 1234.567);
        assert_eq!(round6(f64::NAN), 0.0);
    }
}
