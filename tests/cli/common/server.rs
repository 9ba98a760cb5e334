//! A `routersim serve` or `routersim proxy` child, as the live tests start and stop it: started
//! in the repository, ready once it prints `listening on http://ADDR`, killed when dropped.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};

use super::repo;

/// A running server (SIGKILL when dropped).
pub struct Server {
    /// The process.
    pub child: Child,
    /// Its stdout, read up to the `listening on` line.
    pub stdout: BufReader<ChildStdout>,
    /// The address it listens on.
    pub addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts `routersim ARGS` (its stderr inherited) and waits for its address.
    pub fn start(args: &[&str]) -> Server {
        Server::start_with(args, Stdio::inherit())
    }

    /// Starts `routersim ARGS` with its stderr sent to `stderr`, and waits for its address.
    pub fn start_with(args: &[&str], stderr: Stdio) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_routersim"))
            .args(args)
            .current_dir(repo())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let addr = listening_addr(&mut stdout);
        Server {
            child,
            stdout,
            addr: addr.expect("the server prints `listening on http://ADDR`"),
        }
    }

    /// Reads its stdout up to and including the first line starting with `prefix` (20 lines
    /// at most): the lines read.
    pub fn read_until(&mut self, prefix: &str) -> String {
        let mut said = String::new();
        for _ in 0..20 {
            let mut line = String::new();
            if self.stdout.read_line(&mut line).unwrap() == 0 {
                break;
            }
            said.push_str(&line);
            if line.starts_with(prefix) {
                break;
            }
        }
        said
    }

    /// Sends `signal` (`-INT`, `-TERM`), waits for a clean exit and returns the rest of its
    /// stdout (the stop line).
    pub fn stop_with(self, signal: &str) -> String {
        self.send(signal);
        self.wait_to_end()
    }

    /// Sends `signal` and waits for the process to end however it ends: its exit status, the
    /// rest of its stdout and, when it was started with a piped stderr, its stderr.
    pub fn signalled(mut self, signal: &str) -> (ExitStatus, String) {
        self.send(signal);
        let mut said = String::new();
        self.stdout.read_to_string(&mut said).unwrap();
        let status = self.child.wait().unwrap();
        if let Some(mut stderr) = self.child.stderr.take() {
            stderr.read_to_string(&mut said).unwrap();
        }
        (status, said)
    }

    fn send(&self, signal: &str) {
        let pid = self.child.id().to_string();
        assert!(
            Command::new("kill")
                .args([signal, &pid])
                .status()
                .unwrap()
                .success()
        );
    }

    /// Waits for it to stop by itself, cleanly, and returns the rest of its stdout.
    pub fn wait_to_end(mut self) -> String {
        let exit = self.child.wait().unwrap();
        let mut rest = String::new();
        self.stdout.read_to_string(&mut rest).unwrap();
        assert!(exit.success(), "{rest}");
        rest
    }
}

/// Reads `stdout` up to its `listening on http://ADDR` line (20 lines at most): ADDR.
pub fn listening_addr(stdout: &mut BufReader<ChildStdout>) -> Option<String> {
    for _ in 0..20 {
        let mut line = String::new();
        if stdout.read_line(&mut line).unwrap() == 0 {
            return None;
        }
        if let Some(a) = line.trim().strip_prefix("listening on http://") {
            return Some(a.to_string());
        }
    }
    None
}
