//! The Redis store against a real `redis-server` at `ROUTERSIM_REDIS_URL` (`.ci/run` starts one
//! on a free loopback port). Without the variable each test skips with a warning, unless
//! `ROUTERSIM_REQUIRE_REDIS=1` (set by `.ci/run`), when it fails.
//!
//! Each test uses deployment ids of its own (a per-process prefix), so tests share one server.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "tests"
)]

use std::time::Duration;

use routersim_engine::state::StateStore;
use routersim_live::redis::{RedisOptions, RedisState, cooldown_key};
use tokio::time::Instant;

fn redis_url() -> Option<String> {
    match std::env::var("ROUTERSIM_REDIS_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var("ROUTERSIM_REQUIRE_REDIS").as_deref() != Ok("1"),
                "ROUTERSIM_REQUIRE_REDIS=1 but ROUTERSIM_REDIS_URL is unset"
            );
            eprintln!("warning: ROUTERSIM_REDIS_URL is unset: the Redis store test is skipped");
            None
        }
    }
}

/// Ids unique to this test run.
fn ids(test: &str) -> Vec<String> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let tag = format!("t{}-{nanos:x}-{test}", std::process::id());
    vec![format!("{tag}-a"), format!("{tag}-b")]
}

async fn store(url: &str, ids: &[String], throttle: Duration) -> RedisState {
    let mut options = RedisOptions::new(url, ids.to_vec());
    options.read_throttle = throttle;
    RedisState::connect(options).await.unwrap()
}

async fn pttl(url: &str, key: &str) -> i64 {
    let client = redis::Client::open(url).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    redis::cmd("PTTL")
        .arg(key)
        .query_async(&mut conn)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_cooldown_set_by_one_store_is_seen_by_another_after_its_next_read() {
    let Some(url) = redis_url() else { return };
    let ids = ids("seen");
    let a = store(&url, &ids, Duration::from_millis(200)).await;
    let b = store(&url, &ids, Duration::from_millis(200)).await;
    // B reads first: nothing cooled; the miss is trusted for the throttle.
    b.refresh().await;
    assert_eq!(b.cooldown_until(0), None);

    let now = Instant::now();
    let until = a.set_cooldown(0, now + Duration::from_secs(3));
    a.flush().await;
    // The key carries the cooldown as its TTL.
    let ttl = pttl(&url, &cooldown_key(&ids[0])).await;
    assert!((2000..=3000).contains(&ttl), "PTTL {ttl}");

    // Within the throttle B does not read again (LiteLLM's trusted miss).
    b.refresh().await;
    assert_eq!(b.cooldown_until(0), None, "read again within the throttle");
    tokio::time::sleep(Duration::from_millis(250)).await;
    b.refresh().await;
    let seen = b.cooldown_until(0).expect("B sees A's cooldown");
    // B's deadline comes from the PTTL: close to A's (within the time the test took).
    let gap = if seen > until {
        seen - until
    } else {
        until - seen
    };
    assert!(gap < Duration::from_millis(300), "deadline off by {gap:?}");
    assert_eq!(b.cooldown_until(1), None, "the other deployment stays warm");
    assert_eq!(a.errors() + b.errors(), 0, "{:?}", a.last_error());
}

#[tokio::test]
async fn an_expired_key_is_not_seen_and_a_cleared_one_is_deleted() {
    let Some(url) = redis_url() else { return };
    let ids = ids("expiry");
    let a = store(&url, &ids, Duration::ZERO).await;
    let b = store(&url, &ids, Duration::ZERO).await;
    a.set_cooldown(1, Instant::now() + Duration::from_millis(300));
    a.flush().await;
    assert!(pttl(&url, &cooldown_key(&ids[1])).await > 0);
    tokio::time::sleep(Duration::from_millis(450)).await;
    // Redis expired it: -2 (no key), and a reader finds nothing.
    assert_eq!(pttl(&url, &cooldown_key(&ids[1])).await, -2);
    b.refresh().await;
    assert_eq!(b.cooldown_until(1), None);

    a.set_cooldown(0, Instant::now() + Duration::from_secs(30));
    a.flush().await;
    assert!(a.clear_cooldown(0));
    a.flush().await;
    assert_eq!(pttl(&url, &cooldown_key(&ids[0])).await, -2);
    b.refresh().await;
    assert_eq!(b.cooldown_until(0), None);
}

#[tokio::test]
async fn the_allowed_fails_counter_is_shared_and_expires() {
    let Some(url) = redis_url() else { return };
    let ids = ids("fails");
    let a = store(&url, &ids, Duration::ZERO).await;
    let b = store(&url, &ids, Duration::ZERO).await;
    let ttl = Duration::from_millis(600);
    let now = Instant::now();
    assert_eq!(a.increment_allowed_fails(0, now, ttl), 1);
    assert_eq!(a.increment_allowed_fails(0, now, ttl), 2);
    a.flush().await;
    // B has not failed itself, but its next failure is the fleet's third.
    b.refresh().await;
    assert_eq!(b.increment_allowed_fails(0, Instant::now(), ttl), 3);
    b.flush().await;
    // A learns B's from the INCR's answer... after its own next write: Redis says 4.
    assert_eq!(a.increment_allowed_fails(0, Instant::now(), ttl), 3);
    a.flush().await;
    assert_eq!(a.increment_allowed_fails(0, Instant::now(), ttl), 5);
    a.flush().await;
    // The counter's TTL came from the first failure and was not extended.
    let client = redis::Client::open(url.as_str()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let key = routersim_live::redis::allowed_fails_key(&ids[0]);
    let (count, left): (u32, i64) = redis::pipe()
        .cmd("GET")
        .arg(&key)
        .cmd("PTTL")
        .arg(&key)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(count, 5);
    assert!(left > 0 && left <= 600, "PTTL {left}");
    tokio::time::sleep(Duration::from_millis(700)).await;
    // Expired everywhere: a fresh count starts at 1 in both.
    b.refresh().await;
    assert_eq!(b.increment_allowed_fails(0, Instant::now(), ttl), 1);
    b.flush().await;
    // Reset deletes the shared counter.
    b.reset_allowed_fails(0);
    b.flush().await;
    let exists: u32 = redis::cmd("EXISTS")
        .arg(&key)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(exists, 0);
    assert_eq!(a.errors() + b.errors(), 0, "{:?}", b.last_error());
}

/// Needs no server, so it never skips: nothing listens on port 1.
#[tokio::test]
async fn a_dead_redis_is_a_connect_error_naming_the_url() {
    let mut options = RedisOptions::new("redis://127.0.0.1:1", ids("dead"));
    options.connect_timeout = Duration::from_millis(500);
    let err = RedisState::connect(options).await.unwrap_err();
    assert!(err.to_string().contains("redis://127.0.0.1:1"), "{err}");
}
