//! Durations as people write them in scenario files: `300ms`, `1.5s`, `2m`, `10m`, `1h`, `0s`.
//!
//! Shared by every YAML format of the project (the lowest crate owns it; the simulator re-uses
//! it). Parsing is exact decimal arithmetic on nanoseconds, never floats, so `1.5s` is exactly
//! 1 500 ms and the same text always gives the same [`Duration`].
//!
//! Units: `ms`, `s`, `m` (minutes), `h`. A unit is required, except for a bare `0`.
//!
//! No duration may exceed [`MAX_DURATION`] (10 years, 87,600 h): the longest virtual time
//! routersim serves. Checked here, where every scenario duration is read, so the error names
//! the key, its line and column.

use std::fmt;
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

pub use routersim_engine::config::MAX_DURATION;

/// Why a duration did not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// Not a duration at all.
    #[error("expected a duration such as 300ms, 1.5s, 2m or 1h, found {found:?}")]
    Malformed {
        /// The text as written.
        found: String,
    },
    /// Longer than [`MAX_DURATION`].
    #[error("{found} is more than the longest duration routersim serves (87600h, 10 years)")]
    TooLong {
        /// The text as written.
        found: String,
    },
}

const NANOS_PER_UNIT: [(&str, u128); 4] = [
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// Parses `300ms`, `1.5s`, `2m`, `1h`, `0s` (decimals allowed; `0` alone is zero).
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let err = || DurationError::Malformed {
        found: text.to_string(),
    };
    let trimmed = text.trim();
    if trimmed == "0" {
        return Ok(Duration::ZERO);
    }
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(err)?;
    let (number, unit) = trimmed.split_at(split);
    let per_unit = NANOS_PER_UNIT
        .iter()
        .find(|(name, _)| *name == unit.trim_start())
        .map(|(_, n)| *n)
        .ok_or_else(err)?;
    let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
    let digits_ok = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    if int_part.is_empty() || !digits_ok(int_part) || !digits_ok(frac_part) {
        return Err(err());
    }
    if number.ends_with('.') || frac_part.len() > 18 {
        return Err(err());
    }
    let too_long = || DurationError::TooLong {
        found: trimmed.to_string(),
    };
    // Only digits are left: a number that does not fit is simply too long.
    let int: u128 = int_part.parse().map_err(|_| too_long())?;
    let frac: u128 = if frac_part.is_empty() {
        0
    } else {
        frac_part.parse().map_err(|_| err())?
    };
    let scale = 10u128.pow(frac_part.len() as u32);
    // Round the fractional part to the nearest nanosecond.
    let nanos = int
        .checked_mul(per_unit)
        .and_then(|n| n.checked_add((frac * per_unit + scale / 2) / scale))
        .ok_or_else(too_long)?;
    if nanos > MAX_DURATION.as_nanos() {
        return Err(too_long());
    }
    let secs = u64::try_from(nanos / 1_000_000_000).map_err(|_| err())?;
    Ok(Duration::new(secs, (nanos % 1_000_000_000) as u32))
}

/// Formats a duration in the largest unit that states it exactly: `2h`, `90s`, `1500ms`,
/// else fractional milliseconds (`0.25ms`). `parse_duration(format_duration(d)) == d`.
pub fn format_duration(d: Duration) -> String {
    let nanos = d.as_nanos();
    if nanos == 0 {
        return "0s".to_string();
    }
    for (unit, per) in NANOS_PER_UNIT.iter().rev() {
        if nanos.is_multiple_of(*per) {
            return format!("{}{unit}", nanos / per);
        }
    }
    let whole = nanos / 1_000_000;
    let frac = format!("{:06}", nanos % 1_000_000);
    format!("{whole}.{}ms", frac.trim_end_matches('0'))
}

/// A [`Duration`] read from and written as text (`1.5s`), for serde.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HumanDuration(pub Duration);

impl From<HumanDuration> for Duration {
    fn from(value: HumanDuration) -> Self {
        value.0
    }
}

impl fmt::Display for HumanDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_duration(self.0))
    }
}

struct DurationVisitor;

impl Visitor<'_> for DurationVisitor {
    type Value = Duration;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a duration such as 300ms, 1.5s, 2m or 1h")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Duration, E> {
        parse_duration(v).map_err(E::custom)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Duration, E> {
        if v == 0 {
            Ok(Duration::ZERO)
        } else {
            Err(E::custom(format!(
                "a duration needs a unit: write {v}s or {v}ms, not {v}"
            )))
        }
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Duration, E> {
        if v >= 0 {
            self.visit_u64(v as u64)
        } else {
            Err(E::custom(format!(
                "a duration cannot be negative, found {v}"
            )))
        }
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Duration, E> {
        if v == 0.0 {
            Ok(Duration::ZERO)
        } else {
            Err(E::custom(format!(
                "a duration needs a unit: write {v}s or {v}ms, not {v}"
            )))
        }
    }
}

impl<'de> Deserialize<'de> for HumanDuration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(DurationVisitor)
            .map(HumanDuration)
    }
}

impl Serialize for HumanDuration {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&format_duration(self.0))
    }
}

/// `#[serde(deserialize_with = "routersim_mock_providers::duration::deserialize")]`.
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
    HumanDuration::deserialize(deserializer).map(|d| d.0)
}

/// For `Option<Duration>` fields: `#[serde(default, deserialize_with = "…::deserialize_option")]`.
pub fn deserialize_option<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Duration>, D::Error> {
    Option::<HumanDuration>::deserialize(deserializer).map(|d| d.map(|d| d.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn parses_the_documented_forms() {
        assert_eq!(parse_duration("300ms"), Ok(ms(300)));
        assert_eq!(parse_duration("1.5s"), Ok(ms(1500)));
        assert_eq!(parse_duration("2m"), Ok(ms(120_000)));
        assert_eq!(parse_duration("10m"), Ok(ms(600_000)));
        assert_eq!(parse_duration("1h"), Ok(ms(3_600_000)));
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("0.25ms"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration(" 2.5 m "), Ok(ms(150_000)));
        assert_eq!(parse_duration("0.1s"), Ok(ms(100)));
    }

    #[test]
    fn rejects_everything_else() {
        for bad in [
            "", "5", "1.5", "s", "-1s", "1.s", ".5s", "1x", "1 d", "1e3ms", "1.2.3s",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad:?} should not parse");
        }
    }

    #[test]
    fn ten_years_is_the_longest() {
        assert_eq!(parse_duration("87600h"), Ok(MAX_DURATION));
        assert_eq!(parse_duration("315360000s"), Ok(MAX_DURATION));
        for long in [
            "87600.000001h",
            "100000h",
            "315360000001ms",
            "99999999999999999999h",
            "999999999999999999999999999999999999999999999999h",
        ] {
            assert_eq!(
                parse_duration(long),
                Err(DurationError::TooLong {
                    found: long.to_string()
                }),
                "{long}"
            );
        }
    }

    #[test]
    fn formats_round_trip() {
        for d in [
            ms(0),
            ms(300),
            ms(1500),
            ms(120_000),
            ms(3_600_000),
            Duration::from_micros(250),
        ] {
            assert_eq!(parse_duration(&format_duration(d)), Ok(d));
        }
        assert_eq!(format_duration(ms(90_000)), "90s");
        assert_eq!(format_duration(ms(1500)), "1500ms");
    }
}
