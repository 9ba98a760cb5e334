//! `--seeds`: one grammar for every command that runs a scenario on several seeds (`check`,
//! `sweep`), so a seed list typed for one works for the other.
//!
//! The grammar is a comma-separated list of items, each one seed (`3`) or an inclusive range
//! (`1..5`, also `1..=5`); spaces around items are allowed. Seeds keep their first-seen order
//! and a repeated seed runs once (`5,1..3,2` is 5, 1, 2, 3). At most [`MAX_SEEDS`] seeds.
//!
//! Why the union: `check` used to accept mixes and repeats but at most 10,000 seeds, `sweep`
//! one range of up to a million seeds or a plain list without repeats. Every text either
//! accepted is accepted now, with one cap: the larger one.

use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;

/// The most seeds one `--seeds` may name.
pub const MAX_SEEDS: usize = 1_000_000;

/// The examples every error repeats.
const EXPECTED: &str = "expected e.g. `1..5`, `1,2,7` or `3`";

/// A parsed `--seeds`: distinct seeds in the order given, at least one, at most [`MAX_SEEDS`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seeds(Vec<u64>);

/// Why a `--seeds` text is not a list of seeds.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SeedsError {
    /// Nothing but spaces.
    #[error("no seeds given; {EXPECTED}")]
    Empty,
    /// `1,,2`.
    #[error("empty item in {text:?}; {EXPECTED}")]
    EmptyItem {
        /// The whole text.
        text: String,
    },
    /// Not a whole number in `u64`.
    #[error("{0:?} is not a seed (a whole number from 0 to {max})", max = u64::MAX)]
    NotASeed(String),
    /// `3..1`.
    #[error("{0:?} is an empty range (the first seed is above the last; ranges are inclusive)")]
    EmptyRange(String),
    /// More than [`MAX_SEEDS`] seeds.
    #[error("{0:?} names more than {MAX_SEEDS} seeds")]
    TooMany(String),
}

impl Seeds {
    /// Parses the `--seeds` grammar (see the module docs).
    pub fn parse(text: &str) -> Result<Self, SeedsError> {
        if text.trim().is_empty() {
            return Err(SeedsError::Empty);
        }
        let mut seeds = Vec::new();
        let mut seen = HashSet::new();
        for item in text.split(',') {
            let item = item.trim();
            if item.is_empty() {
                return Err(SeedsError::EmptyItem { text: text.into() });
            }
            let (first, last) = match item.split_once("..") {
                Some((a, b)) => (seed(a)?, seed(b.strip_prefix('=').unwrap_or(b))?),
                None => (seed(item)?, seed(item)?),
            };
            if first > last {
                return Err(SeedsError::EmptyRange(item.into()));
            }
            // Checked before expanding, so `0..18446744073709551615` costs nothing.
            if last - first >= MAX_SEEDS as u64 {
                return Err(SeedsError::TooMany(item.into()));
            }
            for s in first..=last {
                if seen.insert(s) {
                    seeds.push(s);
                    if seeds.len() > MAX_SEEDS {
                        return Err(SeedsError::TooMany(text.into()));
                    }
                }
            }
        }
        Ok(Self(seeds))
    }

    /// The seeds, in order.
    pub fn as_slice(&self) -> &[u64] {
        &self.0
    }

    /// The seeds, in order.
    pub fn into_vec(self) -> Vec<u64> {
        self.0
    }
}

fn seed(text: &str) -> Result<u64, SeedsError> {
    let text = text.trim();
    text.parse::<u64>()
        .map_err(|_| SeedsError::NotASeed(text.into()))
}

impl FromStr for Seeds {
    type Err = SeedsError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text)
    }
}

