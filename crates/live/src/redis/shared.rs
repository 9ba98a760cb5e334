//! What the store's clones and its writer task share: the memory tier routing reads, Redis's
//! last counts, and the IO counters. Below both the store and its IO, so neither reaches into
//! the other for it.

use std::sync::Mutex;
use std::sync::MutexGuard;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use routersim_engine::state::InMemoryState;
use tokio::time::Instant;

/// A counter as Redis last answered it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RemoteCount {
    pub count: u32,
    pub expires: Instant,
}

/// What the store's clones and its writer task share.
pub(crate) struct Shared {
    pub cooldown_keys: Vec<String>,
    pub fail_keys: Vec<String>,
    /// The memory tier (the engine's store is single-threaded inside; the writer task is not).
    pub memory_tier: Mutex<InMemoryState>,
    /// Each deployment's allowed-fails count as Redis last reported it.
    pub remote_fails: Mutex<Vec<Option<RemoteCount>>>,
    /// When each cooldown key was last read from Redis.
    pub last_read: Mutex<Vec<Option<Instant>>>,
    pub read_throttle: Duration,
    pub errors: AtomicU64,
    pub reads: AtomicU64,
    pub writes: AtomicU64,
    pub last_error: Mutex<Option<String>>,
}

impl Shared {
    /// The memory tier, locked.
    pub fn memory(&self) -> MutexGuard<'_, InMemoryState> {
        lock(&self.memory_tier)
    }

    pub(crate) fn failed(&self, what: &str, e: &redis::RedisError) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        *lock(&self.last_error) = Some(format!("{what}: {e}"));
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
