//! The limit on requests in flight at once, and the messages that explain it.
//!
//! Every request in flight holds its router state (about 1.4 KB, 1.8 KB for a stream,
//! measured by `routersim bench --in-flight`), so at most [`MAX_IN_FLIGHT`] may be in flight
//! at once. Explicit requests at one instant are all in flight together, so more than that at
//! one instant is refused when the scenario loads ([`check_in_flight`]); what only a run can
//! tell (a fast stream into slow providers) stops the run when the limit is reached
//! ([`in_flight_exceeded`] says why). Separate because both the loader and the runner use it,
//! with the same arithmetic.

use std::collections::BTreeMap;
use std::time::Duration;

use routersim_config::input::thousands;
use routersim_mock_providers::duration::format_duration;

use super::arrivals::Arrival;
use super::spec::TrafficSpec;

/// The most requests in flight at once: about 4 GB at [`BYTES_PER_IN_FLIGHT`] each.
pub const MAX_IN_FLIGHT: u64 = 2_000_000;

/// What one in-flight request is counted at in the limit's arithmetic: the measured footprint
/// (`routersim bench --in-flight`: about 0.9 KB, 1.3 KB for a stream; a deadline adds about
/// 0.35 KB), rounded up so that streams with deadlines still fit.
pub const BYTES_PER_IN_FLIGHT: u64 = 2048;

/// Explicit requests arriving at one instant are all in flight at once: refuses more than
/// [`MAX_IN_FLIGHT`] at any instant. On failure, the index of the entry (in file order) whose
/// `count` crosses the limit, and why.
pub fn check_in_flight(traffic: &[TrafficSpec]) -> Result<(), (usize, String)> {
    let explicit = || {
        traffic.iter().enumerate().filter_map(|(i, t)| match t {
            TrafficSpec::Request(r) => Some((i, r)),
            TrafficSpec::Stream(_) => None,
        })
    };
    let total: u64 = explicit().map(|(_, r)| u64::from(r.count)).sum();
    if total <= MAX_IN_FLIGHT {
        return Ok(());
    }
    let mut by_instant: BTreeMap<Duration, u64> = BTreeMap::new();
    for (i, r) in explicit() {
        let at_instant = by_instant.entry(r.at).or_default();
        let others = *at_instant;
        *at_instant += u64::from(r.count);
        if *at_instant > MAX_IN_FLIGHT {
            let here = if others == 0 {
                String::new()
            } else {
                format!(
                    " ({} here, {} from other entries)",
                    thousands(u64::from(r.count)),
                    thousands(others)
                )
            };
            return Err((
                i,
                format!(
                    "{} requests at {}{here} would be in flight at once, ~{} at {} each; {}",
                    thousands(*at_instant),
                    format_duration(r.at),
                    bytes(at_instant.saturating_mul(BYTES_PER_IN_FLIGHT)),
                    bytes(BYTES_PER_IN_FLIGHT),
                    at_most()
                ),
            ));
        }
    }
    Ok(())
}

/// Why a run stopped when `arrival` would have been one request too many in flight.
pub fn in_flight_exceeded(arrival: &Arrival) -> String {
    format!(
        "traffic[{}]: the request arriving at {} would be the {}st in flight at once ({} \
         each); {}: lower the rate, or the latencies that keep requests in flight",
        arrival.entry,
        format_duration(arrival.at),
        thousands(MAX_IN_FLIGHT + 1),
        bytes(BYTES_PER_IN_FLIGHT),
        at_most()
    )
}

fn at_most() -> String {
    format!(
        "at most {} can be (~{})",
        thousands(MAX_IN_FLIGHT),
        bytes(MAX_IN_FLIGHT * BYTES_PER_IN_FLIGHT)
    )
}

/// Bytes in binary units with one decimal: `2 KiB`, `3.8 GiB`, `8.0 TiB`.
fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if value.fract() == 0.0 && value < 1000.0 && unit < 2 {
        format!("{value} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use routersim_engine::request::Request;

    use super::*;

    #[test]
    fn numbers_read_like_numbers() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(4_294_967_295), "4,294,967,295");
        assert_eq!(bytes(2048), "2 KiB");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(MAX_IN_FLIGHT * BYTES_PER_IN_FLIGHT), "3.8 GiB");
        assert_eq!(bytes(4_294_967_295 * BYTES_PER_IN_FLIGHT), "8.0 TiB");
    }

    #[test]
    fn a_run_past_the_limit_says_which_entry_and_when() {
        let arrival = Arrival {
            at: Duration::from_millis(12_500),
            entry: 1,
            request: Request::new(0, "gpt"),
        };
        assert_eq!(
            in_flight_exceeded(&arrival),
            "traffic[1]: the request arriving at 12500ms would be the 2,000,001st in flight at \
             once (2 KiB each); at most 2,000,000 can be (~3.8 GiB): lower the rate, or the \
             latencies that keep requests in flight"
        );
    }
}
