//! What is wrong with a config: the YAML path, and what was expected there.

use std::path::PathBuf;

/// A config that cannot be used, naming the YAML path and what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    /// The YAML path, e.g. `router_settings.fallbacks[0].gpt-4o`.
    pub path: String,
    /// What was expected.
    pub message: String,
    /// The `include:`d file the error is in, when it is not the file being loaded; `path` is
    /// then a path in that file. Its string values are never quoted in `message` (an
    /// included file is where secrets live).
    pub file: Option<PathBuf>,
    /// Line and column (1-based) when the loader knows them: a YAML syntax error.
    pub location: Option<(u64, u64)>,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}", file.display())?;
            if let Some((line, column)) = self.location {
                write!(f, ":{line}:{column}")?;
            }
            write!(f, ": ")?;
        }
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl ConfigError {
    /// An error at `path` (a YAML path) saying what was expected.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
            file: None,
            location: None,
        }
    }
}

/// A load step's result.
pub(crate) type Result<T> = std::result::Result<T, ConfigError>;

/// The largest retry count accepted anywhere (`num_retries`, `retry_policy`).
pub const MAX_NUM_RETRIES: u32 = 1000;

/// The path used for errors about the YAML text itself (it does not parse).
pub const YAML_PATH: &str = "(yaml)";
/// The path used for errors about the document as a whole (it is not a mapping).
pub const ROOT_PATH: &str = "(root)";
