//! The virtual executor's timers: a slab of wakers and a queue of (deadline, registration)
//! items pointing into it.
//!
//! Why a queue of exact deadlines and not tokio's wheel: under virtual time the executor jumps
//! straight to the next deadline, so it only ever needs the minimum, and deadlines stay exact
//! to the nanosecond (tokio's wheel rounds every deadline up to the next millisecond). The
//! queue is [`Deadlines`].
//!
//! Why a slab and plain numbers: a timer is a slot (its waker) plus a queue item of three
//! integers; deadlines are nanoseconds since the executor's origin. No allocation per timer (the
//! `Rc` per timer this replaced cost a malloc and a free per sleep), and comparing two items is
//! two integer compares. A sleep holds its slot and its sequence number; the slot holds the
//! sequence number of the timer using it, so a sleep whose slot now holds another number (or
//! none) knows its timer has fired.
//!
//! Cancellation is lazy but bounded: a dropped [`Sleep`](crate::time::Sleep) frees its slot at
//! once (its waker is gone, so it never wakes anyone, and a queue item whose slot no longer holds
//! its number never moves the clock); the queue is rebuilt without such items once they
//! outnumber the live ones (a `select!` whose timeout loses on every call would otherwise keep
//! every timeout until its deadline: memory must stay flat).

use std::task::Waker;

use crate::deadlines::{Deadlines, Due};

/// Sequence numbers carry the executor's id above this many bits: a sleep registered on one
/// executor can never match a slot of another (2^40 timers per executor).
const SEQ_BITS: u32 = 40;

/// A slot's number when no timer uses it (sequence numbers start at `id << SEQ_BITS`, id ≥ 1).
const FREE: u64 = 0;

/// Compaction is not worth it below this many cancelled items.
const COMPACT_AFTER: usize = 64;

/// Where a registered timer lives: its slot and its sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TimerId {
    pub(crate) slot: u32,
    pub(crate) seq: u64,
}

/// What a registered sleep's poll finds.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Polled {
    /// Its deadline came.
    Fired,
    /// Still waiting (its waker is up to date).
    Pending,
    /// It was registered on another executor: nothing here can wake it.
    Foreign,
}

/// One slot: the number of the timer using it ([`FREE`] if none) and that timer's waker.
struct Slot {
    seq: u64,
    waker: Option<Waker>,
}

/// Every pending deadline of one executor.
pub(crate) struct Timers {
    queue: Deadlines,
    slots: Vec<Slot>,
    free: Vec<u32>,
    next_seq: u64,
    /// The first sequence number past this executor's range.
    seq_end: u64,
    /// Queue items whose timer was cancelled.
    cancelled: usize,
}

impl Timers {
    /// No timers, for the executor numbered `id` (≥ 1).
    pub(crate) fn new(id: u64) -> Self {
        let first = id << SEQ_BITS;
        Self {
            queue: Deadlines::new(),
            slots: Vec::new(),
            free: Vec::new(),
            next_seq: first,
            seq_end: first + (1 << SEQ_BITS),
            cancelled: 0,
        }
    }

    fn owns(&self, seq: u64) -> bool {
        seq < self.seq_end && seq >= self.seq_end - (1 << SEQ_BITS)
    }

    /// Registers a deadline (nanoseconds since the origin) for `waker`.
    pub(crate) fn register(&mut self, at: u64, waker: Waker) -> TimerId {
        let seq = self.next_seq;
        self.next_seq += 1;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Slot {
                    seq,
                    waker: Some(waker),
                };
                slot
            }
            None => {
                let slot = u32::try_from(self.slots.len()).unwrap_or(u32::MAX);
                self.slots.push(Slot {
                    seq,
                    waker: Some(waker),
                });
                slot
            }
        };
        self.queue.push(Due { at, seq, slot });
        TimerId { slot, seq }
    }

    /// A registered sleep is polled again: whether its timer fired; if not, `waker` is the one
    /// its deadline will wake. A waker it replaces is given back, for the caller to drop once
    /// it no longer borrows the timers (dropping a waker can drop a task and its sleeps).
    pub(crate) fn poll(&mut self, id: TimerId, waker: &Waker) -> (Polled, Option<Waker>) {
        if !self.owns(id.seq) {
            return (Polled::Foreign, None);
        }
        match self.slots.get_mut(id.slot as usize) {
            Some(slot) if slot.seq == id.seq => {
                if slot.waker.as_ref().is_some_and(|w| w.will_wake(waker)) {
                    return (Polled::Pending, None);
                }
                (Polled::Pending, slot.waker.replace(waker.clone()))
            }
            _ => (Polled::Fired, None),
        }
    }

    /// A sleep was dropped: if its timer is still pending, frees its slot and gives back its
    /// waker (for the caller to drop once it no longer borrows the timers, since dropping a
    /// waker can drop a task and its sleeps).
    pub(crate) fn cancel(&mut self, id: TimerId) -> Option<Waker> {
        let slot = self.slots.get_mut(id.slot as usize)?;
        if slot.seq != id.seq {
            return None;
        }
        slot.seq = FREE;
        let waker = slot.waker.take();
        self.free.push(id.slot);
        self.cancelled += 1;
        if self.cancelled >= COMPACT_AFTER && self.cancelled * 2 > self.queue.len() {
            let slots = &self.slots;
            self.queue
                .retain(|due| slots[due.slot as usize].seq == due.seq);
            self.cancelled = 0;
        }
        waker
    }

    /// Fires the timers at the earliest live deadline (dropping cancelled items on the way):
    /// frees their slots and hands over their wakers in registration order. Returns that
    /// deadline, the executor's new now; `None` when no timer is set.
    pub(crate) fn fire_next(&mut self, wakers: &mut Vec<Waker>) -> Option<u64> {
        loop {
            let first = self.queue.pop()?;
            let mut fired = self.fire(first, wakers);
            while let Some(due) = self.queue.pop_at(first.at) {
                fired |= self.fire(due, wakers);
            }
            if fired {
                return Some(first.at);
            }
        }
    }

    /// Fires one item if its timer is live (frees the slot, hands over the waker).
    fn fire(&mut self, due: Due, wakers: &mut Vec<Waker>) -> bool {
        let slot = &mut self.slots[due.slot as usize];
        if slot.seq != due.seq {
            self.cancelled = self.cancelled.saturating_sub(1);
            return false;
        }
        slot.seq = FREE;
        wakers.extend(slot.waker.take());
        self.free.push(due.slot);
        true
    }

    /// Queue items held, cancelled ones included (for the memory test).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    /// Slots held, free ones included (for the memory test).
    #[cfg(test)]
    pub(crate) fn slots(&self) -> usize {
        self.slots.len()
    }

    /// Takes every waker out (the executor is going away); the caller drops them after
    /// releasing its borrow, since dropping a waker can drop a task and its sleeps.
    pub(crate) fn take_all(&mut self) -> Vec<Waker> {
        self.cancelled = 0;
        self.queue.clear();
        self.free.clear();
        std::mem::take(&mut self.slots)
            .into_iter()
            .filter_map(|slot| slot.waker)
            .collect()
    }
}
