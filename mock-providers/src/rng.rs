//! Per-purpose random streams derived from the scenario seed.
//!
//! Every consumer of randomness (traffic stream 3, deployment `openai-eu`'s latency, …) draws
//! from its own ChaCha8 stream keyed by `(seed, purpose)`. Adding a draw in one place then never
//! shifts the draws anywhere else, and a run is reproducible from the seed alone.
//!
//! The derivation is spelled out (not `seed_from_u64`, not std's hasher) so it stays stable
//! across crate and compiler versions: the 32-byte ChaCha key is
//! `seed.to_le_bytes() ++ fnv1a64(purpose).to_le_bytes() ++ [0; 16]`.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// FNV-1a, 64-bit: a tiny, fixed hash for purpose strings.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes
        .iter()
        .fold(OFFSET, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(PRIME))
}

/// The random stream for `purpose` (e.g. `"traffic/0"`, `"provider/gpt-a/latency"`) under `seed`.
pub fn seeded_rng(seed: u64, purpose: &str) -> ChaCha8Rng {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key[8..16].copy_from_slice(&fnv1a64(purpose.as_bytes()).to_le_bytes());
    ChaCha8Rng::from_seed(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn fnv_matches_reference_values() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn streams_are_reproducible_and_independent() {
        let a1 = seeded_rng(7, "traffic/0").next_u64();
        let a2 = seeded_rng(7, "traffic/0").next_u64();
        let b = seeded_rng(7, "traffic/1").next_u64();
        let c = seeded_rng(8, "traffic/0").next_u64();
        assert_eq!(a1, a2);
        assert_ne!(a1, b);
        assert_ne!(a1, c);
    }
}
