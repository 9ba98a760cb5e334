//! The in-process store: one slot per deployment, cooldowns merged by [`merge`].

use std::cell::RefCell;
use std::time::Duration;

use tokio::time::Instant;

use super::cooldown::{CooldownEntry, Rewrite, merge};
use super::store::StateStore;

#[derive(Clone, Copy, Debug)]
struct Counter {
    count: u32,
    expires: Instant,
}

#[derive(Debug, Default)]
struct Inner {
    cooldowns: Vec<Option<CooldownEntry>>,
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
        self.with(|s| {
            s.cooldowns
                .get(deployment)
                .copied()
                .flatten()
                .map(|e| e.until)
        })
    }

    /// Without a clock, the stored entry stands in for the live one: an expired entry's
    /// deadline is earlier than any deadline written from now on, so the later one is the same.
    fn set_cooldown(&self, deployment: usize, until: Instant) -> Instant {
        self.with(|s| {
            let entry = slot(&mut s.cooldowns, deployment);
            let merged = merge(*entry, until, Rewrite::KeepLater);
            *entry = Some(merged);
            merged.until
        })
    }

    fn rewrite_cooldown(
        &self,
        deployment: usize,
        now: Instant,
        until: Instant,
        rule: Rewrite,
    ) -> Instant {
        self.with(|s| {
            let entry = slot(&mut s.cooldowns, deployment);
            let merged = merge(entry.filter(|e| e.until > now), until, rule);
            *entry = Some(merged);
            merged.until
        })
    }

    fn take_if_expired(&self, deployment: usize, now: Instant) -> Option<Instant> {
        self.with(|s| {
            let entry = s.cooldowns.get_mut(deployment)?;
            match *entry {
                Some(e) if e.until <= now => entry.take().map(|e| e.until),
                _ => None,
            }
        })
    }

    fn take_all_expired(&self, now: Instant) -> Vec<(usize, Instant)> {
        self.with(|s| {
            let mut out = Vec::new();
            for (i, entry) in s.cooldowns.iter_mut().enumerate() {
                if let Some(e) = *entry
                    && e.until <= now
                {
                    *entry = None;
                    out.push((i, e.until));
                }
            }
            out
        })
    }

    fn next_cooldown_deadline(&self) -> Option<Instant> {
        self.with(|s| s.cooldowns.iter().flatten().map(|e| e.until).min())
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
