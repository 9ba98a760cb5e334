//! The load balancer in front of the replicas: a policy (trait) picks the replica of each
//! user request.
//!
//! Separate from the fleet runner so a new policy is one impl here. Every pick is
//! deterministic: round robin counts, random draws from a seeded ChaCha stream,
//! least-connections breaks ties round robin.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::config::Balancer;

/// Picks the replica of the next user request, given each replica's requests in flight.
pub trait LoadBalancer {
    /// The replica (an index into `in_flight`).
    fn pick(&mut self, in_flight: &[usize]) -> usize;
}

/// 0, 1, …, N−1, 0, …
#[derive(Debug, Default)]
pub struct RoundRobin {
    next: usize,
}

impl LoadBalancer for RoundRobin {
    fn pick(&mut self, in_flight: &[usize]) -> usize {
        let pick = self.next % in_flight.len().max(1);
        self.next = pick + 1;
        pick
    }
}

/// A uniform draw per request.
#[derive(Debug)]
pub struct Random {
    rng: ChaCha8Rng,
}

impl LoadBalancer for Random {
    fn pick(&mut self, in_flight: &[usize]) -> usize {
        self.rng.random_range(0..in_flight.len().max(1))
    }
}

/// The fewest requests in flight; ties go round robin (as nginx's `least_conn` does), so an
/// idle fleet is not all sent to replica 0.
#[derive(Debug, Default)]
pub struct LeastConnections {
    next: usize,
}

impl LoadBalancer for LeastConnections {
    fn pick(&mut self, in_flight: &[usize]) -> usize {
        let n = in_flight.len().max(1);
        let pick = (0..n)
            .map(|k| (self.next + k) % n)
            .min_by_key(|&i| in_flight.get(i).copied().unwrap_or(0))
            .unwrap_or(0);
        self.next = pick + 1;
        pick
    }
}

/// The balancer a scenario names; `rng` is the run's `balancer` stream (used by `random`).
pub fn balancer(kind: Balancer, rng: ChaCha8Rng) -> Box<dyn LoadBalancer> {
    match kind {
        Balancer::RoundRobin => Box::new(RoundRobin::default()),
        Balancer::Random => Box::new(Random { rng }),
        Balancer::LeastConnections => Box::new(LeastConnections::default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use routersim_mock_providers::rng::seeded_rng;

    #[test]
    fn round_robin_cycles_and_least_connections_takes_the_idlest() {
        let mut rr = RoundRobin::default();
        let picks: Vec<usize> = (0..5).map(|_| rr.pick(&[0, 0, 0])).collect();
        assert_eq!(picks, [0, 1, 2, 0, 1]);
        let mut lc = LeastConnections::default();
        assert_eq!(lc.pick(&[3, 1, 1]), 1);
        assert_eq!(lc.pick(&[3, 1, 1]), 2, "a tie goes round robin");
        assert_eq!(lc.pick(&[0, 1, 0]), 0);
        let idle: Vec<usize> = (0..4).map(|_| lc.pick(&[0, 0, 0])).collect();
        assert_eq!(idle, [1, 2, 0, 1]);
    }

    #[test]
    fn random_is_seeded_and_spreads() {
        let draw = |seed| {
            let mut b = balancer(Balancer::Random, seeded_rng(seed, "balancer"));
            (0..300).map(|_| b.pick(&[0; 3])).collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        let picks = draw(7);
        for replica in 0..3 {
            let n = picks.iter().filter(|&&p| p == replica).count();
            assert!((60..140).contains(&n), "replica {replica}: {n}");
        }
    }
}
