//! Spawning a local task on the runtime of this thread.

use std::future::Future;

use crate::executor::{VirtualTask, spawn_virtual, spawn_virtual_with};

/// A spawned task: dropping it detaches it, [`abort`](Self::abort) cancels it.
#[derive(Debug)]
pub struct JoinHandle<T>(Handle<T>);

#[derive(Debug)]
enum Handle<T> {
    Virtual(VirtualTask<T>),
    Tokio(tokio::task::JoinHandle<T>),
}

impl<T> JoinHandle<T> {
    /// Cancels the task: it is never polled again.
    pub fn abort(self) {
        match self.0 {
            Handle::Virtual(task) => task.abort(),
            Handle::Tokio(handle) => handle.abort(),
        }
    }

    /// Cancels the task and waits until its future is dropped (what it held is released when
    /// this returns).
    pub async fn cancel(self) {
        match self.0 {
            Handle::Virtual(task) => task.cancel().await,
            Handle::Tokio(handle) => {
                handle.abort();
                let _ = handle.await;
            }
        }
    }

    /// Whether the task has ended (finished, panicked or cancelled).
    pub fn is_finished(&self) -> bool {
        match &self.0 {
            Handle::Virtual(task) => task.is_finished(),
            Handle::Tokio(handle) => handle.is_finished(),
        }
    }
}

/// Spawns `future` on this thread's runtime: the virtual executor, else tokio's `LocalSet`
/// (which must be running, as for `tokio::task::spawn_local`).
pub fn spawn_local<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    match spawn_virtual(future) {
        Ok(task) => JoinHandle(Handle::Virtual(task)),
        Err(future) => JoinHandle(Handle::Tokio(tokio::task::spawn_local(future))),
    }
}

/// [`spawn_local`] of the future `make` returns, made where the task keeps it: on the virtual
/// executor, only what `make` captures is moved into the task, never the future itself (a
/// future is as big as its largest state, and each move copies all of it: the request tasks'
/// copies were a few percent of a simulated run).
pub fn spawn_local_with<F, M>(make: M) -> JoinHandle<F::Output>
where
    M: FnOnce() -> F + 'static,
    F: Future + 'static,
    F::Output: 'static,
{
    match spawn_virtual_with(make) {
        Ok(task) => JoinHandle(Handle::Virtual(task)),
        Err(make) => JoinHandle(Handle::Tokio(tokio::task::spawn_local(make()))),
    }
}
