//! The closest known key to a typo: an edit distance, and the nearest candidate within a limit
//! (ties alphabetical, so the answer never depends on a table's order).

/// The optimal-string-alignment distance: insertions, deletions, substitutions and swaps of
/// two neighbours each cost one (`cooldonw` is one edit from `cooldown`).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut rows = vec![0usize; (a.len() + 1) * width];
    let at = |i: usize, j: usize| i * width + j;
    for i in 0..=a.len() {
        rows[at(i, 0)] = i;
    }
    for j in 0..=b.len() {
        rows[at(0, j)] = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[at(i - 1, j)] + 1)
                .min(rows[at(i, j - 1)] + 1)
                .min(rows[at(i - 1, j - 1)] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[at(i - 2, j - 2)] + 1);
            }
            rows[at(i, j)] = best;
        }
    }
    rows[at(a.len(), b.len())]
}

/// The candidate closest to `key`, if it is near enough to be what was meant: at most a third
/// of the key's length in edits (and at least 2 allowed). Ties go to the alphabetically first,
/// so the answer never depends on the order of the table.
pub fn closest_key<'c>(
    key: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    let limit = (key.chars().count() / 3).max(2);
    closest_within(key, candidates, limit)
}

/// The candidate closest to `key` within `limit` edits (ties: alphabetically first).
pub fn closest_within<'c>(
    key: &str,
    candidates: impl IntoIterator<Item = &'c str>,
    limit: usize,
) -> Option<&'c str> {
    candidates
        .into_iter()
        .filter(|c| *c != key)
        .map(|c| (edit_distance(key, c), c))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, c)| c)
}
