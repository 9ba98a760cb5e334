//! A content hash that stays the same on every machine and Rust version: FNV-1a, 64 bits
//! (offset basis 0xcbf29ce484222325, prime 0x100000001b3), written out here because std's
//! `DefaultHasher` promises no stable output. Not cryptographic: it tells apart files that
//! differ by accident (a sweep's shards made from two versions of a scenario), not on purpose.

/// FNV-1a 64 of `bytes`.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// `fnv1a64:<16 hex digits>`: the hash as written into files.
pub fn content_hash(bytes: &[u8]) -> String {
    format!("fnv1a64:{:016x}", fnv1a64(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_published_test_vectors() {
        // From the FNV reference test suite.
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
        assert_eq!(content_hash(b"a"), "fnv1a64:af63dc4c8601ec8c");
    }
}
