//! The simulated shared store (`router.state: shared`): one store for the fleet, and per
//! replica an in-memory tier in front of it (the engine's [`StateStore`] each router reads).
//!
//! Why a tier: LiteLLM keeps cooldowns in a `DualCache` (in-memory in front of Redis) and the
//! engine's store trait is synchronous, so a replica always answers from memory; what the
//! shared store changes is *when* a replica learns another's writes. The model, all on the
//! virtual clock ([`now`]):
//! - a write issued at `t` lands in the store at `t + write_latency` (plus any
//!   `store_latency` fault active at `t`); the writer's own tier has it at once;
//! - a replica reads a deployment's key on a lookup only when its tier holds no live cooldown
//!   for it and its last read that found none is older than `miss_ttl`, and sees the store as
//!   it was `read_latency` (plus any `store_latency`) ago. This is what LiteLLM 1.110.2 was
//!   seen to do with Redis (`redis-cli MONITOR` against real proxies, the redis helper's
//!   `scripts/litellm-fleet-experiment.sh`): one `MGET`
//!   per selection of the keys not cooled in memory and not found absent within the last 1 s;
//!   a key found in Redis becomes a local cooldown, not read again while it lasts;
//! - a cooldown write is a plain overwrite (LiteLLM: `SET deployment:<id>:cooldown … EX`,
//!   sent about 1 ms after the failure): the store's deadline is the last writer's;
//! - allowed-fails counters: with `atomic_counters` (the default: LiteLLM's awaited
//!   `INCRBYFLOAT`, DeltaLLM's Lua scripts) the increment is applied in the store when
//!   issued, so no replica's failure is lost; without (a read, +1, a write) each replica adds
//!   its failure to the count it last saw, and a concurrent update is lost;
//! - during a `store_outage` nothing lands and nothing is read. `fail_open`: the replica
//!   keeps process-local state (its writes stay in its tier only) and drops that local
//!   evidence once the store answers again (DeltaLLM: "After Redis reconnects, shared Redis
//!   becomes authoritative and the temporary local health evidence is dropped").
//!   `fail_closed`: health transitions fail ([`StateStore::accepts_health_writes`] is false),
//!   so no cooldown is set anywhere while the store is out.
//!
//! Requests never wait on the store (its latency delays visibility, not the request): LiteLLM
//! sends its cooldown writes in a post-call batch nobody waits on. The error-rate rule's
//! per-minute counts stay per replica (the engine's cooldown trigger keeps them; LiteLLM keeps
//! them in memory per process by design).

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use routersim_engine::state::{CooldownEntry, Rewrite, StateStore, merge};
use routersim_runtime::time::now;
use tokio::time::Instant;

use super::config::{FailureMode, StoreFaultKind, StoreModel};

/// Writes kept per key: enough that a reader lagging by the store's latency still finds the
/// write that was current at its horizon.
const HISTORY: usize = 4;

/// One landed cooldown write (`until == issued` for a delete).
#[derive(Clone, Copy, Debug)]
struct CooldownWrite {
    issued: Instant,
    landed: Instant,
    until: Instant,
}

/// One landed counter value.
#[derive(Clone, Copy, Debug)]
struct CounterWrite {
    landed: Instant,
    count: u32,
    expires: Instant,
}

#[derive(Debug, Default)]
struct Keys {
    cooldowns: Vec<Vec<CooldownWrite>>,
    counters: Vec<Vec<CounterWrite>>,
}

/// The fleet's store: every replica's [`ReplicaState`] reads and writes it.
#[derive(Debug)]
pub struct SharedStore {
    model: StoreModel,
    start: Instant,
    keys: RefCell<Keys>,
}

impl SharedStore {
    /// A store for `deployments` deployments; `start` anchors the fault windows.
    pub fn new(model: StoreModel, deployments: usize, start: Instant) -> Rc<Self> {
        Rc::new(Self {
            model,
            start,
            keys: RefCell::new(Keys {
                cooldowns: vec![Vec::new(); deployments],
                counters: vec![Vec::new(); deployments],
            }),
        })
    }

