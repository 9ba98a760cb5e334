//! Ambiguous execution (the contracts seed: *"Connection lost after the provider may have
//! accepted the request — Deduplicate before replaying"*): what the router does after an
//! attempt whose connection was lost after the request was sent
//! ([`ProviderFailure::ambiguous`](crate::failure::ProviderFailure::ambiguous)).
//!
//! `router_settings.replay` picks it; the attempt's settlement (`router/attempt.rs`) reads it,
//! the one place every attempt of every profile passes, and reports the outcome as an
//! [`AmbiguousOutcome`](crate::event::EventKind::AmbiguousOutcome) event. The operation id
//! is the request's id (a client's own retries of the same user request keep it).

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
