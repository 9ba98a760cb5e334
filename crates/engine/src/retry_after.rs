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

#[cfg(test)]
mod tests {
    use super::*;

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
