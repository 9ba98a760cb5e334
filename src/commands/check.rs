//! `routersim check DIR` (being written).

use std::process::ExitCode;

use crate::{CheckArgs, EXIT_ERROR};

/// Runs every scenario of a directory for each seed.
pub fn run(args: CheckArgs) -> ExitCode {
    eprintln!("error: `check` is not built yet ({})", args.dir.display());
    ExitCode::from(EXIT_ERROR)
}
