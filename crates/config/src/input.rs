//! Reading input files: one size limit, one YAML budget, and their errors in plain words.
//!
//! Every file routersim reads whole (a scenario, a router config and its `include:` files, a
//! golden summary) goes through [`read_text_file`], which refuses a file over
//! [`MAX_INPUT_FILE_BYTES`] before holding it: the length is checked first, and the read is
//! capped at the limit plus one byte, because `/dev/zero`, pipes and `/proc` files report a
//! length of 0. It lives in the engine (the router config loader needs it for includes) and
//! the simulation reuses it, so there is one limit and one message.
//!
//! The YAML parser's budget ([`yaml_budget`]) is sized for that file limit: a scenario that
//! fits in the file limit (a million explicit `traffic` entries do) never breaches it by its
//! size alone; only aliases that expand without end or nesting deeper than [`MAX_YAML_DEPTH`]
//! do. A breach is reported by [`budget_message`] in words, with what to do.

use std::io::{self, Read};
use std::path::Path;

use serde_saphyr::budget::BudgetBreach;

/// The largest input file read whole: 64 MiB.
pub const MAX_INPUT_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The limit as people write it, for messages and the README.
pub const MAX_INPUT_FILE_TEXT: &str = "64 MiB";

/// The deepest nesting of lists and mappings in a YAML file.
pub const MAX_YAML_DEPTH: usize = 64;

/// The most YAML nodes (scalars, lists, mappings) in one file: more than a file within
/// [`MAX_INPUT_FILE_BYTES`] can hold without aliases (each node takes at least two bytes).
pub const MAX_YAML_NODES: usize = 40_000_000;

/// Reads a whole UTF-8 text file of at most [`MAX_INPUT_FILE_BYTES`].
///
/// A larger file is refused before it is read (an [`io::ErrorKind::FileTooLarge`] error whose
/// message states the limit); a file that reports no length (a device, a pipe) is read up to
/// the limit and refused there.
pub fn read_text_file(path: &Path) -> io::Result<String> {
    let file = std::fs::File::open(path)?;
    let size = file.metadata()?.len();
    if size > MAX_INPUT_FILE_BYTES {
        return Err(too_large(Some(size)));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(MAX_INPUT_FILE_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_INPUT_FILE_BYTES {
        return Err(too_large(None));
    }
    String::from_utf8(bytes).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "not UTF-8 text (an invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

fn too_large(size: Option<u64>) -> io::Error {
    let size = match size {
        Some(bytes) => format!("{bytes} bytes, "),
        None => String::new(),
    };
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!(
            "the file is too large ({size}more than the {MAX_INPUT_FILE_TEXT} routersim reads \
             from one scenario, router config or golden file)"
        ),
    )
}

/// The YAML budget of every routersim file (scenarios and router configs): serde-saphyr's
/// defaults, except that node and event counts and scalar bytes scale with the file limit.
pub fn yaml_budget() -> serde_saphyr::Budget {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_nodes = MAX_YAML_NODES;
    budget.max_events = 2 * MAX_YAML_NODES;
    budget.max_total_scalar_bytes = MAX_INPUT_FILE_BYTES as usize;
    budget.max_depth = MAX_YAML_DEPTH;
    budget
}

/// A budget breach in words, with what to do about it.
pub fn budget_message(breach: &BudgetBreach) -> String {
    let big = "split it, or move a long request list to `traffic_file:` (a CSV read as it runs)";
    let aliases = "aliases (*name) may expand an anchor (&name) only so often; write the \
                   repeated part out, or use fewer aliases";
    match breach {
        BudgetBreach::Nodes { .. } => format!(
            "more than {} YAML nodes (values, lists and mappings); {big}",
            thousands(MAX_YAML_NODES as u64)
        ),
        BudgetBreach::Events { .. } => format!(
            "more than {} YAML parser events; {big}",
            thousands(2 * MAX_YAML_NODES as u64)
        ),
        BudgetBreach::ScalarBytes { .. } => {
            format!("more than {MAX_INPUT_FILE_TEXT} of text in values (aliases included); {big}")
        }
        BudgetBreach::InputBytes { .. } => {
            format!("more than {MAX_INPUT_FILE_TEXT} of input; {big}")
        }
        BudgetBreach::Depth { .. } => format!(
            "lists and mappings nested more than {MAX_YAML_DEPTH} levels deep; flatten the document"
        ),
        BudgetBreach::Documents { .. } => {
            "too many YAML documents (`---`); a routersim file is one document".to_string()
        }
        BudgetBreach::Aliases { .. }
        | BudgetBreach::Anchors { .. }
        | BudgetBreach::AliasAnchorRatio { .. }
        | BudgetBreach::RecordedAnchorEvents { .. }
        | BudgetBreach::RecordedAnchorBytes { .. } => {
            format!("too many alias expansions; {aliases}")
        }
        BudgetBreach::MergeKeys { .. } => {
            "more than 10,000 merge keys (`<<:`); write the merged keys out".to_string()
        }
        BudgetBreach::SequenceUnbalanced => {
            "the document's lists and mappings do not close; is the file cut short?".to_string()
        }
        other => format!("the document is too large or too deep for the YAML parser ({other:?})"),
    }
}

/// The error itself, out of serde-saphyr's snippet and alias wrappers.
pub fn original_error(mut error: &serde_saphyr::Error) -> &serde_saphyr::Error {
    while let serde_saphyr::Error::AliasError { error: inner, .. }
    | serde_saphyr::Error::WithSnippet { error: inner, .. } = error
    {
        error = inner;
    }
    error
}

/// A serde-saphyr error's message without its location, budget breaches in words.
pub fn yaml_message(error: &serde_saphyr::Error) -> String {
    use serde_saphyr::MessageFormatter;
    match original_error(error) {
        serde_saphyr::Error::Budget { breach, .. } => budget_message(breach),
        other => serde_saphyr::DefaultMessageFormatter
            .format_message(other)
            .into_owned(),
    }
}

/// `1234567` → `1,234,567`: numbers in messages read like numbers.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(40_000_000), "40,000,000");
    }

    #[test]
    fn budget_breaches_read_as_words() {
        let nodes = budget_message(&BudgetBreach::Nodes { nodes: 40_000_001 });
        assert!(
            nodes.starts_with("more than 40,000,000 YAML nodes"),
            "{nodes}"
        );
        assert!(!nodes.contains("Nodes {"), "{nodes}");
        let depth = budget_message(&BudgetBreach::Depth { depth: 65 });
        assert!(depth.contains("nested more than 64 levels"), "{depth}");
    }
}
