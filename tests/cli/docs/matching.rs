//! Expected output against actual output, with trycmd's two wildcards: a line `...` stands
//! for any number of lines (none included), and `[..]` inside a line for any text on it.
//! Trailing spaces are ignored on both sides.

/// Whether `actual` is what `expected` describes, line for line.
pub fn matches(expected: &[String], actual: &[String]) -> bool {
    prefix_lengths(expected, actual).contains(&actual.len())
}

/// The smallest number of leading `actual` lines that `expected` describes, if any.
pub fn matching_prefix(expected: &[String], actual: &[String]) -> Option<usize> {
    prefix_lengths(expected, actual).into_iter().min()
}

/// Every `n` such that `expected` describes `actual[..n]`.
fn prefix_lengths(expected: &[String], actual: &[String]) -> Vec<usize> {
    // reachable[j]: the first i expected lines can describe actual[..j].
    let mut reachable = vec![false; actual.len() + 1];
    reachable[0] = true;
    for line in expected {
        let mut next = vec![false; actual.len() + 1];
        if line.trim() == "..." {
            let mut on = false;
            for (j, slot) in next.iter_mut().enumerate() {
                on |= reachable[j];
                *slot = on;
            }
        } else {
            for j in 0..actual.len() {
                if reachable[j] && line_matches(line, &actual[j]) {
                    next[j + 1] = true;
                }
            }
        }
        reachable = next;
    }
    (0..=actual.len()).filter(|&j| reachable[j]).collect()
}

/// One line against one line, `[..]` matching any text.
pub fn line_matches(expected: &str, actual: &str) -> bool {
    let expected = expected.trim_end();
    let actual = actual.trim_end();
    let parts: Vec<&str> = expected.split("[..]").collect();
    if parts.len() == 1 {
        return expected == actual;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !actual.starts_with(first) || actual.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &actual[first.len()..];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(at) => rest = &rest[at + middle.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// `text`'s lines, `\r\n` as `\n`.
pub fn lines(text: &str) -> Vec<String> {
    text.replace("\r\n", "\n")
        .lines()
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn wildcards() {
        assert!(line_matches("a [..] c", "a b b c"));
        assert!(line_matches(
            "listening on http://127.0.0.1:[..]",
            "listening on http://127.0.0.1:4"
        ));
        assert!(!line_matches("a [..] c", "a c"));
        assert!(line_matches("[..]", ""));
        assert!(matches(&v(&["a", "...", "z"]), &v(&["a", "b", "c", "z"])));
        assert!(matches(&v(&["a", "...", "z"]), &v(&["a", "z"])));
        assert!(!matches(&v(&["a", "z"]), &v(&["a", "b", "z"])));
        assert!(matches(&v(&["..."]), &v(&[])));
        assert_eq!(
            matching_prefix(&v(&["a", "b"]), &v(&["a", "b", "c"])),
            Some(2)
        );
        assert_eq!(matching_prefix(&v(&["x"]), &v(&["a"])), None);
        assert_eq!(matching_prefix(&v(&[]), &v(&["a"])), Some(0));
    }
}
