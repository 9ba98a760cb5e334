//! Helpers for the end-to-end tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh, empty directory under the system temp dir, unique to this test and process.
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("routersim-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir is writable");
    dir
}

/// The repository root (where `scenarios/` is).
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the `routersim` binary with `args` from the repository root.
pub fn routersim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_routersim"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("the routersim binary runs")
}
