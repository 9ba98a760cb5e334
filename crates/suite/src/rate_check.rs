//! One definition of every rate, checked: `retry_rate` and `fallback_rate` are the shares of
//! requests with at least one retry / fallback hop, `retries` and `fallbacks` their sums
//! (`requests.csv`'s columns), in a simulated and a live report alike (docs/scenarios.md,
//! "`expect` metrics"). [`rate_disagreements`] names where a report's `summary.json` says
//! otherwise than its own `requests.csv`, so `diff` never compares a rate computed two ways
//! without saying so.
//!
//! Apart from `diff` itself: it reads one report, and `diff` asks it of both.

use std::path::Path;

use routersim_report::Summary;
use routersim_report::record::REQUESTS_CSV;

use crate::diff::DiffError;

fn unreadable(path: &Path, message: impl ToString) -> DiffError {
    DiffError::Unreadable {
        path: path.to_path_buf(),
        message: message.to_string(),
    }
}

/// A rate (or its count) that a report's `summary.json` and its `requests.csv` give two ways.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RateDisagreement {
    /// `A` or `B`.
    pub report: &'static str,
    /// `retry_rate`, `fallback_rate`, `retries`, `fallbacks` or `requests`.
    pub metric: &'static str,
    /// What `summary.json` says.
    pub summary: f64,
    /// What `requests.csv` gives by the one definition.
    pub requests_csv: f64,
}

/// `part ÷ whole` rounded to 6 decimals as `summary.json` writes rates (0 when `whole` is 0).
fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (part as f64 / whole as f64 * 1e6).round() / 1e6
    }
}

/// Where `summary`'s request counts and rates differ from `dir/requests.csv` by the one
/// definition (see the module doc); empty when they agree or the file is absent.
pub fn rate_disagreements(
    label: &'static str,
    dir: &Path,
    summary: &Summary,
) -> Result<Vec<RateDisagreement>, DiffError> {
    let path = dir.join(REQUESTS_CSV);
    if !path.is_file() {
        return Ok(Vec::new());
    }
    let mut reader = csv::Reader::from_path(&path).map_err(|e| unreadable(&path, e))?;
    let header = reader.byte_headers().map_err(|e| unreadable(&path, e))?;
    let column = |name: &str| header.iter().position(|h| h == name.as_bytes());
    let (Some(retries_col), Some(fallbacks_col)) = (column("retries"), column("fallbacks")) else {
        return Ok(Vec::new());
    };
    let (mut n, mut with_retry, mut with_fallback, mut retries, mut fallbacks) = (0, 0, 0, 0, 0);
    let mut record = csv::ByteRecord::new();
    while reader
        .read_byte_record(&mut record)
        .map_err(|e| unreadable(&path, e))?
    {
        let number = |i: usize| {
            std::str::from_utf8(&record[i])
                .ok()
                .and_then(|s| s.parse::<u64>().ok())
                .unwrap_or(0)
        };
        let (r, f) = (number(retries_col), number(fallbacks_col));
        n += 1;
        with_retry += u64::from(r > 0);
        with_fallback += u64::from(f > 0);
        retries += r;
        fallbacks += f;
    }
    let pairs = [
        ("requests", summary.requests as f64, n as f64),
        ("retry_rate", summary.retry_rate, share(with_retry, n)),
        (
            "fallback_rate",
            summary.fallback_rate,
            share(with_fallback, n),
        ),
        ("retries", summary.retries as f64, retries as f64),
        ("fallbacks", summary.fallbacks as f64, fallbacks as f64),
    ];
    Ok(pairs
        .into_iter()
        .filter(|(_, said, counted)| (said - counted).abs() > 1e-9)
        .map(|(metric, said, counted)| RateDisagreement {
            report: label,
            metric,
            summary: said,
            requests_csv: counted,
        })
        .collect())
}
