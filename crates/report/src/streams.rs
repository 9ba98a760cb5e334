//! The engine's stream outcome and break kinds as dense indices, so the recorder counts them in
//! fixed arrays (no map lookup on the hot path) and the summary lists every name, seen or not.
//!
//! The engine has no list of the variants; the exhaustive `match`es below make a new variant a
//! compile error here rather than a silently missing name in the reports.

use routersim_engine::stream::{BreakKind, StreamOutcome};

/// Every stream outcome, in the engine's declaration order; `OUTCOMES[outcome_index(o)] == o`.
pub(crate) const OUTCOMES: [StreamOutcome; 6] = [
    StreamOutcome::Completed,
    StreamOutcome::BrokenBeforeContent,
    StreamOutcome::BrokenAfterContent,
    StreamOutcome::Continued,
    StreamOutcome::Stalled,
    StreamOutcome::Empty,
];

/// Where an outcome sits in [`OUTCOMES`].
pub(crate) fn outcome_index(outcome: StreamOutcome) -> usize {
    match outcome {
        StreamOutcome::Completed => 0,
        StreamOutcome::BrokenBeforeContent => 1,
        StreamOutcome::BrokenAfterContent => 2,
        StreamOutcome::Continued => 3,
        StreamOutcome::Stalled => 4,
        StreamOutcome::Empty => 5,
    }
}

/// Every break kind, in the engine's declaration order; `BREAKS[break_index(b)] == b`.
pub(crate) const BREAKS: [BreakKind; 7] = [
    BreakKind::Connection,
    BreakKind::ErrorFrame,
    BreakKind::Truncated,
    BreakKind::Stall,
    BreakKind::FirstTokenTimeout,
    BreakKind::ContentFilter,
    BreakKind::EmptyResponse,
];

/// Where a break kind sits in [`BREAKS`].
pub(crate) fn break_index(how: BreakKind) -> usize {
    match how {
        BreakKind::Connection => 0,
        BreakKind::ErrorFrame => 1,
        BreakKind::Truncated => 2,
        BreakKind::Stall => 3,
        BreakKind::FirstTokenTimeout => 4,
        BreakKind::ContentFilter => 5,
        BreakKind::EmptyResponse => 6,
    }
}

/// Whether `name` is a break kind's report name.
pub(crate) fn is_break_name(name: &str) -> bool {
    BREAKS.iter().any(|b| b.as_str() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_round_trip() {
        for (i, o) in OUTCOMES.iter().enumerate() {
            assert_eq!(outcome_index(*o), i);
        }
        for (i, b) in BREAKS.iter().enumerate() {
            assert_eq!(break_index(*b), i);
        }
        assert!(is_break_name("first_token_timeout"));
        assert!(!is_break_name("completed"));
    }
}
