//! Tests of `load`.

use super::*;

#[test]
fn targets_take_a_root_or_a_v1_base() {
    let t = Target::parse("http://127.0.0.1:4000").unwrap();
    assert_eq!((t.v1.as_str(), t.root.as_str()), ("/v1", ""));
    let t = Target::parse("http://127.0.0.1:4000/d/gpt-a/v1/").unwrap();
    assert_eq!(
        (t.v1.as_str(), t.root.as_str()),
        ("/d/gpt-a/v1", "/d/gpt-a")
    );
    assert!(t.is_loopback());
    assert!(Target::parse("https://127.0.0.1:4000").is_err());
}

#[test]
fn token_counts_above_what_was_sent_are_refused() {
    let chunk = json!({"choices": [{"delta": {"content": "tok tok"}}],
                           "x_routersim": {"tokens": 4_294_967_295_u64}});
    let bytes = chunk.to_string().len();
    // The claim is refused: the words are counted instead.
    assert_eq!(chunk_tokens(&chunk, bytes), 2);
    let honest = json!({"choices": [{"delta": {"content": "tok tok"}}],
                            "x_routersim": {"tokens": 2}});
    assert_eq!(chunk_tokens(&honest, bytes), 2);
    let usage = json!({"usage": {"completion_tokens": 4_294_967_295_u64}});
    assert_eq!(completion_tokens(&usage, 1_000), None);
    let usage = json!({"usage": {"completion_tokens": 7}});
    assert_eq!(completion_tokens(&usage, 1_000), Some(7));
}

#[test]
fn the_rate_guard_counts_one_second() {
    let now = Instant::now();
    let mut guard = RateGuard::new(2);
    assert!(guard.admit(now));
    assert!(guard.admit(now));
    assert!(!guard.admit(now + Duration::from_millis(500)));
    assert!(guard.admit(now + Duration::from_secs(1)));
}
