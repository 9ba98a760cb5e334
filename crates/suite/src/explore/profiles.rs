//! Which profile each seed's variant runs under (`--profiles`): the scenario's own, or one
//! drawn per seed from a set (every profile with `all`).
//!
//! A seed's profile comes from its own ChaCha stream (`explore/profile`), apart from the fault
//! mix's, so choosing profiles changes no seed's faults; and the invariants read each run's
//! profile from its settings (`Bounds::derive`), so a violation means the engine broke a rule
//! of the profile it ran, never that profiles differ.

use rand::RngExt;
use routersim_engine::config::Profile;
use routersim_mock_providers::rng::seeded_rng;

/// Which profiles `explore` runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ProfileChoice {
    /// The scenario's own (the default).
    #[default]
    Scenario,
    /// One per seed, drawn from these (in table order, no repeats).
    Among(Vec<Profile>),
}

/// The purpose string of the profile draw's random stream.
pub const PROFILE_PURPOSE: &str = "explore/profile";

impl ProfileChoice {
    /// Reads `scenario`, `all`, or a comma-separated list of profile names.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.trim() {
            "scenario" => return Ok(Self::Scenario),
            "all" => return Ok(Self::Among(Profile::all().collect())),
            _ => {}
        }
        let mut chosen = Vec::new();
        for name in text.split(',') {
            let profile = Profile::from_name(name).ok_or_else(|| {
                format!(
                    "unknown profile {:?}: expected scenario, all, or a comma-separated list \
                     of {}",
                    name.trim(),
                    Profile::choices()
                )
            })?;
            if !chosen.contains(&profile) {
                chosen.push(profile);
            }
        }
        chosen.sort_by_key(|p| *p as usize);
        Ok(Self::Among(chosen))
    }

    /// The profile seed `seed` runs under (`None`: the scenario's own).
    pub fn pick(&self, seed: u64) -> Option<Profile> {
        match self {
            Self::Scenario => None,
            Self::Among(profiles) if profiles.is_empty() => None,
            Self::Among(profiles) => {
                let mut rng = seeded_rng(seed, PROFILE_PURPOSE);
                Some(profiles[rng.random_range(0..profiles.len())])
            }
        }
    }

    /// How the choice reads in explore's first line: `scenario`, `all`, or the names.
    pub fn describe(&self) -> String {
        match self {
            Self::Scenario => "scenario".into(),
            Self::Among(p) if p.len() == Profile::all().count() => "all".into(),
            Self::Among(p) => p.iter().map(|p| p.as_str()).collect::<Vec<_>>().join(","),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_draws_every_profile_and_a_list_only_its_own() {
        let all = ProfileChoice::parse("all").unwrap();
        let drawn: std::collections::BTreeSet<usize> = (1..=200)
            .filter_map(|s| all.pick(s))
            .map(|p| p as usize)
            .collect();
        assert_eq!(drawn.len(), Profile::all().count());
        let one = ProfileChoice::parse("litellm-1.110.2").unwrap();
        assert!((1..=50).all(|s| one.pick(s) == Some(Profile::LiteLlm110)));
        assert_eq!(one.describe(), "litellm-1.110");
        assert_eq!(ProfileChoice::parse("scenario").unwrap().pick(3), None);
        let err = ProfileChoice::parse("litellm,nope").unwrap_err();
        assert!(err.contains("\"nope\""), "{err}");
    }
}
