#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use crate::time::{now, sleep, sleep_until};
use crate::{Executor, RuntimeKind, Stalled, spawn_local};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn sleeps_end_at_their_exact_virtual_deadline_in_deadline_then_registration_order() {
    let exec = Executor::new();
    let log = Rc::new(RefCell::new(Vec::new()));
    let out = exec
        .block_on({
            let log = log.clone();
            async move {
                let start = now();
                let mut tasks = Vec::new();
                for (name, wait) in [("c", 30u64), ("a", 10), ("b", 10), ("d", 0)] {
                    let log = log.clone();
                    tasks.push(spawn_local(async move {
                        sleep(ms(wait) + Duration::from_nanos(7)).await;
                        log.borrow_mut().push((name, now() - start));
                    }));
                }
                sleep(ms(100)).await;
                now() - start
            }
        })
        .unwrap();
    assert_eq!(out, ms(100));
    let nanos = Duration::from_nanos(7);
    assert_eq!(
        *log.borrow(),
        vec![
            ("d", nanos),
            ("a", ms(10) + nanos),
            ("b", ms(10) + nanos),
            ("c", ms(30) + nanos)
        ]
    );
    assert_eq!(exec.elapsed(), ms(100));
}

#[test]
fn an_aborted_task_is_never_polled_again_and_its_future_is_dropped() {
    struct Dropped(Rc<Cell<bool>>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.set(true);
        }
    }
    let polls = Rc::new(Cell::new(0));
    let dropped = Rc::new(Cell::new(false));
    Executor::new()
        .block_on({
            let (polls, dropped) = (polls.clone(), dropped.clone());
            async move {
                let task = spawn_local(async move {
                    let _guard = Dropped(dropped);
                    loop {
                        polls.set(polls.get() + 1);
                        sleep(ms(10)).await;
                    }
                });
                sleep(ms(25)).await;
                task.abort();
                sleep(ms(100)).await;
            }
        })
        .unwrap();
    assert_eq!(
        polls.get(),
        3,
        "polled at 0, 10 and 20 ms, never after the abort"
    );
    assert!(dropped.get());
}

#[test]
fn a_detached_task_runs_on_after_its_handle_is_dropped() {
    let done = Rc::new(Cell::new(false));
    Executor::new()
        .block_on({
            let done = done.clone();
            async move {
                drop(spawn_local(async move {
                    sleep(ms(5)).await;
                    done.set(true);
                }));
                sleep(ms(10)).await;
            }
        })
        .unwrap();
    assert!(done.get());
}

#[test]
fn a_losing_select_branch_removes_its_timer_and_never_moves_the_clock() {
    let exec = Executor::new();
    let rounds = 10_000u64;
    exec.block_on(async {
        for _ in 0..rounds {
            tokio::select! {
                biased;
                () = sleep(ms(1)) => {}
                () = sleep(Duration::from_secs(600)) => unreachable!("the timeout never wins"),
            }
        }
    })
    .unwrap();
    // Every timeout lost: time moved 1 ms per round, not to any 600 s deadline.
    assert_eq!(exec.elapsed(), ms(rounds));
    // Cancelled timeouts were compacted away, not kept until their deadlines.
    assert!(
        exec.timer_entries() < 200,
        "{} entries held after {rounds} cancelled timeouts",
        exec.timer_entries()
    );
}

#[test]
fn waiting_on_something_that_nothing_can_wake_is_an_error_not_a_hang() {
    let exec = Executor::new();
    let (_tx, rx) = tokio::sync::oneshot::channel::<()>();
    let err = exec
        .block_on(async move {
            sleep(ms(3)).await;
            let _ = rx.await;
        })
        .unwrap_err();
    assert_eq!(err, Stalled::NothingToWake { at: ms(3) });
}

