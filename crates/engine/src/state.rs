//! Cooldown and allowed-fails state, behind a trait so a shared store can come later.
//!
//! Seed: *"A cooldown is a key `deployment:{id}:cooldown` in the routing cache, with a TTL
//! equal to the cooldown time."* and *"Each counted failure increments
//! `deployment:{id}:allowed_fails`, which expires with the cooldown time."* Both live here as
//! TTL entries on the router's clock; [`InMemoryState`] is the per-process implementation.
//! (The error-rate counts are per-process by design and live in [`crate::cooldown`].)

use std::cell::RefCell;
use std::time::Duration;

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

/// Where cooldowns and allowed-fails counters live. Deployments are named by their index in
/// the router's deployment list.
pub trait StateStore {
    /// The cooldown deadline of `deployment`, if an entry exists (it may already be expired).
    fn cooldown_until(&self, deployment: usize) -> Option<Instant>;
    /// Cools `deployment` until `until`; re-cooling keeps the later deadline. Returns the
    /// deadline in force.
    fn set_cooldown(&self, deployment: usize, until: Instant) -> Instant;
    /// Cools `deployment` until `until` at `now`, a live entry re-written by `rule`. Returns
    /// the deadline in force. A store that keeps no first-write expiry keeps the later
    /// deadline (the default).
    fn rewrite_cooldown(
        &self,
        deployment: usize,
        now: Instant,
        until: Instant,
        rule: Rewrite,
    ) -> Instant {
        let _ = (now, rule);
        self.set_cooldown(deployment, until)
    }
    /// Removes the entry of `deployment` if it expired by `now`, returning its deadline.
    fn take_if_expired(&self, deployment: usize, now: Instant) -> Option<Instant>;
    /// Removes and returns every entry expired by `now`, in deployment order.
    fn take_all_expired(&self, now: Instant) -> Vec<(usize, Instant)>;
    /// The soonest deadline of any entry.
    fn next_cooldown_deadline(&self) -> Option<Instant>;
    /// Counts one failure of `deployment`; a fresh counter expires `ttl` after this failure.
    /// Returns the count including this failure.
    fn increment_allowed_fails(&self, deployment: usize, now: Instant, ttl: Duration) -> u32;
    /// Removes the cooldown of `deployment` (half-open success, health probe); true if one
    /// existed.
    fn clear_cooldown(&self, deployment: usize) -> bool;
    /// Forgets the allowed-fails count of `deployment`.
    fn reset_allowed_fails(&self, deployment: usize);
    /// Whether a cooldown may be written now. A shared store that is unreachable and set to
    /// fail closed (DeltaLLM: *"With fail_closed, health transitions fail … while Redis is
    /// unavailable"*) says no, and the router then sets no cooldown. In-memory: always.
    fn accepts_health_writes(&self) -> bool {
        true
    }
}

#[derive(Clone, Copy, Debug)]
struct Counter {
    count: u32,
    expires: Instant,
}

#[derive(Debug, Default)]
struct Inner {
    cooldowns: Vec<Option<Instant>>,
    /// The first write's expiry of each live entry ([`Rewrite::FirstOrLatest`] only).
    first_expiry: Vec<Option<Instant>>,
    allowed_fails: Vec<Option<Counter>>,
}

/// The in-process store: one slot per deployment.
///
/// A `RefCell`, not a `Mutex`: a router is driven from one thread (the store sits in a
/// `Box<dyn StateStore>` with no `Send` bound), and the lock was ~3 % of the harness's time
/// (it is read for every candidate of every attempt).
#[derive(Debug)]
pub struct InMemoryState {
    inner: RefCell<Inner>,
}

impl InMemoryState {
    /// A store for `deployments` deployments.
    pub fn new(deployments: usize) -> Self {
        Self {
            inner: RefCell::new(Inner {
                cooldowns: vec![None; deployments],
                first_expiry: vec![None; deployments],
                allowed_fails: vec![None; deployments],
            }),
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut Inner) -> R) -> R {
        // No borrow is held across calls: `f` never calls back into the store.
        f(&mut self.inner.borrow_mut())
    }
}

fn slot<T: Default + Clone>(v: &mut Vec<T>, i: usize) -> &mut T {
    if v.len() <= i {
        v.resize(i + 1, T::default());
    }
    &mut v[i]
}

