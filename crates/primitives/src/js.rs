//! What a router written in JavaScript does with two values, for profiles that reproduce one
//! (the Portkey gateway's `retryHandler.ts` and `handlerUtils.ts`): `Number.parseInt` of a
//! header, and a weighted draw from `Math.random() * totalWeight`.

use std::time::Duration;

/// `Number.parseInt(value.trim())` as seconds: the leading integer — a sign, then decimal
/// digits, or hex after `0x` — so `1.5` is 1 s. `None` when no digit leads (an HTTP-date is
/// `NaN`) or the integer is not positive (`0` is falsy there).
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
    let end = digits.find(|c: char| !c.is_digit(radix));
    let whole = u64::from_str_radix(&digits[..end.unwrap_or(digits.len())], radix).ok()?;
    (!negative && whole > 0).then(|| Duration::from_secs(whole))
}

/// The weighted draw for `u` in [0, 1) (`Math.random()`): `u · Σ weights`, then the first
/// index whose weight exceeds what is left of it, so a weight of 0 is never drawn; `None`
/// when every weight is 0.
pub fn pick_by_draw(weights: &[f64], u: f64) -> Option<usize> {
    let mut left = u * weights.iter().fold(0.0, |sum, w| sum + w);
    for (i, &w) in weights.iter().enumerate() {
        if left < w {
            return Some(i);
        }
        left -= w;
    }
    None
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
    fn the_draw_walks_the_weights_in_order() {
        // Weights 3, 1, 0 (total 4): a draw below 3/4 is the first, the rest the second.
        let weights = [3.0, 1.0, 0.0];
        assert_eq!(pick_by_draw(&weights, 0.0), Some(0));
        assert_eq!(pick_by_draw(&weights, 0.749), Some(0));
        assert_eq!(pick_by_draw(&weights, 0.75), Some(1));
        assert_eq!(pick_by_draw(&weights, 0.999_999), Some(1));
        assert_eq!(pick_by_draw(&[0.0, 2.0], 0.0), Some(1));
        assert_eq!(pick_by_draw(&[0.0, 0.0], 0.5), None);
    }
}