    /// Whether the store answers at `at`.
    fn up(&self, at: Instant) -> bool {
        let t = at.saturating_duration_since(self.start);
        !self
            .model
            .faults
            .iter()
            .any(|f| f.kind == StoreFaultKind::Outage && f.from <= t && t < f.to)
    }

    /// Latency added by `store_latency` faults at `at`.
    fn added_latency(&self, at: Instant) -> Duration {
        let t = at.saturating_duration_since(self.start);
        self.model
            .faults
            .iter()
            .filter(|f| f.from <= t && t < f.to)
            .map(|f| match f.kind {
                StoreFaultKind::Latency(d) => d,
                StoreFaultKind::Outage => Duration::ZERO,
            })
            .sum()
    }

    /// When a write issued at `at` lands; `None` if the store is out (it is lost).
    fn lands(&self, at: Instant) -> Option<Instant> {
        self.up(at)
            .then(|| at + self.model.write_latency + self.added_latency(at))
    }

    /// The instant a read at `at` sees the store as of; `None` if the store is out.
    fn horizon(&self, at: Instant) -> Option<Instant> {
        self.up(at).then(|| {
            let lag = self.model.read_latency + self.added_latency(at);
            at.checked_sub(lag).unwrap_or(self.start)
        })
    }

    fn write_cooldown(&self, deployment: usize, issued: Instant, until: Instant) {
        let Some(landed) = self.lands(issued) else {
            return;
        };
        let mut keys = self.keys.borrow_mut();
        if let Some(history) = keys.cooldowns.get_mut(deployment) {
            push(
                history,
                CooldownWrite {
                    issued,
                    landed,
                    until,
                },
                |w| w.landed,
            );
        }
    }

    /// The newest cooldown write visible at `horizon`.
    fn read_cooldown(&self, deployment: usize, horizon: Instant) -> Option<CooldownWrite> {
        let keys = self.keys.borrow();
        keys.cooldowns
            .get(deployment)?
            .iter()
            .filter(|w| w.landed <= horizon)
            .max_by_key(|w| (w.issued, w.landed))
            .copied()
    }

    fn read_counter(&self, deployment: usize, horizon: Instant, now: Instant) -> u32 {
        let keys = self.keys.borrow();
        keys.counters
            .get(deployment)
            .and_then(|h| h.iter().rfind(|w| w.landed <= horizon))
            .filter(|w| w.expires > now)
            .map_or(0, |w| w.count)
    }

    fn write_counter(&self, deployment: usize, write: CounterWrite) {
        let mut keys = self.keys.borrow_mut();
        if let Some(history) = keys.counters.get_mut(deployment) {
            push(history, write, |w| w.landed);
        }
    }
}

/// Appends `write` keeping the history in landing order and short.
fn push<T>(history: &mut Vec<T>, write: T, landed: impl Fn(&T) -> Instant) {
    let at = history
        .iter()
        .rposition(|w| landed(w) <= landed(&write))
        .map_or(0, |i| i + 1);
    history.insert(at, write);
    if history.len() > HISTORY {
        history.remove(0);
    }
}

/// A replica's view of one deployment's cooldown.
#[derive(Clone, Copy, Debug)]
struct Local {
    until: Instant,
    /// The first write's expiry ([`Rewrite::FirstOrLatest`]).
    first_expiry: Instant,
    /// When the write it came from was issued (newest wins).
    issued: Instant,
    /// Written while the store was out (`fail_open`): dropped once the store answers.
    local_only: bool,
}

#[derive(Debug, Default)]
struct Tier {
    cooldowns: Vec<Option<Local>>,
    /// When each key was last read from the store.
    last_read: Vec<Option<Instant>>,
    /// This replica's own counter values (what it last wrote), for the read-modify-write.
    counters: Vec<Option<CounterWrite>>,
}