#[test]
fn tokio_sync_primitives_work_on_the_virtual_executor() {
    let out = Executor::new()
        .block_on(async {
            let notify = Rc::new(tokio::sync::Notify::new());
            let semaphore = Rc::new(tokio::sync::Semaphore::new(1));
            let mutex = Rc::new(tokio::sync::Mutex::new(0u32));
            let (tx, rx) = tokio::sync::oneshot::channel();
            for i in 0..4u32 {
                let (semaphore, mutex) = (semaphore.clone(), mutex.clone());
                drop(spawn_local(async move {
                    let _permit = semaphore.acquire().await;
                    sleep(ms(10)).await;
                    *mutex.lock().await += i;
                }));
            }
            drop(spawn_local({
                let notify = notify.clone();
                async move {
                    notify.notified().await;
                    let _ = tx.send(now());
                }
            }));
            let start = now();
            sleep(ms(50)).await;
            notify.notify_one();
            let at = rx.await.unwrap();
            (*mutex.lock().await, at - start)
        })
        .unwrap();
    // One permit: the four tasks ran one after the other, 10 ms each, within the 50 ms.
    assert_eq!(out, (6, ms(50)));
}

#[test]
fn a_panicking_task_ends_alone_and_the_others_run_on() {
    let finished = Rc::new(Cell::new(false));
    let exec = Executor::new();
    exec.block_on({
        let finished = finished.clone();
        async move {
            let failing = spawn_local(async {
                sleep(ms(1)).await;
                panic!("a task's own failure");
            });
            drop(spawn_local(async move {
                sleep(ms(2)).await;
                finished.set(true);
            }));
            sleep(ms(5)).await;
            assert!(failing.is_finished());
        }
    })
    .unwrap();
    assert!(finished.get());
}

#[test]
fn yield_now_lets_every_other_runnable_task_go_first() {
    let log = Rc::new(RefCell::new(Vec::new()));
    Executor::new()
        .block_on({
            let log = log.clone();
            async move {
                for name in ["a", "b"] {
                    let log = log.clone();
                    drop(spawn_local(async move {
                        log.borrow_mut().push(format!("{name}1"));
                        crate::time::yield_now().await;
                        log.borrow_mut().push(format!("{name}2"));
                    }));
                }
                sleep(ms(1)).await;
            }
        })
        .unwrap();
    assert_eq!(*log.borrow(), ["a1", "b1", "a2", "b2"]);
}

#[test]
fn a_waker_of_a_finished_executor_does_not_run_its_task_on_a_newer_one() {
    let polls = Rc::new(Cell::new(0));
    let stash: Rc<RefCell<Option<std::task::Waker>>> = Rc::default();
    let first = Executor::new();
    first
        .block_on({
            let (polls, stash) = (polls.clone(), stash.clone());
            async move {
                drop(spawn_local(std::future::poll_fn(move |cx| {
                    polls.set(polls.get() + 1);
                    *stash.borrow_mut() = Some(cx.waker().clone());
                    std::task::Poll::<()>::Pending
                })));
                sleep(ms(1)).await;
            }
        })
        .unwrap();
    drop(first);
    Executor::new()
        .block_on(async move {
            if let Some(waker) = stash.borrow_mut().take() {
                waker.wake();
            }
            sleep(ms(1)).await;
        })
        .unwrap();
    assert_eq!(polls.get(), 1);
}

#[test]
fn nothing_depends_on_the_origin_of_instants() {
    let program = || async {
        let start = now();
        let mut seen = Vec::new();
        for wait in [3u64, 1, 4, 1, 5] {
            sleep_until(now() + ms(wait)).await;
            seen.push(now() - start);
        }
        seen
    };
    let base = std::time::Instant::now();
    let a = Executor::with_origin(base).block_on(program()).unwrap();
    let b = Executor::with_origin(base + Duration::from_secs(1000 * 86_400))
        .block_on(program())
        .unwrap();
    assert_eq!(a, b);
    assert_eq!(a.last(), Some(&ms(14)));
}

/// The control for `tests/wall_clock.rs`: a program that reads tokio's clock directly (outside
/// a tokio runtime: the wall clock) gives different results when the origin moves.
#[test]
#[allow(
    clippy::disallowed_methods,
    reason = "the wall-clock read the check must catch"
)]
fn a_wall_clock_read_shows_when_the_origin_moves() {
    let program = || async {
        sleep(ms(5)).await;
        now().saturating_duration_since(tokio::time::Instant::now())
    };
    let base = std::time::Instant::now();
    let a = Executor::with_origin(base).block_on(program()).unwrap();
    let b = Executor::with_origin(base + Duration::from_secs(1000 * 86_400))
        .block_on(program())
        .unwrap();
    assert_ne!(a, b);
}

