//! The exit codes every command shares: 0 ok, 1 a verdict failed, 2 bad input.

/// Exit code when an `expect` line (or a golden summary) fails.
pub const EXIT_EXPECT_FAILED: u8 = 1;
/// Exit code for bad input (a broken scenario, a bad flag) or an IO error.
pub const EXIT_ERROR: u8 = 2;
