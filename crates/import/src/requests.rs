//! The second pass's requests: a log's rows joined into requests (by request id) and handed on
//! in arrival order, while the log is read in the order calls ended.
//!
//! Rows are written when calls end, so a request's rows can be apart by its retries' waits and
//! requests come out of the log in the order they ended. A request stays open until the log
//! has moved on past it: for one already answered (a success row) by the log's disorder and
//! longest call (`lag`), for one that may still retry by `gap` as well (at least a minute, the
//! longest Retry-After LiteLLM honours). A finished request waits in a queue until no request
//! still open or not yet read can have arrived before it, and then goes out. Memory is the
//! requests of that span, never the whole log. A row that comes after its request went out
//! starts a request of its own, placed no earlier than the requests already out (counted as
//! `late`).

use std::cmp::Ordering;
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};

use crate::call::{Call, Scope};

/// How often (rows) the open requests are looked over.
const SWEEP_EVERY: u32 = 256;
/// The least time a request that may still retry stays open, seconds.
const MIN_GAP: f64 = 60.0;

/// A request: its rows, by start.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// Its arrival: its first row's start (Unix seconds).
    pub arrival: f64,
    /// Its rows, by start.
    pub calls: Vec<Call>,
    last_end: f64,
    answered: bool,
    seq: u64,
}

impl Request {
    fn new(call: Call, seq: u64) -> Self {
        Self {
            arrival: call.start,
            last_end: call.end,
            answered: matches!(call.scope, Scope::Final | Scope::Request),
            calls: vec![call],
            seq,
        }
    }

    /// Whether it moved to another model group (a fallback its rows or the router's own
    /// counts show).
    pub fn fell_back(&self) -> bool {
        self.calls
            .iter()
            .any(|c| c.attempted_fallbacks.is_some_and(|n| n > 0))
            || self
                .calls
                .windows(2)
                .any(|w| w[0].model_group != w[1].model_group)
    }

    fn add(&mut self, call: Call) {
        self.arrival = self.arrival.min(call.start);
        self.last_end = self.last_end.max(call.end);
        self.answered |= matches!(call.scope, Scope::Final | Scope::Request);
        self.calls.push(call);
    }
}

/// A finished request in the queue: earliest arrival first.
struct Queued(Request);

impl PartialEq for Queued {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Queued {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap pops the greatest.
        other
            .0
            .arrival
            .total_cmp(&self.0.arrival)
            .then(other.0.seq.cmp(&self.0.seq))
    }
}

/// An `f64` ordered by `total_cmp` (times in the queues).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Time(f64);

impl Eq for Time {}
impl PartialOrd for Time {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Time {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// Joins rows into requests and hands them on in arrival order.
pub struct Assembler {
    open: HashMap<u64, Request>,
    /// When each open request is due (its last row's end plus the wait), with the number of
    /// rows it had then: an entry for a request that has grown since is stale.
    due: BinaryHeap<Reverse<(Time, u64, usize)>>,
    /// The open requests by arrival.
    arrivals: BTreeSet<(Time, u64, u64)>,
    queue: BinaryHeap<Queued>,
    clock: f64,
    lag: f64,
    gap: f64,
    seq: u64,
    last_out: f64,
    /// Rows that came after their request went out.
    pub late: u64,
}

impl Assembler {
    /// An assembler for a log whose rows end at most `disorder` seconds out of order, whose
    /// longest call took `max_latency`.
    pub fn new(disorder: f64, max_latency: f64) -> Self {
        let lag = disorder + max_latency + 1.0;
        Self {
            open: HashMap::new(),
            due: BinaryHeap::new(),
            arrivals: BTreeSet::new(),
            queue: BinaryHeap::new(),
            clock: f64::NEG_INFINITY,
            lag,
            gap: (2.0 * max_latency + disorder).max(MIN_GAP),
            seq: 0,
            last_out: f64::NEG_INFINITY,
            late: 0,
        }
    }

