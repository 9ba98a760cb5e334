//! `routersim bench`'s median (reported beside the fastest of its runs).

/// The median `bench` reports beside the fastest run: the middle sample, or the mean of the
/// middle two.
#[test]
fn the_bench_median_is_the_middle_sample() {
    use routersim_suite::bench::median;
    assert!((median(&[0.5, 0.1, 0.3]) - 0.3).abs() < 1e-12);
    assert!((median(&[0.4, 0.1, 0.3, 0.2]) - 0.25).abs() < 1e-12);
    assert!((median(&[0.7]) - 0.7).abs() < 1e-12);
    assert!(median(&[]).abs() < 1e-12);
}
