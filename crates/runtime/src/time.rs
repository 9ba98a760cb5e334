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
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::Instant;

use crate::executor::with_current;
use crate::timers::{TimerEntry, TimerState};

/// Now: the virtual executor's clock, or tokio's.
pub fn now() -> Instant {
    with_current(|s| s.map(|s| Instant::from_std(s.now()))).unwrap_or_else(Instant::now)
}

/// Sleeps until `deadline` on the runtime of this thread.
pub fn sleep_until(deadline: Instant) -> Sleep {
    if crate::executor::is_virtual() {
        Sleep(SleepInner::Virtual {
            deadline: deadline.into_std(),
            entry: None,
        })
    } else {
        Sleep(SleepInner::Tokio(Box::pin(tokio::time::sleep_until(
            deadline,
        ))))
    }
}

/// Sleeps for `duration` on the runtime of this thread.
pub fn sleep(duration: Duration) -> Sleep {
    sleep_until(now() + duration)
}

/// [`sleep_until`]'s future. On the virtual executor it is three words; dropping it before its
/// deadline cancels its timer (no stale wake, and the clock never stops for it).
#[derive(Debug)]
pub struct Sleep(SleepInner);

#[derive(Debug)]
enum SleepInner {
    Virtual {
        deadline: std::time::Instant,
        entry: Option<Rc<TimerEntry>>,
    },
    // Boxed: the virtual sleep, which every in-flight request holds, stays small.
    Tokio(Pin<Box<tokio::time::Sleep>>),
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match &mut self.get_mut().0 {
            SleepInner::Tokio(sleep) => sleep.as_mut().poll(cx),
            SleepInner::Virtual { deadline, entry } => poll_virtual(*deadline, entry, cx),
        }
    }
}

fn poll_virtual(
    deadline: std::time::Instant,
    entry: &mut Option<Rc<TimerEntry>>,
    cx: &mut Context<'_>,
) -> Poll<()> {
    if let Some(e) = entry {
        if e.state.get() == TimerState::Fired {
            return Poll::Ready(());
        }
        let mut waker = e.waker.borrow_mut();
        if !waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            *waker = Some(cx.waker().clone());
        }
        return Poll::Pending;
    }
    with_current(|s| {
        let Some(shared) = s else {
            // Polled off the executor that made it: nothing here can wake it.
            return Poll::Pending;
        };
        if shared.now() >= deadline {
            return Poll::Ready(());
        }
        *entry = Some(
            shared
                .timers
                .borrow_mut()
                .register(deadline, cx.waker().clone()),
        );
        Poll::Pending
    })
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let SleepInner::Virtual {
            entry: Some(entry), ..
        } = &self.0
            && entry.state.get() == TimerState::Pending
        {
            let counted = with_current(|s| {
                s.and_then(|s| s.timers.try_borrow_mut().ok())
                    .map(|mut timers| timers.cancel(entry))
                    .is_some()
            });
            if !counted {
                entry.state.set(TimerState::Cancelled);
                entry.waker.borrow_mut().take();
            }
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
