//! Reading `Retry-After`: integer seconds or an HTTP-date (RFC 9110 IMF-fixdate).
//!
//! Seed: *"the router honors the provider's `Retry-After`, up to one minute"*; the Multigrid
//! page adds *"in either legal form — seconds or an HTTP date"*. A date is read against the
//! router's wall clock ([`Clock::unix_millis`](crate::clock::Clock::unix_millis)), which under
//! simulation is the scenario's epoch plus virtual time — never the system clock.

use std::time::Duration;

use crate::failure::RetryAfter;

pub use routersim_primitives::dates::{format_http_date, parse_http_date, parse_rfc3339_utc};

/// Resolves a Retry-After into a delay from `now_unix_ms`. A date in the past is zero; an
/// unparseable date is `None`.
pub fn resolve(retry_after: &RetryAfter, now_unix_ms: i64) -> Option<Duration> {
    match retry_after {
        RetryAfter::Delay(d) => Some(*d),
        RetryAfter::HttpDate(text) => {
            let at = parse_http_date(text)?;
            let ms = at.saturating_sub(now_unix_ms).max(0);
            Some(Duration::from_millis(u64::try_from(ms).unwrap_or(0)))
        }
    }
}

/// Parses a header value: integer seconds, else an HTTP-date relative to `now_unix_ms`.
pub fn parse_header(value: &str, now_unix_ms: i64) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    resolve(&RetryAfter::HttpDate(value.to_string()), now_unix_ms)
}

/// A Retry-After as a JavaScript router reads it with `Number.parseInt(value.trim())` in
/// seconds (the Portkey gateway's `retryHandler.ts`): the leading integer — a sign, then decimal
/// digits, or hex after `0x` — so `1.5` is 1 s and a fraction is dropped. `None` when no digit
/// leads (an HTTP-date is `NaN`) or the integer is not positive (`0` is falsy there).
pub fn parse_int_seconds(value: &str) -> Option<Duration> {
    let text = value.trim();
    let (negative, text) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (radix, digits) = match text.get(..2) {
        Some("0x" | "0X") => (16, &text[2..]),
        _ => (10, text),
    };
    let end = digits
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(digits.len());
    let whole = u64::from_str_radix(&digits[..end], radix).ok()?;
    (!negative && whole > 0).then(|| Duration::from_secs(whole))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Number.parseInt` on each value (node 20): `1.5` → 1, `2.999` → 2, `0.5` → 0 (falsy:
    /// none), `7s` → 7, `0x10` → 16, an HTTP-date → NaN, `-3` → -3 (not positive: none).
    #[test]
    fn parse_int_keeps_the_leading_integer() {
        let s = |secs| Some(Duration::from_secs(secs));
        assert_eq!(parse_int_seconds("1.5"), s(1));
        assert_eq!(parse_int_seconds(" 2.999 "), s(2));
        assert_eq!(parse_int_seconds("0.5"), None);
        assert_eq!(parse_int_seconds("7s"), s(7));
        assert_eq!(parse_int_seconds("+4"), s(4));
        assert_eq!(parse_int_seconds("0x10"), s(16));
        assert_eq!(parse_int_seconds("Wed, 21 Oct 2026 07:28:00 GMT"), None);
        assert_eq!(parse_int_seconds("-3"), None);
        assert_eq!(parse_int_seconds(""), None);
        assert_eq!(parse_int_seconds(".5"), None);
    }

    #[test]
    fn header_reads_seconds_or_date_against_the_clock() {
        let now = 1_767_225_600_000;
        assert_eq!(parse_header("7", now), Some(Duration::from_secs(7)));
        assert_eq!(
            parse_header("Thu, 01 Jan 2026 00:00:20 GMT", now),
            Some(Duration::from_secs(20))
        );
        assert_eq!(
            parse_header("Thu, 01 Jan 2025 00:00:20 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_header("soon", now), None);
    }
}