/// One replica's state: its in-memory tier in front of the fleet's [`SharedStore`].
#[derive(Debug)]
pub struct ReplicaState {
    store: Rc<SharedStore>,
    tier: RefCell<Tier>,
}

impl ReplicaState {
    /// A replica's view of `store`, for `deployments` deployments.
    pub fn new(store: Rc<SharedStore>, deployments: usize) -> Self {
        Self {
            store,
            tier: RefCell::new(Tier {
                cooldowns: vec![None; deployments],
                last_read: vec![None; deployments],
                counters: vec![None; deployments],
            }),
        }
    }

    /// Reads the store for `deployment` if the tier has no live entry and its last read that
    /// found none is older than `miss_ttl` (LiteLLM 1.110.2, observed: a live local cooldown
    /// is never read again while it lasts; a miss is trusted for 1 s per process and key).
    fn refresh(&self, deployment: usize, at: Instant) {
        let mut tier = self.tier.borrow_mut();
        let Tier {
            cooldowns,
            last_read,
            ..
        } = &mut *tier;
        let (Some(entry), Some(last)) =
            (cooldowns.get_mut(deployment), last_read.get_mut(deployment))
        else {
            return;
        };
        if entry.is_some_and(|l| l.until > at && !l.local_only) {
            return;
        }
        let miss_ttl = self.store.model.miss_ttl;
        if last.is_some_and(|l| at < l + miss_ttl) {
            return;
        }
        let Some(horizon) = self.store.horizon(at) else {
            return; // the store is out: keep what we have
        };
        *last = Some(at);
        if entry.is_some_and(|l| l.local_only) {
            // The store answers again: it is authoritative, local evidence is dropped.
            *entry = None;
        }
        if let Some(w) = self.store.read_cooldown(deployment, horizon)
            && w.until > at
            && entry.is_none_or(|l| w.issued > l.issued || l.until <= at)
        {
            *entry = Some(Local {
                until: w.until,
                first_expiry: w.until,
                issued: w.issued,
                local_only: false,
            });
            // Only a miss is trusted: once this copy expires, the next lookup reads again.
            *last = None;
        }
    }

    /// Writes a cooldown until `until` issued at `at`, merged with the tier's live entry by
    /// the engine's rule ([`merge`]); returns the deadline in force.
    fn write_merged(
        &self,
        deployment: usize,
        at: Instant,
        until: Instant,
        rule: Rewrite,
    ) -> Instant {
        let live = self
            .tier
            .borrow()
            .cooldowns
            .get(deployment)
            .copied()
            .flatten()
            .filter(|l| l.until > at)
            .map(|l| CooldownEntry {
                until: l.until,
                first_expiry: l.first_expiry,
            });
        let merged = merge(live, until, rule);
        self.write(deployment, at, merged.until, merged.first_expiry);
        merged.until
    }

    /// Writes the tier's entry and sends it to the store.
    fn write(&self, deployment: usize, at: Instant, until: Instant, first_expiry: Instant) {
        let up = self.store.up(at);
        if let Some(entry) = self.tier.borrow_mut().cooldowns.get_mut(deployment) {
            *entry = Some(Local {
                until,
                first_expiry,
                issued: at,
                local_only: !up,
            });
        }
        self.store.write_cooldown(deployment, at, until);
    }
}

impl StateStore for ReplicaState {
    fn cooldown_until(&self, deployment: usize) -> Option<Instant> {
        self.refresh(deployment, now());
        let tier = self.tier.borrow();
        tier.cooldowns
            .get(deployment)
            .copied()
            .flatten()
            .map(|l| l.until)
    }

    fn set_cooldown(&self, deployment: usize, until: Instant) -> Instant {
        self.write_merged(deployment, now(), until, Rewrite::KeepLater)
    }

