//! stdout for a command's results, with the one rule for a closed pipe.
//!
//! Why: `routersim check scenarios | head` closes stdout early. The reader has what it
//! wanted, so that is not an error: later lines are dropped silently and the command still
//! finishes its work (reports, junit.xml) and its exit code, as before. Any other write error
//! (a full disk under a redirect) is returned and ends the command with exit 2.

use std::io::{self, StdoutLock, Write};

/// A locked stdout that swallows a broken pipe (see the module docs).
pub struct Out {
    inner: StdoutLock<'static>,
    closed: bool,
}

impl Out {
    /// Locks stdout.
    pub fn stdout() -> Self {
        Self {
            inner: io::stdout().lock(),
            closed: false,
        }
    }

    /// Runs a write; a broken pipe marks the output closed and counts as done.
    fn guard<T>(
        &mut self,
        done: T,
        write: impl FnOnce(&mut StdoutLock) -> io::Result<T>,
    ) -> io::Result<T> {
        if self.closed {
            return Ok(done);
        }
        match write(&mut self.inner) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(done)
            }
            result => result,
        }
    }
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.guard(buf.len(), |w| w.write(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.guard((), |w| w.flush())
    }
}

/// Prints `value` as the command's one JSON document (pretty, with a final newline).
pub fn print_json(value: &serde_json::Value) -> io::Result<()> {
    let mut out = Out::stdout();
    let text = serde_json::to_string_pretty(value).map_err(io::Error::other)?;
    writeln!(out, "{text}")?;
    out.flush()
}

/// An `expect` line's result as JSON: the line as written, what was measured, the verdict.
pub fn expectation_json(result: &routersim_sim::expect::ExpectationResult) -> serde_json::Value {
    let e = &result.expectation;
    serde_json::json!({
        "metric": e.metric,
        "min": e.min,
        "max": e.max,
        "measured": result.measured,
        "passed": result.passed,
        "text": routersim_suite::check::assertion(result),
    })
}
