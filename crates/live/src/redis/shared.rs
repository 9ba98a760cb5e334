//! What the store's clones, its writer task and its reconnect task share: the memory tier
//! routing reads, Redis's last counts, the connection, its health, and the IO counters. Below
//! the store and its tasks, so none of them reaches into another for it.

use std::sync::Mutex;
use std::sync::MutexGuard;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use routersim_engine::state::InMemoryState;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::redis::health::{Health, HealthEvent, HealthSink};

/// A counter as Redis last answered it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RemoteCount {
    pub count: u32,
    pub expires: Instant,
}

/// What the store's clones and its tasks share.
pub(crate) struct Shared {
    pub cooldown_keys: Vec<String>,
    pub fail_keys: Vec<String>,
    /// The memory tier (the engine's store is single-threaded inside; the tasks are not).
    pub memory_tier: Mutex<InMemoryState>,
    /// Each deployment's allowed-fails count as Redis last reported it.
    pub remote_fails: Mutex<Vec<Option<RemoteCount>>>,
    /// When each cooldown key was last read from Redis.
    pub last_read: Mutex<Vec<Option<Instant>>>,
    pub read_throttle: Duration,
    /// The connection commands go out on (replaced by the reconnect task).
    pub conn: Mutex<MultiplexedConnection>,
    pub health: Mutex<Health>,
    /// Wakes the reconnect task when the store degrades.
    pub degraded: Notify,
    pub sink: Option<HealthSink>,
    pub errors: AtomicU64,
    pub reads: AtomicU64,
    pub writes: AtomicU64,
    /// Writes not sent because the store was degraded.
    pub skipped: AtomicU64,
    pub last_error: Mutex<Option<String>>,
}

impl Shared {
    /// The memory tier, locked.
    pub fn memory(&self) -> MutexGuard<'_, InMemoryState> {
        lock(&self.memory_tier)
    }

    /// The connection to send on.
    pub fn connection(&self) -> MultiplexedConnection {
        lock(&self.conn).clone()
    }

    pub fn is_degraded(&self) -> bool {
        lock(&self.health).is_degraded()
    }

    /// A command failed (`what`: `read`, `write`): counted, and the store degrades (said
    /// once per outage, and the reconnect task woken).
    pub(crate) fn failed(&self, what: &str, why: &str) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        let why = format!("{what}: {why}");
        *lock(&self.last_error) = Some(why.clone());
        let began = lock(&self.health).degrade(Instant::now());
        if began {
            self.report(&HealthEvent::Degraded { why });
            self.degraded.notify_one();
        }
    }

    pub(crate) fn report(&self, event: &HealthEvent) {
        if let Some(sink) = &self.sink {
            sink(event);
        }
    }
}

/// A poisoned lock only means another thread panicked mid-update; the data is plain.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Takes Redis's count for `deployment` when it is news (higher, or the old one expired).
pub(crate) fn note_remote(shared: &Shared, deployment: usize, count: u32, expires: Instant) {
    let mut remote = lock(&shared.remote_fails);
    if let Some(slot) = remote.get_mut(deployment) {
        let now = Instant::now();
        let keep = slot.is_some_and(|r| r.expires > now && r.count >= count);
        if !keep {
            *slot = Some(RemoteCount { count, expires });
        }
    }
}
