//! The sweep's files: `runs.csv` and `sweep.csv` text (exact and six-decimal numbers),
//! writing them with `sweep.json`, and reading a folder's manifest and runs back.
//!
//! Separate because their byte format is the contract `merge` and scripts read.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use super::error::{SweepError, file_error};
use super::folder::{RUNS_CSV, SWEEP_CSV, SWEEP_JSON, SWEEP_SVG, run_dir};
use super::index::sweep_index_html;
use super::manifest::{Manifest, RunRow};
use super::plot::write_svg;
use super::stats::{ComboStats, combo_stats};
use super::verdict::{marks, verdicts};
use crate::html::INDEX_HTML;

/// A number for `runs.csv`: the shortest text that reads back to the same `f64`.
fn exact(x: f64) -> String {
    format!("{x}")
}

/// A number for `sweep.csv`: six decimals, no negative zero.
fn fixed6(x: f64) -> String {
    let s = format!("{x:.6}");
    if s == "-0.000000" {
        "0.000000".into()
    } else {
        s
    }
}

/// The `runs.csv` header.
pub fn runs_header(manifest: &Manifest) -> Vec<String> {
    let mut header: Vec<String> = manifest.keys.iter().map(|k| k.path.clone()).collect();
    header.push("seed".into());
    header.extend(manifest.columns().cloned());
    header
}

/// The `sweep.csv` header.
pub fn sweep_header(manifest: &Manifest) -> Vec<String> {
    let mut header: Vec<String> = manifest.keys.iter().map(|k| k.path.clone()).collect();
    header.push("runs".into());
    for m in manifest.columns() {
        for suffix in ["mean", "ci95_low", "ci95_high"] {
            header.push(format!("{m}_{suffix}"));
        }
    }
    for m in &manifest.metrics {
        header.push(format!("{m}_verdict"));
    }
    header
}

fn csv_text(rows: impl IntoIterator<Item = Vec<String>>) -> Result<String, SweepError> {
    let mut writer = csv::WriterBuilder::new().from_writer(Vec::new());
    for row in rows {
        writer
            .write_record(&row)
            .map_err(|e| SweepError::Merge(e.to_string()))?;
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| SweepError::Merge(e.to_string()))?;
    String::from_utf8(bytes).map_err(|e| SweepError::Merge(e.to_string()))
}

/// `runs.csv` text for rows sorted by (combination, seed index).
pub fn runs_csv(manifest: &Manifest, rows: &[RunRow]) -> Result<String, SweepError> {
    let combos = manifest.combinations();
    let body = rows.iter().map(|r| {
        let mut row: Vec<String> = manifest
            .keys
            .iter()
            .zip(&combos[r.combo])
            .map(|(k, &v)| k.values[v].clone())
            .collect();
        row.push(r.seed.to_string());
        row.extend(r.metrics.iter().map(|&x| exact(x)));
        row
    });
    csv_text(std::iter::once(runs_header(manifest)).chain(body))
}

/// `sweep.csv` text.
pub fn sweep_csv(manifest: &Manifest, stats: &[ComboStats]) -> Result<String, SweepError> {
    let verdict: Vec<_> = manifest
        .metrics
        .iter()
        .enumerate()
        .map(|(m, name)| marks(name, stats, m))
        .collect();
    let body = stats.iter().enumerate().map(|(row_index, c)| {
        let mut row: Vec<String> = manifest
            .keys
            .iter()
            .zip(&c.values)
            .map(|(k, &v)| k.values[v].clone())
            .collect();
        row.push(c.runs.to_string());
        for i in &c.metrics {
            row.extend([fixed6(i.mean), fixed6(i.low), fixed6(i.high)]);
        }
        row.extend(verdict.iter().map(|m| m[row_index].as_str().to_string()));
        row
    });
    csv_text(std::iter::once(sweep_header(manifest)).chain(body))
}

/// `runs/index.csv` text: which run folder holds which settings and seed (`path` relative to
/// the sweep folder, then one column per key, then `seed`), for the rows this folder ran.
pub fn runs_index_csv(manifest: &Manifest, rows: &[RunRow]) -> Result<String, SweepError> {
    let combos = manifest.combinations();
    let mut header = vec!["path".to_string()];
    header.extend(manifest.keys.iter().map(|k| k.path.clone()));
    header.push("seed".into());
    let body = rows.iter().map(|r| {
        let dir = run_dir(Path::new(""), r.combo, r.seed);
        let mut row = vec![dir.to_string_lossy().replace('\\', "/")];
        row.extend(
            manifest
                .keys
                .iter()
                .zip(&combos[r.combo])
                .map(|(k, &v)| k.values[v].clone()),
        );
        row.push(r.seed.to_string());
        row
    });
    csv_text(std::iter::once(header).chain(body))
}

pub(super) fn write(path: &Path, text: &str) -> Result<(), SweepError> {
    std::fs::write(path, text).map_err(|e| file_error(path, e))
}

