//! The `index.html` pages of `check` and `sweep` output folders: one static page that opens
//! the folder in a browser, with the table, the verdicts, the plots and a link to each run.
//!
//! Why a writer of its own: the pages are plain HTML with the plots inline (no script, no
//! network, no file outside the folder), written from the same rows the terminal prints, so
//! the page and the terminal never disagree. This module is what the two pages share: the
//! escaping, the page around the content, tables, and inlining an SVG file.

use std::fmt::Write as _;
use std::path::Path;

/// The page's file name in an output folder.
pub const INDEX_HTML: &str = "index.html";

/// Text as HTML content or attribute value.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A link to a path relative to the page (each segment percent-encoded where a browser needs
/// it: spaces, `#`, `?`, `%`, quotes).
pub fn link(relative: &Path, text: &str) -> String {
    let href: Vec<String> = relative
        .components()
        .map(|c| {
            c.as_os_str()
                .to_string_lossy()
                .chars()
                .map(|ch| match ch {
                    ' ' | '#' | '?' | '%' | '"' | '\'' | '<' | '>' => {
                        format!("%{:02X}", ch as u32)
                    }
                    ch => ch.to_string(),
                })
                .collect()
        })
        .collect();
    format!(
        "<a href=\"{}\">{}</a>",
        escape(&href.join("/")),
        escape(text)
    )
}

/// A table cell: its HTML and its `class` (empty for none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// The content, HTML.
    pub html: String,
    /// The cell's class for the stylesheet (`num`, `verdict`), or empty.
    pub class: &'static str,
}

impl Cell {
    /// A cell of text (escaped).
    pub fn text(text: &str) -> Self {
        Self::html(escape(text))
    }

    /// A cell of HTML as is.
    pub fn html(html: String) -> Self {
        Self { html, class: "" }
    }

    /// The same cell with a class.
    pub fn with_class(self, class: &'static str) -> Self {
        Self { class, ..self }
    }
}

/// A table: the header's cells as text, then each row with its `class` (empty for none).
pub fn table(header: &[String], rows: &[(String, Vec<Cell>)]) -> String {
    let mut out = String::from("<table>\n<thead><tr>");
    for cell in header {
        let _ = write!(out, "<th>{}</th>", escape(cell));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for (class, cells) in rows {
        if class.is_empty() {
            out.push_str("<tr>");
        } else {
            let _ = write!(out, "<tr class=\"{}\">", escape(class));
        }
        for cell in cells {
            if cell.class.is_empty() {
                let _ = write!(out, "<td>{}</td>", cell.html);
            } else {
                let _ = write!(out, "<td class=\"{}\">{}</td>", cell.class, cell.html);
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
    out
}

/// An SVG file's markup to put inline (its XML declaration left out), or `None` when it
/// cannot be read or is no SVG.
pub fn inline_svg(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let start = text.find("<svg")?;
    Some(text[start..].trim_end().to_string())
}

const STYLE: &str = "body{font-family:sans-serif;margin:24px;color:#222;max-width:1500px}\
h1{font-size:22px}h2{font-size:18px;margin-top:28px}\
table{border-collapse:collapse;font-size:13px}th,td{border:1px solid #ddd;padding:4px 8px;\
text-align:left;vertical-align:top}th{background:#f4f4f4}td.num{text-align:right;\
font-variant-numeric:tabular-nums;white-space:nowrap}\
tr.pass td.verdict{color:#2e8b3e}tr.fail td.verdict,tr.error td.verdict{color:#d02121;\
font-weight:bold}\
.plot svg{max-width:100%;height:auto}.thumb svg{width:360px;height:auto}\
pre{background:#f7f7f7;padding:8px;white-space:pre-wrap}.muted{color:#777}";

/// The whole page: `title` and the body's HTML.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n{body}\
         </body>\n</html>\n",
        escape(title),
        escape(title)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_links_are_escaped() {
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
        assert_eq!(
            link(Path::new("dir x/seed-1/report.html"), "report"),
            "<a href=\"dir%20x/seed-1/report.html\">report</a>"
        );
    }
}
