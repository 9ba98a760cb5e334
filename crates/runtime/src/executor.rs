//! The virtual-time executor: one thread, a FIFO run queue, a timer queue, a clock that only
//! moves when every task is waiting.
//!
//! Why not tokio's paused runtime: measured on the bench workload, tokio's floor spends ~15 % in
//! `clock_gettime` for runtime metrics that cannot be turned off, ~20–26 % in its timer wheel
//! and time driver and ~21 % in its scheduler; the same `async fn` tasks on a small executor
//! with a virtual clock run several times faster (issue 17). Tasks are `async-task`'s (the
//! allocation, the waker and cancellation are its job); the queue, the clock and the timers are
//! here.
//!
//! The loop, and why it is deterministic: poll the main future if it was woken; run the tasks
//! that were queued at the start of the pass, in queue order; when nothing is runnable, move the
//! clock to the earliest live deadline and wake its timers in (deadline, registration) order.
//! Nothing reads the wall clock; the origin of [`Instant`]s is read once, when the executor is
//! built, and no output depends on it (a test shifts it by a thousand days).

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use async_task::Runnable;

use crate::timers::Timers;

/// Executors built so far in this process: a waker of a finished executor must never queue
/// its task on a newer one of the same thread.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// One executor's state, reachable from its tasks through the thread-local [`CURRENT`].
pub(crate) struct Shared {
    id: u64,
    /// Tasks woken since the current pass began, in wake order.
    queue: RefCell<Vec<Runnable>>,
    pub(crate) timers: RefCell<Timers>,
    /// Virtual now as an instant (reading it is a copy, not an addition).
    now: Cell<Instant>,
    /// Virtual now in nanoseconds since the origin: what deadlines are compared with.
    now_ns: Cell<u64>,
    origin: Instant,
}

impl Shared {
    /// Virtual now.
    pub(crate) fn now(&self) -> Instant {
        self.now.get()
    }

    /// Virtual now, in nanoseconds since the origin.
    pub(crate) fn now_ns(&self) -> u64 {
        self.now_ns.get()
    }

    /// `deadline` in nanoseconds since the origin (0 before it; saturating ~584 years after).
    pub(crate) fn nanos_at(&self, deadline: Instant) -> u64 {
        deadline
            .checked_duration_since(self.origin)
            .map_or(0, duration_nanos)
    }

    fn set_now_ns(&self, now_ns: u64) {
        self.now_ns.set(now_ns);
        self.now.set(self.origin + Duration::from_nanos(now_ns));
    }

    /// Virtual time since the origin.
    pub(crate) fn elapsed(&self) -> Duration {
        Duration::from_nanos(self.now_ns.get())
    }
}

/// A duration in nanoseconds, saturating (at ~584 years).
pub(crate) fn duration_nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

thread_local! {
    static CURRENT: RefCell<Option<Rc<Shared>>> = const { RefCell::new(None) };
}

/// Runs `f` with the virtual executor running on this thread, if there is one.
pub(crate) fn with_current<R>(f: impl FnOnce(Option<&Rc<Shared>>) -> R) -> R {
    CURRENT.with(|current| f(current.borrow().as_ref()))
}

/// Whether a virtual executor is running on this thread.
pub fn is_virtual() -> bool {
    with_current(|s| s.is_some())
}

/// Why [`Executor::block_on`] returned without the future's output.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Stalled {
    /// Every task waits, and no timer is set that could wake one: under tokio this is a hang.
    #[error(
        "the simulation stalled at {at:?} of virtual time: every task waits and no timer is set \
         (something waits on a clock or a runtime that is not the simulation's)"
    )]
    NothingToWake {
        /// Virtual time when it stalled.
        at: Duration,
    },
}

/// A single-threaded executor on a virtual clock. Build one per run.
pub struct Executor {
    shared: Rc<Shared>,
    /// The wakers of the timers due at one step, kept between steps (one allocation per run,
    /// not one per step).
    due: RefCell<Vec<Waker>>,
    /// The tasks of the pass being run, swapped with the queue (likewise kept).
    pass: RefCell<Vec<Runnable>>,
}

impl Default for Executor {
    fn default() -> Self {
        Self::new()
    }
}

