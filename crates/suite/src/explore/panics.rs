//! A run's panic as a violation, not a crash: the run is wrapped in `catch_unwind`, and a panic
//! hook (installed once, quiet only on the threads that capture) keeps the first message with
//! its location, including a panic inside a request task that tokio catches itself.
//!
//! Separate because it is process-wide machinery (a hook and thread-locals) that nothing else
//! of explore should touch.

use std::cell::{Cell, RefCell};
use std::sync::Once;

thread_local! {
    /// Whether panics on this thread are being captured (not printed).
    static CAPTURING: Cell<bool> = const { Cell::new(false) };
    /// The first panic captured on this thread, as the hook printed it.
    static CAPTURED: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

/// Runs `f`, turning a panic into its message (with its location). A panic inside a request
/// task is caught by tokio, not by `catch_unwind`; the hook still sees it, so it counts.
pub fn catching_panics<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CAPTURING.with(Cell::get) {
                CAPTURED.with(|c| {
                    let mut c = c.borrow_mut();
                    if c.is_none() {
                        *c = Some(info.to_string());
                    }
                });
            } else {
                previous(info);
            }
        }));
    });
    CAPTURED.with(|c| c.borrow_mut().take());
    CAPTURING.with(|c| c.set(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    CAPTURING.with(|c| c.set(false));
    let captured = CAPTURED.with(|c| c.borrow_mut().take());
    match (result, captured) {
        (Ok(value), None) => Ok(value),
        (Ok(_), Some(message)) => Err(message),
        (Err(payload), captured) => Err(captured.unwrap_or_else(|| {
            payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic with no message".into())
        })),
    }
}