impl StateStore for InMemoryState {
    fn cooldown_until(&self, deployment: usize) -> Option<Instant> {
        self.with(|s| s.cooldowns.get(deployment).copied().flatten())
    }

    fn set_cooldown(&self, deployment: usize, until: Instant) -> Instant {
        self.with(|s| {
            let entry = slot(&mut s.cooldowns, deployment);
            let effective = entry.map_or(until, |old| old.max(until));
            *entry = Some(effective);
            effective
        })
    }

    fn rewrite_cooldown(
        &self,
        deployment: usize,
        now: Instant,
        until: Instant,
        rule: Rewrite,
    ) -> Instant {
        if rule == Rewrite::KeepLater {
            return self.set_cooldown(deployment, until);
        }
        self.with(|s| {
            let live = s
                .cooldowns
                .get(deployment)
                .copied()
                .flatten()
                .filter(|&d| d > now);
            let first = slot(&mut s.first_expiry, deployment);
            let effective = match (live, *first) {
                (Some(_), Some(first)) => first.min(until),
                _ => {
                    *first = Some(until);
                    until
                }
            };
            *slot(&mut s.cooldowns, deployment) = Some(effective);
            effective
        })
    }

    fn take_if_expired(&self, deployment: usize, now: Instant) -> Option<Instant> {
        self.with(|s| {
            let entry = s.cooldowns.get_mut(deployment)?;
            match *entry {
                Some(until) if until <= now => entry.take(),
                _ => None,
            }
        })
    }

    fn take_all_expired(&self, now: Instant) -> Vec<(usize, Instant)> {
        self.with(|s| {
            let mut out = Vec::new();
            for (i, entry) in s.cooldowns.iter_mut().enumerate() {
                if let Some(until) = *entry
                    && until <= now
                {
                    *entry = None;
                    out.push((i, until));
                }
            }
            out
        })
    }

    fn next_cooldown_deadline(&self) -> Option<Instant> {
        self.with(|s| s.cooldowns.iter().flatten().min().copied())
    }

    fn clear_cooldown(&self, deployment: usize) -> bool {
        self.with(|s| {
            s.cooldowns
                .get_mut(deployment)
                .is_some_and(|entry| entry.take().is_some())
        })
    }

    fn reset_allowed_fails(&self, deployment: usize) {
        self.with(|s| {
            if let Some(entry) = s.allowed_fails.get_mut(deployment) {
                *entry = None;
            }
        });
    }

    fn increment_allowed_fails(&self, deployment: usize, now: Instant, ttl: Duration) -> u32 {
        self.with(|s| {
            let entry = slot(&mut s.allowed_fails, deployment);
            match entry {
                Some(counter) if counter.expires > now => {
                    counter.count += 1;
                    counter.count
                }
                _ => {
                    *entry = Some(Counter {
                        count: 1,
                        expires: now + ttl,
                    });
                    1
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn recooling_keeps_the_later_deadline_and_entries_expire() {
        let store = InMemoryState::new(2);
        let now = Instant::now();
        assert_eq!(
            store.set_cooldown(0, now + Duration::from_secs(10)),
            now + Duration::from_secs(10)
        );
        assert_eq!(
            store.set_cooldown(0, now + Duration::from_secs(3)),
            now + Duration::from_secs(10)
        );
        assert_eq!(
            store.next_cooldown_deadline(),
            Some(now + Duration::from_secs(10))
        );
        assert_eq!(store.take_if_expired(0, now + Duration::from_secs(9)), None);
        assert_eq!(
            store.take_all_expired(now + Duration::from_secs(10)),
            vec![(0, now + Duration::from_secs(10))]
        );
        assert_eq!(store.cooldown_until(0), None);
    }

    #[tokio::test(start_paused = true)]
    async fn allowed_fails_counter_expires_with_its_ttl() {
        let store = InMemoryState::new(1);
        let now = Instant::now();
        let ttl = Duration::from_secs(5);
        assert_eq!(store.increment_allowed_fails(0, now, ttl), 1);
        assert_eq!(
            store.increment_allowed_fails(0, now + Duration::from_secs(4), ttl),
            2
        );
        assert_eq!(
            store.increment_allowed_fails(0, now + Duration::from_secs(5), ttl),
            1
        );
    }
}
