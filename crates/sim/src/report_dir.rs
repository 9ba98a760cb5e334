//! All-or-nothing output folders: a report (of `run`, `sweep`, `merge` or `check`) is complete
//! or absent, never a mix of two runs.
//!
//! A writer never touches its target folder until it has finished. [`ReportDir::begin`] takes
//! the target's lock and creates a hidden staging folder beside it (`.<name>.tmp-<pid>`, same
//! parent, so the final rename stays on one file system); everything is written there.
//! [`ReportDir::commit`] writes the completion marker [`COMPLETE`] last, moves the previous
//! report aside (`.<name>.old-<pid>`), renames the staging folder into place and deletes the
//! previous one. Dropping a `ReportDir` without committing (an error, a full disk) deletes the
//! staging folder: the previous report stays as it was.
//!
//! **Interruption.** There is no signal handler: SIGINT, SIGTERM and SIGKILL all end the
//! process where it stands, and that is safe, because the target was never written. What an
//! interrupted writer leaves is a hidden `.<name>.tmp-<pid>` that no command reads (they read
//! the folder they are given, and `diff`/`merge` require [`COMPLETE`]); the next writer of the
//! same target removes it (and says so). A writer killed between its two renames leaves the
//! previous report as `.<name>.old-<pid>` and no target: the next writer puts it back.
//!
//! **Lock.** `.<name>.lock` beside the target, held with an advisory file lock
//! ([`File::try_lock`]) for the whole write, with the holder's pid inside for the message. The
//! kernel releases it when the holder dies, however it dies, so a stale lock never blocks; the
//! next writer finds the dead holder's pid in the file and says it took over. A second writer
//! while the first runs gets [`ReportDirError::Locked`].
//!
//! **What is replaced.** Only a folder routersim wrote: empty, or holding [`COMPLETE`], or an
//! older routersim's report (`summary.json`, `sweep.json` or `junit.xml` at its top). Anything
//! else (`--out ~`, a folder of notes) is refused, never deleted. A writer may name subfolders
//! that are other reports nested in its own by default layout ([`ReportDir::begin_keeping`]:
//! a sweep's `shard-K-of-N/`): those move into the new folder instead of being deleted.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::version::VERSION;

/// The completion marker, written last into every finished report folder.
pub const COMPLETE: &str = "report.complete";

/// Top-level files of reports written before [`COMPLETE`] existed: a folder holding one of them
/// is routersim's to replace.
const LEGACY_REPORT_FILES: [&str; 3] = ["summary.json", "sweep.json", "junit.xml"];

/// Why an output folder cannot be written, or a report cannot be read as complete.
#[derive(Debug, thiserror::Error)]
pub enum ReportDirError {
    /// The path does not end in a folder name (`.`, `..`, `/`).
    #[error("{}: the output must name a folder (such as reports/run-1)", .0.display())]
    NoName(PathBuf),
    /// Another process is writing the same folder.
    #[error(
        "{} is being written by another routersim ({holder}); wait for it to end or choose \
         another --out (its lock: {})",
        target.display(),
        lock.display()
    )]
    Locked {
        /// The folder.
        target: PathBuf,
        /// `pid N`, or `pid unknown` when the lock file is still empty.
        holder: String,
        /// The lock file.
        lock: PathBuf,
    },
    /// The target exists but is not a routersim report: never replaced.
    #[error(
        "{}: {why}; refusing to replace it (routersim replaces only folders it wrote): choose \
         another --out or remove it",
        target.display()
    )]
    Foreign {
        /// The folder.
        target: PathBuf,
        /// What it is.
        why: String,
    },
    /// A report folder without its completion marker.
    #[error(
        "{} is not a complete report: it has no {COMPLETE}, which routersim writes last, when \
         a run ends well (the run that wrote it failed, was interrupted, or predates the \
         marker); run it again",
        .0.display()
    )]
    Incomplete(PathBuf),
    /// Reading or writing failed.
    #[error("{}: {message}", .path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What went wrong (and what became of the previous report, when it matters).
        message: String,
    },
}

