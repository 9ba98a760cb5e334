//! The virtual executor's timers: a binary heap ordered by (deadline, registration order).
//!
//! Why a heap and not tokio's wheel: under virtual time the executor jumps straight to the next
//! deadline, so it only ever needs the minimum; a heap gives it in O(log n) with exact
//! nanosecond deadlines (tokio's wheel rounds every deadline up to the next millisecond).
//!
//! Cancellation is lazy but bounded: a dropped [`Sleep`](crate::time::Sleep) marks its entry
//! cancelled, a cancelled entry never wakes anyone nor moves the clock, and the heap is rebuilt
//! without them once they outnumber the live ones (a `select!` whose timeout loses on every
//! call would otherwise keep every timeout until its deadline: memory must stay flat).

use std::cell::{Cell, RefCell};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::rc::Rc;
use std::task::Waker;
use std::time::Instant;

/// Where one timer is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TimerState {
    /// In the heap, waiting for its deadline.
    Pending,
    /// Its deadline came; its waker was woken.
    Fired,
    /// Its sleep was dropped before the deadline.
    Cancelled,
}

/// One registered deadline, shared by the heap and the sleep that registered it.
#[derive(Debug)]
pub(crate) struct TimerEntry {
    pub(crate) state: Cell<TimerState>,
    pub(crate) waker: RefCell<Option<Waker>>,
}

/// A heap item: ordered by deadline, then by registration (ties fire in the order they were
/// set, so the same program always wakes its tasks in the same order). The deadline is the
/// `Instant` itself: comparing two is as cheap as comparing nanosecond counts, and converting
/// to and from an origin (a checked `Timespec` subtraction per timer) was ~3 % of the harness.
struct Scheduled {
    deadline: Instant,
    seq: u64,
    entry: Rc<TimerEntry>,
}

impl PartialEq for Scheduled {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scheduled {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.deadline, self.seq).cmp(&(other.deadline, other.seq))
    }
}

/// Compaction is not worth it below this many cancelled entries.
const COMPACT_AFTER: usize = 64;

/// Every pending deadline of one executor.
pub(crate) struct Timers {
    heap: BinaryHeap<Reverse<Scheduled>>,
    next_seq: u64,
    cancelled: usize,
}

impl Timers {
    /// No timers.
    pub(crate) fn new() -> Self {
        Self {
            heap: BinaryHeap::new(),
            next_seq: 0,
            cancelled: 0,
        }
    }

    /// Registers `deadline` for `waker`.
    pub(crate) fn register(&mut self, deadline: Instant, waker: Waker) -> Rc<TimerEntry> {
        let entry = Rc::new(TimerEntry {
            state: Cell::new(TimerState::Pending),
            waker: RefCell::new(Some(waker)),
        });
        self.heap.push(Reverse(Scheduled {
            deadline,
            seq: self.next_seq,
            entry: entry.clone(),
        }));
        self.next_seq += 1;
        entry
    }

    /// A pending entry's sleep was dropped.
    pub(crate) fn cancel(&mut self, entry: &TimerEntry) {
        if entry.state.get() != TimerState::Pending {
            return;
        }
        entry.state.set(TimerState::Cancelled);
        entry.waker.borrow_mut().take();
        self.cancelled += 1;
        if self.cancelled >= COMPACT_AFTER && self.cancelled * 2 > self.heap.len() {
            self.heap
                .retain(|Reverse(s)| s.entry.state.get() == TimerState::Pending);
            self.cancelled = 0;
        }
    }

    /// The earliest live deadline, dropping cancelled entries on the way.
    pub(crate) fn next_deadline(&mut self) -> Option<Instant> {
        while let Some(Reverse(top)) = self.heap.peek() {
            if top.entry.state.get() == TimerState::Pending {
                return Some(top.deadline);
            }
            self.heap.pop();
            self.cancelled = self.cancelled.saturating_sub(1);
        }
        None
    }

    /// Marks every live entry due at or before `now` fired and returns their wakers, in
    /// (deadline, registration) order.
    pub(crate) fn fire_due(&mut self, now: Instant, wakers: &mut Vec<Waker>) {
        while let Some(Reverse(top)) = self.heap.peek() {
            if top.deadline > now {
                break;
            }
            let Some(Reverse(due)) = self.heap.pop() else {
                break;
            };
            match due.entry.state.get() {
                TimerState::Pending => {
                    due.entry.state.set(TimerState::Fired);
                    if let Some(waker) = due.entry.waker.borrow_mut().take() {
                        wakers.push(waker);
                    }
                }
                TimerState::Cancelled => self.cancelled = self.cancelled.saturating_sub(1),
                TimerState::Fired => {}
            }
        }
    }

    /// Entries held, cancelled ones included (for the memory test).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }

    /// Takes every entry out (the executor is going away); the caller drops them after
    /// releasing its borrow, since dropping a waker can drop a task and its sleeps.
    pub(crate) fn take_all(&mut self) -> Vec<Waker> {
        self.cancelled = 0;
        std::mem::take(&mut self.heap)
            .into_iter()
            .filter_map(|Reverse(s)| s.entry.waker.borrow_mut().take())
            .collect()
    }
}
