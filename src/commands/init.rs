//! `routersim init KIND [--out DIR] [--force]`: writes a commented template to start from —
//! `incident` (one scenario to `run`), `ci` (a folder for `check`), `sweep` (a scenario and
//! the `sweep` command line for it). Each template's `# Run:` lines are the commands to try
//! next, printed after writing; a test runs every one of them on the files as written.
//!
//! Existing files are never overwritten without `--force`: a template must not eat the
//! scenario a user has edited since.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::error::CliError;
use crate::out::Out;

/// `routersim init`.
#[derive(clap::Args, Debug)]
pub struct InitArgs {
    /// The template: `incident` (a scenario for `run`), `ci` (a suite for `check`) or `sweep`
    /// (a scenario for `sweep`).
    pub kind: Kind,
    /// The directory to write into (created if missing).
    #[arg(long, default_value = ".")]
    pub out: PathBuf,
    /// Overwrite files that already exist.
    #[arg(long)]
    pub force: bool,
}

/// The templates.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One incident to replay with `routersim run`.
    Incident,
    /// A CI suite for `routersim check`, with goldens.
    Ci,
    /// A scenario to compare settings on with `routersim sweep`.
    Sweep,
}

/// Every template: its path under `--out` and its text.
pub fn files(kind: Kind) -> &'static [(&'static str, &'static str)] {
    match kind {
        Kind::Incident => &[(
            "incident.yaml",
            include_str!("../../templates/init/incident.yaml"),
        )],
        Kind::Ci => &[
            (
                "ci/smoke.yaml",
                include_str!("../../templates/init/ci/smoke.yaml"),
            ),
            (
                "ci/failover.yaml",
                include_str!("../../templates/init/ci/failover.yaml"),
            ),
        ],
        Kind::Sweep => &[(
            "sweep.yaml",
            include_str!("../../templates/init/sweep.yaml"),
        )],
    }
}

/// The commands a template's `# Run:` and `# Then:` lines name, in order.
pub fn next_commands(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|l| {
            l.strip_prefix("# Run:")
                .or_else(|| l.strip_prefix("# Then:"))
        })
        .map(str::trim)
        .filter(|c| c.starts_with("routersim "))
        .collect()
}

/// Writes the template, or refuses (exit 2) when a file exists and `--force` is not given.
pub fn run(args: InitArgs) -> Result<ExitCode, CliError> {
    let files = files(args.kind);
    let target = |name: &str| args.out.join(name);
    if !args.force {
        let existing: Vec<String> = files
            .iter()
            .map(|(name, _)| target(name))
            .filter(|p| p.exists())
            .map(|p| p.display().to_string())
            .collect();
        if !existing.is_empty() {
            return Err(CliError::Init(format!(
                "{} already exist(s); nothing written (add --force to overwrite)",
                existing.join(", ")
            )));
        }
    }
    for (name, text) in files {
        write(&target(name), text)?;
    }
    let mut out = Out::stdout();
    for (name, _) in files {
        writeln!(out, "wrote {}", target(name).display())?;
    }
    let from = if args.out == Path::new(".") {
        String::new()
    } else {
        format!(" (from {})", args.out.display())
    };
    writeln!(out, "next{from}:")?;
    for command in next_commands(files[0].1) {
        writeln!(out, "  {command}")?;
    }
    Ok(ExitCode::SUCCESS)
}

fn write(path: &Path, text: &str) -> Result<(), CliError> {
    let failed = |e: std::io::Error| CliError::Init(format!("{}: {e}", path.display()));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(failed)?;
    }
    std::fs::write(path, text).map_err(failed)
}
