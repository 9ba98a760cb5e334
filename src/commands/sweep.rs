//! `routersim sweep` and `routersim merge` (being written).

use std::process::ExitCode;

use crate::{EXIT_ERROR, MergeArgs, SweepArgs};

/// Runs a grid of settings.
pub fn run(args: SweepArgs) -> ExitCode {
    eprintln!(
        "error: `sweep` is not built yet ({})",
        args.scenario.display()
    );
    ExitCode::from(EXIT_ERROR)
}

/// Joins shards.
pub fn merge(args: MergeArgs) -> ExitCode {
    eprintln!("error: `merge` is not built yet ({})", args.out.display());
    ExitCode::from(EXIT_ERROR)
}
