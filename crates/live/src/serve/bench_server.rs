//! A server under bench on a thread of its own: its own current-thread runtime and `LocalSet`
//! (as `routersim serve` and `routersim proxy` run), on a loopback port, until stopped.

use std::future::Future;
use std::net::SocketAddr;

use tokio::net::TcpListener;

use super::thread_cpu::ThreadCpu;
use super::{ServeError, bind};

/// A running bench server.
pub struct BenchServer {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its thread, for its CPU time (`None` where the OS does not say).
    pub cpu: Option<ThreadCpu>,
    stop: tokio::sync::oneshot::Sender<()>,
    thread: std::thread::JoinHandle<Result<(), ServeError>>,
}

impl BenchServer {
    /// Starts `make(listener)` on a new thread, on `127.0.0.1:0`; `make` runs on that thread
    /// (inside its `LocalSet`) and returns the server's accept loop.
    pub fn spawn<F, Fut>(make: F) -> Result<Self, ServeError>
    where
        F: FnOnce(TcpListener) -> Result<Fut, ServeError> + Send + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || -> Result<(), ServeError> {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let local = tokio::task::LocalSet::new();
            local.block_on(&runtime, async move {
                let listener = bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
                let addr = listener.local_addr()?;
                let accept = make(listener)?;
                let _ = addr_tx.send((addr, ThreadCpu::current()));
                let task = tokio::task::spawn_local(accept);
                let _ = stop_rx.await;
                task.abort();
                Ok(())
            })
        });
        match addr_rx.recv() {
            Ok((addr, cpu)) => Ok(Self {
                addr,
                cpu,
                stop,
                thread,
            }),
            // The thread ended before its address: its error says why.
            Err(_) => match thread.join() {
                Ok(Err(e)) => Err(e),
                _ => Err(ServeError::Bench("the server thread did not start".into())),
            },
        }
    }

    /// Stops the server and waits for its thread.
    pub fn stop(self) -> Result<(), ServeError> {
        let _ = self.stop.send(());
        match self.thread.join() {
            Ok(result) => result,
            Err(_) => Err(ServeError::Bench("the server thread panicked".into())),
        }
    }
}