impl Executor {
    /// An executor whose virtual time starts at zero.
    #[allow(
        clippy::disallowed_methods,
        reason = "the origin of Instants: read once, and no output depends on it"
    )]
    pub fn new() -> Self {
        Self::with_origin(std::time::Instant::now())
    }

    /// An executor whose `Instant`s count from `origin` (a test moves it to prove that no
    /// output depends on it).
    pub fn with_origin(origin: Instant) -> Self {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        Self {
            shared: Rc::new(Shared {
                id,
                queue: RefCell::new(Vec::new()),
                timers: RefCell::new(Timers::new(id)),
                now: Cell::new(origin),
                now_ns: Cell::new(0),
                origin,
            }),
            due: RefCell::new(Vec::new()),
            pass: RefCell::new(Vec::new()),
        }
    }

    /// Virtual time since the start.
    pub fn elapsed(&self) -> Duration {
        self.shared.elapsed()
    }

    /// Runs `future` and every task it spawns until `future` ends; tasks still running then
    /// are dropped (as tokio drops them with its runtime).
    pub fn block_on<F: Future>(&self, future: F) -> Result<F::Output, Stalled> {
        let _entered = Entered::new(self.shared.clone());
        let main_flag = Arc::new(MainWake(AtomicBool::new(true)));
        let waker = Waker::from(main_flag.clone());
        let mut cx = Context::from_waker(&waker);
        let mut future = pin!(future);
        loop {
            if main_flag.0.swap(false, Ordering::Relaxed)
                && let Poll::Ready(output) = future.as_mut().poll(&mut cx)
            {
                return Ok(output);
            }
            self.run_queued();
            if main_flag.0.load(Ordering::Relaxed) || !self.shared.queue.borrow().is_empty() {
                continue;
            }
            if !self.advance() {
                return Err(Stalled::NothingToWake {
                    at: self.shared.elapsed(),
                });
            }
        }
    }

    /// Runs the tasks queued when the pass began (tasks they wake run on the next pass): the
    /// queue is swapped out whole, so each task costs no borrow of it.
    fn run_queued(&self) {
        let mut pass = std::mem::take(&mut *self.pass.borrow_mut());
        std::mem::swap(&mut pass, &mut *self.shared.queue.borrow_mut());
        for runnable in pass.drain(..) {
            runnable.run();
        }
        *self.pass.borrow_mut() = pass;
    }

    /// Moves the clock to the earliest live deadline and wakes what is due; false when no
    /// timer is set.
    fn advance(&self) -> bool {
        let mut wakers = std::mem::take(&mut *self.due.borrow_mut());
        let fired = self.shared.timers.borrow_mut().fire_next(&mut wakers);
        let Some(deadline) = fired else {
            return false;
        };
        // Deadlines are registered after now only: the clock never goes back.
        self.shared.set_now_ns(deadline.max(self.shared.now_ns()));
        for waker in wakers.drain(..) {
            waker.wake();
        }
        *self.due.borrow_mut() = wakers;
        true
    }

    /// Items in the timer queue (cancelled ones included), for tests.
    #[cfg(test)]
    pub(crate) fn timer_entries(&self) -> usize {
        self.shared.timers.borrow().len()
    }

    /// Timer slots held (free ones included), for tests.
    #[cfg(test)]
    pub(crate) fn timer_slots(&self) -> usize {
        self.shared.timers.borrow().slots()
    }
}

impl Drop for Executor {
    fn drop(&mut self) {
        // Dropping a queued runnable drops its future; timers hold wakers, which hold tasks.
        let queued = std::mem::take(&mut *self.shared.queue.borrow_mut());
        drop(queued);
        let wakers = self.shared.timers.borrow_mut().take_all();
        drop(wakers);
    }
}

/// The main future's waker: a flag the loop reads.
struct MainWake(AtomicBool);

impl Wake for MainWake {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::Relaxed);
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Makes an executor current on this thread until dropped (restoring the one before).
struct Entered {
    previous: Option<Rc<Shared>>,
}

impl Entered {
    fn new(shared: Rc<Shared>) -> Self {
        let previous = CURRENT.with(|c| c.borrow_mut().replace(shared));
        Self { previous }
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        let previous = self.previous.take();
        CURRENT.with(|c| *c.borrow_mut() = previous);
    }
}

/// A spawned task on the virtual executor. Dropping it detaches the task (it runs on);
/// [`abort`](Self::abort) cancels it: it is never polled again and its future is dropped.
#[derive(Debug)]
pub struct VirtualTask<T> {
    task: Option<async_task::Task<T>>,
}

impl<T> VirtualTask<T> {
    /// Cancels the task.
    pub fn abort(mut self) {
        drop(self.task.take());
    }

    /// Cancels the task and waits until its future is dropped.
    pub async fn cancel(mut self) {
        // A finished task is only dropped: awaiting one that panicked would panic here.
        if let Some(task) = self.task.take().filter(|t| !t.is_finished()) {
            let _ = task.cancel().await;
        }
    }

    /// Whether the task has ended.
    pub fn is_finished(&self) -> bool {
        self.task.as_ref().is_none_or(async_task::Task::is_finished)
    }
}

impl<T> Drop for VirtualTask<T> {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.detach();
        }
    }
}

/// Spawns `future` on the virtual executor of this thread; gives it back when there is none.
pub(crate) fn spawn_virtual<F>(future: F) -> Result<VirtualTask<F::Output>, F>
where
    F: Future + 'static,
    F::Output: 'static,
{
    let Some(id) = with_current(|s| s.map(|s| s.id)) else {
        return Err(future);
    };
    Ok(spawn_on(id, move |()| future))
}

/// Spawns the future `make` returns on the virtual executor of this thread, made inside the
/// task's allocation; gives `make` back when there is none.
pub(crate) fn spawn_virtual_with<F, M>(make: M) -> Result<VirtualTask<F::Output>, M>
where
    M: FnOnce() -> F + 'static,
    F: Future + 'static,
    F::Output: 'static,
{
    let Some(id) = with_current(|s| s.map(|s| s.id)) else {
        return Err(make);
    };
    Ok(spawn_on(id, move |()| make()))
}

/// Spawns the future `make` returns on the virtual executor numbered `id`.
fn spawn_on<F>(id: u64, make: impl FnOnce(&()) -> F) -> VirtualTask<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    let schedule = move |runnable: Runnable| {
        CURRENT.with(|c| {
            if let Some(shared) = c.borrow().as_ref()
                && shared.id == id
            {
                shared.queue.borrow_mut().push(runnable);
            }
            // Otherwise the executor is gone: dropping the runnable drops the task's future.
        });
    };
    // A panicking task ends (its panic is printed by the hook) and the others run on, as
    // under tokio; whoever waits for its result sees it did not finish.
    let (runnable, task) = async_task::Builder::new()
        .propagate_panic(true)
        .spawn_local(make, schedule);
    runnable.schedule();
    VirtualTask { task: Some(task) }
}
