//! Route health for ranking: *"selected = rank(candidates, health, latency, cost)"*. A route's
//! health is how many of its last [`WINDOW`] attempts failed (a rejected answer counts), so a
//! route that starts failing drops behind a clean one before any cooldown takes it out.

use std::cell::RefCell;

/// Attempts a route's health is read over.
pub const WINDOW: u32 = 8;

/// The last [`WINDOW`] outcomes of each deployment, one bit each (1: failed).
/// A `RefCell`: its router is driven from one thread, and every pick reads it per candidate.
#[derive(Debug, Default)]
pub struct RouteHealth {
    recent: RefCell<Vec<u8>>,
}

impl RouteHealth {
    /// An attempt on deployment `d` ended.
    pub fn record(&self, d: usize, ok: bool) {
        let mut recent = self.recent.borrow_mut();
        if recent.len() <= d {
            recent.resize(d + 1, 0);
        }
        recent[d] = (recent[d] << 1) | u8::from(!ok);
    }

    /// Failures among `d`'s last [`WINDOW`] attempts (0 for a route never tried).
    pub fn failures(&self, d: usize) -> u32 {
        self.recent.borrow().get(d).map_or(0, |b| b.count_ones())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_last_eight_outcomes() {
        let h = RouteHealth::default();
        assert_eq!(h.failures(3), 0);
        h.record(3, false);
        h.record(3, false);
        h.record(3, true);
        assert_eq!(h.failures(3), 2);
        for _ in 0..WINDOW {
            h.record(3, true);
        }
        assert_eq!(h.failures(3), 0);
    }
}
