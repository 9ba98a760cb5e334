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
