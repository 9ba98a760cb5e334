//! A key LiteLLM itself would not know (a typo), kept with the closest key it does: it loads,
//! does nothing, and is reported.

/// A key LiteLLM itself would not know, with the closest key it does.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct UnknownKey {
    /// Its YAML path (`router_settings.allowed_fail`, `router_setting`).
    pub path: String,
    /// The closest known key, as a full path (`router_settings.allowed_fails`).
    pub suggestion: Option<String>,
}

impl UnknownKey {
    /// What is wrong with it, without its path: "LiteLLM's Router has no such setting (…);
    /// did you mean …?".
    pub fn message(&self) -> String {
        let policy = |model: &str| {
            format!("LiteLLM's {model} has no such field (it ignores it, and so does routersim)")
        };
        let mut text = if self.path.contains("retry_policy.") {
            policy("RetryPolicy")
        } else if self.path.contains("allowed_fails_policy.") {
            policy("AllowedFailsPolicy")
        } else if self.path.contains('.') {
            "LiteLLM's Router has no such setting (its proxy ignores it, and so does routersim)"
                .to_string()
        } else {
            "not a section LiteLLM's proxy reads (ignored, by routersim too)".to_string()
        };
        if let Some(suggestion) = &self.suggestion {
            text.push_str(&format!("; did you mean {suggestion}?"));
        }
        text
    }
}

impl std::fmt::Display for UnknownKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message())
    }
}

/// A key set that the chosen profile does not read (`router_settings.max_attempts` under
/// `profile: litellm`, a traffic entry's `models:` outside the candidate walk): it loads, is
/// warned about, and does nothing; `--strict` makes it an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnreadKey {
    /// Its YAML path (`router_settings.max_attempts`, `traffic[0].models`).
    pub path: String,
    /// Why it does nothing, without its path ("read by profile: contract only; it does
    /// nothing here").
    pub message: String,
}

impl UnreadKey {
    /// The key at `path`, and why it does nothing.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for UnreadKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}
