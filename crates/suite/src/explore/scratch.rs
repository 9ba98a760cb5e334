//! Where runs write while exploring: a scratch folder per worker (removed when done), and the
//! byte comparison of two reports that the determinism check makes there.
//!
//! Separate because it is file handling alone: no run, no invariant.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use routersim_mock_providers::rng::fnv1a64;

/// A worker's scratch directory (removed when dropped).
#[derive(Debug)]
pub struct Scratch {
    root: PathBuf,
}

impl Scratch {
    /// A fresh scratch directory for worker `worker` of this process, apart from every other
    /// scratch directory the process has open (two explorers in one process, as tests run
    /// them, never share one).
    pub fn new(worker: usize) -> Self {
        static MADE: AtomicU64 = AtomicU64::new(0);
        let made = MADE.fetch_add(1, Ordering::Relaxed);
        let root = std::env::temp_dir().join(format!(
            "routersim-explore-{}-{made}-{worker}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        Self { root }
    }

    /// A sub-directory for one run's report.
    pub fn dir(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// The first difference between two report directories: a file only one has, or a file
/// whose bytes differ (compared by a 64-bit hash of each file).
pub fn compare_reports(a: &Path, b: &Path) -> Option<String> {
    let listing = |dir: &Path| -> Result<Vec<(String, u64)>, String> {
        let mut files = Vec::new();
        let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
            let path = entry.path();
            let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            files.push((
                entry.file_name().to_string_lossy().into_owned(),
                fnv1a64(&bytes),
            ));
        }
        files.sort();
        Ok(files)
    };
    let (a, b) = match (listing(a), listing(b)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return Some(format!("cannot read a report: {e}")),
    };
    let names = |files: &[(String, u64)]| files.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    if names(&a) != names(&b) {
        return Some(format!(
            "the two runs wrote different files: {:?} and {:?}",
            names(&a),
            names(&b)
        ));
    }
    a.iter()
        .zip(&b)
        .find(|(x, y)| x.1 != y.1)
        .map(|(x, _)| format!("{} differs between two runs of the same seed", x.0))
}
