//! Model-name patterns: LiteLLM's wildcard `model_name`s (`openai/*`, `claude-*`, `*`).
//!
//! One matcher for every place a name meets a pattern: the router resolving a request's
//! model to a wildcard group, the loader checking that a fallback or alias names a group, and
//! the scenario checking that traffic asks for a model the router serves. Two copies would
//! drift, and then a name the loader accepts is one the router cannot route.

/// A model name that may hold `*` wildcards (each matches any run of characters, even empty).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelPattern<'a> {
    text: &'a str,
}

impl<'a> ModelPattern<'a> {
    /// The pattern a model name spells.
    pub fn new(text: &'a str) -> Self {
        Self { text }
    }

    /// Whether the pattern holds a wildcard (otherwise it matches only itself).
    pub fn is_wildcard(&self) -> bool {
        self.text.contains('*')
    }

    /// Whether `name` matches: the pieces between `*`s appear in order, the first at the
    /// start and the last at the end.
    pub fn matches(&self, name: &str) -> bool {
        let mut parts = self.text.split('*');
        let Some(first) = parts.next() else {
            return self.text == name;
        };
        let Some(mut rest) = name.strip_prefix(first) else {
            return false;
        };
        let tail: Vec<&str> = parts.collect();
        let Some((last, middle)) = tail.split_last() else {
            return rest.is_empty();
        };
        for part in middle {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
        rest.ends_with(last)
    }
}

#[cfg(test)]
mod tests {
    use super::ModelPattern;
    use proptest::prelude::*;

    fn matches(pattern: &str, name: &str) -> bool {
        ModelPattern::new(pattern).matches(name)
    }

    /// The textbook glob matcher (dynamic programming over both strings): slow, obviously right.
    fn reference(pattern: &str, name: &str) -> bool {
        let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
        let mut row = vec![false; n.len() + 1];
        row[0] = true;
        for &pc in &p {
            let mut next = vec![false; n.len() + 1];
            if pc == '*' {
                next[0] = row[0];
                for j in 1..=n.len() {
                    next[j] = row[j] || next[j - 1];
                }
            } else {
                for j in 1..=n.len() {
                    next[j] = row[j - 1] && n[j - 1] == pc;
                }
            }
            row = next;
        }
        row[n.len()]
    }

    #[test]
    fn wildcards_match_like_litellm_model_names() {
        assert!(matches("*", "gpt-4o"));
        assert!(matches("*", ""));
        assert!(matches("openai/*", "openai/gpt-4o"));
        assert!(!matches("openai/*", "anthropic/claude"));
        assert!(matches("claude-*", "claude-3-opus"));
        assert!(matches("a*c*e", "abcde"));
        assert!(!matches("a*c*e", "abcd"));
        assert!(matches("a*b*c", "a-x-b-y-c"));
        assert!(!matches("a*b*c", "a-x-c"));
        assert!(!matches("ab*b", "ab"));
        assert!(matches("exact", "exact"));
        assert!(!matches("exact", "exact2"));
        assert!(!ModelPattern::new("exact").is_wildcard());
        assert!(ModelPattern::new("openai/*").is_wildcard());
    }

    proptest! {
        /// Over a small alphabet (so pieces collide and overlap often), the matcher agrees
        /// with the reference on every pattern and name.
        #[test]
        fn agrees_with_the_reference_glob(pattern in "[ab*/-]{0,8}", name in "[ab/-]{0,10}") {
            prop_assert_eq!(matches(&pattern, &name), reference(&pattern, &name));
        }

        /// A pattern without `*` matches exactly itself.
        #[test]
        fn a_plain_name_matches_only_itself(pattern in "[a-z/-]{0,8}", name in "[a-z/-]{0,8}") {
            prop_assert_eq!(matches(&pattern, &name), pattern == name);
        }

        /// Every name matches the pattern made of its own pieces with `*` between them.
        #[test]
        fn a_name_matches_itself_with_any_pieces_starred(
            name in "[a-z/-]{0,12}",
            cuts in proptest::collection::vec(0usize..12, 0..4),
        ) {
            let mut pattern = name.clone();
            let mut cuts: Vec<usize> = cuts.into_iter().filter(|&c| c <= name.len()).collect();
            cuts.sort_unstable();
            for &c in cuts.iter().rev() {
                pattern.insert(c, '*');
            }
            prop_assert!(matches(&pattern, &name), "{} vs {}", pattern, name);
        }
    }
}