    fn rewrite_cooldown(
        &self,
        deployment: usize,
        now: Instant,
        until: Instant,
        rule: Rewrite,
    ) -> Instant {
        self.write_merged(deployment, now, until, rule)
    }

    fn take_if_expired(&self, deployment: usize, now: Instant) -> Option<Instant> {
        let mut tier = self.tier.borrow_mut();
        let entry = tier.cooldowns.get_mut(deployment)?;
        match *entry {
            Some(l) if l.until <= now => entry.take().map(|l| l.until),
            _ => None,
        }
    }

    // The sweeper's look and the writes never read the store: LiteLLM reads only when it
    // selects a deployment (a read counts against `miss_ttl`).
    fn take_all_expired(&self, now: Instant) -> Vec<(usize, Instant)> {
        let mut tier = self.tier.borrow_mut();
        let mut out = Vec::new();
        for (i, entry) in tier.cooldowns.iter_mut().enumerate() {
            if let Some(l) = *entry
                && l.until <= now
            {
                *entry = None;
                out.push((i, l.until));
            }
        }
        out
    }

    fn next_cooldown_deadline(&self) -> Option<Instant> {
        let tier = self.tier.borrow();
        tier.cooldowns.iter().flatten().map(|l| l.until).min()
    }

    fn increment_allowed_fails(&self, deployment: usize, now: Instant, ttl: Duration) -> u32 {
        let store = &self.store;
        let fresh = CounterWrite {
            landed: now,
            count: 1,
            expires: now + ttl,
        };
        let mut tier = self.tier.borrow_mut();
        let Some(own) = tier.counters.get_mut(deployment) else {
            return 1;
        };
        let own_live = own.filter(|c| c.expires > now);
        let Some(horizon) = store.horizon(now) else {
            // The store is out: count locally.
            let next = own_live.map_or(fresh, |c| CounterWrite {
                count: c.count + 1,
                ..c
            });
            *own = Some(next);
            return next.count;
        };
        let next = if store.model.atomic_counters {
            // One Lua round trip: increment in the store itself, never lost.
            let current = store.read_counter(deployment, now, now);
            let expires = if current == 0 {
                now + ttl
            } else {
                store
                    .keys
                    .borrow()
                    .counters
                    .get(deployment)
                    .and_then(|h| h.last())
                    .map_or(now + ttl, |w| w.expires)
            };
            CounterWrite {
                landed: now,
                count: current + 1,
                expires,
            }
        } else {
            // Read (stale by the read latency), +1, write back (landing later).
            let seen = store.read_counter(deployment, horizon, now);
            let base = seen.max(own_live.map_or(0, |c| c.count));
            let landed = store.lands(now).unwrap_or(now);
            CounterWrite {
                landed,
                count: base + 1,
                expires: if base == 0 {
                    now + ttl
                } else {
                    own_live.map_or(now + ttl, |c| c.expires)
                },
            }
        };
        *own = Some(next);
        drop(tier);
        store.write_counter(deployment, next);
        next.count
    }

    fn clear_cooldown(&self, deployment: usize) -> bool {
        let at = now();
        let existed = self
            .tier
            .borrow_mut()
            .cooldowns
            .get_mut(deployment)
            .is_some_and(|e| e.take().is_some());
        // A delete: a write that expires as it is issued.
        self.store.write_cooldown(deployment, at, at);
        existed
    }

    fn reset_allowed_fails(&self, deployment: usize) {
        let at = now();
        if let Some(own) = self.tier.borrow_mut().counters.get_mut(deployment) {
            *own = None;
        }
        if let Some(landed) = self.store.lands(at) {
            self.store.write_counter(
                deployment,
                CounterWrite {
                    landed,
                    count: 0,
                    expires: at,
                },
            );
        }
    }

    fn accepts_health_writes(&self) -> bool {
        self.store.model.failure_mode == FailureMode::FailOpen || self.store.up(now())
    }
}

#[cfg(test)]
mod tests;