#[test]
fn the_same_program_runs_on_tokio_behind_the_same_seam_with_millisecond_timers() {
    let program = || async {
        let start = now();
        let task = spawn_local(async move {
            sleep(Duration::from_micros(1_500)).await;
            now() - start
        });
        sleep(ms(10)).await;
        task.is_finished()
    };
    assert!(RuntimeKind::Virtual.block_on(program()).unwrap());
    assert!(RuntimeKind::Tokio.block_on(program()).unwrap());
    let elapsed = |kind: RuntimeKind| {
        kind.block_on(async {
            let start = now();
            sleep(Duration::from_micros(1_500)).await;
            now() - start
        })
        .unwrap()
    };
    assert_eq!(elapsed(RuntimeKind::Virtual), Duration::from_micros(1_500));
    // tokio's wheel ticks in whole milliseconds: the documented difference.
    assert_eq!(elapsed(RuntimeKind::Tokio), ms(2));
}

#[test]
fn a_virtual_sleep_stays_three_words() {
    // Every in-flight request holds one or more: they count in its footprint.
    assert!(std::mem::size_of::<crate::time::Sleep>() <= 24);
}

#[test]
fn timer_slots_are_reused_and_stay_flat_when_sleeps_fire_or_are_cancelled() {
    let exec = Executor::new();
    exec.block_on(async {
        for round in 0..1_000u64 {
            let mut tasks = Vec::new();
            for i in 0..8u64 {
                tasks.push(spawn_local(async move { sleep(ms(i + 1)).await }));
            }
            if round % 2 == 0 {
                // Half the rounds cancel their sleeps: their slots must be reused too.
                for task in tasks {
                    task.cancel().await;
                }
            }
            sleep(ms(20)).await;
        }
    })
    .unwrap();
    // Nine timers at most pending at once (eight tasks and the main future).
    assert!(
        exec.timer_slots() <= 9,
        "{} slots after 9,000 timers",
        exec.timer_slots()
    );
    assert_eq!(exec.elapsed(), ms(20 * 1_000));
}

#[test]
fn a_cancelled_sleep_never_wakes_its_task_even_when_its_slot_is_reused() {
    let parked_polls = Rc::new(Cell::new(0u32));
    Executor::new()
        .block_on({
            let parked_polls = parked_polls.clone();
            async move {
                let task = spawn_local(async move {
                    // Twice, a 5 ms sleep is dropped when a 1 ms one wins (its slot is then
                    // reused by the next round's timers).
                    for _ in 0..2 {
                        tokio::select! {
                            biased;
                            () = sleep(ms(1)) => {}
                            () = sleep(ms(5)) => unreachable!("the 1 ms sleep wins"),
                        }
                    }
                    // Parked for good: a stale wake at 5 or 6 ms would poll this again.
                    std::future::poll_fn(|_| {
                        parked_polls.set(parked_polls.get() + 1);
                        std::task::Poll::<()>::Pending
                    })
                    .await;
                });
                sleep(ms(50)).await;
                task.abort();
            }
        })
        .unwrap();
    assert_eq!(parked_polls.get(), 1);
}

/// `spawn_local_with` runs the future its closure makes, made once, on either runtime, in
/// spawn order with `spawn_local`'s tasks (the virtual executor makes it inside the task).
#[test]
fn a_task_spawned_with_its_future_s_maker_runs_it_once_in_spawn_order() {
    for kind in [RuntimeKind::Virtual, RuntimeKind::Tokio] {
        let log = Rc::new(RefCell::new(Vec::new()));
        let made = Rc::new(Cell::new(0));
        kind.block_on({
            let (log, made) = (log.clone(), made.clone());
            async move {
                let first = log.clone();
                drop(spawn_local(async move {
                    sleep(ms(5)).await;
                    first.borrow_mut().push("plain");
                }));
                let (second, counter) = (log.clone(), made.clone());
                drop(crate::spawn_local_with(move || {
                    counter.set(counter.get() + 1);
                    async move {
                        sleep(ms(5)).await;
                        second.borrow_mut().push("made");
                    }
                }));
                sleep(ms(10)).await;
            }
        })
        .unwrap();
        assert_eq!(*log.borrow(), ["plain", "made"], "{kind:?}");
        assert_eq!(made.get(), 1, "{kind:?}");
    }
}
