//! The scenario file being validated, for errors located by YAML path.
//!
//! Separate because every section's validator builds its errors through it, and the
//! validators must not depend on the loader that calls them.

use std::path::Path;
use std::sync::OnceLock;

use super::error::ScenarioError;
use crate::yaml::{LocationIndex, YamlError};

/// The scenario file being read, for building located errors.
pub(super) struct Ctx<'a> {
    file: &'a Path,
    text: &'a str,
    index: OnceLock<LocationIndex>,
}

impl<'a> Ctx<'a> {
    pub(super) fn new(file: &'a Path, text: &'a str) -> Self {
        Self {
            file,
            text,
            index: OnceLock::new(),
        }
    }

    /// The scenario file (it anchors `router_file` and `traffic_file`).
    pub(super) fn file(&self) -> &'a Path {
        self.file
    }

    pub(super) fn located(&self, e: YamlError) -> ScenarioError {
        ScenarioError {
            file: self.file.to_path_buf(),
            line: e.line,
            column: e.column,
            path: e.path,
            message: e.message,
        }
    }

    /// An error at `path`, located by re-reading the text (only errors pay for that).
    pub(super) fn error(&self, path: &str, message: impl Into<String>) -> ScenarioError {
        let (line, column) = self
            .index
            .get_or_init(|| LocationIndex::new(self.text))
            .locate(path)
            .unzip();
        ScenarioError {
            file: self.file.to_path_buf(),
            line,
            column,
            path: path.to_string(),
            message: message.into(),
        }
    }
}
