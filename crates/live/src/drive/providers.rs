//! The fake providers of a live run: started in-process on a loopback port exactly as
//! `routersim serve` starts them ([`crate::serve::bind_endpoints`], [`crate::serve::start_serving`]),
//! with a call log that keeps every row for the report, or a running `serve` elsewhere
//! (`--providers URL`), whose calls drive cannot see.

use std::fs::File;
use std::net::SocketAddr;
use std::path::Path;

use routersim_mock_providers::wire::{CallLog, CallRow, WireServer};

use crate::serve::{
    Bound, PROVIDER_CALLS_CSV, Running, ServeError, ServeOptions, bind_endpoints, start_serving,
};
use routersim_sim::scenario::Scenario;

/// In-process providers, bound but not started (their fault timeline starts with the run).
#[derive(Debug)]
pub struct Providers {
    bound: Bound,
    log: CallLog,
}

impl Providers {
    /// Binds a loopback port and opens `provider_calls.csv` in `dir`. Call inside a runtime.
    pub fn bind(scenario: &Scenario, dir: &Path) -> Result<Self, ServeError> {
        let options = ServeOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            allow_remote: false,
            port_per_deployment: false,
            out: None,
            duration: None,
        };
        let bound = bind_endpoints(scenario, &options)?;
        let path = dir.join(PROVIDER_CALLS_CSV);
        let file = File::create(&path)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        Ok(Self {
            bound,
            log: CallLog::new(file).keeping_rows(),
        })
    }

    /// Where each deployment is served.
    pub fn endpoints(&self) -> &crate::serve::Endpoints {
        &self.bound.endpoints
    }

    /// Starts the fault timeline and serving (in a `LocalSet`).
    pub fn start(self, scenario: &Scenario) -> Result<Running, ServeError> {
        start_serving(scenario, self.bound, self.log)
    }
}

/// Every call served (once the `LocalSet` is dropped, so streams cut at the end are logged
/// too), with the log flushed.
pub fn finish(server: &WireServer) -> Result<Vec<CallRow>, ServeError> {
    let rows = server.call_log().take_rows();
    server.call_log().finish()?;
    Ok(rows)
}
