//! The cooldown merge rule, once for every store: what deadline a cooldown written over a
//! live one leaves in force ([`merge`]). The in-process store, the simulated fleet's replicas
//! and the Redis store's memory tier all apply it, so they cannot drift apart.

use tokio::time::Instant;

/// How a cooldown written over a live one sets the deadline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Rewrite {
    /// The later of the two deadlines (the documented reading of a TTL key set again).
    #[default]
    KeepLater,
    /// The earlier of the first write's expiry and this write's deadline (LiteLLM 1.110.2's
    /// store): a re-write never extends a live cooldown, and a shorter one shortens it.
    FirstOrLatest,
}

/// A live cooldown entry: its deadline, and the expiry the write that began it set (what
/// [`Rewrite::FirstOrLatest`] keeps to).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CooldownEntry {
    /// When the deployment is eligible again.
    pub until: Instant,
    /// The expiry of the write that began this cooldown.
    pub first_expiry: Instant,
}

/// The entry a cooldown until `until` leaves when written over `live` (the store's entry,
/// if one is still live) by `rule`: the later deadline ([`Rewrite::KeepLater`]), or the
/// earlier of the first write's expiry and `until` ([`Rewrite::FirstOrLatest`]); a write over
/// nothing live begins a new cooldown.
pub fn merge(live: Option<CooldownEntry>, until: Instant, rule: Rewrite) -> CooldownEntry {
    match (live, rule) {
        (None, _) => CooldownEntry {
            until,
            first_expiry: until,
        },
        (Some(old), Rewrite::KeepLater) => CooldownEntry {
            until: old.until.max(until),
            first_expiry: old.first_expiry,
        },
        (Some(old), Rewrite::FirstOrLatest) => CooldownEntry {
            until: old.first_expiry.min(until),
            first_expiry: old.first_expiry,
        },
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn later_keeps_the_later_first_or_latest_never_extends() {
        let t = |s| Instant::now() + Duration::from_secs(s);
        let live = Some(CooldownEntry {
            until: t(10),
            first_expiry: t(10),
        });
        assert_eq!(merge(live, t(20), Rewrite::KeepLater).until, t(20));
        assert_eq!(merge(live, t(5), Rewrite::KeepLater).until, t(10));
        assert_eq!(merge(live, t(20), Rewrite::FirstOrLatest).until, t(10));
        assert_eq!(merge(live, t(5), Rewrite::FirstOrLatest).until, t(5));
        let fresh = merge(None, t(7), Rewrite::FirstOrLatest);
        assert_eq!((fresh.until, fresh.first_expiry), (t(7), t(7)));
    }
}
