//! Tests of `timeline`.

use super::*;

const HEADER: &str =
    "second,arrivals,ok,failed,retries,fallbacks,deployments_cooling,deployments_half_open";
const HEADER_NOW: &str = "second,arrivals,ok,failed,retries,fallbacks,deployments_cooling,\
deployments_half_open,p50_ms,p90_ms,p99_ms,continuations";

/// The number of points of each `<polyline>` (the arrivals' line).
fn polyline_points(svg: &str) -> Vec<usize> {
    svg.split("<polyline")
        .skip(1)
        .filter_map(|p| p.split("points=\"").nth(1)?.split('"').next())
        .map(|points| points.split_whitespace().count())
        // Grid and axis lines have two points.
        .filter(|n| *n > 2)
        .collect()
}

/// A day of traffic: 10/s with a burst of fallbacks and one continuation per hour.
fn day_csv() -> String {
    let mut csv = format!("{HEADER_NOW}\n");
    for second in 0..86_400_u64 {
        let (fallbacks, continuations) = if second % 3600 == 7 { (3, 1) } else { (0, 0) };
        csv.push_str(&format!(
            "{second},10,10,0,0,{fallbacks},0,0,1,2,3,{continuations}\n"
        ));
    }
    csv
}

#[test]
fn a_day_is_a_few_pixels_per_point_and_says_its_bucket() {
    let series = parse_series(day_csv().as_bytes());
    assert_eq!(series.bucket, 600);
    let svg = render(&series, &[], 86_400 * MICROS_PER_SECOND).unwrap_or_default();
    // The arrivals: a level per bucket (two points each).
    let lines = polyline_points(&svg);
    assert_eq!(lines, [2 * 144], "{lines:?}");
    // Bands for what is non-zero: ok, fallbacks, continuations (no failures, no retries).
    assert_eq!(svg.matches("<polygon").count(), 3, "{svg}");
    assert!(svg.contains("per second, averaged per 10 min"), "{svg}");
    assert!(svg.contains("(averaged per 10 min)"), "{svg}");
    // A short run is not averaged and says nothing of buckets.
    let short = parse_series(
        format!("{HEADER_NOW}\n0,1,1,0,0,0,0,0,,,,0\n149,1,1,0,0,0,0,0,,,,0\n").as_bytes(),
    );
    assert_eq!(short.bucket, 1);
    let svg = render(&short, &[], 150 * MICROS_PER_SECOND).unwrap_or_default();
    assert!(!svg.contains("averaged"), "{svg}");
}

/// The pixel rows (lowest, highest y) the `<polygon>`s filled with `color` cover.
fn rows_of(svg: &str, color: RGBColor) -> Option<(i32, i32)> {
    let fill = format!("fill=\"#{:02X}{:02X}{:02X}\"", color.0, color.1, color.2);
    svg.split("<polygon")
        .skip(1)
        .filter(|p| p.split("/>").next().is_some_and(|p| p.contains(&fill)))
        .filter_map(|p| p.split("points=\"").nth(1)?.split('"').next())
        .flat_map(|points| {
            points
                .split_whitespace()
                .filter_map(|xy| xy.split(',').nth(1)?.parse::<i32>().ok())
                .collect::<Vec<i32>>()
        })
        .fold(None, |acc: Option<(i32, i32)>, y| match acc {
            Some((lo, hi)) => Some((lo.min(y), hi.max(y))),
            None => Some((y, y)),
        })
}

#[test]
fn ok_and_fallbacks_never_share_a_pixel_when_every_request_falls_back() {
    // A regional outage: every request falls back, so `fallbacks` = `ok` every second.
    let mut csv = format!("{HEADER_NOW}\n");
    for second in 0..120_u64 {
        let n = 5 + second % 7;
        csv.push_str(&format!("{second},{n},{n},0,{},{n},0,0,,,,0\n", n / 2));
    }
    let svg =
        render(&parse_series(csv.as_bytes()), &[], 120 * MICROS_PER_SECOND).unwrap_or_default();
    let ok = rows_of(&svg, OK).unwrap_or_default();
    let fallbacks = rows_of(&svg, FALLBACKS).unwrap_or_default();
    let retries = rows_of(&svg, RETRIES).unwrap_or_default();
    assert!(
        ok.1 > ok.0 && fallbacks.1 > fallbacks.0,
        "{ok:?} {fallbacks:?}"
    );
    // The requests panel lies above the router's panel: disjoint pixel rows.
    assert!(
        ok.1 < fallbacks.0,
        "ok {ok:?} overlaps fallbacks {fallbacks:?}"
    );
    // Retries at the bottom of the router's panel, fallbacks stacked on them.
    assert!(retries.1 > fallbacks.1, "{retries:?} {fallbacks:?}");
}

#[test]
fn bucket_sizes_are_round_and_keep_to_the_target() {
    for (seconds, bucket) in [
        (1, 1),
        (150, 1),
        (151, 2),
        (3600, 30),
        (10_000, 120),
        (86_400, 600),
        (7 * 86_400, 7200),
        (30 * 86_400, 21_600),
        (200 * 86_400, 2 * 86_400),
    ] {
        assert_eq!(timeline_bucket(seconds), bucket, "{seconds} s");
        assert!(seconds.div_ceil(bucket) <= TARGET_POINTS, "{seconds} s");
    }
    assert_eq!(bucket_name(300), "5 min");
    assert_eq!(bucket_name(15), "15 s");
    assert_eq!(bucket_name(7200), "2 h");
    assert_eq!(bucket_name(2 * 86_400), "2 d");
}

