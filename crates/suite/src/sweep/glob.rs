//! Shell-style globs for `routersim merge 'shards/*'`: expanded by the program, so a quoted
//! pattern works the same under every shell and in CI systems that do not expand it (a
//! Kubernetes container command, a GitHub Actions step in PowerShell).
//!
//! Separate because it is a small, self-contained matcher (`*`, `?`, `[abc]`, `[a-z]`,
//! `[!a]`), tested on its own; no dependency for a dozen lines.

use std::path::{Component, Path, PathBuf};

use super::error::SweepError;

/// Whether `text` has a glob character.
pub fn is_pattern(text: &str) -> bool {
    text.contains(['*', '?', '['])
}

/// Whether `name` matches `pattern` (one path component).
pub fn matches(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    match_from(&p, &n)
}

fn match_from(p: &[char], n: &[char]) -> bool {
    match p.first() {
        None => n.is_empty(),
        Some('*') => (0..=n.len()).any(|skip| match_from(&p[1..], &n[skip..])),
        Some('?') => !n.is_empty() && match_from(&p[1..], &n[1..]),
        Some('[') => match (class(&p[1..]), n.first()) {
            (Some((hit, len)), Some(&c)) => hit(c) && match_from(&p[1 + len..], &n[1..]),
            (None, Some(&c)) => c == '[' && match_from(&p[1..], &n[1..]),
            (_, None) => false,
        },
        Some(&c) => n.first() == Some(&c) && match_from(&p[1..], &n[1..]),
    }
}

type ClassTest = Box<dyn Fn(char) -> bool>;

/// A `[...]` class after its `[`: the test and how many characters it used (with `]`).
fn class(p: &[char]) -> Option<(ClassTest, usize)> {
    let negate = matches!(p.first(), Some('!' | '^'));
    let start = usize::from(negate);
    // A `]` first in the class is a member.
    let end = p
        .iter()
        .enumerate()
        .skip(start + 1)
        .find(|(_, c)| **c == ']')
        .map(|(i, _)| i)?;
    let members: Vec<char> = p[start..end].to_vec();
    let test = move |c: char| {
        let mut i = 0;
        let mut hit = false;
        while i < members.len() {
            if i + 2 < members.len() && members[i + 1] == '-' {
                hit |= members[i] <= c && c <= members[i + 2];
                i += 3;
            } else {
                hit |= members[i] == c;
                i += 1;
            }
        }
        hit != negate
    };
    Some((Box::new(test), end + 1))
}

/// Expands one argument: a path without glob characters is kept as is; a pattern becomes the
/// existing paths it matches, sorted, or an error when it matches nothing. Names starting with
/// `.` match only a pattern component that starts with `.`.
pub fn expand(arg: &Path) -> Result<Vec<PathBuf>, SweepError> {
    let text = arg.to_string_lossy();
    if !is_pattern(&text) {
        return Ok(vec![arg.to_path_buf()]);
    }
    let mut found = vec![PathBuf::new()];
    for component in arg.components() {
        let part = component.as_os_str().to_string_lossy();
        let wild = matches!(component, Component::Normal(_)) && is_pattern(&part);
        if !wild {
            for path in &mut found {
                path.push(component.as_os_str());
            }
            continue;
        }
        let mut next = Vec::new();
        for base in &found {
            let dir = if base.as_os_str().is_empty() {
                Path::new(".")
            } else {
                base.as_path()
            };
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut names: Vec<String> = entries
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| {
                    (!name.starts_with('.') || part.starts_with('.')) && matches(&part, name)
                })
                .collect();
            names.sort();
            next.extend(names.into_iter().map(|name| base.join(name)));
        }
        found = next;
    }
    found.retain(|p| p.exists());
    found.sort();
    if found.is_empty() {
        return Err(SweepError::Usage(format!(
            "merge: the pattern {text} matches nothing"
        )));
    }
    Ok(found)
}

/// Expands every argument ([`expand`]), in the order given.
pub fn expand_all(args: &[PathBuf]) -> Result<Vec<PathBuf>, SweepError> {
    let mut out = Vec::new();
    for arg in args {
        out.extend(expand(arg)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_as_a_shell_would() {
        assert!(matches("*", "shard-1"));
        assert!(matches("shard-?", "shard-1"));
        assert!(!matches("shard-?", "shard-10"));
        assert!(matches("shard-[12]", "shard-2"));
        assert!(!matches("shard-[!12]", "shard-2"));
        assert!(matches("shard-[0-9]*", "shard-10"));
        assert!(!matches("s*x", "shard"));
        assert!(matches("a[b", "a[b"));
    }

    #[test]
    fn a_pattern_expands_sorted_and_fails_on_no_match() {
        let dir = std::env::temp_dir().join(format!("routersim-glob-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for name in ["b", "a", "c", ".hidden"] {
            std::fs::create_dir_all(dir.join("shards").join(name)).unwrap_or_default();
        }
        let found = expand(&dir.join("shards").join("*")).unwrap_or_default();
        let names: Vec<_> = found
            .iter()
            .filter_map(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert!(expand(&dir.join("nothing-*")).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