    /// Adds a row; `out` gets every request that is due, in arrival order.
    pub fn push<E>(
        &mut self,
        call: Call,
        out: &mut dyn FnMut(Request) -> Result<(), E>,
    ) -> Result<(), E> {
        self.clock = self.clock.max(call.end);
        self.seq += 1;
        match call.request {
            Some(key) if call.scope != Scope::Request => {
                let request = match self.open.remove(&key) {
                    Some(mut request) => {
                        self.arrivals
                            .remove(&(Time(request.arrival), request.seq, key));
                        request.add(call);
                        request
                    }
                    None => Request::new(call, self.seq),
                };
                let wait = if request.answered {
                    self.lag
                } else {
                    self.lag + self.gap
                };
                self.due.push(Reverse((
                    Time(request.last_end + wait),
                    key,
                    request.calls.len(),
                )));
                self.arrivals
                    .insert((Time(request.arrival), request.seq, key));
                self.open.insert(key, request);
            }
            _ => self.queue.push(Queued(Request::new(call, self.seq))),
        }
        if self.seq.is_multiple_of(u64::from(SWEEP_EVERY)) {
            self.sweep(false);
            self.release(out, false)?;
        }
        Ok(())
    }

    /// Hands on everything left.
    pub fn finish<E>(mut self, out: &mut dyn FnMut(Request) -> Result<(), E>) -> Result<u64, E> {
        self.sweep(true);
        self.release(out, true)?;
        Ok(self.late)
    }

    /// Moves the requests the log has moved past into the queue.
    fn sweep(&mut self, all: bool) {
        while let Some(Reverse((due, key, rows))) = self.due.peek().copied() {
            if !all && due.0 >= self.clock {
                break;
            }
            self.due.pop();
            if self.open.get(&key).is_some_and(|r| r.calls.len() == rows)
                && let Some(request) = self.open.remove(&key)
            {
                self.arrivals
                    .remove(&(Time(request.arrival), request.seq, key));
                self.queue.push(Queued(request));
            }
        }
    }

    /// Hands on the queued requests no unread or open request can precede (`all`: the log has
    /// ended, everything goes).
    fn release<E>(
        &mut self,
        out: &mut dyn FnMut(Request) -> Result<(), E>,
        all: bool,
    ) -> Result<(), E> {
        let open_min = self.arrivals.first().map_or(f64::INFINITY, |(t, _, _)| t.0);
        let mark = open_min.min(self.clock - self.lag);
        while let Some(top) = self.queue.peek() {
            if !all && top.0.arrival > mark {
                break;
            }
            let Some(Queued(mut request)) = self.queue.pop() else {
                break;
            };
            if request.arrival < self.last_out {
                self.late += 1;
                request.arrival = self.last_out;
            }
            self.last_out = request.arrival;
            request.calls.sort_by(|a, b| a.start.total_cmp(&b.start));
            out(request)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn row(start: f64, end: f64, key: Option<u64>, scope: Scope) -> Call {
        let mut c = Call::new(1, start, end, Arc::from("g"), scope);
        c.request = key;
        c
    }

    #[test]
    fn rows_in_end_order_come_out_as_requests_in_arrival_order() {
        let mut a = Assembler::new(0.0, 5.0);
        let mut out = Vec::new();
        let mut collect = |r: Request| -> Result<(), ()> {
            out.push((r.arrival, r.calls.len()));
            Ok(())
        };
        // Request 1: a failure (0..1) then a success (1..2); request 2 arrives at 0.5 and
        // ends at 4; request 3 (no id) at 0.2.
        a.push(row(0.0, 1.0, Some(1), Scope::FirstFailure), &mut collect)
            .unwrap();
        a.push(row(1.0, 2.0, Some(1), Scope::Final), &mut collect)
            .unwrap();
        a.push(row(0.2, 3.0, None, Scope::Attempt), &mut collect)
            .unwrap();
        a.push(row(0.5, 4.0, Some(2), Scope::Final), &mut collect)
            .unwrap();
        assert_eq!(a.finish(&mut collect), Ok(0));
        assert_eq!(out, vec![(0.0, 2), (0.2, 1), (0.5, 1)]);
    }
}
