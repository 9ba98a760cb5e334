//! Durations, read in one place for every file routersim reads: scenario files, the CLI, and
//! LiteLLM configs. One table of units (`ms`, `s`, `m` minutes, `h`) and one limit, 10 years
//! ([`MAX_DURATION`]: the longest virtual time routersim serves).
//!
//! Two syntaxes, on purpose ([`Syntax`]), because the files are not written alike:
//! - **scenario** ([`parse_duration`]): `300ms`, `1.5s`, `2m`, `1h`, `0s`; a unit always (a bare
//!   `0` aside); exact decimal arithmetic on nanoseconds, never floats, so `1.5s` is exactly
//!   1 500 ms and the same text always gives the same [`Duration`];
//! - **LiteLLM** ([`Syntax::LiteLlm`]): what LiteLLM's proxy reads, where a bare number is
//!   seconds (`30`, `0.5`) and PyYAML's numerals are allowed (`1_000`, `1:30`, `0b101`, `1e3`);
//!   computed in floating point, as LiteLLM computes (`number × unit`).

use std::time::Duration;

pub use routersim_engine::config::MAX_DURATION;

use crate::numerals::{sexagesimal, yaml11_int};

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
        /// The text as written (a number of seconds: `N s`).
        found: String,
    },
}

/// One unit: its name, and its length in nanoseconds and in seconds.
struct Unit {
    name: &'static str,
    nanos: u128,
    seconds: f64,
}

/// The units, shortest name match first for suffixes (`ms` before `s`).
const UNITS: [Unit; 4] = [
    Unit {
        name: "ms",
        nanos: 1_000_000,
        seconds: 0.001,
    },
    Unit {
        name: "s",
        nanos: 1_000_000_000,
        seconds: 1.0,
    },
    Unit {
        name: "m",
        nanos: 60_000_000_000,
        seconds: 60.0,
    },
    Unit {
        name: "h",
        nanos: 3_600_000_000_000,
        seconds: 3600.0,
    },
];

/// How a duration's text is written (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// Scenario files and the CLI: a unit required, exact decimals.
    Scenario,
    /// LiteLLM configs: a bare number is seconds, PyYAML's numerals, floating point.
    LiteLlm,
}

/// Parses a scenario duration: `300ms`, `1.5s`, `2m`, `1h`, `0s` (decimals allowed; `0` alone
/// is zero).
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    parse_duration_as(text, Syntax::Scenario)
}

/// Parses a duration written in `syntax`.
pub fn parse_duration_as(text: &str, syntax: Syntax) -> Result<Duration, DurationError> {
    match syntax {
        Syntax::Scenario => parse_exact(text),
        Syntax::LiteLlm => {
            let (secs, _) = litellm_seconds(text).ok_or_else(|| DurationError::Malformed {
                found: text.to_string(),
            })?;
            from_seconds(secs)
        }
    }
}

/// The seconds a LiteLLM duration written with a unit states (`"30s"` → 30, `"500ms"` →
/// 0.5), as [`Syntax::LiteLlm`] computes them; `None` for text without a unit (a number of
/// seconds already) or that does not read as one.
pub fn suffixed_seconds(text: &str) -> Option<f64> {
    litellm_seconds(text)
        .filter(|&(secs, unit)| unit && secs.is_finite() && secs >= 0.0)
        .map(|(secs, _)| secs)
}

/// A number of seconds as a duration (LiteLLM's numbers): finite, not negative, at most
/// [`MAX_DURATION`].
pub fn from_seconds(secs: f64) -> Result<Duration, DurationError> {
    let malformed = || DurationError::Malformed {
        found: secs.to_string(),
    };
    if !secs.is_finite() || secs < 0.0 {
        return Err(malformed());
    }
    let d = Duration::try_from_secs_f64(secs).map_err(|_| malformed())?;
    if d > MAX_DURATION {
        return Err(DurationError::TooLong {
            found: format!("{secs} s"),
        });
    }
    Ok(d)
}

/// LiteLLM's reading: the seconds stated (`number × unit`), and whether a unit was written.
fn litellm_seconds(text: &str) -> Option<(f64, bool)> {
    let t = text.trim();
    let (number, seconds, unit) = UNITS
        .iter()
        .find_map(|u| t.strip_suffix(u.name).map(|n| (n, u.seconds, true)))
        .unwrap_or((t, 1.0, false));
    let digits: String = number.trim().chars().filter(|c| *c != '_').collect();
    let value = digits
        .parse::<f64>()
        .ok()
        .or_else(|| yaml11_int(&digits).map(|n| n as f64))
        .or_else(|| sexagesimal(&digits))?;
    Some((value * seconds, unit))
}

/// The scenario reading: exact decimals, a unit required.
fn parse_exact(text: &str) -> Result<Duration, DurationError> {
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
    let per_unit = UNITS
        .iter()
        .find(|u| u.name == unit.trim_start())
        .map(|u| u.nanos)
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
    for unit in UNITS.iter().rev() {
        if nanos.is_multiple_of(unit.nanos) {
            return format!("{}{}", nanos / unit.nanos, unit.name);
        }
    }
    let whole = nanos / 1_000_000;
    let frac = format!("{:06}", nanos % 1_000_000);
    format!("{whole}.{}ms", frac.trim_end_matches('0'))
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

    #[test]
    fn litellm_durations_are_seconds_unless_a_unit_says() {
        let d = |text| parse_duration_as(text, Syntax::LiteLlm);
        assert_eq!(d("45"), Ok(ms(45_000)));
        assert_eq!(d("0.5"), Ok(ms(500)));
        assert_eq!(d("1_000ms"), Ok(ms(1000)));
        assert_eq!(d("1:30"), Ok(ms(90_000)));
        assert_eq!(d("1e3ms"), Ok(ms(1000)));
        assert!(d("soon").is_err());
        assert!(d("-1s").is_err());
        assert_eq!(
            from_seconds(1e19),
            Err(DurationError::TooLong {
                found: "10000000000000000000 s".to_string()
            })
        );
        assert_eq!(suffixed_seconds("500ms"), Some(0.5));
        assert_eq!(suffixed_seconds("2m"), Some(120.0));
        assert_eq!(suffixed_seconds("30"), None);
        assert_eq!(suffixed_seconds("-3s"), None);
    }
}
