//! The YAML 1.1 number spellings PyYAML (which LiteLLM reads configs with) resolves and YAML
//! 1.2 leaves as strings: binary `0b101` and sexagesimal `1:30` (= 90). Integers and durations
//! read them alike.

/// A binary or sexagesimal integer; `digits` has no `_`. (Octal `010` is the parser's
/// `legacy_octal_numbers`.)
pub(crate) fn yaml11_int(digits: &str) -> Option<u64> {
    if let Some(bits) = digits.strip_prefix("0b") {
        return u64::from_str_radix(bits, 2).ok();
    }
    sexagesimal(digits).and_then(float_to_u64)
}

/// PyYAML's sexagesimal number: `1:30` = 90, `1:00:00` = 3600, `1:30.5` = 90.5. Each part
/// after the first is below 60.
pub(crate) fn sexagesimal(text: &str) -> Option<f64> {
    let mut parts = text.split(':');
    let first = parts.next()?;
    if first.is_empty() || !first.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut value: f64 = first.parse().ok()?;
    let mut any = false;
    let mut parts = parts.peekable();
    while let Some(part) = parts.next() {
        let last = parts.peek().is_none();
        let (whole, _) = part.split_once('.').unwrap_or((part, ""));
        let ok = !whole.is_empty()
            && whole.len() <= 2
            && whole.bytes().all(|b| b.is_ascii_digit())
            && (last || whole.len() == part.len());
        let n: f64 = if ok { part.parse().ok()? } else { return None };
        if n >= 60.0 {
            return None;
        }
        value = value * 60.0 + n;
        any = true;
    }
    any.then_some(value)
}

/// A whole, non-negative float below 2^64 as an integer.
pub(crate) fn float_to_u64(f: f64) -> Option<u64> {
    // 2^64 is exactly representable; anything below it with no fraction fits.
    (f.is_finite() && f >= 0.0 && f.fract() == 0.0 && f < 18_446_744_073_709_551_616.0)
        .then_some(f as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sexagesimal_and_binary_as_pyyaml() {
        assert_eq!(sexagesimal("1:30"), Some(90.0));
        assert_eq!(sexagesimal("1:00:00"), Some(3600.0));
        assert_eq!(sexagesimal("1:30.5"), Some(90.5));
        assert_eq!(sexagesimal("1:60"), None);
        assert_eq!(sexagesimal("1:3.0:00"), None);
        assert_eq!(sexagesimal("30"), None);
        assert_eq!(sexagesimal(":30"), None);
        assert_eq!(sexagesimal("a:30"), None);
        assert_eq!(yaml11_int("0b101"), Some(5));
        assert_eq!(yaml11_int("0b2"), None);
    }
}
