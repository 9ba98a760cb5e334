//! `scenarios/retry-owner.yaml` under each replay policy, with and without a client's
//! retries: ambiguous attempts (`connection_lost_after_send`) are replayed, deduplicated or
//! not replayed as `router_settings.replay` says, and a client's retries above the router
//! multiply the provider calls per user request.

use std::path::{Path, PathBuf};

use routersim_engine::replay::Replay;
use routersim_report::summary::{RoutingMetrics, Summary};
use routersim_sim::run::{RunOptions, run};
use routersim_sim::scenario::load_scenario;

fn file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/retry-owner.yaml")
}

fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("retry-owner-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn run_with(test: &str, replay: Replay, client_retries: u32) -> (Summary, PathBuf) {
    let mut scenario = load_scenario(&file()).unwrap();
    scenario.router.settings.replay = replay;
    scenario.client_retries = client_retries;
    let dir = out_dir(&format!("{test}-{}-{client_retries}", replay.as_str()));
    let report = run(
        &scenario,
        &RunOptions {
            out_dir: Some(dir.clone()),
            ..RunOptions::default()
        },
    )
    .expect("runs");
    (report.summary, dir)
}

fn routing(s: &Summary) -> &RoutingMetrics {
    s.routing
        .as_ref()
        .expect("ambiguous outcomes show the metrics")
}

#[test]
fn replay_policies_decide_what_an_ambiguous_attempt_costs() {
    const TEST: &str = "replay";
    let (always, always_dir) = run_with(TEST, Replay::Always, 0);
    let (dedupe, _) = run_with(TEST, Replay::Dedupe, 0);
    let (never, _) = run_with(TEST, Replay::Never, 0);
    let (a, d, n) = (routing(&always), routing(&dedupe), routing(&never));
    // The same draws: `always` and `dedupe` make the same calls; only who runs twice differs.
    assert_eq!(always.attempts, dedupe.attempts);
    // The metrics are what the run's own traces say, counted here from events.csv and
    // attempts.csv rather than by the recorder.
    let traced = TracedAmbiguity::read(&always_dir);
    assert!(
        traced.outcomes >= 10,
        "the scenario loses connections: {traced:?}"
    );
    assert_eq!(a.ambiguous_outcomes, traced.outcomes);
    assert_eq!(a.ambiguous_replays, traced.replayed);
    assert_eq!(a.duplicate_executions, traced.ran_twice);
    assert!(
        traced.ran_twice > 0 && traced.ran_twice < traced.replayed,
        "{traced:?}"
    );
    assert_eq!(
        (d.ambiguous_replays, d.duplicate_executions),
        (traced.replayed, 0)
    );
    // `never`: no replay at all, and each ambiguous attempt fails its request.
    assert_eq!((n.ambiguous_replays, n.duplicate_executions), (0, 0));
    assert_eq!(
        never.failed_by_kind.get("api_connection").copied(),
        Some(n.ambiguous_outcomes)
    );
    assert!(never.failed > always.failed);
    assert_eq!(never.metric("duplicate_executions"), Some(0.0));
    assert_eq!(
        always.metric("duplicate_executions"),
        Some(traced.ran_twice as f64)
    );
}

