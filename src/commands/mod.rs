//! One file per command: parse nothing, call the library, print, pick the exit code.

pub mod bench;
pub mod check;
pub mod diff;
pub mod explore;
pub mod run;
pub mod sweep;
