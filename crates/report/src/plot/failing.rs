//! The provider's truth beside the router's view: the seconds in which a deployment failed
//! most of its attempts, for the "failing, not cooling" state of `deployments.svg`.
//!
//! Why: a router cools a deployment only when its rule says so (LiteLLM never cools the lone
//! deployment of a group, and no router cools one before `allowed_fails`), so a lane drawn
//! from cooldown events alone is green while every call fails. The recorder adds each second
//! of `deployments.csv` here as it is written: a second counts as failing when more of the
//! deployment's attempts that ended in it failed than succeeded (429s included). Adjacent
//! failing seconds make one period, so memory grows with the failing periods (capped like the
//! cooldowns, see [`super::intervals`]), never with requests.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::intervals::Intervals;
use crate::units::MICROS_PER_SECOND;

/// Each deployment's failing periods, µs since the run start.
#[derive(Debug, Default)]
pub(crate) struct FailingSeconds {
    by_deployment: BTreeMap<Arc<str>, Intervals>,
}

impl FailingSeconds {
    /// `attempts` attempts on `id` ended in `second`, `ok` of them ok.
    pub(crate) fn second(&mut self, second: u64, id: &Arc<str>, attempts: u64, ok: u64) {
        if attempts.saturating_sub(ok) <= ok {
            return;
        }
        let from = second.saturating_mul(MICROS_PER_SECOND);
        self.by_deployment
            .entry(id.clone())
            .or_default()
            .extend(from, from.saturating_add(MICROS_PER_SECOND));
    }

    /// Closes the open periods at the run end (the last second is clipped there).
    pub(crate) fn finish(&mut self, run_end: u64) {
        for intervals in self.by_deployment.values_mut() {
            intervals.end(run_end);
        }
    }

    /// `id`'s failing periods, if it had one.
    pub(crate) fn of(&self, id: &str) -> Option<&Intervals> {
        self.by_deployment.get(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_fails_when_most_of_its_attempts_do() {
        let east: Arc<str> = Arc::from("east");
        let mut failing = FailingSeconds::default();
        failing.second(0, &east, 2, 1); // half: not failing
        failing.second(1, &east, 3, 1);
        failing.second(2, &east, 1, 0);
        failing.second(3, &east, 10, 9);
        failing.second(5, &east, 4, 0);
        failing.finish(5_500_000);
        let iv = failing.of("east").map(|i| i.closed.clone());
        assert_eq!(
            iv,
            Some(vec![(1_000_000, 3_000_000), (5_000_000, 5_500_000)])
        );
        assert!(failing.of("west").is_none());
    }
}
