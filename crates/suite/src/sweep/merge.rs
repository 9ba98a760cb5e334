//! `routersim merge`: joining complete shard folders into one sweep folder, after checking
//! that the shards were made from the same scenario contents and settings.
//!
//! Separate because it only reads finished folders and never runs a simulation.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::effect::no_effect_lines;
use super::error::SweepError;
use super::files::{read_manifest, read_runs, write_outputs};
use super::folder::{is_shard_folder, run_dir};
use super::manifest::{Manifest, RunRow};
use super::stats::ComboStats;
use routersim_sim::report_dir::{ReportDir, require_complete};

/// What a merge joined.
#[derive(Clone, Debug)]
pub struct Merged {
    /// The whole sweep's manifest.
    pub manifest: Manifest,
    /// Every run, sorted.
    pub rows: Vec<RunRow>,
    /// Per-combination statistics.
    pub stats: Vec<ComboStats>,
    /// What writing the folder had to tidy up first, for the user.
    pub notes: Vec<String>,
}

/// `routersim merge`: joins the shards' `runs.csv` (checking they are shards of one sweep, all
/// there, each once) and writes the whole sweep's files into `out`, byte-identical to an
/// unsharded sweep (`runs/` is not copied: each shard keeps its own).
pub fn merge(shard_dirs: &[PathBuf], out: &Path) -> Result<Merged, SweepError> {
    let shards = read_shards(shard_dirs, out)?;
    let Some((_, first)) = shards.first() else {
        return Err(SweepError::Usage("merge: no shard directory given".into()));
    };
    let mut whole = first.clone();
    whole.shard = None;
    let (count, owners) = shard_owners(&shards)?;
    let mut rows = Vec::new();
    for (dir, m) in &shards {
        rows.extend(read_runs(dir, m)?);
    }
    rows.sort_by_key(|r| (r.combo, r.seed_index));
    let shard_of = |job: usize| owners[&(job % count + 1)].as_path();
    let seeds = whole.seeds.len();
    whole.no_effect = no_effect_lines(&whole, &|job| {
        run_dir(shard_of(job), job / seeds, whole.seeds[job % seeds])
    });
    require_every_run(&whole, &rows)?;
    let staged = ReportDir::begin_keeping(out, is_shard_folder)?;
    let stats =
        write_outputs(staged.path(), &whole, &rows).map_err(|source| SweepError::NotWritten {
            note: staged.untouched(),
            source: Box::new(source),
        })?;
    let notes = staged.commit()?;
    Ok(Merged {
        manifest: whole,
        rows,
        stats,
        notes,
    })
}

/// Each shard folder with its manifest, in the order given: every one complete, none the
/// merge's own `--out`.
fn read_shards<'a>(
    shard_dirs: &'a [PathBuf],
    out: &Path,
) -> Result<Vec<(&'a PathBuf, Manifest)>, SweepError> {
    let mut shards = Vec::new();
    for dir in shard_dirs {
        let manifest = read_manifest(dir)?;
        require_complete(dir)?;
        if same_folder(dir, out) {
            return Err(SweepError::Usage(format!(
                "merge: --out {} is one of the shards; the merged sweep replaces its folder as a \
                 whole, so give another --out",
                out.display()
            )));
        }
        shards.push((dir, manifest));
    }
    Ok(shards)
}

/// The shard count and which folder holds each shard `K` (from 1): the shards must be of one
/// sweep, split the same way, each once, none missing.
fn shard_owners<'a>(
    shards: &[(&'a PathBuf, Manifest)],
) -> Result<(usize, HashMap<usize, &'a PathBuf>), SweepError> {
    let Some((first_dir, first)) = shards.first() else {
        return Ok((1, HashMap::new()));
    };
    let mut owners: HashMap<usize, &PathBuf> = HashMap::new();
    let count = first.shard.map_or(1, |s| s.count);
    for (dir, m) in shards {
        same_sweep(first_dir, first, dir, m)?;
        let (index, n) = m.shard.map_or((1, 1), |s| (s.index, s.count));
        if n != count {
            return Err(SweepError::Merge(format!(
                "{} is a shard of {count} and {} of {n}: shards must split the sweep the same way",
                first_dir.display(),
                dir.display()
            )));
        }
        if let Some(other) = owners.insert(index, dir) {
            return Err(SweepError::Merge(format!(
                "{} and {} are both shard {index}/{count}",
                other.display(),
                dir.display()
            )));
        }
    }
    let missing: Vec<String> = (1..=count)
        .filter(|k| !owners.contains_key(k))
        .map(|k| format!("{k}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(SweepError::Merge(format!(
            "missing shard(s) {}: give every shard's directory",
            missing.join(", ")
        )));
    }
    Ok((count, owners))
}

/// Whether shard `m` (in `dir`) is of the same sweep as the first shard: the same scenario and
/// contents, keys, seeds, columns and routersim version.
fn same_sweep(
    first_dir: &Path,
    first: &Manifest,
    dir: &Path,
    m: &Manifest,
) -> Result<(), SweepError> {
    let differs = |what: &str, a: String, b: String| {
        Err(SweepError::Merge(format!(
            "{} and {} are not shards of the same sweep: {what} {a} vs {b}",
            first_dir.display(),
            dir.display()
        )))
    };
    if m.scenario != first.scenario {
        return differs("scenario", first.scenario.clone(), m.scenario.clone());
    }
    if m.scenario_hash != first.scenario_hash {
        return differs(
            "scenario contents",
            format!("{} ({})", first.scenario_hash, first.scenario_file),
            format!("{} ({})", m.scenario_hash, m.scenario_file),
        );
    }
    if m.router_file_hash != first.router_file_hash {
        let show = |h: &Option<String>| h.clone().unwrap_or_else(|| "none (inline)".into());
        return differs(
            "router file contents",
            show(&first.router_file_hash),
            show(&m.router_file_hash),
        );
    }
    if m.keys != first.keys {
        let show = |m: &Manifest| {
            m.keys
                .iter()
                .map(|k| format!("{}={}", k.path, k.values.join(",")))
                .collect::<Vec<_>>()
                .join(" ")
        };
        return differs("keys", show(first), show(m));
    }
    if m.seeds != first.seeds {
        return differs(
            "seeds",
            format!("{:?}", first.seeds),
            format!("{:?}", m.seeds),
        );
    }
    if m.metrics != first.metrics
        || m.counts != first.counts
        || m.routersim_version != first.routersim_version
    {
        return differs(
            "routersim version",
            first.routersim_version.clone(),
            m.routersim_version.clone(),
        );
    }
    Ok(())
}

/// The joined rows must be every job of the whole sweep; the error names the first missing.
fn require_every_run(whole: &Manifest, rows: &[RunRow]) -> Result<(), SweepError> {
    if rows.len() == whole.job_count() {
        return Ok(());
    }
    let have: std::collections::HashSet<usize> = rows
        .iter()
        .map(|r| r.combo * whole.seeds.len() + r.seed_index)
        .collect();
    let combos = whole.combinations();
    let first_missing = (0..whole.job_count())
        .find(|j| !have.contains(j))
        .map(|j| {
            format!(
                "{}, seed {}",
                whole.describe(&combos[j / whole.seeds.len()]),
                whole.seeds[j % whole.seeds.len()]
            )
        })
        .unwrap_or_default();
    Err(SweepError::Merge(format!(
        "the shards hold {} of the sweep's {} runs (missing: {first_missing}); was a shard \
         interrupted?",
        rows.len(),
        whole.job_count()
    )))
}

/// Whether two paths name the same existing folder.
fn same_folder(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
