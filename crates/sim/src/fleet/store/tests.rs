//! Tests of `store`.

use routersim_runtime::RuntimeKind;
use routersim_runtime::time::{now, sleep};

use super::*;
use crate::fleet::config::StoreFault;

const MS: Duration = Duration::from_millis(1);

fn model(write: u64, read: u64) -> StoreModel {
    StoreModel {
        write_latency: MS * u32::try_from(write).unwrap_or(0),
        read_latency: MS * u32::try_from(read).unwrap_or(0),
        miss_ttl: Duration::ZERO,
        ..StoreModel::default()
    }
}

fn on_clock<T>(f: impl Future<Output = T>) -> T {
    match RuntimeKind::Virtual.block_on(f) {
        Ok(v) => v,
        Err(e) => panic!("runtime: {e}"),
    }
}

#[test]
fn a_write_reaches_another_replica_after_write_and_read_latency() {
    on_clock(async {
        let store = SharedStore::new(model(20, 10), 2, now());
        let (a, b) = (
            ReplicaState::new(store.clone(), 2),
            ReplicaState::new(store, 2),
        );
        let until = now() + Duration::from_secs(5);
        assert_eq!(
            a.rewrite_cooldown(1, now(), until, Rewrite::FirstOrLatest),
            until
        );
        assert_eq!(
            a.cooldown_until(1),
            Some(until),
            "the writer sees its own write"
        );
        assert_eq!(b.cooldown_until(1), None);
        sleep(MS * 29).await;
        assert_eq!(
            b.cooldown_until(1),
            None,
            "landed at 20 ms, read 10 ms stale"
        );
        sleep(MS).await;
        assert_eq!(b.cooldown_until(1), Some(until));
        assert_eq!(b.cooldown_until(0), None);
    });
}

#[test]
fn a_miss_is_trusted_for_miss_ttl_and_a_live_entry_until_it_ends() {
    on_clock(async {
        let m = StoreModel {
            miss_ttl: Duration::from_secs(1),
            ..model(0, 0)
        };
        let store = SharedStore::new(m, 1, now());
        let (a, b) = (
            ReplicaState::new(store.clone(), 1),
            ReplicaState::new(store, 1),
        );
        assert_eq!(b.cooldown_until(0), None); // b reads the store now
        let until = now() + Duration::from_secs(5);
        a.rewrite_cooldown(0, now(), until, Rewrite::FirstOrLatest);
        sleep(MS * 999).await;
        assert_eq!(b.cooldown_until(0), None, "b's next read is due at 1 s");
        sleep(MS).await;
        assert_eq!(b.cooldown_until(0), Some(until));
        // An overwrite with a later deadline is not read while b's copy lasts.
        let later = now() + Duration::from_secs(10);
        a.rewrite_cooldown(0, now(), later, Rewrite::KeepLater);
        sleep(MS * 10).await;
        assert_eq!(b.cooldown_until(0), Some(until));
        sleep(until - now()).await;
        assert_eq!(
            b.cooldown_until(0),
            Some(later),
            "read again once its copy expired"
        );
    });
}

#[test]
fn atomic_counters_lose_no_update_and_read_modify_write_does() {
    let count = |atomic: bool| {
        on_clock(async move {
            let m = StoreModel {
                atomic_counters: atomic,
                ..model(50, 0)
            };
            let store = SharedStore::new(m, 1, now());
            let replicas: Vec<ReplicaState> = (0..3)
                .map(|_| ReplicaState::new(store.clone(), 1))
                .collect();
            let ttl = Duration::from_secs(60);
            // Three replicas count a failure each within the write latency.
            let counts: Vec<u32> = replicas
                .iter()
                .map(|r| r.increment_allowed_fails(0, now(), ttl))
                .collect();
            sleep(MS * 100).await;
            let after = replicas[0].increment_allowed_fails(0, now(), ttl);
            (counts, after)
        })
    };
    assert_eq!(count(true), (vec![1, 2, 3], 4));
    // Each replica read 0 and wrote 1: two of the three failures are lost.
    assert_eq!(count(false), (vec![1, 1, 1], 2));
}

#[test]
fn store_latency_delays_what_the_others_see_while_it_lasts() {
    on_clock(async {
        let m = StoreModel {
            faults: vec![StoreFault {
                from: Duration::ZERO,
                to: Duration::from_secs(1),
                kind: StoreFaultKind::Latency(MS * 200),
            }],
            ..model(1, 0)
        };
        let store = SharedStore::new(m, 1, now());
        let (a, b) = (
            ReplicaState::new(store.clone(), 1),
            ReplicaState::new(store, 1),
        );
        let until = now() + Duration::from_secs(5);
        a.rewrite_cooldown(0, now(), until, Rewrite::FirstOrLatest);
        sleep(MS * 150).await;
        assert_eq!(
            b.cooldown_until(0),
            None,
            "landing at 201 ms, read 200 ms stale"
        );
        sleep(MS * 260).await;
        assert_eq!(b.cooldown_until(0), Some(until));
        // After the window, a write lands within the plain latency.
        sleep(Duration::from_secs(1)).await;
        a.clear_cooldown(0);
        sleep(MS * 2).await;
        assert_eq!(
            b.cooldown_until(0),
            Some(until),
            "b's live copy is not read again"
        );
    });
}

#[test]
fn an_outage_keeps_fail_open_local_and_refuses_fail_closed() {
    let outage = |mode: FailureMode| StoreModel {
        failure_mode: mode,
        faults: vec![StoreFault {
            from: Duration::from_secs(1),
            to: Duration::from_secs(2),
            kind: StoreFaultKind::Outage,
        }],
        ..model(0, 0)
    };
    on_clock(async move {
        let store = SharedStore::new(outage(FailureMode::FailOpen), 1, now());
        let (a, b) = (
            ReplicaState::new(store.clone(), 1),
            ReplicaState::new(store, 1),
        );
        sleep(Duration::from_millis(1500)).await;
        assert!(a.accepts_health_writes());
        let until = now() + Duration::from_secs(5);
        a.rewrite_cooldown(0, now(), until, Rewrite::FirstOrLatest);
        assert_eq!(
            a.cooldown_until(0),
            Some(until),
            "process-local during the outage"
        );
        assert_eq!(
            b.cooldown_until(0),
            None,
            "the write never reached the store"
        );
        sleep(Duration::from_secs(1)).await;
        assert_eq!(
            a.cooldown_until(0),
            None,
            "local evidence dropped once the store answers"
        );
    });
    on_clock(async move {
        let store = SharedStore::new(outage(FailureMode::FailClosed), 1, now());
        let a = ReplicaState::new(store, 1);
        assert!(a.accepts_health_writes());
        sleep(Duration::from_millis(1500)).await;
        assert!(!a.accepts_health_writes());
        sleep(Duration::from_secs(1)).await;
        assert!(a.accepts_health_writes());
    });
}
