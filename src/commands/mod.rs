//! One file per command: parse nothing, call the library, print, pick the exit code.

pub mod bench;
pub mod check;
pub mod diff;
pub mod drive;
pub mod explore;
pub mod import;
pub mod init;
pub mod proxy;
pub mod run;
pub mod serve;
pub mod sweep;

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar on stderr when it is a terminal, hidden otherwise; `unit` names what it
/// counts (`runs`, `seeds`).
pub(crate) fn progress_bar(total: usize, unit: &str) -> ProgressBar {
    let target = if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(total as u64), target);
    let template = format!(
        "{{spinner}} [{{elapsed_precise}}] {{wide_bar}} {{pos}}/{{len}} {unit} (eta {{eta}})"
    );
    if let Ok(style) = ProgressStyle::with_template(&template) {
        bar.set_style(style);
    }
    bar
}
