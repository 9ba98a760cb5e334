//! A `console` block as steps: `$ command` lines (a trailing `\` continues a command on the
//! next line), each followed by the output it prints, and `? N` for an exit code other
//! than 0.

/// One command of a console block.
pub struct Step {
    /// Line of the `$`, from 1 in the page.
    pub line: usize,
    /// The command, continuation lines joined with a space.
    pub command: String,
    /// The output shown below it (empty: not checked).
    pub expected: Vec<String>,
    /// The exit code shown (`? N`), else 0.
    pub status: i32,
}

/// The steps of a console block whose first body line is page line `first_line`.
pub fn steps(body: &[String], first_line: usize) -> Result<Vec<Step>, String> {
    let mut steps: Vec<Step> = Vec::new();
    let mut continuing = false;
    for (index, raw) in body.iter().enumerate() {
        let line = first_line + index;
        if continuing {
            let step = steps.last_mut().ok_or("a continuation without a command")?;
            let text = raw.trim();
            continuing = text.ends_with('\\');
            step.command.push(' ');
            step.command.push_str(text.trim_end_matches('\\').trim());
            continue;
        }
        if let Some(command) = raw.strip_prefix("$ ") {
            continuing = command.trim_end().ends_with('\\');
            let command = command.trim_end().trim_end_matches('\\').trim().to_string();
            steps.push(Step {
                line,
                command,
                expected: Vec::new(),
                status: 0,
            });
            continue;
        }
        let step = steps
            .last_mut()
            .ok_or_else(|| format!("line {line}: output before the first `$ ` command"))?;
        match raw.strip_prefix("? ") {
            Some(code) => {
                step.status = code
                    .trim()
                    .parse()
                    .map_err(|_| format!("line {line}: `? {code}`"))?;
            }
            None => step.expected.push(raw.clone()),
        }
    }
    Ok(steps)
}

/// Splits a command into words as a POSIX shell would (quotes and backslashes; no
/// expansions).
pub fn words(command: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err(format!("unclosed ' in {command}")),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => word.push(chars.next().ok_or("a trailing \\")?),
                        Some(c) => word.push(c),
                        None => return Err(format!("unclosed \" in {command}")),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.push(chars.next().ok_or("a trailing \\")?);
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// Replaces `from` by `to` where it stands as a whole number (no digit on either side).
pub fn replace_number(text: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(from) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + from.len()..].chars().next();
        let whole = !before.is_some_and(|c| c.is_ascii_digit())
            && !after.is_some_and(|c| c.is_ascii_digit());
        out.push_str(&rest[..at]);
        out.push_str(if whole { to } else { from });
        rest = &rest[at + from.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_words_and_numbers() {
        let body: Vec<String> = ["$ a \\", "    b", "out", "? 1", "$ c &", "x"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let steps = steps(&body, 10).unwrap();
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0].command, "a b");
        assert_eq!(steps[0].expected, vec!["out"]);
        assert_eq!(steps[0].status, 1);
        assert_eq!(steps[1].line, 14);
        assert_eq!(
            words(r#"curl -d '{"a": 1}' -H "x: \"y\"" a\ b"#).unwrap(),
            vec!["curl", "-d", r#"{"a": 1}"#, "-H", r#"x: "y""#, "a b"]
        );
        assert_eq!(
            replace_number("127.0.0.1:4000 40000 4000", "4000", "5"),
            "127.0.0.1:5 40000 5"
        );
    }
}
