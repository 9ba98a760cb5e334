//! `routersim bench --drive`: drive straight at an in-process serve, a line per run and the
//! median of the headline runs (tiny rates here: the figures are the docs', not CI's).

use crate::common::{routersim, scratch_dir};

#[test]
fn bench_drive_prints_each_run_and_the_median_with_the_fd_budget() {
    let dir = scratch_dir("bench-drive");
    let out = dir.join("bench");
    let o = routersim(&[
        "bench",
        "--drive",
        "--drive-rates",
        "100,200",
        "--drive-seconds",
        "500ms",
        "--drive-headline",
        "300",
        "--repeat",
        "3",
        "--max-connections",
        "64",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    // The header, two rates, three headline runs, the median.
    assert_eq!(lines.len(), 7, "{stdout}");
    // 100 req/s for 0.5 s: 50 requests, every one answered, none failed.
    assert!(
        lines[1].contains("asked    100 req/s")
            && lines[1].contains(" 50 requests, 0 failed, 0 not sent"),
        "{stdout}"
    );
    assert!(lines[2].contains(" 100 requests, 0 failed"), "{stdout}");
    assert!(lines[1].contains("fd budget 64 connections"), "{stdout}");
    for run in &lines[3..6] {
        assert!(
            run.contains(" 150 requests, 0 failed, 0 not sent"),
            "{stdout}"
        );
    }
    assert!(
        lines[6].starts_with("drive at 300 req/s: median ")
            && lines[6].contains("of 3 runs, 0 failed or not sent"),
        "{stdout}"
    );
    // Below the headline rate of the issue: never "met".
    assert!(lines[6].ends_with("NOT met"), "{stdout}");
    // Each run's report is deleted once read.
    assert!(!out.join("drive-100").exists());
}