#[test]
fn a_client_retrying_above_the_router_multiplies_provider_calls() {
    const TEST: &str = "client";
    let (alone, _) = run_with(TEST, Replay::Always, 0);
    let (layered, dir) = run_with(TEST, Replay::Always, 2);
    let (r0, r2) = (routing(&alone), routing(&layered));
    // Without client retries every request is a user request.
    assert_eq!(r0.user_requests, alone.requests);
    assert_eq!(r0.client_retries, 0);
    assert_eq!(r0.provider_calls_per_user_request.max, 3);
    // With them: the same user requests, more router requests, up to 3 × 3 calls for one.
    assert_eq!(r2.user_requests, alone.requests);
    assert_eq!(layered.requests, r2.user_requests + r2.client_retries);
    assert_eq!(r2.provider_calls_per_user_request.max, 9);
    assert!(r2.provider_calls_per_user_request.mean > r0.provider_calls_per_user_request.mean);
    assert!(layered.ok > alone.ok, "the client's retries rescue some");
    // `never` in the router does not stop a second retry owner from replaying.
    let (never, _) = run_with(TEST, Replay::Never, 2);
    assert!(routing(&never).duplicate_executions > 0);

    // requests.csv: one row per router request; a client's sends share the request id and
    // count their `client_try`.
    let text = std::fs::read_to_string(dir.join("requests.csv")).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header = reader.headers().unwrap().clone();
    assert_eq!(header.iter().next_back(), Some("client_try"));
    let (id, try_col) = (
        header.iter().position(|h| h == "request_id").unwrap(),
        header.iter().position(|h| h == "client_try").unwrap(),
    );
    let outcome_col = header.iter().position(|h| h == "outcome").unwrap();
    let records: Vec<(u64, u32, bool)> = reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            let failed = &r[outcome_col] != "ok";
            (r[id].parse().unwrap(), r[try_col].parse().unwrap(), failed)
        })
        .collect();
    let rows: Vec<(u64, u32)> = records.iter().map(|(i, t, _)| (*i, *t)).collect();
    assert_eq!(rows.len() as u64, layered.requests);
    assert_eq!(
        rows.iter().filter(|(_, t)| *t > 0).count() as u64,
        r2.client_retries
    );
    // The client re-sends exactly the failed sends it has retries left for (2 each).
    let resendable = records
        .iter()
        .filter(|(_, t, failed)| *failed && *t < 2)
        .count();
    assert!(resendable > 0);
    assert_eq!(r2.client_retries, resendable as u64);
    let (retried, _) = *rows.iter().find(|(_, t)| *t == 2).unwrap();
    let sends: Vec<u32> = rows
        .iter()
        .filter(|(i, _)| *i == retried)
        .map(|(_, t)| *t)
        .collect();
    assert_eq!(sends, [0, 1, 2]);
}

/// The ambiguous attempts of a run (no client retries), counted from its trace files.
#[derive(Debug, Default)]
struct TracedAmbiguity {
    /// `ambiguous_outcome` events.
    outcomes: u64,
    /// Those followed by another attempt of the same request.
    replayed: u64,
    /// Executions of an operation beyond its first: each request's successful attempts plus
    /// its ambiguous attempts the provider executed (`executed=true`), less one.
    ran_twice: u64,
}

impl TracedAmbiguity {
    fn read(dir: &Path) -> Self {
        use std::collections::BTreeMap;
        let mut traced = Self::default();
        // (at_ms, executed) of each ambiguous attempt, by request.
        let mut ambiguous: BTreeMap<u64, Vec<(f64, bool)>> = BTreeMap::new();
        let events = std::fs::read_to_string(dir.join("events.csv")).unwrap();
        for line in events.lines().filter(|l| l.contains(",ambiguous_outcome,")) {
            let at: f64 = line.split(',').next().unwrap().parse().unwrap();
            let field = |name: &str| {
                line.split([' ', ','])
                    .find_map(|w| w.strip_prefix(name))
                    .unwrap()
                    .to_string()
            };
            let request: u64 = field("request=").parse().unwrap();
            ambiguous
                .entry(request)
                .or_default()
                .push((at, field("executed=") == "true"));
        }
        // (start_ms, ok) of each attempt, by request.
        let mut attempts: BTreeMap<u64, Vec<(f64, bool)>> = BTreeMap::new();
        let text = std::fs::read_to_string(dir.join("attempts.csv")).unwrap();
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        for row in reader.records() {
            let row = row.unwrap();
            attempts
                .entry(row[0].parse().unwrap())
                .or_default()
                .push((row[2].parse().unwrap(), &row[6] == "ok"));
        }
        for (request, lost) in &ambiguous {
            let tries = &attempts[request];
            traced.outcomes += lost.len() as u64;
            traced.replayed += lost
                .iter()
                .filter(|(at, _)| tries.iter().any(|(start, _)| start >= at))
                .count() as u64;
            let executions = lost.iter().filter(|(_, executed)| *executed).count()
                + tries.iter().filter(|(_, ok)| *ok).count();
            traced.ran_twice += executions.saturating_sub(1) as u64;
        }
        traced
    }
}