/// The shortest text in the grammar that parses back to the same seeds: ascending runs as
/// ranges (`1..3,7`).
impl fmt::Display for Seeds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0.as_slice();
        let mut sep = "";
        while let Some(&first) = rest.first() {
            let run = rest
                .windows(2)
                .take_while(|w| w[0].checked_add(1) == Some(w[1]))
                .count();
            match run {
                0 => write!(f, "{sep}{first}")?,
                1 => write!(f, "{sep}{first},{}", rest[1])?,
                _ => write!(f, "{sep}{first}..{}", rest[run])?,
            }
            rest = &rest[run + 1..];
            sep = ",";
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse(text: &str) -> Result<Vec<u64>, SeedsError> {
        Seeds::parse(text).map(Seeds::into_vec)
    }

    #[test]
    fn ranges_lists_single_numbers_and_mixes() {
        assert_eq!(parse("1..3"), Ok(vec![1, 2, 3]));
        assert_eq!(parse("1..=3"), Ok(vec![1, 2, 3]));
        assert_eq!(parse("1,2,7"), Ok(vec![1, 2, 7]));
        assert_eq!(parse("7,2"), Ok(vec![7, 2]));
        assert_eq!(parse(" 3 "), Ok(vec![3]));
        assert_eq!(parse("5,1..3,2"), Ok(vec![5, 1, 2, 3]));
        assert_eq!(parse("4..4"), Ok(vec![4]));
        assert_eq!(parse("1,1"), Ok(vec![1]), "a repeat runs once");
        assert_eq!(parse("1 .. 2"), Ok(vec![1, 2]));
    }

    #[test]
    fn bad_texts_say_why() {
        for (bad, says) in [
            ("", "no seeds given"),
            ("  ", "no seeds given"),
            ("a", "is not a seed"),
            ("1..", "is not a seed"),
            ("..3", "is not a seed"),
            ("-1", "is not a seed"),
            ("1.5", "is not a seed"),
            ("1...3", "is not a seed"),
            ("18446744073709551616", "is not a seed"),
            ("3..1", "empty range"),
            ("1,,2", "empty item"),
            ("1,", "empty item"),
            ("0..1000000", "more than 1000000 seeds"),
            ("0..=18446744073709551615", "more than 1000000 seeds"),
        ] {
            let e = parse(bad).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains(says), "{bad:?}: {e:?}");
        }
    }

    #[test]
    fn the_cap_counts_distinct_seeds_across_items() {
        assert_eq!(parse("1..1000000").map(|s| s.len()), Ok(MAX_SEEDS));
        assert_eq!(
            parse("1..1000000,1000001"),
            Err(SeedsError::TooMany("1..1000000,1000001".into()))
        );
        // Overlaps count once.
        assert_eq!(parse("1..1000000,5..10").map(|s| s.len()), Ok(MAX_SEEDS));
    }

    #[test]
    fn display_is_compact() -> Result<(), SeedsError> {
        assert_eq!(Seeds::parse("1,2,3,7,9,10")?.to_string(), "1..3,7,9,10");
        assert_eq!(Seeds::parse("5,1..3,2")?.to_string(), "5,1..3");
        assert_eq!(
            Seeds::parse("18446744073709551614..18446744073709551615")?.to_string(),
            "18446744073709551614,18446744073709551615"
        );
        Ok(())
    }

    /// One grammar item: a seed or a short range.
    fn item() -> impl Strategy<Value = (u64, u64)> {
        prop_oneof![
            any::<u64>().prop_map(|s| (s, s)),
            (any::<u64>(), 0u64..50).prop_map(|(a, n)| (a, a.saturating_add(n))),
            (0u64..100, 0u64..20).prop_map(|(a, n)| (a, a + n)),
        ]
    }

    proptest! {
        #[test]
        fn never_panics(text in "\\PC*") {
            let _ = Seeds::parse(&text);
        }

        #[test]
        fn never_panics_on_grammar_like_text(text in "[0-9., =-]{0,40}") {
            let _ = Seeds::parse(&text);
        }

        #[test]
        fn a_list_of_items_parses_to_their_seeds_in_order(
            items in prop::collection::vec(item(), 1..8),
            inclusive in any::<bool>(),
        ) {
            let text: Vec<String> = items
                .iter()
                .map(|&(a, b)| match (a == b, inclusive) {
                    (true, _) => a.to_string(),
                    (false, false) => format!("{a}..{b}"),
                    (false, true) => format!("{a} ..= {b}"),
                })
                .collect();
            let mut expected = Vec::new();
            for &(a, b) in &items {
                for s in a..=b {
                    if !expected.contains(&s) {
                        expected.push(s);
                    }
                }
            }
            prop_assert_eq!(parse(&text.join(",")), Ok(expected));
        }

        #[test]
        fn display_round_trips(items in prop::collection::vec(item(), 1..8)) {
            let text: Vec<String> = items.iter().map(|&(a, b)| format!("{a}..{b}")).collect();
            let seeds = Seeds::parse(&text.join(","))?;
            prop_assert_eq!(Seeds::parse(&seeds.to_string()), Ok(seeds));
        }

        #[test]
        fn a_range_over_the_cap_is_refused(first in any::<u64>(), extra in 0u64..u64::MAX) {
            let last = first.saturating_add(MAX_SEEDS as u64).saturating_add(extra);
            prop_assume!(last - first >= MAX_SEEDS as u64);
            let text = format!("{first}..{last}");
            prop_assert_eq!(parse(&text), Err(SeedsError::TooMany(text.clone())));
        }
    }
}
