//! Ctrl-C and SIGTERM during a live run. In `drive` they stop the arrivals (and cut the drain
//! short), and drive still writes what happened — unless nothing was sent yet; in `serve` and
//! `proxy` they stop the server, and its call log is kept.
//!
//! The handlers are installed before a server says it is ready: a signal sent the moment the
//! ready line is read must be a clean stop, not the default action (the process killed).

use std::cell::Cell;
use std::rc::Rc;

use tokio::sync::Notify;

/// Ctrl-C or SIGTERM, listened for from the start of the run (a signal while drive waits for
/// the target, or just after a server said it is ready, still stops it cleanly).
#[derive(Debug, Default)]
pub struct Stop {
    name: Cell<Option<&'static str>>,
    notify: Notify,
}

impl Stop {
    /// Installs the handlers now (call inside the `LocalSet`).
    pub fn listen() -> Rc<Self> {
        let stop = Rc::new(Self::default());
        #[cfg(unix)]
        let streams = {
            use tokio::signal::unix::{SignalKind, signal};
            (
                signal(SignalKind::interrupt()).ok(),
                signal(SignalKind::terminate()).ok(),
            )
        };
        tokio::task::spawn_local({
            let stop = stop.clone();
            async move {
                #[cfg(unix)]
                let name = {
                    let (mut int, mut term) = streams;
                    let recv = |s: &mut Option<tokio::signal::unix::Signal>| {
                        let s = s.take();
                        async move {
                            match s {
                                Some(mut s) => {
                                    s.recv().await;
                                }
                                None => std::future::pending::<()>().await,
                            }
                        }
                    };
                    tokio::select! {
                        biased;
                        () = recv(&mut int) => "ctrl-c",
                        () = recv(&mut term) => "sigterm",
                    }
                };
                #[cfg(not(unix))]
                let name = {
                    let _ = tokio::signal::ctrl_c().await;
                    "ctrl-c"
                };
                stop.name.set(Some(name));
                stop.notify.notify_waiters();
            }
        });
        stop
    }

    /// Resolves once a signal came.
    pub async fn notified(&self) {
        while self.name.get().is_none() {
            self.notify.notified().await;
        }
    }

    /// Which signal (`ctrl-c` until one came).
    pub fn name(&self) -> &'static str {
        self.name.get().unwrap_or("ctrl-c")
    }

    /// The signal that came, if one did.
    pub fn came(&self) -> Option<&'static str> {
        self.name.get()
    }
}
