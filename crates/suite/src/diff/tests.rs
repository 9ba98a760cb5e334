//! Tests of `diff`.

use super::*;

#[test]
fn every_metric_a_diff_shows_is_a_summary_metric() {
    for name in DIFF_METRICS.iter().chain(STREAM_METRICS) {
        assert!(routersim_report::is_known_metric(name), "{name}");
    }
}

fn write(dir: &Path, name: &str, rows: &[&str]) -> PathBuf {
    let path = dir.join(name);
    let mut text = String::from(
        "request_id,attempt,start_ms,end_ms,model_group,deployment_id,outcome,status,\
             retry_after_ms,wait_ms,fallback_depth\n",
    );
    for r in rows {
        text.push_str(r);
        text.push('\n');
    }
    std::fs::write(&path, text).unwrap();
    path
}

fn row(id: u64, attempt: u64, dep: &str, outcome: &str) -> String {
    format!("{id},{attempt},0.000,1.000,g,{dep},{outcome},200,,0.000,0")
}

#[test]
fn finds_the_lowest_differing_request_whatever_the_row_order() {
    let dir = std::env::temp_dir().join(format!("routersim-diff-unit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let a = write(
        &dir,
        "a.csv",
        &[
            &row(1, 1, "x", "ok"),
            &row(0, 1, "x", "ok"),
            &row(3, 1, "x", "rate_limit"),
            &row(2, 1, "y", "ok"),
            &row(3, 2, "y", "ok"),
        ],
    );
    let b = write(
        &dir,
        "b.csv",
        &[
            &row(0, 1, "x", "ok"),
            &row(1, 1, "x", "ok"),
            &row(2, 1, "y", "ok"),
            &row(3, 1, "x", "rate_limit"),
            &row(3, 2, "x", "rate_limit"),
            &row(3, 3, "y", "ok"),
        ],
    );
    let Attempts::Compared {
        first, requests_a, ..
    } = first_difference(&a, &b).unwrap()
    else {
        panic!("compared")
    };
    assert_eq!(requests_a, 4);
    let first = first.unwrap();
    assert_eq!(first.request_id, 3);
    assert_eq!(first.a, vec!["x:rate_limit", "y:ok"]);
    assert_eq!(first.b, vec!["x:rate_limit", "x:rate_limit", "y:ok"]);
    let same = first_difference(&a, &a).unwrap();
    assert!(matches!(same, Attempts::Compared { first: None, .. }));
    // A request only one side has differs too.
    let c = write(
        &dir,
        "c.csv",
        &[&row(0, 1, "x", "ok"), &row(1, 1, "x", "ok")],
    );
    let Attempts::Compared { first, .. } = first_difference(&a, &c).unwrap() else {
        panic!("compared")
    };
    assert_eq!(first.unwrap().request_id, 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn joins_by_id_then_by_arrival_within_a_millisecond() {
    let a: BTreeMap<u64, u64> = [(1, 0), (2, 5_000), (3, 9_000), (4, 20_000)].into();
    // 1 by id; 10 ↔ 2 (0.4 ms apart); 11 is 1.5 ms from 3: no match; 12 ↔ 4 (1 ms).
    let b: BTreeMap<u64, u64> = [(1, 7), (10, 5_400), (11, 10_500), (12, 21_000)].into();
    let (pairs, by_id) = join(&a, &b);
    assert_eq!(by_id, 1);
    assert_eq!(pairs, vec![(1, 1), (2, 10), (4, 12)]);
}