fn io_error(path: &Path, e: impl std::fmt::Display) -> ReportDirError {
    ReportDirError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Whether a scenario name can be a folder under `reports/`: `Err` says why not. Empty or
/// whitespace-only, `.`, anything containing `/`, `\`, `..` or a control character (NUL
/// included) is refused: a name must stay one folder inside `reports/`.
pub fn check_folder_name(name: &str) -> Result<(), String> {
    let why = if name.trim().is_empty() {
        "is empty".to_string()
    } else if let Some(c) = name.chars().find(|c| c.is_control()) {
        format!("contains a control character (U+{:04X})", c as u32)
    } else if name.contains("..") {
        "contains `..`".to_string()
    } else if name.contains('/') {
        "contains `/`".to_string()
    } else if name.contains('\\') {
        "contains `\\`".to_string()
    } else if name == "." {
        "is `.`".to_string()
    } else {
        return Ok(());
    };
    Err(format!(
        "{name:?} {why}; the name is a folder under reports/, so it must be one plain folder name \
         (no slashes, backslashes, double dots or control characters)"
    ))
}

/// Whether `dir` holds a complete report ([`COMPLETE`]).
pub fn is_complete(dir: &Path) -> bool {
    dir.join(COMPLETE).is_file()
}

/// [`ReportDirError::Incomplete`] unless `dir` holds [`COMPLETE`].
pub fn require_complete(dir: &Path) -> Result<(), ReportDirError> {
    if is_complete(dir) {
        Ok(())
    } else {
        Err(ReportDirError::Incomplete(dir.to_path_buf()))
    }
}

/// Writes [`COMPLETE`] into `dir`: for report folders written inside another one's staging
/// folder (each run of a sweep or a check), which need no rename of their own.
pub fn mark_complete(dir: &Path) -> Result<(), ReportDirError> {
    let path = dir.join(COMPLETE);
    fs::write(&path, format!("routersim {VERSION}\n")).map_err(|e| io_error(&path, e))
}

/// A report folder being written: see the module docs.
#[derive(Debug)]
pub struct ReportDir {
    target: PathBuf,
    staging: PathBuf,
    parent: PathBuf,
    name: String,
    /// Whether a previous report was there when the write began.
    previous: bool,
    notes: Vec<String>,
    committed: bool,
    keep: fn(&str) -> bool,
    // Declared last: released after the staging folder is cleaned up.
    _lock: Lock,
}

impl ReportDir {
    /// Takes `target`'s lock, cleans what an interrupted writer of it left, checks that
    /// `target` (if it exists) is a routersim report, and creates the staging folder.
    pub fn begin(target: &Path) -> Result<Self, ReportDirError> {
        Self::begin_keeping(target, |_| false)
    }

    /// [`begin`](Self::begin), but the previous folder's subfolders whose names `keep`
    /// accepts are other reports nested inside it (a sweep's `shard-K-of-N/`): they do not
    /// make it foreign, and on commit they move into the new folder (unless it has its own)
    /// rather than being deleted with the old one.
    pub fn begin_keeping(target: &Path, keep: fn(&str) -> bool) -> Result<Self, ReportDirError> {
        let name = target
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| ReportDirError::NoName(target.to_path_buf()))?
            .to_string();
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        fs::create_dir_all(&parent).map_err(|e| io_error(&parent, e))?;
        let (lock, mut notes) = Lock::acquire(&parent.join(format!(".{name}.lock")), target)?;
        notes.extend(clean_leftovers(&parent, &name, target)?);
        let previous = replaceable(target, keep)?;
        let staging = parent.join(format!(".{name}.tmp-{}", std::process::id()));
        fs::create_dir(&staging).map_err(|e| io_error(&staging, e))?;
        Ok(Self {
            target: target.to_path_buf(),
            staging,
            parent,
            name,
            previous,
            notes,
            committed: false,
            keep,
            _lock: lock,
        })
    }

    /// Where to write: the staging folder.
    pub fn path(&self) -> &Path {
        &self.staging
    }

    /// The folder the report will have once committed.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// What became of the target when a write fails: the previous report is left untouched,
    /// or nothing was written.
    pub fn untouched(&self) -> String {
        if self.previous {
            format!(
                "the previous report at {} is left untouched",
                self.target.display()
            )
        } else {
            format!("no report was written to {}", self.target.display())
        }
    }

    /// Writes [`COMPLETE`] and renames the staging folder into place, replacing the previous
    /// report as a whole. Returns what the write had to tidy up first (an unfinished report
    /// removed, a dead writer's lock taken over), for the user.
    pub fn commit(mut self) -> Result<Vec<String>, ReportDirError> {
        let failed = |this: &Self, path: &Path, e: std::io::Error| ReportDirError::Io {
            path: path.to_path_buf(),
            message: format!("{e}; {}", this.untouched()),
        };
        let marker = self.staging.join(COMPLETE);
        fs::write(&marker, format!("routersim {VERSION}\n"))
            .map_err(|e| failed(&self, &marker, e))?;
        let old = self
            .parent
            .join(format!(".{}.old-{}", self.name, std::process::id()));
        let moved_aside = match fs::rename(&self.target, &old) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => return Err(failed(&self, &self.target, e)),
        };
        let carried = if moved_aside {
            self.carry_over(&old)
        } else {
            Vec::new()
        };
        if let Err(e) = fs::rename(&self.staging, &self.target) {
            for name in &carried {
                let _ = fs::rename(self.staging.join(name), old.join(name));
            }
            if moved_aside {
                let _ = fs::rename(&old, &self.target);
            }
            return Err(failed(&self, &self.target, e));
        }
        self.committed = true;
        if moved_aside && let Err(e) = fs::remove_dir_all(&old) {
            // The new report is in place; the next writer of this folder removes the old one.
            self.notes.push(format!(
                "could not delete the previous report moved aside to {}: {e}",
                old.display()
            ));
        }
        Ok(std::mem::take(&mut self.notes))
    }

    /// Moves the kept subfolders of the previous folder (moved aside to `old`) into the
    /// staging folder; returns their names.
    fn carry_over(&self, old: &Path) -> Vec<String> {
        let Ok(entries) = fs::read_dir(old) else {
            return Vec::new();
        };
        let mut carried = Vec::new();
        for entry in entries.flatten() {
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if is_dir
                && (self.keep)(&name)
                && !self.staging.join(&name).exists()
                && fs::rename(entry.path(), self.staging.join(&name)).is_ok()
            {
                carried.push(name);
            }
        }
        carried
    }
}

