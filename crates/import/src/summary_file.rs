//! `imported/import.json`: what the import read and what it assumed, for tools (the terminal
//! and the scenario's header say the same to people).

use std::path::Path;

use serde_json::json;

use crate::error::ImportError;
use crate::faults::FoundFault;
use crate::format::{Format, ReadSummary};
use crate::options::ImportOptions;
use crate::report::IMPORT_JSON;
use crate::scenario::{drawn_probabilities, rfc3339};

/// Writes `dir/import.json`.
pub fn write_import_json(
    dir: &Path,
    options: &ImportOptions,
    format: Format,
    read: &ReadSummary,
    faults: &[FoundFault],
    notes: &[String],
    t0: f64,
) -> Result<(), ImportError> {
    let windows: Vec<serde_json::Value> = faults
        .iter()
        .zip(drawn_probabilities(faults))
        .map(|(f, drawn)| {
            json!({
                "deployment": &*f.deployment,
                "kind": f.kind.name(),
                "from_s": round(f.from - t0),
                "to_s": f.to.map(|t| round(t - t0)),
                "healthy_at_s": f.healthy_at.map(|t| round(t - t0)),
                "rate": round(f.rate),
                "probability": round(drawn),
                "calls": f.calls,
                "failures": f.failures,
                "retry_after_s": f.retry_after,
                "after_tokens": f.after_tokens,
                "unobserved_s": round(f.unobserved),
                "background": f.background,
            })
        })
        .collect();
    let document = json!({
        "log": options.log.file_name().map(|f| f.to_string_lossy().to_string()),
        "format": format.name(),
        "rows": read.rows,
        "rows_kept": read.kept,
        "epoch": rfc3339(t0),
        "bucket_s": options.bucket.as_secs_f64(),
        "method": "per deployment and failure kind: optimal partition (PELT) of the Bernoulli failure series, penalty 1.5 ln N per segment; windows carried through buckets without calls, ended halfway between the last failure and the next observed success",
        "windows": windows,
        "assumptions": notes,
    });
    let path = dir.join(IMPORT_JSON);
    let mut text =
        serde_json::to_string_pretty(&document).map_err(|e| ImportError::output(&path, e))?;
    text.push('\n');
    std::fs::write(&path, text).map_err(|e| ImportError::output(&path, e))
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
