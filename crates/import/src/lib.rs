//! `routersim import`: a router's logs in, a scenario out that replays the incident, and a
//! report of the incident itself.
//!
//! The log shows the router's behaviour, not the providers': a deployment that is cooling is
//! not called, so its health then is unobserved, and retries and fallbacks move load. The
//! import keeps the two apart: it reads every row as a provider call (or the part of a request
//! the format records), estimates each deployment's failures per time bucket from the calls it
//! did get, finds the windows where a failure kind's rate changed (optimal partitioning, see
//! [`segment`]), carries a fault through a stretch without calls, ends it halfway to the next
//! observed success, and says where it had to assume.
//!
//! - [`format`]: the three log formats, detected, read a row at a time.
//! - [`call`]: the row every format becomes.

pub mod bench;
pub mod call;
pub mod error;
pub mod events;
pub mod faults;
pub mod fit;
pub mod format;
pub mod import;
pub mod notes;
pub mod options;
pub mod report;
pub mod requests;
pub mod router;
pub mod scenario;
pub mod segment;
pub mod series;
pub mod summary_file;
pub mod survey;
pub mod traffic;

pub use error::ImportError;
pub use import::{Imported, import};
pub use options::{ImportOptions, TimeBound};
