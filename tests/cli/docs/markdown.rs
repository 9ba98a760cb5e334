//! Just enough Markdown for the docs test: fenced code blocks (with the `<!-- doctest: … -->`
//! directives just above them), inline code spans, link targets and heading anchors.

use std::path::{Path, PathBuf};

/// A fenced code block.
pub struct Block {
    /// Line of the opening fence, from 1.
    pub line: usize,
    /// The info string's first word (`console`, `yaml`, …; empty when none).
    pub lang: String,
    /// The lines between the fences.
    pub body: Vec<String>,
    /// The `doctest:` directives of the HTML comments right above the fence.
    pub directives: Vec<String>,
}

/// One page: its blocks, and its text outside them.
pub struct Page {
    /// Relative to the repository root (`README.md`, `docs/live.md`).
    pub path: PathBuf,
    /// Every fenced block, in order.
    pub blocks: Vec<Block>,
    /// The page with every fenced block's lines blanked (line numbers kept).
    pub prose: String,
}

/// Reads `rel` (relative to `root`) as a page.
pub fn read(root: &Path, rel: &Path) -> Page {
    let text = std::fs::read_to_string(root.join(rel))
        .unwrap_or_else(|e| panic!("{}: {e}", rel.display()));
    parse(rel, &text)
}

/// Splits `text` into fenced blocks and prose.
pub fn parse(rel: &Path, text: &str) -> Page {
    let mut blocks = Vec::new();
    let mut prose = Vec::new();
    let mut open: Option<(Block, usize)> = None;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let fence = trimmed.len() - trimmed.trim_start_matches('`').len();
        match open.take() {
            Some((block, width))
                if fence >= width && trimmed.trim_matches('`').trim().is_empty() =>
            {
                blocks.push(block);
                prose.push(String::new());
            }
            Some((mut block, width)) => {
                block.body.push(line.to_string());
                open = Some((block, width));
                prose.push(String::new());
            }
            None if fence >= 3 => {
                let info = trimmed.trim_start_matches('`').trim();
                let lang = info.split_whitespace().next().unwrap_or("").to_string();
                let directives = directives_above(&prose);
                let block = Block {
                    line: index + 1,
                    lang,
                    body: Vec::new(),
                    directives,
                };
                open = Some((block, fence));
                prose.push(String::new());
            }
            None => prose.push(line.to_string()),
        }
    }
    assert!(
        open.is_none(),
        "{}: a code block is never closed",
        rel.display()
    );
    Page {
        path: rel.to_path_buf(),
        blocks,
        prose: prose.join("\n"),
    }
}

/// The `doctest:` directives of the comment lines right above the next line.
fn directives_above(prose: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    for line in prose.iter().rev() {
        let Some(inner) = line
            .trim()
            .strip_prefix("<!--")
            .and_then(|l| l.strip_suffix("-->"))
        else {
            break;
        };
        if let Some(directive) = inner.trim().strip_prefix("doctest:") {
            found.push(directive.trim().to_string());
        }
    }
    found.reverse();
    found
}

/// Every inline code span of the prose, with its line (from 1); a span broken over lines is
/// joined with a space.
pub fn code_spans(prose: &str) -> Vec<(usize, String)> {
    let bytes = prose.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let run = bytes[i..].iter().take_while(|&&b| b == b'`').count();
        let start = i + run;
        let close = find_run(bytes, start, run);
        match close {
            Some(end) => {
                let line = 1 + bytes[..i].iter().filter(|&&b| b == b'\n').count();
                let text = prose[start..end].replace('\n', " ");
                spans.push((line, text.trim().to_string()));
                i = end + run;
            }
            None => i = start,
        }
    }
    spans
}

/// The next run of exactly `run` backticks at or after `from`.
fn find_run(bytes: &[u8], from: usize, run: usize) -> Option<usize> {
    let mut j = from;
    while j < bytes.len() {
        if bytes[j] == b'`' {
            let len = bytes[j..].iter().take_while(|&&b| b == b'`').count();
            if len == run {
                return Some(j);
            }
            j += len;
        } else {
            j += 1;
        }
    }
    None
}

/// The prose with its inline code spans blanked (so that `[x](y)` inside a span is no link).
fn without_spans(prose: &str) -> String {
    let mut out = String::with_capacity(prose.len());
    let mut in_span = false;
    for c in prose.chars() {
        if c == '`' {
            in_span = !in_span;
            out.push(' ');
        } else if in_span && c != '\n' {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

/// Every Markdown link or image target (`[text](target)`), with its line (from 1).
pub fn links(prose: &str) -> Vec<(usize, String)> {
    let text = without_spans(prose);
    let mut found = Vec::new();
    let mut rest = text.as_str();
    let mut offset = 0;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        if let Some(end) = after.find(')') {
            let target = after[..end]
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_string();
            let line = 1 + text[..offset + at].matches('\n').count();
            found.push((line, target));
        }
        offset += at + 2;
        rest = &rest[at + 2..];
    }
    found
}

/// The anchors GitHub gives the page's headings (`## Limits` → `limits`; repeats get `-1`, …).
pub fn anchors(prose: &str) -> Vec<String> {
    let mut bases: Vec<String> = Vec::new();
    let mut anchors = Vec::new();
    for line in prose.lines() {
        let hashes = line.len() - line.trim_start_matches('#').len();
        if hashes == 0 || hashes > 6 || !line[hashes..].starts_with(' ') {
            continue;
        }
        let slug = slug(line[hashes..].trim());
        let repeats = bases.iter().filter(|s| **s == slug).count();
        anchors.push(if repeats == 0 {
            slug.clone()
        } else {
            format!("{slug}-{repeats}")
        });
        bases.push(slug);
    }
    anchors
}

/// GitHub's heading slug: lower case, spaces to `-`, punctuation but `-` and `_` dropped.
pub fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_directives_spans_links_and_anchors() {
        let text = "# A title\n<!-- doctest: port 4000 -->\n```console\n$ ls\n```\nSee `scenarios/ci/` and\n[the page](docs/x.md#a-b), `a\nb`.\n## A, b!\n";
        let page = parse(Path::new("p.md"), text);
        assert_eq!(page.blocks.len(), 1);
        assert_eq!(page.blocks[0].line, 3);
        assert_eq!(page.blocks[0].lang, "console");
        assert_eq!(page.blocks[0].body, vec!["$ ls"]);
        assert_eq!(page.blocks[0].directives, vec!["port 4000"]);
        let spans = code_spans(&page.prose);
        assert_eq!(spans, vec![(6, "scenarios/ci/".into()), (7, "a b".into())]);
        assert_eq!(links(&page.prose), vec![(7, "docs/x.md#a-b".to_string())]);
        assert_eq!(anchors(&page.prose), vec!["a-title", "a-b"]);
    }
}
