//! A trace file's buffer and where full buffers go: written inline while the file is small,
//! then by a writer thread of its own.
//!
//! Why a thread: a traced run of the benchmark writes about 30 MB of rows, and the `write`
//! calls (the kernel copying each buffer into the page cache) were about 6 % of the run's
//! time on the simulator's thread. Handing each full buffer to a writer thread moves that
//! copy to another core; the bytes and their order are unchanged (one thread per file writes
//! its buffers in the order they were filled). Why only past [`THREAD_AFTER`]: the runs of a
//! sweep, a check or an explore are many and small, and a thread per file per run would cost
//! them more than their writes.
//!
//! Memory stays flat: at most [`IN_FLIGHT`] buffers wait for the writer (the simulator waits
//! for it beyond that), and written buffers come back to be filled again. An error ends the
//! writer; it is returned by the next spill, flush or, failing those, lost on drop (as
//! `BufWriter`'s is) — the recorder's `finish` flushes first and reports it.

use std::fs::File;
use std::io::{self, Write};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, sync_channel};
use std::thread::JoinHandle;

/// Buffer of each trace writer: it is handed on once it holds this many bytes.
pub(super) const CSV_BUFFER: usize = 64 * 1024;

/// Bytes a file takes inline before it gets a writer thread.
const THREAD_AFTER: u64 = 1024 * 1024;

/// Full buffers waiting for the writer thread, at most.
const IN_FLIGHT: usize = 4;

/// A file and the bytes not yet handed on, handed on once they pass [`CSV_BUFFER`], on
/// `flush` and on drop (like a `BufWriter`, whose buffer the rows could not be built in).
#[derive(Debug)]
pub(super) struct RowBuffer {
    sink: Sink,
    pub(super) buf: Vec<u8>,
    /// Bytes handed on so far.
    written: u64,
}

#[derive(Debug)]
enum Sink {
    Inline(File),
    Thread(Writer),
    /// Between states (a spawn in progress), or after the writer thread was lost.
    Gone,
}

/// The writer thread of one file: full buffers go to it, written ones come back.
#[derive(Debug)]
struct Writer {
    full: SyncSender<Vec<u8>>,
    empty: Receiver<Vec<u8>>,
    thread: JoinHandle<(File, io::Result<()>)>,
}

impl RowBuffer {
    /// An empty buffer in front of `file`.
    pub(super) fn new(file: File) -> Self {
        Self {
            sink: Sink::Inline(file),
            // Room for a full buffer and the row that passes it.
            buf: Vec::with_capacity(CSV_BUFFER + 4096),
            written: 0,
        }
    }

    /// Hands the buffer on if it is full.
    pub(super) fn spill(&mut self) -> io::Result<()> {
        if self.buf.len() >= CSV_BUFFER {
            self.write_out()?;
        }
        Ok(())
    }

    fn write_out(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        self.written += self.buf.len() as u64;
        match &mut self.sink {
            Sink::Inline(file) => {
                // Cleared even on error: the file is abandoned after one (see `write_row`).
                let written = file.write_all(&self.buf);
                self.buf.clear();
                if written.is_ok() && self.written >= THREAD_AFTER {
                    self.start_thread();
                }
                written
            }
            Sink::Thread(writer) => {
                let next = match writer.empty.try_recv() {
                    Ok(mut spare) => {
                        spare.clear();
                        spare
                    }
                    Err(TryRecvError::Empty | TryRecvError::Disconnected) => {
                        Vec::with_capacity(self.buf.capacity())
                    }
                };
                let full = std::mem::replace(&mut self.buf, next);
                if writer.full.send(full).is_err() {
                    // The writer stopped on an error: its file and the error come back.
                    return self.join();
                }
                Ok(())
            }
            Sink::Gone => {
                self.buf.clear();
                Err(io::Error::other("the trace file's writer is gone"))
            }
        }
    }

    /// Moves the file to a writer thread (it stays inline if no thread can be had).
    fn start_thread(&mut self) {
        let Sink::Inline(file) = std::mem::replace(&mut self.sink, Sink::Gone) else {
            return;
        };
        let Ok(theirs) = file.try_clone() else {
            self.sink = Sink::Inline(file);
            return;
        };
        let (full, to_write) = sync_channel::<Vec<u8>>(IN_FLIGHT);
        let (give_back, empty) = sync_channel::<Vec<u8>>(IN_FLIGHT);
        let spawned = std::thread::Builder::new()
            .name("routersim-trace-writer".into())
            .spawn(move || write_all_of(theirs, &to_write, &give_back));
        self.sink = match spawned {
            Ok(thread) => Sink::Thread(Writer {
                full,
                empty,
                thread,
            }),
            Err(_) => Sink::Inline(file),
        };
    }

