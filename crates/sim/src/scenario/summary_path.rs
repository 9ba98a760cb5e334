//! Paths into `summary.json`: how a leaf is named (`latency_ms.p99`,
//! `windows["east: rate_limit 90%"].during.p99_latency_ms`) and the patterns a golden tolerance
//! may name (`windows.*.p99_latency_ms`).
//!
//! Why its own module: the scenario's `golden:` key validates the patterns when the file loads,
//! and `routersim check` names every leaf it compares the same way, so the name a diff prints
//! is a name a tolerance accepts.
//!
//! - A **leaf path** is a list of [`Step`]s: mapping keys, and list items named by what they
//!   are (a fault window by its label) or, failing that, by their position. Written: the first
//!   key bare, then `.key`; a key that is not a plain word (`[A-Za-z0-9_-]+`), and every named
//!   list item, as a JSON string in brackets (`["east: rate_limit 90%"]`); a position `[2]`.
//! - A **pattern** is written the same way, and `*` (or `[*]`) stands for one or more steps:
//!   `windows.*.p99_latency_ms` is every window's `during` and `after` p99. A name matches a
//!   key, a named item or a position (`windows.east` is `windows["east"]`). A pattern covers
//!   the leaves it names and every leaf under them (`windows` covers every window's numbers).

use std::fmt;

/// One step of a leaf's path in `summary.json`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    /// A mapping key.
    Key(String),
    /// A list item named by what it is (a fault window's label).
    Item(String),
    /// A list item by its position (or a replica by its number).
    Index(usize),
}

impl Step {
    /// The step's name, as a pattern's name matches it.
    fn name(&self) -> String {
        match self {
            Step::Key(k) | Step::Item(k) => k.clone(),
            Step::Index(i) => i.to_string(),
        }
    }
}

