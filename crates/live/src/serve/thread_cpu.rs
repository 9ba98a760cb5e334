//! CPU time of one thread of this process, for the benches that put a load generator and the
//! servers it loads on threads of their own: a rate on a shared 2-core machine is bounded by
//! the CPU every party spends per request, so the benches print that split beside the rates.
//!
//! Read from Linux's `/proc/self/task/<tid>/schedstat`, whose first field is the thread's time
//! on a CPU in nanoseconds (user and kernel together, which is what a socket-bound server
//! spends). No `libc`: the thread's id is read from the `/proc/thread-self` link. Elsewhere
//! (or where the kernel keeps no schedstat) every reading is `None` and the benches say so.

use std::time::Duration;

/// A thread of this process, by its Linux thread id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadCpu {
    tid: u32,
}

impl ThreadCpu {
    /// The calling thread; `None` where `/proc/thread-self` does not name it.
    pub fn current() -> Option<Self> {
        let link = std::fs::read_link("/proc/thread-self").ok()?;
        // `<pid>/task/<tid>`
        let tid = link.file_name()?.to_str()?.parse().ok()?;
        let me = Self { tid };
        me.time().map(|_| me)
    }

    /// Its CPU time so far; `None` once it has ended or where schedstat is not kept.
    pub fn time(&self) -> Option<Duration> {
        let path = format!("/proc/self/task/{}/schedstat", self.tid);
        let text = std::fs::read_to_string(path).ok()?;
        parse_schedstat(&text)
    }
}

/// The first field of a schedstat line: nanoseconds on a CPU.
fn parse_schedstat(text: &str) -> Option<Duration> {
    let nanos = text.split_ascii_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

/// CPU time of several threads, read together.
#[derive(Clone, Debug)]
pub struct CpuClock {
    threads: Vec<Option<ThreadCpu>>,
}

impl CpuClock {
    /// Over `threads` (one `None` reads as unknown).
    pub fn new(threads: Vec<Option<ThreadCpu>>) -> Self {
        Self { threads }
    }

    /// Each thread's CPU time now.
    pub fn read(&self) -> Vec<Option<Duration>> {
        self.threads
            .iter()
            .map(|t| t.as_ref().and_then(ThreadCpu::time))
            .collect()
    }

    /// Each thread's CPU µs per request between two readings (`None` where either is unknown
    /// or no request was answered).
    pub fn per_request(
        before: &[Option<Duration>],
        after: &[Option<Duration>],
        requests: u64,
    ) -> Vec<Option<f64>> {
        before
            .iter()
            .zip(after)
            .map(|(b, a)| match (b, a) {
                (Some(b), Some(a)) if requests > 0 => {
                    Some(a.saturating_sub(*b).as_secs_f64() * 1e6 / requests as f64)
                }
                _ => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schedstat_line_gives_its_first_field_in_nanoseconds() {
        assert_eq!(
            parse_schedstat("808166 0 2\n"),
            Some(Duration::from_nanos(808_166))
        );
        assert_eq!(parse_schedstat(""), None);
        assert_eq!(parse_schedstat("x 1 2"), None);
    }

    #[test]
    fn per_request_divides_the_difference_and_keeps_unknowns_unknown() {
        let ms = |n| Some(Duration::from_millis(n));
        let got = CpuClock::per_request(&[ms(10), None, ms(5)], &[ms(30), ms(9), ms(5)], 1000);
        assert_eq!(got, [Some(20.0), None, Some(0.0)]);
        assert_eq!(CpuClock::per_request(&[ms(1)], &[ms(2)], 0), [None]);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_busy_thread_reads_more_cpu_than_a_sleeping_one() {
        let me = ThreadCpu::current().expect("Linux keeps schedstat for this thread");
        let before = me.time().expect("readable");
        // Busy for at least 20 ms of CPU, whatever the machine's load.
        let mut x = 0u64;
        while me.time().expect("readable").saturating_sub(before) < Duration::from_millis(20) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let sleeper = std::thread::spawn(move || {
            let _ = tx.send(ThreadCpu::current());
            std::thread::sleep(Duration::from_millis(100));
        });
        let other = rx.recv().expect("sent").expect("Linux names the thread");
        assert_ne!(other, me);
        std::thread::sleep(Duration::from_millis(50));
        let asleep = other.time().expect("still running");
        assert!(asleep < Duration::from_millis(20), "{asleep:?}");
        sleeper.join().expect("no panic");
        assert_eq!(other.time(), None, "an ended thread has no reading");
    }
}
