//! How a fake provider waits for a call's latency: on the runtime's timer (the simulator's
//! virtual clock, through `routersim_runtime`; tokio's timer under `routersim serve`), or on a
//! precise wall-clock timer (`routersim serve`).
//!
//! Why two: tokio's timer has millisecond resolution. A sleep ends on the next millisecond tick
//! after its deadline, and the runtime parks in whole milliseconds, so on the wall clock a
//! scripted 20 ms latency was served 1.9 ms late at p50 and 3.0 ms at p99 (`routersim bench
//! --serve`). Under paused time that rounding is exact and deterministic, which is what the
//! simulator needs; a chaos server needs the scripted latency itself. [`Pacing::Precise`] hands
//! each deadline to one timer thread that waits on a condition variable with a timeout (a futex
//! with a nanosecond timeout on Linux) and wakes the sleeping task from there: p50 0.3 ms, p99
//! 0.8 ms added on the same bench (median of five runs on a quiet machine). Stream items stay on tokio's timer: 2,000 streams opened in
//! one burst had their first token 30 ms late at p50 with one cross-thread wake each, against
//! 7 ms with tokio's per-tick batches.

#![allow(
    clippy::disallowed_methods,
    reason = "Pacing::Precise is a wall-clock timer by design: only for real-time servers"
)]

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::task::{Context, Poll, Waker};

use tokio::time::Instant;

/// How a fake provider's latencies and stream items are timed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Pacing {
    /// tokio's timer: exact under paused time (the simulator), millisecond ticks otherwise.
    #[default]
    Tokio,
    /// A dedicated timer thread on the wall clock, for a server that must not add latency.
    /// Only for real-time runtimes: it ignores tokio's paused clock.
    Precise,
}

impl Pacing {
    /// Waits until `at`.
    pub async fn sleep_until(self, at: Instant) {
        match self {
            Pacing::Tokio => routersim_runtime::time::sleep_until(at).await,
            Pacing::Precise => precise_sleep_until(at).await,
        }
    }
}

/// [`Pacing::Precise`]'s wait on its own: a small future (no tokio timer inside), for the
/// call paths whose size every in-flight request pays.
pub(crate) fn precise_sleep_until(at: Instant) -> impl Future<Output = ()> {
    PreciseSleep::new(at.into_std())
}

/// One registered deadline; the timer thread sets `fired` and wakes whoever polled last.
#[derive(Debug, Default)]
struct Entry {
    fired: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

/// A future that ends at a wall-clock instant, woken by the timer thread.
struct PreciseSleep {
    at: std::time::Instant,
    entry: Option<Arc<Entry>>,
}

impl PreciseSleep {
    fn new(at: std::time::Instant) -> Self {
        Self { at, entry: None }
    }
}

impl Future for PreciseSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if std::time::Instant::now() >= self.at {
            return Poll::Ready(());
        }
        let at = self.at;
        let entry = self.entry.get_or_insert_with(|| {
            let entry = Arc::new(Entry::default());
            TimerThread::global().schedule(at, entry.clone());
            entry
        });
        if entry.fired.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        *lock(&entry.waker) = Some(cx.waker().clone());
        // It may have fired between the check and storing the waker.
        if entry.fired.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        Poll::Pending
    }
}

/// The process's one timer thread: a heap of deadlines under a mutex, and a condition variable
/// it waits on until the earliest one (or until a new, earlier one arrives).
struct TimerThread {
    heap: Mutex<BinaryHeap<Reverse<Deadline>>>,
    changed: Condvar,
}

/// A deadline in the heap (ordered by instant, then by arrival).
struct Deadline {
    at: std::time::Instant,
    seq: u64,
    entry: Arc<Entry>,
}

