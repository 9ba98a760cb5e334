//! The formats by name (`--format`), and what each is called in messages.

/// A log format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// LiteLLM's standard logging payload.
    LitellmPayload,
    /// LiteLLM's spend logs.
    SpendLogs,
    /// The plain CSV.
    Csv,
}

impl Format {
    /// Every format, by its `--format` name.
    pub const ALL: [Format; 3] = [Format::LitellmPayload, Format::SpendLogs, Format::Csv];

    /// Its `--format` name.
    pub fn name(self) -> &'static str {
        match self {
            Format::LitellmPayload => "litellm",
            Format::SpendLogs => "spend-logs",
            Format::Csv => "csv",
        }
    }

    /// What it is, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Format::LitellmPayload => "LiteLLM standard logging payload",
            Format::SpendLogs => "LiteLLM spend logs",
            Format::Csv => "plain CSV (one row per provider call)",
        }
    }

    /// The format named `name` (`--format`).
    pub fn from_name(name: &str) -> Option<Format> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }
}
