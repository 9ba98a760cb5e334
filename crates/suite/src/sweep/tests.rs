//! Unit tests of the sweep: argument parsing, shards, intervals and grid order.

use super::*;
use crate::hash::content_hash;
use routersim_sim::run::VERSION;

#[test]
fn every_metric_a_sweep_records_is_a_summary_metric() {
    for name in METRICS {
        assert!(routersim_report::is_known_metric(name), "{name}");
    }
}

#[test]
fn set_args_split_at_top_level_commas() {
    let k = parse_set_arg("router_settings.fallbacks=[{a: [b, c]}],[]").unwrap();
    assert_eq!(k.values, vec!["[{a: [b, c]}]", "[]"]);
    assert!(parse_set_arg("x").is_err());
    assert!(parse_set_arg("x=").is_err());
    assert!(parse_set_arg("x=1,,2").is_err());
    assert!(parse_set_arg("=1").is_err());
}

#[test]
fn shards_partition_the_jobs() {
    let a = parse_shard("1/2").unwrap();
    let b = parse_shard("2/2").unwrap();
    assert!((0..10).all(|i| a.owns(i) != b.owns(i)));
    assert!(parse_shard("0/2").is_err());
    assert!(parse_shard("3/2").is_err());
}

#[test]
fn interval_matches_a_hand_computation() {
    let i = mean_ci95(&[1.0, 2.0, 3.0]);
    assert_eq!(i.mean, 2.0);
    // s = 1, t(0.975, 2) = 4.302653, half = 4.302653 / sqrt(3).
    assert!((i.high - 2.0 - 4.30265272975 / 3f64.sqrt()).abs() < 1e-9);
    let one = mean_ci95(&[5.0]);
    assert_eq!((one.low, one.high), (5.0, 5.0));
    assert!((t975(31) - 2.0395134464).abs() < 1e-7);
    assert!((t975(1000) - 1.96233908083).abs() < 1e-9);
}

#[test]
fn grid_order_is_first_key_slowest() {
    let m = Manifest {
        scenario: "s".into(),
        scenario_file: "s.yaml".into(),
        scenario_hash: content_hash(b"s"),
        router_file_hash: None,
        routersim_version: VERSION.into(),
        keys: vec![
            SweepKey {
                path: "a".into(),
                values: vec!["1".into(), "2".into()],
                baseline: None,
            },
            SweepKey {
                path: "b".into(),
                values: vec!["x".into(), "y".into(), "z".into()],
                baseline: None,
            },
        ],
        seeds: vec![1, 2],
        metrics: vec![],
        counts: vec![],
        shard: None,
        no_effect: vec![],
    };
    let c = m.combinations();
    assert_eq!(c.len(), 6);
    assert_eq!(c[0], vec![0, 0]);
    assert_eq!(c[1], vec![0, 1]);
    assert_eq!(c[3], vec![1, 0]);
    assert_eq!(m.job_count(), 12);
}

fn combo(combo: usize, values: &[f64]) -> ComboStats {
    ComboStats {
        combo,
        values: vec![combo],
        runs: values.len(),
        metrics: vec![mean_ci95(values)],
    }
}

#[test]
fn the_verdict_names_the_best_and_what_cannot_be_told_apart() {
    // failed_rate, lower is better: value 0 is clearly best; 1 and 2 are the same runs, and
    // 3 overlaps 0's interval.
    let stats = vec![
        combo(0, &[0.10, 0.11, 0.12]),
        combo(1, &[0.50, 0.52, 0.51]),
        combo(2, &[0.50, 0.52, 0.51]),
        combo(3, &[0.05, 0.20, 0.12]),
    ];
    let marks = marks("failed_rate", &stats, 0);
    assert_eq!(
        marks,
        [
            Mark::Best,
            Mark::Worse,
            Mark::Worse,
            Mark::Indistinguishable
        ]
    );
    // Higher is better for a success share: the same numbers pick 1 (first of the tie), and
    // its identical twin 2 is indistinguishable.
    let marks = marks_for_ok(&stats);
    assert_eq!(
        marks,
        [
            Mark::Worse,
            Mark::Best,
            Mark::Indistinguishable,
            Mark::Worse
        ]
    );
    assert!(lower_is_better("p99_latency_ms") && !lower_is_better("ok_rate"));
}

