//! The error of every input a scenario reads: the file at fault, where in it, and what was
//! expected.
//!
//! Separate (and below everything else) because it is not only the scenario file's: a traffic
//! file, an `expect` line checked at run time and `--strict`'s config keys report the same
//! shape, and none of them should depend on the scenario loader for it.

use std::fmt;
use std::path::PathBuf;

/// A scenario that cannot be used: where, and what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ScenarioError {
    /// The file at fault (the scenario, or its `router_file`).
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: Option<u64>,
    /// 1-based column, when known.
    pub column: Option<u64>,
    /// YAML path in that file (`traffic[2].rate`); empty for the file as a whole.
    pub path: String,
    /// What was expected.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        if !self.path.is_empty() {
            write!(f, ": {}", self.path)?;
        }
        write!(f, ": {}", self.message)
    }
}
