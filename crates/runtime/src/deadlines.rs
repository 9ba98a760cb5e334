//! The timers' queue: a binary heap of (deadline, registration) items.
//!
//! Items are three integers (24 bytes, no pointer): comparing two is two integer compares. Ties
//! come out in registration order. Measured on the bench (callgrind) and kept out: a
//! hand-written 4-ary heap (+7 M instructions: bounds checks and three compares per level
//! outweighed the halved depth) and a radix heap, which could use the fact that deadlines taken
//! out never decrease (+2 M: with nanosecond deadlines a second or so ahead, each item moved
//! down ~8 buckets, as many moves as the heap's sifting).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// One queued timer: its deadline (nanoseconds since the origin), its registration number and
/// its slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Due {
    pub(crate) at: u64,
    pub(crate) seq: u64,
    pub(crate) slot: u32,
}

/// Ordered so that `BinaryHeap`'s maximum is the earliest (deadline, registration).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Earliest(Due);

impl Earliest {
    /// (deadline, registration) as one 128-bit number: a comparison is one wide compare, with
    /// no branch between the two halves.
    fn key(&self) -> u128 {
        (u128::from(self.0.at) << 64) | u128::from(self.0.seq)
    }
}

// The heap's sifting calls `<=` and `<`: each is spelled out so it is one compare.
impl PartialOrd for Earliest {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
    fn lt(&self, other: &Self) -> bool {
        other.key() < self.key()
    }
    fn le(&self, other: &Self) -> bool {
        other.key() <= self.key()
    }
    fn gt(&self, other: &Self) -> bool {
        other.key() > self.key()
    }
    fn ge(&self, other: &Self) -> bool {
        other.key() >= self.key()
    }
}
impl Ord for Earliest {
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

/// A priority queue of [`Due`] items.
pub(crate) struct Deadlines {
    heap: BinaryHeap<Earliest>,
}

impl Deadlines {
    /// Empty.
    pub(crate) fn new() -> Self {
        Self {
            heap: BinaryHeap::new(),
        }
    }

    /// Queues `due`.
    pub(crate) fn push(&mut self, due: Due) {
        self.heap.push(Earliest(due));
    }

    /// Takes out the earliest item.
    pub(crate) fn pop(&mut self) -> Option<Due> {
        self.heap.pop().map(|e| e.0)
    }

    /// Takes out the earliest item if its deadline is `at` (ties come out in registration
    /// order).
    pub(crate) fn pop_at(&mut self, at: u64) -> Option<Due> {
        if self.heap.peek()?.0.at == at {
            self.pop()
        } else {
            None
        }
    }

    /// Keeps only the items `keep` accepts.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&Due) -> bool) {
        self.heap.retain(|e| keep(&e.0));
    }

    /// Items queued.
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }

    /// Drops every item.
    pub(crate) fn clear(&mut self) {
        self.heap.clear();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn due(at: u64, seq: u64) -> Due {
        Due { at, seq, slot: 0 }
    }

    /// Pops everything in order, as the executor does: the earliest, then all items at it.
    fn drain_all(q: &mut Deadlines) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        while let Some(first) = q.pop() {
            out.push((first.at, first.seq));
            while let Some(due) = q.pop_at(first.at) {
                out.push((due.at, due.seq));
            }
        }
        assert_eq!(q.len(), 0);
        out
    }

    #[test]
    fn items_come_out_by_deadline_then_registration_with_pushes_between_pops() {
        // A deterministic scramble of deadlines with many ties, pushed in rounds between pops
        // (each push after the last minimum, as the executor guarantees).
        let mut q = Deadlines::new();
        let mut expected = Vec::new();
        let mut got = Vec::new();
        let mut seq = 0u64;
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut now = 0u64;
        for _round in 0..200 {
            for _ in 0..20 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let at = now + 1 + (x % 5) * 1_000 + (x >> 40) % 3;
                q.push(due(at, seq));
                expected.push((at, seq));
                seq += 1;
            }
            let first = q.pop().unwrap();
            got.push((first.at, first.seq));
            while let Some(due) = q.pop_at(first.at) {
                got.push((due.at, due.seq));
            }
            now = first.at;
        }
        got.extend(drain_all(&mut q));
        expected.sort_unstable();
        assert_eq!(got, expected);
    }

    #[test]
    fn retain_keeps_order_and_counts() {
        let mut q = Deadlines::new();
        for seq in 0..100u64 {
            q.push(due(1_000 - (seq % 10) * 100, seq));
        }
        q.retain(|d| d.seq % 3 != 0);
        assert_eq!(q.len(), 66);
        let out = drain_all(&mut q);
        let mut sorted = out.clone();
        sorted.sort_unstable();
        assert_eq!(out, sorted);
        assert!(out.iter().all(|&(_, seq)| seq % 3 != 0));
    }

    #[test]
    fn far_deadlines_up_to_the_largest_come_last() {
        let mut q = Deadlines::new();
        q.push(due(u64::MAX, 0));
        q.push(due(1, 1));
        q.push(due(u64::MAX, 2));
        assert_eq!(drain_all(&mut q), [(1, 1), (u64::MAX, 0), (u64::MAX, 2)]);
    }
}
