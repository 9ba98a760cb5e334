//! The settings that pick one of a few behaviours and are read by name outside the router
//! too: `stream_recovery`, `replay`, and a deployment's `schema_modes`.

/// What happens to a stream that breaks after the caller received something.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StreamRecovery {
    /// LiteLLM's: before content, recover like any failed attempt; after content, fail (or
    /// continue with `enable_mid_stream_fallback_continuation`). Failed streams bill nothing.
    #[default]
    LiteLlm,
    /// Multigrid's: recover only until the first byte (any frame, even role-only); after it,
    /// an error event on the same stream; every token produced so far is delivered and billed.
    Multigrid,
}

impl StreamRecovery {
    /// Parses `litellm` / `multigrid`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name.trim() {
            "litellm" => Some(Self::LiteLlm),
            "multigrid" => Some(Self::Multigrid),
            _ => None,
        }
    }

    /// Its name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::LiteLlm => "litellm",
            Self::Multigrid => "multigrid",
        }
    }
}

/// `router_settings.replay: always | dedupe | never`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Replay {
    /// Replay like any connection error (what LiteLLM, DeltaLLM and Multigrid do): the retry
    /// and fallback rules decide; a provider that executed the first call executes again.
    #[default]
    Always,
    /// Replay with the operation id as an idempotency key: the provider answers a replay of
    /// an operation it already executed from that execution (it does not run it twice).
    Dedupe,
    /// Never replay an ambiguous attempt: the request fails with it at once — no retry and no
    /// fallback (either would send the same operation again).
    Never,
}

impl Replay {
    /// Every policy, in the order error messages list them.
    pub const ALL: [Replay; 3] = [Replay::Always, Replay::Dedupe, Replay::Never];

    /// Its name in config files and reports.
    pub const fn as_str(self) -> &'static str {
        match self {
            Replay::Always => "always",
            Replay::Dedupe => "dedupe",
            Replay::Never => "never",
        }
    }

    /// Parses a name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == name)
    }

    /// Whether an ambiguous attempt may be followed by another attempt of the same request.
    pub const fn replays(self) -> bool {
        !matches!(self, Replay::Never)
    }

    /// Whether a replay carries the operation id, so a provider that executed it once does
    /// not execute it again.
    pub const fn deduplicates(self) -> bool {
        matches!(self, Replay::Dedupe)
    }
}
/// A structured-output mode a route offers (`model_info.schema_modes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SchemaMode {
    /// JSON mode: JSON, any shape.
    JsonObject,
    /// A JSON schema, best effort.
    JsonSchema,
    /// A JSON schema, constrained decoding.
    Strict,
}

impl SchemaMode {
    /// Its name in configs.
    pub const fn as_str(self) -> &'static str {
        match self {
            SchemaMode::JsonObject => "json_object",
            SchemaMode::JsonSchema => "json_schema",
            SchemaMode::Strict => "strict",
        }
    }

    /// Parses a config name.
    pub fn from_name(name: &str) -> Option<Self> {
        [
            SchemaMode::JsonObject,
            SchemaMode::JsonSchema,
            SchemaMode::Strict,
        ]
        .into_iter()
        .find(|m| m.as_str() == name)
    }
}
