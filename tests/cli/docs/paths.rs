//! Every repository path a page names must exist: in inline code (`scenarios/ci/`), in the
//! commands of its console blocks, and as a link target (`[x](docs/live.md#serve)`, whose
//! anchor must be a heading of that page too).
//!
//! A word counts as a repository path when its first component is one of the repository's
//! top-level entries (`crates`, `scenarios`, `README.md`, …; not `reports/` or `target/`,
//! which runs write). A placeholder component (`<name>`, `*`, `{a,b}`, `…`) ends what is
//! checked: `scenarios/alternatives/<file>.yaml` checks `scenarios/alternatives/`.

use std::path::{Component, Path, PathBuf};

use crate::docs::markdown::{Page, anchors, code_spans, links, read};
use crate::docs::shell::words;

/// Top-level entries that are outputs, not repository paths.
const NOT_IN_REPOSITORY: &[&str] = &["reports", "target", ".git"];

/// Every path `page` names that does not exist, as `page:line: why`.
pub fn missing(root: &Path, page: &Page) -> Vec<String> {
    let roots = top_level(root);
    let mut problems = Vec::new();
    let mut named: Vec<(usize, String)> = code_spans(&page.prose);
    for block in page.blocks.iter().filter(|b| b.lang == "console") {
        for (index, line) in block.body.iter().enumerate() {
            if let Some(command) = line.strip_prefix("$ ") {
                named.push((block.line + 1 + index, command.to_string()));
            }
        }
    }
    for (line, text) in named {
        for word in
            words(&text).unwrap_or_else(|_| text.split_whitespace().map(str::to_string).collect())
        {
            let word = word.trim_start_matches(['\'', '"', '(']);
            let word = word.trim_end_matches(['\'', '"', ')', ',', ';', ':', '.']);
            let word = word.split(['#', ':']).next().unwrap_or("");
            let first = word.split('/').next().unwrap_or("");
            if roots.iter().any(|r| r == first)
                && let Err(why) = exists(root, Path::new(word))
            {
                problems.push(format!("{}:{line}: `{word}`: {why}", page.path.display()));
            }
        }
    }
    for (line, target) in links(&page.prose) {
        if let Err(why) = link(root, page, &target) {
            problems.push(format!(
                "{}:{line}: link {target}: {why}",
                page.path.display()
            ));
        }
    }
    problems
}

/// The repository's top-level entries, but outputs.
fn top_level(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().to_string())
                .collect()
        })
        .unwrap_or_default();
    names.retain(|n| !NOT_IN_REPOSITORY.contains(&n.as_str()));
    names
}

/// Whether `path` (relative to `root`) exists, up to its first placeholder component.
fn exists(root: &Path, path: &Path) -> Result<(), String> {
    let mut checked = PathBuf::new();
    let mut glob = None;
    for component in path.components() {
        let text = component.as_os_str().to_string_lossy();
        if text.contains(['<', '>', '*', '{', '}', '…', '$', '[']) || text.contains("NNN") {
            glob = Some(text.to_string());
            break;
        }
        checked.push(component);
    }
    if !root.join(&checked).exists() {
        return Err(format!("{} does not exist", checked.display()));
    }
    if let Some(pattern) = glob.filter(|g| g.contains('*') && !g.contains(['<', '{', '…'])) {
        let dir = std::fs::read_dir(root.join(&checked)).map_err(|e| e.to_string())?;
        let any = dir
            .filter_map(|e| e.ok())
            .any(|e| glob_matches(&pattern, &e.file_name().to_string_lossy()));
        if !any {
            return Err(format!(
                "nothing in {} matches {pattern}",
                checked.display()
            ));
        }
    }
    Ok(())
}

/// `*` as any text.
fn glob_matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &name[first.len()..];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(at) => rest = &rest[at + middle.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// A link target, relative to the page's folder: the file exists, and so does the anchor.
fn link(root: &Path, page: &Page, target: &str) -> Result<(), String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return Ok(());
    }
    let (file, anchor) = match target.split_once('#') {
        Some((file, anchor)) => (file, Some(anchor)),
        None => (target, None),
    };
    let rel = if file.is_empty() {
        page.path.clone()
    } else {
        let joined = page.path.parent().unwrap_or(Path::new("")).join(file);
        normalize(&joined).ok_or("it leaves the repository")?
    };
    exists(root, &rel)?;
    if let Some(anchor) = anchor {
        if rel.extension().is_none_or(|e| e != "md") || root.join(&rel).is_dir() {
            return Err("an anchor into something other than a page".to_string());
        }
        let target_page = read(root, &rel);
        if !anchors(&target_page.prose).iter().any(|a| a == anchor) {
            return Err(format!("{} has no heading #{anchor}", rel.display()));
        }
    }
    Ok(())
}

/// `a/../b` as `b`; `None` when it climbs out of the root.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            Component::Normal(part) => out.push(part),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_and_normal_paths() {
        assert!(glob_matches("shard-*", "shard-1-of-2"));
        assert!(glob_matches("*.golden.json", "a.golden.json"));
        assert!(!glob_matches("*.golden.json", "a.yaml"));
        assert_eq!(
            normalize(Path::new("docs/../scenarios/ci")),
            Some(PathBuf::from("scenarios/ci"))
        );
        assert_eq!(normalize(Path::new("../x")), None);
    }
}
