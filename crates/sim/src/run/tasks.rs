//! The request tasks in flight, counted in and out however they end.
//!
//! Separate because it is the one piece of the run loop with its own invariant (a task that
//! panics is still counted out, so a run never waits for it forever), tested on its own.

use std::cell::Cell;
use std::rc::Rc;

use tokio::sync::Notify;

/// The request tasks still running. A task that panics is dropped by the runtime (which keeps
/// the panic in the task's join handle), so each task holds a [`TaskGuard`] that counts it out
/// however it ends: a run never waits forever for a task that is gone.
#[derive(Debug, Default)]
pub(super) struct InFlight {
    running: Cell<usize>,
    abandoned: Cell<usize>,
    done: Notify,
}

impl InFlight {
    /// Counts a task in.
    pub(super) fn enter(this: &Rc<Self>) -> TaskGuard {
        this.running.set(this.running.get() + 1);
        TaskGuard {
            in_flight: Some(this.clone()),
        }
    }

    /// Counts a task out (`abandoned`: it ended without finishing).
    fn leave(&self, abandoned: bool) {
        if abandoned {
            self.abandoned.set(self.abandoned.get() + 1);
        }
        self.running.set(self.running.get() - 1);
        if self.running.get() == 0 {
            self.done.notify_one();
        }
    }

    /// Waits until every task entered so far is out.
    pub(super) async fn all_done(&self) {
        while self.running.get() > 0 {
            self.done.notified().await;
        }
    }

    /// Request tasks running now.
    pub(super) fn running(&self) -> usize {
        self.running.get()
    }

    /// Tasks that ended without finishing (they panicked).
    pub(super) fn abandoned(&self) -> usize {
        self.abandoned.get()
    }
}

/// Counts one request task out when dropped. One pointer: every in-flight request holds
/// one (`None` once [`TaskGuard::finished`] has counted it out).
pub(super) struct TaskGuard {
    in_flight: Option<Rc<InFlight>>,
}

impl TaskGuard {
    /// The task ran to its end.
    pub(super) fn finished(mut self) {
        if let Some(f) = self.in_flight.take() {
            f.leave(false);
        }
    }
}

impl Drop for TaskGuard {
    fn drop(&mut self) {
        if let Some(f) = self.in_flight.take() {
            f.leave(true);
        }
    }
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "the test builds a runtime on tokio's paused clock directly"
)]
mod tests {
    use super::*;

    /// A request task that panics must not leave the run waiting for it forever.
    #[test]
    fn a_panicking_request_task_is_counted_out() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("runtime");
        let local = tokio::task::LocalSet::new();
        let in_flight = Rc::new(InFlight::default());
        let abandoned = local.block_on(&runtime, {
            let in_flight = in_flight.clone();
            async move {
                for i in 0..3u64 {
                    let task = InFlight::enter(&in_flight);
                    tokio::task::spawn_local(async move {
                        tokio::time::sleep(std::time::Duration::from_millis(10 * i)).await;
                        if i == 1 {
                            panic!("a request task panics");
                        }
                        task.finished();
                    });
                }
                let waited = tokio::time::timeout(
                    std::time::Duration::from_secs(3600),
                    in_flight.all_done(),
                )
                .await;
                assert!(waited.is_ok(), "the run waited for a task that is gone");
                in_flight.abandoned()
            }
        });
        assert_eq!(abandoned, 1);
    }
}
