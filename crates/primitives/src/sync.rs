//! Poison-tolerant locking, in one place.
//!
//! Why: a `Mutex` is poisoned when a thread panics while holding it. Every lock in routersim
//! guards plain data (counters, rows, queues) that a panic cannot leave half-built in a way
//! that matters more than losing the whole run, so each site used to recover the guard with
//! its own copy of `unwrap_or_else(PoisonError::into_inner)`. These two functions are that
//! copy: never a panic on a poisoned lock, and one place to change the rule.

use std::sync::{LockResult, Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, taking the guard even if another thread panicked while holding it.
pub fn lock_unpoisoned<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    unpoisoned(mutex.lock())
}

/// The value of any lock result (`lock`, `get_mut`, `into_inner`, `RwLock::read`, …),
/// poisoned or not.
pub fn unpoisoned<G>(result: LockResult<G>) -> G {
    result.unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poisoned(value: u32) -> Mutex<u32> {
        let mutex = Mutex::new(value);
        let _ = std::thread::scope(|s| {
            s.spawn(|| {
                let _guard = mutex.lock();
                panic!("poison the lock");
            })
            .join()
        });
        mutex
    }

    #[test]
    fn a_poisoned_lock_still_gives_its_data() {
        let mut mutex = poisoned(7);
        assert!(mutex.is_poisoned());
        *lock_unpoisoned(&mutex) += 1;
        assert_eq!(*unpoisoned(mutex.get_mut()), 8);
        assert_eq!(unpoisoned(mutex.into_inner()), 8);
    }
}