/// Writes `sweep.json`, `runs.csv`, `sweep.csv`, `sweep.svg` and `index.html` into `out` from
/// rows sorted by (combination, seed index); returns the per-combination statistics.
pub fn write_outputs(
    out: &Path,
    manifest: &Manifest,
    rows: &[RunRow],
) -> Result<Vec<ComboStats>, SweepError> {
    std::fs::create_dir_all(out).map_err(|e| file_error(out, e))?;
    let stats = combo_stats(manifest, rows);
    // The verdict is beside the manifest, not in it: `merge` reads the manifest back and
    // recomputes the verdict from the joined runs.
    let mut value = serde_json::to_value(manifest).map_err(|e| file_error(out, e))?;
    if let Value::Object(map) = &mut value {
        let verdict =
            serde_json::to_value(verdicts(manifest, &stats)).map_err(|e| file_error(out, e))?;
        map.insert("verdict".into(), verdict);
    }
    let mut json = serde_json::to_string_pretty(&value).map_err(|e| file_error(out, e))?;
    json.push('\n');
    write(&out.join(SWEEP_JSON), &json)?;
    write(&out.join(RUNS_CSV), &runs_csv(manifest, rows)?)?;
    write(&out.join(SWEEP_CSV), &sweep_csv(manifest, &stats)?)?;
    let svg = out.join(SWEEP_SVG);
    write_svg(&svg, manifest, &stats).map_err(|e| file_error(&svg, e))?;
    write(
        &out.join(INDEX_HTML),
        &sweep_index_html(out, manifest, &stats, rows),
    )?;
    Ok(stats)
}

/// Reads a sweep directory's `sweep.json`.
pub fn read_manifest(dir: &Path) -> Result<Manifest, SweepError> {
    let path = dir.join(SWEEP_JSON);
    let text = routersim_config::input::read_text_file(&path).map_err(|e| {
        file_error(
            &path,
            format!("cannot read it ({e}); is this a `routersim sweep` output directory?"),
        )
    })?;
    serde_json::from_str(&text).map_err(|e| file_error(&path, e))
}

/// Reads a sweep directory's `runs.csv` against its manifest: every row must be one of the
/// sweep's jobs (and the shard's, for a shard), once.
pub fn read_runs(dir: &Path, manifest: &Manifest) -> Result<Vec<RunRow>, SweepError> {
    let path = dir.join(RUNS_CSV);
    let mut reader = csv::Reader::from_path(&path).map_err(|e| file_error(&path, e))?;
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| file_error(&path, e))?
        .iter()
        .map(String::from)
        .collect();
    let expected = runs_header(manifest);
    if header != expected {
        return Err(file_error(
            &path,
            format!(
                "the header does not match sweep.json: expected {}, found {}",
                expected.join(","),
                header.join(",")
            ),
        ));
    }
    let keys = manifest.keys.len();
    let value_index: Vec<HashMap<&str, usize>> = manifest
        .keys
        .iter()
        .map(|k| {
            k.values
                .iter()
                .enumerate()
                .map(|(i, v)| (v.as_str(), i))
                .collect()
        })
        .collect();
    let strides: Vec<usize> = (0..keys)
        .map(|k| {
            manifest.keys[k + 1..]
                .iter()
                .map(|k| k.values.len())
                .product()
        })
        .collect();
    let mut seen = std::collections::HashSet::new();
    let mut rows = Vec::new();
    for (line, record) in reader.records().enumerate() {
        let line = line + 2;
        let record = record.map_err(|e| file_error(&path, e))?;
        let bad = |why: String| file_error(&path, format!("line {line}: {why}"));
        let mut combo = 0;
        for k in 0..keys {
            let text = &record[k];
            let v = value_index[k].get(text).ok_or_else(|| {
                bad(format!(
                    "{}={text} is not one of the sweep's values",
                    manifest.keys[k].path
                ))
            })?;
            combo += v * strides[k];
        }
        let seed: u64 = record[keys]
            .parse()
            .map_err(|_| bad(format!("seed {:?} is not a number", &record[keys])))?;
        let seed_index = manifest
            .seeds
            .iter()
            .position(|&s| s == seed)
            .ok_or_else(|| bad(format!("seed {seed} is not one of the sweep's seeds")))?;
        let metrics = manifest
            .columns()
            .enumerate()
            .map(|(m, name)| {
                let text = &record[keys + 1 + m];
                text.parse::<f64>()
                    .map_err(|_| bad(format!("{name} {text:?} is not a number")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let job = combo * manifest.seeds.len() + seed_index;
        if let Some(shard) = manifest.shard
            && !shard.owns(job)
        {
            return Err(bad(format!("this run is not shard {shard}'s")));
        }
        if !seen.insert(job) {
            return Err(bad("this run is listed twice".into()));
        }
        rows.push(RunRow {
            combo,
            seed_index,
            seed,
            metrics,
        });
    }
    rows.sort_by_key(|r| (r.combo, r.seed_index));
    Ok(rows)
}
