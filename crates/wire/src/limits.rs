//! The largest answer routersim writes or reads as text: [`MAX_OUTPUT_TOKENS`].
//!
//! The engine carries token counts, not text, and the wire renders an answer as one word per
//! output token (`tok`, 4 bytes with its space). A count is cheap; its text is not: a client's
//! `max_tokens: 4294967295` would be 17 GB of words. So a count that arrives from outside — a
//! request's `max_tokens`, `max_completion_tokens` or `x-routersim-output-tokens`, an
//! upstream's `usage` or a chunk's `x_routersim.tokens` — is checked against this cap before
//! anything is allocated from it: the server answers 400, the client reads a malformed answer.
//!
//! One million tokens is several times the largest output any model offers (128k in 2025),
//! and its text (4 MB) fits the adapter's 8 MiB read limit
//! ([`MAX_RESPONSE_BODY`](crate::client::MAX_RESPONSE_BODY)).

/// The most output tokens one answer may have on the wire.
pub const MAX_OUTPUT_TOKENS: u32 = 1_000_000;

/// `Ok(n)` when `n` is within [`MAX_OUTPUT_TOKENS`], else why not, naming `what` (the key or
/// header the count came in).
pub fn check_output_tokens(what: &str, n: u64) -> Result<u32, String> {
    u32::try_from(n)
        .ok()
        .filter(|&n| n <= MAX_OUTPUT_TOKENS)
        .ok_or_else(|| {
            format!(
                "{what} is {n}: routersim writes at most {MAX_OUTPUT_TOKENS} output tokens in one \
                 answer (one word a token)"
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_is_inclusive_and_the_refusal_names_both_numbers() {
        assert_eq!(check_output_tokens("max_tokens", 1_000_000), Ok(1_000_000));
        let why = check_output_tokens("max_tokens", 4_294_967_295).unwrap_err();
        assert!(why.contains("max_tokens is 4294967295"), "{why}");
        assert!(why.contains("1000000"), "{why}");
        assert!(check_output_tokens("x", u64::MAX).is_err());
    }
}