#[test]
fn fallbacks_and_continuations_have_a_legend_entry_and_a_marker_where_non_zero() {
    let series = parse_series(day_csv().as_bytes());
    // One continuation per hour: 24 buckets with one.
    let with_continuations = series.sums.iter().filter(|s| s[5] > 0).count();
    assert_eq!(with_continuations, 24);
    let svg = render(&series, &[], 86_400 * MICROS_PER_SECOND).unwrap_or_default();
    assert!(svg.contains(">\ncontinuations\n<"), "{svg}");
    assert!(svg.contains(">\nfallbacks\n<"), "{svg}");
    // A marker on every non-zero point of both (the same 24 points).
    assert_eq!(svg.matches("<circle").count(), 2 * 24, "{svg}");
}

fn candidate(x: i32, full: &str, short: &str) -> LabelCandidate {
    LabelCandidate {
        x,
        full: full.into(),
        short: short.into(),
    }
}

#[test]
fn overlapping_fault_labels_stack_shorten_or_are_counted_never_collide() {
    let full = "azure-east: rate_limit 429 80% Retry-After 5s, 2m–12m";
    let candidates: Vec<LabelCandidate> = (0..8)
        .map(|i| candidate(100 + 10 * i, full, &format!("f{i}: rate_limit 429 80%")))
        .collect();
    let (placed, hidden) = place_labels(&candidates, 900);
    assert_eq!(placed.len() + hidden, 8);
    assert!(hidden > 0, "{placed:?}");
    // The first goes in full; once the rows are taken, shortened.
    assert_eq!(placed[0].text, full);
    for (i, a) in placed.iter().enumerate() {
        for b in &placed[i + 1..] {
            if a.row != b.row {
                continue;
            }
            let (a_end, b_end) = (
                a.x + estimate_width(&a.text, LABEL_PX),
                b.x + estimate_width(&b.text, LABEL_PX),
            );
            assert!(a_end < b.x || b_end < a.x, "{a:?} and {b:?} collide");
        }
    }
    // Far apart: all in full, in the first row; near the right edge: moved left.
    let (placed, hidden) = place_labels(
        &[
            candidate(0, full, "a"),
            candidate(500, full, "b"),
            candidate(1990, full, "c"),
        ],
        2000,
    );
    assert_eq!(hidden, 0);
    assert!(
        placed.iter().all(|p| p.row == 0 && p.text == full),
        "{placed:?}"
    );
    assert!(
        placed[2].x + estimate_width(full, LABEL_PX) <= 2000,
        "{placed:?}"
    );
    // A flapping fault's repeated label is not shown again, nor counted.
    let (placed, hidden) = place_labels(&[candidate(0, full, "a"), candidate(5, full, "a")], 1000);
    assert_eq!((placed.len(), hidden), (1, 0));
}

#[test]
fn a_fault_label_says_its_retry_after_and_probability() {
    let series = parse_series(day_csv().as_bytes());
    let fault = FaultWindow {
        label: "azure-east: rate_limit 429 80%".into(),
        detail: "Retry-After 5s, 2m–12m".into(),
        deployments: vec!["azure-east".into()],
        from: std::time::Duration::from_secs(120),
        to: Some(std::time::Duration::from_secs(720)),
    };
    let svg = render(&series, &[fault], 86_400 * MICROS_PER_SECOND).unwrap_or_default();
    assert!(
        svg.contains("azure-east: rate_limit 429 80% Retry-After 5s, 2m–12m"),
        "{svg}"
    );
}

/// A dense CSV of `seconds` rows with a few busy seconds, and the same without its quiet
/// rows (the last row kept).
fn dense_and_sparse(seconds: u64) -> (String, String) {
    let (mut dense, mut sparse) = (format!("{HEADER}\n"), format!("{HEADER}\n"));
    for second in 0..seconds {
        let busy = second % 7 == 0 || second % 500 == 3;
        let n = if busy { second % 5 + 1 } else { 0 };
        let row = format!("{second},{n},{n},0,{},0,0,0\n", n / 2);
        dense.push_str(&row);
        if busy || second + 1 == seconds {
            sparse.push_str(&row);
        }
    }
    (dense, sparse)
}

#[test]
fn quiet_seconds_left_out_draw_as_zeros() {
    // Unbucketed and bucketed (with a short last bucket).
    for seconds in [90, 2000, 4321] {
        let (dense, sparse) = dense_and_sparse(seconds);
        assert_ne!(dense, sparse);
        let (dense, sparse) = (
            parse_series(dense.as_bytes()),
            parse_series(sparse.as_bytes()),
        );
        assert_eq!(dense, sparse, "{seconds} s");
        assert_eq!(dense.seconds, seconds);
        let end = seconds * MICROS_PER_SECOND;
        assert_eq!(render(&dense, &[], end), render(&sparse, &[], end));
    }
}

#[test]
fn a_year_is_a_few_hundred_points() {
    let year = 365 * 86_400;
    let csv = format!("{HEADER}\n0,1,0,0,0,0,0,0\n{year},0,1,0,0,0,0,0\n");
    let series = parse_series(csv.as_bytes());
    assert_eq!(series.seconds, year + 1);
    // Three days per point (365 d / 150 = 2.4 d): 122 points.
    assert_eq!(series.bucket, 3 * 86_400);
    assert_eq!(series.sums.len(), 122);
    assert_eq!(series.sums[0], [1, 0, 0, 0, 0, 0]);
    assert_eq!(series.sums[121], [0, 1, 0, 0, 0, 0]);
}
