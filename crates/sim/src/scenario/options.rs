//! The options every scenario's router config is loaded with, from outside its files.
//!
//! Separate because they are process-wide (set once by the CLI) and read by both ways a
//! router config arrives (inline, `router_file`), and by `routersim proxy`.

use std::sync::OnceLock;

use routersim_config::load::LoadOptions;

/// What every scenario's router config is loaded with, from outside its files: set once by
/// the CLI (which reads its environment once), before any scenario is read. Unset (a library
/// caller, a test), nothing from outside is used.
static ROUTER_LOAD_OPTIONS: OnceLock<LoadOptions> = OnceLock::new();

/// The options used when none were set: nothing from outside.
static NO_LOAD_OPTIONS: LoadOptions = LoadOptions {
    max_fallbacks_env: None,
};

/// Sets the [`LoadOptions`] every scenario's router config is loaded with (once; a second call
/// returns its options back, unused). The loader records every value it uses from them in the
/// config's warnings, which every command prints.
pub fn set_router_load_options(options: LoadOptions) -> Result<(), LoadOptions> {
    ROUTER_LOAD_OPTIONS.set(options)
}

/// The options [`set_router_load_options`] set (none: the defaults), for every router config read.
pub fn router_load_options() -> &'static LoadOptions {
    ROUTER_LOAD_OPTIONS.get().unwrap_or(&NO_LOAD_OPTIONS)
}