/// Whether an entry of a report folder is a nested report `keep` accepts, or what the writer
/// of one leaves beside it (`.<name>.lock`, `.<name>.tmp-<pid>`, `.<name>.old-<pid>`).
fn kept_entry(name: &str, keep: fn(&str) -> bool) -> bool {
    if keep(name) {
        return true;
    }
    let Some(hidden) = name.strip_prefix('.') else {
        return false;
    };
    if let Some(base) = hidden.strip_suffix(".lock") {
        return keep(base);
    }
    [".tmp-", ".old-"].iter().any(|marker| {
        hidden.rsplit_once(marker).is_some_and(|(base, pid)| {
            !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) && keep(base)
        })
    })
}

impl Drop for ReportDir {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.staging);
        }
    }
}

/// `Ok(true)` when `target` is a routersim report folder to replace, `Ok(false)` when there is
/// none; an error when something else stands there.
fn replaceable(target: &Path, keep: fn(&str) -> bool) -> Result<bool, ReportDirError> {
    let foreign = |why: &str| ReportDirError::Foreign {
        target: target.to_path_buf(),
        why: why.to_string(),
    };
    let meta = match fs::symlink_metadata(target) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(io_error(target, e)),
    };
    if meta.file_type().is_symlink() {
        return Err(foreign("is a symbolic link (give the folder it points to)"));
    }
    if !meta.is_dir() {
        return Err(foreign("exists and is not a folder"));
    }
    let mut empty = true;
    for entry in fs::read_dir(target).map_err(|e| io_error(target, e))? {
        let entry = entry.map_err(|e| io_error(target, e))?;
        if !entry
            .file_name()
            .to_str()
            .is_some_and(|name| kept_entry(name, keep))
        {
            empty = false;
            break;
        }
    }
    if empty || is_complete(target) || LEGACY_REPORT_FILES.iter().any(|f| target.join(f).is_file())
    {
        Ok(true)
    } else {
        Err(foreign(&format!(
            "exists and is not a routersim report (no {COMPLETE})"
        )))
    }
}

