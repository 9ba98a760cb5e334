//! Why the harness cannot use a scenario or trace (one error type for the crate).

/// A scenario or trace the harness cannot use.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{scenario}: {message}")]
pub struct OracleError {
    /// The scenario.
    pub scenario: String,
    /// What is wrong.
    pub message: String,
}

impl OracleError {
    /// An error about `scenario`.
    pub fn new(scenario: &str, message: impl Into<String>) -> Self {
        Self {
            scenario: scenario.to_string(),
            message: message.into(),
        }
    }
}
