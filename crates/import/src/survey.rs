//! The first pass over the log: its time span, each deployment's error series and latency
//! fits, the model groups asked for, and how disordered the rows are (which sets how long the
//! second pass keeps a request open). Memory is the series' buckets and fixed histograms.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::call::{Call, Scope};
use crate::fit::Fits;
use crate::router::Router;
use crate::series::Series;

/// Rows by what they stand for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowCounts {
    /// One provider call each (the plain CSV).
    pub attempts: u64,
    /// LiteLLM's failure rows (a request's first failed attempt).
    pub first_failures: u64,
    /// LiteLLM's success rows (the attempt that answered).
    pub finals: u64,
    /// Spend-log rows (a whole request).
    pub requests: u64,
    /// Rows where the router found every deployment cooling (no provider call).
    pub no_deployment: u64,
    /// Rows without a request id (each one a request of its own).
    pub unkeyed: u64,
}

/// What the first pass found.
#[derive(Debug)]
pub struct Survey {
    /// The earliest start, Unix seconds.
    pub t_min: f64,
    /// The latest end.
    pub t_max: f64,
    /// The longest call, seconds.
    pub max_latency: f64,
    /// How far a row's end came before the latest end already read (rows are written as calls
    /// end, so this is the log's disorder), seconds.
    pub max_disorder: f64,
    /// Rows that end before an earlier row's end by more than a second.
    pub disordered_rows: u64,
    /// Each deployment's error series.
    pub series: Series,
    /// Each deployment's latency fits.
    pub fits: Fits,
    /// Rows by scope.
    pub rows: RowCounts,
    /// The model groups the rows name (served or asked for).
    pub groups: BTreeSet<Arc<str>>,
}

impl Survey {
    /// An empty survey with error-series slots of `slot` seconds.
    pub fn new(slot: f64) -> Self {
        Self {
            t_min: f64::INFINITY,
            t_max: f64::NEG_INFINITY,
            max_latency: 0.0,
            max_disorder: 0.0,
            disordered_rows: 0,
            series: Series::new(slot),
            fits: Fits::default(),
            rows: RowCounts::default(),
            groups: BTreeSet::new(),
        }
    }

    /// Adds a row.
    pub fn add(&mut self, call: &Call, router: &mut Router) {
        self.t_min = self.t_min.min(call.start);
        if call.end < self.t_max {
            let behind = self.t_max - call.end;
            self.max_disorder = self.max_disorder.max(behind);
            if behind > 1.0 {
                self.disordered_rows += 1;
            }
        }
        self.t_max = self.t_max.max(call.end);
        self.max_latency = self.max_latency.max(call.latency());
        let rows = &mut self.rows;
        match call.scope {
            Scope::Attempt => rows.attempts += 1,
            Scope::FirstFailure => rows.first_failures += 1,
            Scope::Final => rows.finals += 1,
            Scope::Request => rows.requests += 1,
        }
        if call.request.is_none() {
            rows.unkeyed += 1;
        }
        self.groups.insert(call.requested_group().clone());
        if !call.outcome.reached_a_provider() {
            rows.no_deployment += 1;
            return;
        }
        self.groups.insert(call.model_group.clone());
        let deployment = router.resolve(call);
        self.series.add(&deployment, call);
        self.fits.add(&deployment, call);
    }
}
