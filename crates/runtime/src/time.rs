//! Time for simulated code: one seam over the two runtimes.
//!
//! On the virtual executor, [`now`] is its clock and [`sleep_until`] registers on its heap; on
//! tokio (the `--runtime tokio` runs, and real-time servers), they are tokio's. Simulated code
//! (the fake providers, the runner) calls these and never `tokio::time` directly: outside a
//! tokio runtime, `tokio::time::Instant::now()` silently reads the wall clock and
//! `tokio::time::sleep` panics.
#![allow(
    clippy::disallowed_methods,
    reason = "the seam: the one place simulated code reaches tokio's clock"
)]

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::Instant;

use crate::executor::{duration_nanos, with_current};
use crate::timers::{Polled, TimerId};

/// Now: the virtual executor's clock, or tokio's.
pub fn now() -> Instant {
    with_current(|s| s.map(|s| Instant::from_std(s.now()))).unwrap_or_else(Instant::now)
}

/// Sleeps until `deadline` on the runtime of this thread.
pub fn sleep_until(deadline: Instant) -> Sleep {
    match with_current(|s| s.map(|s| s.nanos_at(deadline.into_std()))) {
        Some(at) => Sleep::virtual_at(at),
        None => Sleep::tokio(deadline),
    }
}

/// Sleeps for `duration` on the runtime of this thread (on the virtual executor, the same
/// deadline as `sleep_until(now() + duration)`, without the `Instant` arithmetic).
pub fn sleep(duration: Duration) -> Sleep {
    match with_current(|s| s.map(|s| s.now_ns().saturating_add(duration_nanos(duration)))) {
        Some(at) => Sleep::virtual_at(at),
        None => Sleep::tokio(now() + duration),
    }
}

/// [`sleep_until`]'s future. On the virtual executor it is three words (its deadline in
/// nanoseconds, and its timer once registered); dropping it before its deadline cancels its
/// timer (no stale wake, and the clock never stops for it).
#[derive(Debug)]
pub struct Sleep {
    inner: SleepInner,
    /// Not `Send`: a virtual timer can only be cancelled on its executor's thread.
    _local: PhantomData<*const ()>,
}

#[derive(Debug)]
enum SleepInner {
    Virtual {
        /// Nanoseconds since the executor's origin.
        at: u64,
        /// Its timer's sequence number (0 until registered) and slot; kept apart, not as a
        /// `TimerId`, so that the enum's tag fits beside the slot (24 bytes, not 32).
        seq: u64,
        slot: u32,
    },
    // Boxed: the virtual sleep, which every in-flight request holds, stays small.
    Tokio(Pin<Box<tokio::time::Sleep>>),
}

impl Sleep {
    fn virtual_at(at: u64) -> Self {
        Self {
            inner: SleepInner::Virtual {
                at,
                seq: 0,
                slot: 0,
            },
            _local: PhantomData,
        }
    }

    fn tokio(deadline: Instant) -> Self {
        Self {
            inner: SleepInner::Tokio(Box::pin(tokio::time::sleep_until(deadline))),
            _local: PhantomData,
        }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match &mut self.get_mut().inner {
            SleepInner::Tokio(sleep) => sleep.as_mut().poll(cx),
            SleepInner::Virtual { at, seq, slot } => {
                let mut timer = TimerId {
                    slot: *slot,
                    seq: *seq,
                };
                let poll = poll_virtual(*at, &mut timer, cx);
                (*seq, *slot) = (timer.seq, timer.slot);
                poll
            }
        }
    }
}

fn poll_virtual(at: u64, timer: &mut TimerId, cx: &mut Context<'_>) -> Poll<()> {
    with_current(|s| {
        let Some(shared) = s else {
            // Polled off the executor that made it: nothing here can wake it.
            return Poll::Pending;
        };
        if timer.seq != 0 {
            let (polled, replaced) = shared.timers.borrow_mut().poll(*timer, cx.waker());
            drop(replaced);
            return match polled {
                Polled::Fired => Poll::Ready(()),
                Polled::Pending | Polled::Foreign => Poll::Pending,
            };
        }
        if shared.now_ns() >= at {
            return Poll::Ready(());
        }
        *timer = shared.timers.borrow_mut().register(at, cx.waker().clone());
        Poll::Pending
    })
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let SleepInner::Virtual { seq, slot, .. } = self.inner
            && seq != 0
        {
            let timer = TimerId { slot, seq };
            // The waker (if the timer was still pending) is dropped after the borrow ends.
            let waker = with_current(|s| s?.timers.try_borrow_mut().ok()?.cancel(timer));
            drop(waker);
        }
    }
}

/// Yields once: the task goes to the back of the run queue.
pub async fn yield_now() {
    if with_current(|s| s.is_some()) {
        YieldOnce(false).await;
    } else {
        tokio::task::yield_now().await;
    }
}

struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