/// With the lock held, whatever an earlier writer of `target` left beside it is its own:
/// unfinished staging folders are removed, a previous report moved aside and never replaced
/// (the writer died between its two renames) is put back.
fn clean_leftovers(
    parent: &Path,
    name: &str,
    target: &Path,
) -> Result<Vec<String>, ReportDirError> {
    let mut notes = Vec::new();
    let mut leftovers: Vec<(PathBuf, String, bool)> = Vec::new();
    for entry in fs::read_dir(parent).map_err(|e| io_error(parent, e))? {
        let entry = entry.map_err(|e| io_error(parent, e))?;
        let file_name = entry.file_name();
        let Some(file_name) = file_name.to_str() else {
            continue;
        };
        let Some(rest) = file_name
            .strip_prefix('.')
            .and_then(|r| r.strip_prefix(name))
        else {
            continue;
        };
        let (pid, staging) = if let Some(pid) = rest.strip_prefix(".tmp-") {
            (pid, true)
        } else if let Some(pid) = rest.strip_prefix(".old-") {
            (pid, false)
        } else {
            continue;
        };
        if !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) {
            leftovers.push((entry.path(), pid.to_string(), staging));
        }
    }
    leftovers.sort();
    for (path, pid, staging) in leftovers {
        if !staging && !target.exists() {
            fs::rename(&path, target).map_err(|e| io_error(&path, e))?;
            notes.push(format!(
                "put the previous report back from {} (pid {pid} was interrupted while \
                 replacing it)",
                path.display()
            ));
            continue;
        }
        fs::remove_dir_all(&path).map_err(|e| io_error(&path, e))?;
        if staging {
            notes.push(format!(
                "removed the unfinished report {} left by pid {pid}, which was interrupted",
                path.display()
            ));
        }
    }
    Ok(notes)
}

/// An output folder's lock: an advisory lock on `.<name>.lock`, the holder's pid inside.
#[derive(Debug)]
struct Lock {
    path: PathBuf,
    _file: File,
}

impl Lock {
    fn acquire(path: &Path, target: &Path) -> Result<(Self, Vec<String>), ReportDirError> {
        // A few tries: the holder may delete the file between our open and our lock.
        for _ in 0..20 {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)
                .map_err(|e| io_error(path, e))?;
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    let holder = read_pid(&mut file)
                        .map_or_else(|| "pid unknown".to_string(), |pid| format!("pid {pid}"));
                    return Err(ReportDirError::Locked {
                        target: target.to_path_buf(),
                        holder,
                        lock: path.to_path_buf(),
                    });
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(io_error(path, e)),
            }
            if !same_file(&file, path) {
                continue;
            }
            // A holder that ends well deletes the file; a pid still in it is a dead holder's.
            let mut notes = Vec::new();
            if let Some(pid) = read_pid(&mut file) {
                notes.push(format!(
                    "took over the lock {} of pid {pid}, which is no longer running",
                    path.display()
                ));
            }
            let pid = format!("{}\n", std::process::id());
            file.set_len(0)
                .and_then(|()| file.seek(SeekFrom::Start(0)))
                .and_then(|_| file.write_all(pid.as_bytes()))
                .map_err(|e| io_error(path, e))?;
            return Ok((
                Self {
                    path: path.to_path_buf(),
                    _file: file,
                },
                notes,
            ));
        }
        Err(io_error(
            path,
            "could not take the lock: it kept being replaced by other writers",
        ))
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        // Deleted while still held; a writer that opened it meanwhile sees it is no longer
        // the file at `path` ([`same_file`]) and starts over.
        let _ = fs::remove_file(&self.path);
    }
}

fn read_pid(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

/// Whether the open `file` is still the file at `path`.
#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_file: &File, path: &Path) -> bool {
    path.exists()
}

#[cfg(test)]
mod tests;