    /// Waits for the writer thread to write everything handed to it; the file is inline
    /// again afterwards. Its error, if it had one.
    fn join(&mut self) -> io::Result<()> {
        let Sink::Thread(writer) = std::mem::replace(&mut self.sink, Sink::Gone) else {
            return Ok(());
        };
        drop(writer.full);
        match writer.thread.join() {
            Ok((file, result)) => {
                self.sink = Sink::Inline(file);
                result
            }
            Err(_) => Err(io::Error::other("the trace file's writer panicked")),
        }
    }
}

/// The writer thread: writes each buffer in order, gives it back, stops at the first error.
fn write_all_of(
    mut file: File,
    to_write: &Receiver<Vec<u8>>,
    give_back: &SyncSender<Vec<u8>>,
) -> (File, io::Result<()>) {
    for buf in to_write {
        if let Err(e) = file.write_all(&buf) {
            return (file, Err(e));
        }
        // Full or gone: the buffer is dropped instead of reused.
        let _ = give_back.try_send(buf);
    }
    (file, Ok(()))
}

impl Write for RowBuffer {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(bytes);
        self.spill()?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let handed = self.write_out();
        let joined = self.join();
        handed.and(joined)?;
        match &mut self.sink {
            Sink::Inline(file) => file.flush(),
            Sink::Thread(_) | Sink::Gone => Ok(()),
        }
    }
}

impl Drop for RowBuffer {
    fn drop(&mut self) {
        // As `BufWriter` does: a writer dropped without `flush` still writes what it holds,
        // and the file is whole when the drop returns (errors are lost here; `finish`
        // flushes first and reports them).
        let _ = self.write_out();
        let _ = self.join();
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn temp_file(name: &str) -> (std::path::PathBuf, File) {
        let dir = std::env::temp_dir().join(format!("routersim-spill-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        let file = File::create(&path).unwrap();
        (path, file)
    }

    /// Rows of different lengths, numbered, so any lost, repeated or reordered byte shows.
    fn rows(n: usize) -> Vec<u8> {
        let mut all = Vec::new();
        for i in 0..n {
            all.extend_from_slice(format!("{i},{}\n", "x".repeat(i % 97)).as_bytes());
        }
        all
    }

    #[test]
    fn a_file_past_the_threshold_is_written_by_its_thread_byte_for_byte() {
        let (path, file) = temp_file("big.csv");
        let expected = rows(200_000);
        assert!(expected.len() as u64 > 4 * THREAD_AFTER);
        let mut out = RowBuffer::new(file);
        for line in expected.split_inclusive(|&b| b == b'\n') {
            out.write_all(line).unwrap();
        }
        assert!(matches!(out.sink, Sink::Thread(_)), "a thread took over");
        out.flush().unwrap();
        assert!(matches!(out.sink, Sink::Inline(_)), "flush joins it");
        assert_eq!(std::fs::read(&path).unwrap(), expected);
        // Rows after a flush go on where the file ended.
        out.write_all(b"after\n").unwrap();
        drop(out);
        let mut with_tail = expected.clone();
        with_tail.extend_from_slice(b"after\n");
        assert_eq!(std::fs::read(&path).unwrap(), with_tail);
    }

    #[test]
    fn a_small_file_stays_inline_and_a_drop_writes_what_it_holds() {
        let (path, file) = temp_file("small.csv");
        let expected = rows(1_000);
        let mut out = RowBuffer::new(file);
        out.write_all(&expected).unwrap();
        assert!(matches!(out.sink, Sink::Inline(_)));
        drop(out);
        assert_eq!(std::fs::read(&path).unwrap(), expected);
    }

    #[test]
    fn a_write_error_on_the_thread_is_returned() {
        // /dev/full accepts the open and fails every write with ENOSPC.
        let Ok(file) = File::options().write(true).open("/dev/full") else {
            return;
        };
        let mut out = RowBuffer::new(file);
        // Inline first: the first spill fails at once.
        let first = out.write_all(&vec![b'a'; CSV_BUFFER]);
        assert!(first.is_err());
        // A thread made to write to it fails too, and the error comes back.
        out.written = THREAD_AFTER;
        out.start_thread();
        assert!(matches!(out.sink, Sink::Thread(_)));
        let mut failed = false;
        for _ in 0..(IN_FLIGHT + 4) {
            if out.write_all(&vec![b'b'; CSV_BUFFER]).is_err() {
                failed = true;
                break;
            }
        }
        let flushed = out.flush();
        assert!(failed || flushed.is_err(), "the writer's error is reported");
    }
}
