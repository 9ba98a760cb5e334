//! Stacked step bands: each series a band of its own colour on top of the ones before, level
//! across each bucket. Why stacked: two series with the same values (every request a fallback,
//! so `ok` = `fallbacks`) drawn as lines lie on each other and one hides the other; stacked,
//! each keeps its own band and the top of the stack is their sum.

/// A band's outline: its top edge left to right, then its bottom edge right to left.
pub(crate) type Polygon = Vec<(f64, f64)>;

/// The polygons of `values` stacked in order: `spans[i]` is bucket `i`'s x span and
/// `values[k][i]` series `k`'s height in it. A series that is zero everywhere has no polygon
/// (`None`), so it draws nothing. Also returns, per series and bucket, the top of its band.
pub(crate) fn stacked_steps(
    spans: &[(f64, f64)],
    values: &[Vec<f64>],
) -> (Vec<Option<Polygon>>, Vec<Vec<f64>>) {
    let mut below = vec![0.0_f64; spans.len()];
    let mut polygons = Vec::with_capacity(values.len());
    let mut tops = Vec::with_capacity(values.len());
    for series in values {
        let mut upper = Vec::with_capacity(2 * spans.len());
        let mut lower = Vec::with_capacity(2 * spans.len());
        let mut any = false;
        for (i, &(x0, x1)) in spans.iter().enumerate() {
            let v = series.get(i).copied().unwrap_or(0.0);
            any |= v > 0.0;
            let lo = below[i];
            let hi = lo + v;
            upper.extend([(x0, hi), (x1, hi)]);
            lower.extend([(x0, lo), (x1, lo)]);
            below[i] = hi;
        }
        tops.push(below.clone());
        polygons.push(any.then(|| {
            lower.reverse();
            upper.extend(lower);
            upper
        }));
    }
    (polygons, tops)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_series_get_bands_of_their_own() {
        let spans = [(0.0, 1.0), (1.0, 2.0)];
        let (polygons, tops) =
            stacked_steps(&spans, &[vec![2.0, 3.0], vec![0.0, 0.0], vec![2.0, 3.0]]);
        assert!(polygons[1].is_none(), "an all-zero series draws nothing");
        assert_eq!(tops, vec![vec![2.0, 3.0], vec![2.0, 3.0], vec![4.0, 6.0]]);
        let third = polygons[2].clone().unwrap_or_default();
        assert_eq!(
            third,
            vec![
                (0.0, 4.0),
                (1.0, 4.0),
                (1.0, 6.0),
                (2.0, 6.0),
                (2.0, 3.0),
                (1.0, 3.0),
                (1.0, 2.0),
                (0.0, 2.0)
            ]
        );
    }
}
