//! Timestamps as logs write them: Unix seconds (a number, or a string of one), or RFC 3339 /
//! ISO 8601 date-times (`2026-12-02T07:06:59.289221+00:00`, `…Z`, a space for the `T`; one with
//! no offset is read as UTC, the way LiteLLM's own exports write it).

/// Unix seconds of a timestamp, `None` when it is neither form.
pub fn parse_timestamp(text: &str) -> Option<f64> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    if let Ok(secs) = text.parse::<f64>() {
        return secs.is_finite().then_some(secs);
    }
    parse_datetime(text)
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn number(text: &str) -> Option<i64> {
    (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

/// `YYYY-MM-DD[T ]HH:MM:SS[.fraction][Z|±HH:MM|±HHMM]`.
fn parse_datetime(text: &str) -> Option<f64> {
    let (date, rest) = text.split_at_checked(10)?;
    let mut d = date.split('-');
    let (year, month, day) = (number(d.next()?)?, number(d.next()?)?, number(d.next()?)?);
    if d.next().is_some() || !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let rest = rest.strip_prefix(['T', 't', ' '])?;
    // The offset: `Z`, or a sign after the seconds.
    let (clock, offset_secs) = if let Some(clock) = rest.strip_suffix(['Z', 'z']) {
        (clock, 0)
    } else if let Some(at) = rest.rfind(['+', '-']).filter(|&at| at >= 8) {
        let (clock, offset) = rest.split_at(at);
        let sign = if offset.starts_with('-') { -1 } else { 1 };
        let digits: String = offset[1..].chars().filter(|c| *c != ':').collect();
        if digits.len() != 4 {
            return None;
        }
        let (h, m) = (number(&digits[..2])?, number(&digits[2..])?);
        (clock, sign * (h * 3600 + m * 60))
    } else {
        (rest, 0)
    };
    let (hms, fraction) = clock.split_once('.').unwrap_or((clock, ""));
    let mut t = hms.split(':');
    let (hour, minute, second) = (number(t.next()?)?, number(t.next()?)?, number(t.next()?)?);
    if t.next().is_some() || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let fraction = if fraction.is_empty() {
        0.0
    } else {
        number(fraction)?;
        format!("0.{fraction}").parse::<f64>().ok()?
    };
    let days = days_from_civil(year, month, day);
    let whole = ((days * 24 + hour) * 60 + minute) * 60 + second - offset_secs;
    Some(whole as f64 + fraction)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_unix_seconds_and_rfc_3339_with_any_offset() {
        assert_eq!(parse_timestamp("1796195201.5"), Some(1_796_195_201.5));
        assert_eq!(parse_timestamp("0"), Some(0.0));
        assert_eq!(parse_timestamp("1970-01-01T00:00:10Z"), Some(10.0));
        assert_eq!(parse_timestamp("1970-01-01 00:00:10.25"), Some(10.25));
        assert_eq!(parse_timestamp("1970-01-01T01:00:10+01:00"), Some(10.0));
        assert_eq!(parse_timestamp("1970-01-01T00:00:10-0030"), Some(1810.0));
        let at = parse_timestamp("2026-12-02T07:06:59.289221+00:00").unwrap();
        assert!((at - 1_796_195_219.289_221).abs() < 1e-6, "{at}");
        for bad in [
            "",
            "yesterday",
            "2026-13-01T00:00:00Z",
            "2026-12-02",
            "2026-12-02T25:00:00Z",
        ] {
            assert_eq!(parse_timestamp(bad), None, "{bad}");
        }
    }
}
