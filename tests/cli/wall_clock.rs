//! No simulated path reads the wall clock.
//!
//! On the virtual executor, `tokio::time::Instant::now()` (outside a tokio runtime) silently
//! reads the wall clock, and nothing else would notice: the run finishes, the numbers are just
//! wrong. So every shipped scenario runs twice on the virtual executor, with the origin of its
//! `Instant`s moved by a thousand days between the two: a report that depends on the origin
//! read the wall clock somewhere, and the two reports differ. (The control,
//! `a_wall_clock_read_shows_when_the_origin_moves` in `crates/runtime`, shows a wall-clock
//! read does change with the origin.) Both transports run: over `http`, the wire server and the
//! engine's HTTP adapter are in the path too.

use std::path::Path;
use std::time::Duration;

use crate::common::{repo, scratch_dir, shipped_scenarios};
use routersim_runtime::RuntimeKind;
use routersim_sim::run::{Rendering, run_into};
use routersim_sim::scenario::load_scenario;
use routersim_sim::transport::Transport;

const FILES: [&str; 7] = [
    "requests.csv",
    "attempts.csv",
    "events.csv",
    "timeseries.csv",
    "deployments.csv",
    "latency.hlog",
    "summary.json",
];

fn run_from(file: &Path, transport: Transport, origin: std::time::Instant, out: &Path) {
    let mut scenario = load_scenario(file).unwrap();
    scenario.transport = transport;
    scenario.runtime = RuntimeKind::Virtual;
    scenario.virtual_origin = Some(origin);
    run_into(&scenario, scenario.seed, out, false, Rendering::DataOnly)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
}

#[test]
fn no_report_depends_on_where_virtual_time_starts() {
    let base = scratch_dir("wall-clock");
    let now = std::time::Instant::now();
    let later = now + Duration::from_secs(1000 * 86_400);
    let mut compared = 0;
    for (i, file) in shipped_scenarios().iter().enumerate() {
        let name = file.strip_prefix(repo()).unwrap().display().to_string();
        for transport in [Transport::Memory, Transport::Http] {
            let (a, b) = (
                base.join(format!("{i}-{transport}-now")),
                base.join(format!("{i}-{transport}-later")),
            );
            run_from(file, transport, now, &a);
            run_from(file, transport, later, &b);
            for report in FILES {
                let (left, right) = (
                    std::fs::read(a.join(report)).unwrap(),
                    std::fs::read(b.join(report)).unwrap(),
                );
                assert!(
                    left == right,
                    "{name} ({transport}): {report} depends on the origin of virtual time, so \
                     something read the wall clock (see {} and {})",
                    a.display(),
                    b.display()
                );
                compared += 1;
            }
        }
        std::fs::remove_dir_all(&base).ok();
    }
    assert!(compared >= 300, "{compared} reports compared");
}
