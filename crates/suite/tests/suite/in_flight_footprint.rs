//! The in-flight limit's arithmetic counts each request at `BYTES_PER_IN_FLIGHT`: a request in
//! flight must really cost no more. Streamed requests (the larger kind) all in flight at once,
//! measured as `routersim bench --in-flight` does: the rise of this process's peak resident
//! set over the run. Alone in its own process ([`alone`]), so nothing else moves the peak.

use routersim_sim::traffic::BYTES_PER_IN_FLIGHT;
use routersim_suite::footprint::measure_in_flight;

use crate::alone::alone;

#[test]
fn a_request_in_flight_costs_no_more_than_the_limit_counts() {
    alone(
        concat!(
            module_path!(),
            "::a_request_in_flight_costs_no_more_than_the_limit_counts"
        ),
        measure_streamed_requests_in_flight,
    );
}

fn measure_streamed_requests_in_flight() {
    let n = 50_000;
    let out = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("in-flight-footprint");
    let footprint = measure_in_flight(n, n, &out)
        .expect("runs")
        .expect("Linux /proc/self/status");
    assert_eq!(footprint.requests, u64::from(n));
    let per_request = footprint.bytes_per_request();
    assert!(
        per_request <= BYTES_PER_IN_FLIGHT as f64,
        "{per_request:.0} bytes per streamed request in flight; the limit counts {BYTES_PER_IN_FLIGHT}"
    );
}
