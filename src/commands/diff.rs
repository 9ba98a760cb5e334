//! `routersim diff A B` (being written).

use std::process::ExitCode;

use crate::{DiffArgs, EXIT_ERROR};

/// Compares two reports.
pub fn run(args: DiffArgs) -> ExitCode {
    eprintln!(
        "error: `diff` is not built yet ({})",
        args.report_a.display()
    );
    ExitCode::from(EXIT_ERROR)
}