/// Whether a key is written bare (`latency_ms`), not in brackets.
fn is_word(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// `"text"` as a JSON string (quotes and backslashes escaped).
fn quoted(text: &str) -> String {
    serde_json::Value::String(text.to_string()).to_string()
}

/// A leaf's path as written (see the module docs).
pub fn render(steps: &[Step]) -> String {
    let mut out = String::new();
    for step in steps {
        match step {
            Step::Key(k) if is_word(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Step::Key(k) | Step::Item(k) => {
                out.push('[');
                out.push_str(&quoted(k));
                out.push(']');
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// One step of a pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatternStep {
    /// A key, item name or position, exactly.
    Name(String),
    /// `*`: one or more steps.
    Any,
}

/// A pattern over leaf paths (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathPattern {
    steps: Vec<PatternStep>,
}

/// What a pattern looks like, for error messages.
pub const PATTERN_EXAMPLES: &str = "a summary.json path such as latency_ms.p99, \
     windows[\"east: rate_limit 90%\"].during.p99_latency_ms or windows.*.p99_latency_ms";

impl PathPattern {
    /// The pattern of exactly these names.
    pub fn of_names<S: AsRef<str>>(names: &[S]) -> Self {
        Self {
            steps: names
                .iter()
                .map(|n| match n.as_ref() {
                    "*" => PatternStep::Any,
                    n => PatternStep::Name(n.to_string()),
                })
                .collect(),
        }
    }

    /// Reads a pattern as written (see the module docs).
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = |why: String| format!("{why} in {text:?}: expected {PATTERN_EXAMPLES}");
        let chars: Vec<char> = text.trim().chars().collect();
        let mut steps = Vec::new();
        let mut i = 0;
        let mut need_step = true;
        while i < chars.len() {
            let c = chars[i];
            if c == '[' {
                let (step, next) = bracket(&chars, i).map_err(bad)?;
                steps.push(step);
                i = next;
                need_step = false;
            } else if c == '.' {
                if need_step {
                    return Err(bad(format!("an empty step at character {}", i + 1)));
                }
                need_step = true;
                i += 1;
            } else if need_step {
                let start = i;
                while i < chars.len() && !matches!(chars[i], '.' | '[') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                if word == "*" {
                    steps.push(PatternStep::Any);
                } else if is_word(&word) {
                    steps.push(PatternStep::Name(word));
                } else {
                    return Err(bad(format!(
                        "{word:?} is not a plain key (write it as [\"{word}\"])"
                    )));
                }
                need_step = false;
            } else {
                return Err(bad(format!("{c:?} after a step")));
            }
        }
        if need_step {
            return Err(bad("a missing step".into()));
        }
        Ok(Self { steps })
    }

    /// The first step's name (`None` for a pattern starting with `*`).
    pub fn first_name(&self) -> Option<&str> {
        match self.steps.first() {
            Some(PatternStep::Name(n)) => Some(n),
            _ => None,
        }
    }

    /// Steps that are names, not `*`: the more, the more specific the pattern.
    pub fn specificity(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| matches!(s, PatternStep::Name(_)))
            .count()
    }

    /// Whether the pattern names one leaf exactly (no `*`).
    pub fn is_exact(&self) -> bool {
        self.steps.iter().all(|s| matches!(s, PatternStep::Name(_)))
    }

    /// Whether the leaf at `path` is one the pattern names.
    pub fn matches(&self, path: &[Step]) -> bool {
        matches_from(&self.steps, path)
    }

    /// Whether the leaf at `path` is one the pattern names or lies under one it names
    /// (`windows` covers every number of every window).
    pub fn covers(&self, path: &[Step]) -> bool {
        (1..=path.len()).any(|n| self.matches(&path[..n]))
    }
}

fn matches_from(pattern: &[PatternStep], path: &[Step]) -> bool {
    match pattern.first() {
        None => path.is_empty(),
        Some(PatternStep::Name(name)) => path
            .first()
            .is_some_and(|s| s.name() == *name && matches_from(&pattern[1..], &path[1..])),
        Some(PatternStep::Any) => (1..=path.len()).any(|n| matches_from(&pattern[1..], &path[n..])),
    }
}

/// A bracketed step starting at `chars[open]`: `["text"]`, `[3]` or `[*]`; the step and the
/// position after its `]`.
fn bracket(chars: &[char], open: usize) -> Result<(PatternStep, usize), String> {
    let mut i = open + 1;
    if chars.get(i) == Some(&'"') {
        let start = i;
        i += 1;
        while i < chars.len() && chars[i] != '"' {
            i += if chars[i] == '\\' { 2 } else { 1 };
        }
        let literal: String = chars.get(start..=i).unwrap_or_default().iter().collect();
        let name: String = serde_json::from_str(&literal)
            .map_err(|_| format!("an unclosed string at character {}", start + 1))?;
        return match chars.get(i + 1) {
            Some(']') => Ok((PatternStep::Name(name), i + 2)),
            _ => Err(format!("no ] after the string at character {}", start + 1)),
        };
    }
    let close = chars[i..]
        .iter()
        .position(|&c| c == ']')
        .map(|p| p + i)
        .ok_or_else(|| format!("an unclosed [ at character {}", open + 1))?;
    let inside: String = chars[i..close].iter().collect();
    match inside.trim() {
        "*" => Ok((PatternStep::Any, close + 1)),
        n if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => {
            Ok((PatternStep::Name(n.to_string()), close + 1))
        }
        other => Err(format!(
            "[{other}] is neither a position, * nor a quoted name such as [\"east\"]"
        )),
    }
}

impl fmt::Display for PathPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.steps.iter().enumerate() {
            let dot = if i > 0 { "." } else { "" };
            match step {
                PatternStep::Any => write!(f, "{dot}*")?,
                PatternStep::Name(n) if is_word(n) => write!(f, "{dot}{n}")?,
                PatternStep::Name(n) => write!(f, "[{}]", quoted(n))?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window_p99() -> Vec<Step> {
        vec![
            Step::Key("windows".into()),
            Step::Item("east: rate_limit 90%".into()),
            Step::Key("during".into()),
            Step::Key("p99_latency_ms".into()),
        ]
    }

    #[test]
    fn leaves_are_written_with_named_items_in_brackets() {
        assert_eq!(
            render(&window_p99()),
            "windows[\"east: rate_limit 90%\"].during.p99_latency_ms"
        );
        let route = [
            Step::Key("latency_by_final_route".into()),
            Step::Key("(none)".into()),
            Step::Key("p99".into()),
        ];
        assert_eq!(render(&route), "latency_by_final_route[\"(none)\"].p99");
        let replica = [
            Step::Key("by_replica".into()),
            Step::Index(2),
            Step::Key("ok".into()),
        ];
        assert_eq!(render(&replica), "by_replica[2].ok");
    }

    #[test]
    fn a_written_leaf_reads_back_as_the_pattern_of_that_leaf() {
        let text = render(&window_p99());
        let pattern = PathPattern::parse(&text).unwrap();
        assert!(pattern.matches(&window_p99()));
        assert!(pattern.is_exact());
        assert_eq!(pattern.to_string(), text);
    }

    #[test]
    fn a_star_stands_for_one_or_more_steps() {
        let family = PathPattern::parse("windows.*.p99_latency_ms").unwrap();
        assert!(family.matches(&window_p99()));
        assert_eq!(family.specificity(), 2);
        assert!(!family.is_exact());
        let mut p50 = window_p99();
        p50[3] = Step::Key("p50_latency_ms".into());
        assert!(!family.matches(&p50));
        // `*` is at least one step: `windows.*` is not `windows` itself.
        assert!(
            !PathPattern::parse("latency_ms.*.p99")
                .unwrap()
                .matches(&[Step::Key("latency_ms".into()), Step::Key("p99".into())])
        );
        let subtree = PathPattern::parse("windows").unwrap();
        assert!(!subtree.matches(&window_p99()) && subtree.covers(&window_p99()));
        let bracketed = PathPattern::parse("windows[*].during.p99_latency_ms").unwrap();
        assert!(bracketed.matches(&window_p99()));
        let by_name = PathPattern::parse("windows[\"east: rate_limit 90%\"].*").unwrap();
        assert!(by_name.matches(&window_p99()));
    }

    #[test]
    fn malformed_patterns_are_refused_with_an_example() {
        for bad in [
            "",
            "a..b",
            "a.",
            ".a",
            "a[\"x\"",
            "a[x]",
            "east: rate_limit",
            "a[\"x\"]b",
        ] {
            let err = PathPattern::parse(bad).unwrap_err();
            assert!(err.contains("such as latency_ms.p99"), "{bad}: {err}");
        }
        assert_eq!(
            PathPattern::parse("by_replica[0].ok").unwrap(),
            PathPattern::of_names(&["by_replica", "0", "ok"])
        );
    }
}
