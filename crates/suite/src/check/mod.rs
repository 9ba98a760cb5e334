//! `routersim check DIR`: every scenario of a directory, for each seed, as a CI verdict.
//!
//! Each (scenario, seed) is one test case. A case **fails** when one of the scenario's `expect`
//! lines does not hold or when its summary differs from the scenario's golden summary; it is an
//! **error** when the scenario cannot be used (it does not parse, an `expect` metric is unknown,
//! a golden is not JSON) or the run cannot happen. A scenario that does not load is one case
//! named `load` (its seed is unknown); the others still run.
//!
//! - **Discovery** ([`discover_cases`](crate::discover::discover_cases)): every YAML file
//!   under DIR is a case, except router configs a scenario there references; one that cannot
//!   be a scenario (unreadable, not UTF-8, a router config nothing references) is an error
//!   case, never skipped.
//! - **Reports**: `<out>/<scenario path relative to DIR, without extension>/seed-<N>/` (with
//!   the extension when `x.yaml` and `x.yml` sit side by side), and `<out>/junit.xml`
//!   ([`junit_xml`]), and `<out>/index.html` ([`check_index_html`]: the table, the verdicts,
//!   each run's timeline and a link to its `report.html`). The whole of `<out>` is written at once
//!   ([`ReportDir`](routersim_sim::report_dir::ReportDir)): staged and renamed into place
//!   when every case has run, so no report of an earlier check survives.
//! - **Goldens** sit beside the scenario: `<stem>.golden.json` for the scenario's own `seed:`,
//!   `<stem>.seed-<N>.golden.json` for any other seed ([`golden_path`]; `<stem>` is the file
//!   name with its extension when `x.yaml` and `x.yml` sit side by side), so a plain `check`
//!   and a `check --seeds …` read the same file for the same run. A golden is the run's
//!   `summary.json`; the comparison ([`diff_summaries`], module [`golden`]) reads every number
//!   by its path (`windows["east: rate_limit 90%"].during.p99_latency_ms`), ignores the
//!   version, the transport and the run's frame (`duration_ms`, `run_end_ms`, `events`),
//!   holds each number to a relative tolerance (`check --tolerance`, the scenario's
//!   `golden: {tolerance}` by metric, path or family) and lists only the numbers that moved,
//!   largest relative change first. No golden is
//!   not a failure. `bless` writes the golden of every run that happened (expectations are
//!   still checked and reported).
//! - **Determinism**: the cases are taken in path order, then seed order, whatever runs them:
//!   `--jobs N` runs N at once (each run is its own seeded simulation; results are handed
//!   over in that order, never in completion order), so the table, every report and
//!   index.html are byte-identical from run to run and to a serial check; junit.xml too but
//!   for its `time` attributes, which are wall seconds.
//!
//! # Layout
//!
//! `leaves` names every number of a summary; `golden` compares a summary with its golden;
//! `case` is one case's result and verdict;
//! `junit` writes junit.xml from the cases and `index` the page; `paths` names goldens and
//! report folders; `run`
//! runs the scenarios and writes the folder. Each imports only the modules listed before it
//! (`run` all of them); this file declares them and re-exports every public item.

mod case;
pub mod golden;
mod index;
mod junit;
mod leaves;
mod paths;
mod run;

pub use self::case::{CaseResult, CheckReport, GoldenStatus, Verdict, assertion};
pub use self::golden::{
    IGNORED_KEY, IGNORED_TRANSPORT_KEY, MetricDiff, Tolerances, diff_summaries, show_value,
};
pub use self::index::check_index_html;
pub use self::junit::{SUITE_NAME, junit_xml, xml_escape};
pub use self::paths::{case_root, golden_path};
pub use self::run::{CheckError, CheckOptions, JUNIT_XML, check, find_scenarios};