impl PartialEq for Deadline {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Deadline {}
impl PartialOrd for Deadline {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Deadline {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

static TIMER: OnceLock<Arc<TimerThread>> = OnceLock::new();
static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl TimerThread {
    /// The timer thread, started on first use.
    fn global() -> &'static Arc<TimerThread> {
        TIMER.get_or_init(|| {
            let timer = Arc::new(TimerThread {
                heap: Mutex::new(BinaryHeap::new()),
                changed: Condvar::new(),
            });
            let worker = timer.clone();
            // If the thread cannot be started, sleeps still end: `poll` checks the clock
            // whenever it is polled, and tokio's own timer is not involved. Report it once.
            if let Err(e) = std::thread::Builder::new()
                .name("routersim-timer".into())
                .spawn(move || worker.run())
            {
                eprintln!("routersim: could not start the precise timer thread: {e}");
            }
            timer
        })
    }

    fn schedule(&self, at: std::time::Instant, entry: Arc<Entry>) {
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        let mut heap = lock(&self.heap);
        let earliest = heap.peek().is_none_or(|Reverse(d)| at < d.at);
        heap.push(Reverse(Deadline { at, seq, entry }));
        drop(heap);
        if earliest {
            self.changed.notify_one();
        }
    }

    fn run(&self) {
        let mut heap = lock(&self.heap);
        loop {
            let now = std::time::Instant::now();
            let mut due = Vec::new();
            while heap.peek().is_some_and(|Reverse(d)| d.at <= now) {
                if let Some(Reverse(deadline)) = heap.pop() {
                    due.push(deadline.entry);
                }
            }
            if !due.is_empty() {
                // Wake outside the lock: the woken tasks schedule their next deadlines at once.
                drop(heap);
                for entry in due {
                    entry.fired.store(true, Ordering::Release);
                    if let Some(waker) = lock(&entry.waker).take() {
                        waker.wake();
                    }
                }
                heap = lock(&self.heap);
                continue;
            }
            heap = match heap.peek().map(|Reverse(d)| d.at - now) {
                Some(wait) => match self.changed.wait_timeout(heap, wait) {
                    Ok((guard, _)) => guard,
                    Err(poisoned) => poisoned.into_inner().0,
                },
                None => match self.changed.wait(heap) {
                    Ok(guard) => guard,
                    Err(poisoned) => poisoned.into_inner(),
                },
            };
        }
    }
}

/// Locks a mutex; a poisoned one (a panic elsewhere) still holds valid data here.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_precise_sleep_never_ends_before_its_deadline() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        runtime.block_on(async {
            // Deadlines off the millisecond grid, some scheduled out of order.
            let start = Instant::now();
            let sleeps = (0..20u64).map(|k| {
                let at = start + Duration::from_micros(2_300 + 97 * ((k * 7) % 20));
                async move {
                    Pacing::Precise.sleep_until(at).await;
                    Instant::now() >= at
                }
            });
            for on_time in futures_join_all(sleeps).await {
                assert!(on_time);
            }
        });
        // How late it is, against tokio's timer, is measured by `routersim bench --serve`.
    }

    /// Polls every future to completion on one task (no extra dependency for a test).
    async fn futures_join_all<F: Future<Output = bool> + 'static>(
        futures: impl Iterator<Item = F>,
    ) -> Vec<bool> {
        let local = tokio::task::LocalSet::new();
        let handles: Vec<_> = futures.map(|f| local.spawn_local(f)).collect();
        local.await;
        let mut out = Vec::new();
        for handle in handles {
            out.push(handle.await.unwrap());
        }
        out
    }

    #[test]
    fn sleeps_dropped_before_their_deadline_do_not_stop_later_ones() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        runtime.block_on(async {
            let far = Instant::now() + Duration::from_secs(3600);
            let dropped =
                tokio::time::timeout(Duration::from_millis(1), Pacing::Precise.sleep_until(far))
                    .await;
            assert!(dropped.is_err());
            let near = Instant::now() + Duration::from_millis(2);
            Pacing::Precise.sleep_until(near).await;
            assert!(Instant::now() >= near);
        });
    }
}
