//! The numbers a sweep reports per combination: the mean over seeds and its 95 % interval
//! (Student's t).
//!
//! Separate because it is pure arithmetic on finished rows, shared by `sweep` and `merge`.

use super::manifest::{Manifest, RunRow};

/// The mean of a metric over seeds and its 95 % interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// Mean.
    pub mean: f64,
    /// `mean − t(0.975, n−1)·s/√n`.
    pub low: f64,
    /// `mean + t(0.975, n−1)·s/√n`.
    pub high: f64,
}

/// `t(0.975, df)` for df 1 to 30 (12 significant digits).
const T975: [f64; 30] = [
    12.7062047362,
    4.30265272975,
    3.18244630528,
    2.7764451052,
    2.57058183564,
    2.44691185114,
    2.36462425159,
    2.3060041352,
    2.2621571628,
    2.22813885199,
    2.20098516009,
    2.17881282967,
    2.16036865646,
    2.14478668792,
    2.13144954556,
    2.11990529922,
    2.10981557783,
    2.10092204024,
    2.09302405441,
    2.08596344727,
    2.07961384473,
    2.0738730679,
    2.06865761042,
    2.06389856163,
    2.05953855275,
    2.05552943864,
    2.05183051648,
    2.0484071418,
    2.04522964213,
    2.0422724563,
];

/// The 0.975 quantile of Student's t with `df` degrees of freedom: a table to 30, then the
/// Cornish–Fisher expansion around the normal quantile (error below 3e-8).
pub fn t975(df: usize) -> f64 {
    if df == 0 {
        return f64::NAN;
    }
    if df <= T975.len() {
        return T975[df - 1];
    }
    let z = 1.959_963_984_540_054_f64;
    let v = df as f64;
    let (z3, z5, z7, z9) = (z.powi(3), z.powi(5), z.powi(7), z.powi(9));
    z + (z3 + z) / (4.0 * v)
        + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * v * v)
        + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * v.powi(3))
        + (79.0 * z9 + 776.0 * z7 + 1482.0 * z5 - 1920.0 * z3 - 945.0 * z) / (92160.0 * v.powi(4))
}

/// Mean and 95 % interval of `values` (in the order given); one value gives the value itself.
pub fn mean_ci95(values: &[f64]) -> Interval {
    let n = values.len();
    if n == 0 {
        return Interval {
            mean: f64::NAN,
            low: f64::NAN,
            high: f64::NAN,
        };
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return Interval {
            mean,
            low: mean,
            high: mean,
        };
    }
    let var = values.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
    let half = t975(n - 1) * var.sqrt() / (n as f64).sqrt();
    Interval {
        mean,
        low: mean - half,
        high: mean + half,
    }
}

/// One combination's statistics over its runs.
#[derive(Clone, Debug, PartialEq)]
pub struct ComboStats {
    /// Combination index (grid order).
    pub combo: usize,
    /// The value index of each key.
    pub values: Vec<usize>,
    /// Runs it has.
    pub runs: usize,
    /// One interval per metric, in [`METRICS`](super::manifest::METRICS) order, then one per count
    /// ([`Manifest::counts`]).
    pub metrics: Vec<Interval>,
}

/// Statistics per combination, in grid order, from rows sorted by (combination, seed index).
pub fn combo_stats(manifest: &Manifest, rows: &[RunRow]) -> Vec<ComboStats> {
    let combos = manifest.combinations();
    let mut out = Vec::new();
    for group in rows.chunk_by(|a, b| a.combo == b.combo) {
        let combo = group[0].combo;
        let metrics = (0..manifest.columns().count())
            .map(|m| mean_ci95(&group.iter().map(|r| r.metrics[m]).collect::<Vec<_>>()))
            .collect();
        out.push(ComboStats {
            combo,
            values: combos[combo].clone(),
            runs: group.len(),
            metrics,
        });
    }
    out
}