fn marks_for_ok(stats: &[ComboStats]) -> Vec<Mark> {
    marks("ok_rate", stats, 0)
}

#[test]
fn no_best_is_named_on_a_tie_or_from_single_runs() {
    // Nine combinations at failed_rate 0: no winner.
    let zeros: Vec<ComboStats> = (0..9).map(|i| combo(i, &[0.0, 0.0, 0.0])).collect();
    assert!(
        marks("failed_rate", &zeros, 0)
            .iter()
            .all(|m| *m == Mark::Indistinguishable)
    );
    // One seed each: no interval, nothing shown different, however far apart the means.
    let single = vec![combo(0, &[0.1]), combo(1, &[0.5])];
    assert_eq!(
        marks("failed_rate", &single, 0),
        [Mark::Indistinguishable, Mark::Indistinguishable]
    );
}

#[test]
fn time_cooled_is_described_not_ranked() {
    let stats = vec![
        combo(0, &[0.0, 0.0, 0.0]),
        combo(1, &[9000.0, 9100.0, 9050.0]),
    ];
    assert_eq!(
        marks("cooled_ms_total", &stats, 0),
        [Mark::NotRanked, Mark::NotRanked]
    );
    assert!(!is_ranked("cooled_ms_total") && is_ranked("p99_latency_ms"));
    assert_eq!(Mark::NotRanked.as_str(), "not_ranked");
}

/// A manifest of one key `k` with `values`, the given metrics, no counts.
fn one_key(values: &[&str], metrics: &[&str]) -> Manifest {
    Manifest {
        scenario: "s".into(),
        scenario_file: "s.yaml".into(),
        scenario_hash: content_hash(b"s"),
        router_file_hash: None,
        routersim_version: VERSION.into(),
        keys: vec![SweepKey {
            path: "router_settings.allowed_fails".into(),
            values: values.iter().map(|v| v.to_string()).collect(),
            baseline: Some(values.len() - 1),
        }],
        seeds: vec![1, 2, 3],
        metrics: metrics.iter().map(|m| m.to_string()).collect(),
        counts: vec![],
        shard: None,
        no_effect: vec![],
    }
}

#[test]
fn the_verdict_json_names_no_best_without_a_significant_difference() {
    let m = one_key(&["0", "null"], &["failed_rate", "cooled_ms_total"]);
    let two = |a: &[f64], b: &[f64]| ComboStats {
        combo: 0,
        values: vec![0],
        runs: 3,
        metrics: vec![mean_ci95(a), mean_ci95(b)],
    };
    let mut stats = vec![
        two(&[0.0, 0.0, 0.0], &[0.0, 0.0, 0.0]),
        two(&[0.0, 0.0, 0.0], &[9000.0, 9100.0, 9050.0]),
    ];
    stats[1].combo = 1;
    stats[1].values = vec![1];
    let v = verdicts(&m, &stats);
    assert_eq!(v[0].best, None, "a tie has no winner");
    assert!(!v[0].significant);
    assert_eq!(v[0].indistinguishable.len(), 2);
    assert_eq!((v[1].better, v[1].ranked), ("not ranked", false));
    assert_eq!(v[1].best, None, "time cooled is not ranked");
    let table = format_table(&m, &stats);
    assert!(table.contains("failed_rate (±95%)"), "{table}");
    assert!(table.contains("cooled ms (±95%, not ranked)"), "{table}");
    let (rows, _) = table.split_once("verdict (").unwrap();
    assert!(
        !rows.contains('*') && !rows.contains('~'),
        "no marks: {table}"
    );
    assert!(
        table.contains("router_settings.allowed_fails=null (config)"),
        "{table}"
    );
    assert!(table.contains("cooled_ms_total: not ranked"), "{table}");
}
