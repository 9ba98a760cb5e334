//! Memory tests measure the process's peak resident set, which belongs to the whole process:
//! with every test of the crate in one binary, the tests beside them (on other threads, or
//! earlier on the same one) would move it. [`alone`] runs such a test's body in a fresh process
//! of this binary that runs that test only.

use std::process::Command;

/// Runs `body` alone in a fresh process: the parent re-runs only `test` (`module_path!()`
/// and the test's name) in a child process of this binary, `test --exact`, and fails with the
/// child's output when the child fails. A process asked for one test by its exact name (the
/// child, or someone running that test alone) runs `body` itself.
pub fn alone(test: &str, body: impl FnOnce()) {
    if std::env::args().any(|arg| arg == "--exact") {
        body();
        return;
    }
    // `module_path!()` starts with the binary's crate name; libtest names tests without it.
    let name = test.split_once("::").map_or(test, |(_, path)| path);
    let binary = std::env::current_exe().expect("the test binary's path");
    let out = Command::new(binary)
        .args([name, "--exact", "--test-threads=1", "--nocapture"])
        .output()
        .expect("runs the test binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{name}, alone in its own process:\n{stdout}\n{stderr}"
    );
}
