//! `routersim diff A B`: what a config change did to a run.
//!
//! Two report directories (typically the same incident and seed under two configs) are
//! compared in two ways:
//!
//! - the summaries ([`compare_summaries`]): each metric of `summary.json` side by side, with
//!   its absolute and relative change;
//! - the attempts ([`first_difference`]): each request's attempt sequence (the
//!   `deployment_id:outcome` of its rows in `attempts.csv`, in `attempt` order), and the first
//!   request, by id, whose sequence differs, with both sequences.
//!
//! `attempts.csv` can be large, so it is read streaming, twice. The first pass folds each
//! request's rows into a 64-bit fingerprint (an order-independent sum of a hash of each
//! `(attempt, deployment_id, outcome)`), kept in an ordered map keyed by request id: memory
//! grows with the requests the file holds (a few tens of bytes each, whatever the number of
//! attempts), never with a number read from it, so a `request_id` of 2⁶⁴−1 is just another
//! key. The lowest id whose fingerprints differ is the first differing request; a second pass
//! collects only that request's rows to print them. A request with no rows has the empty
//! sequence. (Two different sequences with equal fingerprints would go unnoticed with
//! probability about 2⁻⁶⁴.)
//!
//! Across sources — a simulated report (`run`) and a live one (`drive`, marked
//! `"source": "live"` in `summary.json`; a summary without `source` is `sim`) — request ids
//! need not name the same request, so requests are joined first ([`joined_difference`]): by
//! id where both reports have it, then the rest by arrival time within
//! [`ARRIVAL_TOLERANCE_US`] (`arrival_ms` of `requests.csv`), and the first joined request, in
//! A's arrival order, whose attempt sequence (deployment ids in order and outcomes) differs is
//! shown, with both ids and arrivals. Memory grows with the requests, as above.
//!
//! Each report's rates are checked against its own `requests.csv` ([`rate_disagreements`]):
//! `retry_rate` and `fallback_rate` are the shares of requests with at least one retry / hop,
//! `retries` and `fallbacks` their sums, in a simulated and a live report alike, so a diff
//! compares like with like; a report whose summary says otherwise (one written before the
//! definitions were one) is named, metric by metric.
//!
//! Only complete reports are compared: both folders must hold the completion marker
//! ([`COMPLETE`](routersim_sim::report_dir::COMPLETE)), which a run writes last. Without
//! `attempts.csv` (a report written with `--trace none`) only the summaries are compared
//! ([`Attempts::Missing`]).

use std::collections::BTreeMap;

use std::path::{Path, PathBuf};

use routersim_report::Summary;
use routersim_report::record::{ATTEMPTS_CSV, REQUESTS_CSV};

use routersim_sim::report_dir::{ReportDirError, require_complete};

pub use crate::rate_check::{RateDisagreement, rate_disagreements};

/// The summary file of a report.
pub const SUMMARY_JSON: &str = "summary.json";

/// Why two reports cannot be compared.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// A file is missing or unreadable.
    #[error("{}: {message}", .path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A report folder is not complete.
    #[error("{0}")]
    Incomplete(#[from] ReportDirError),
}

fn unreadable(path: &Path, message: impl ToString) -> DiffError {
    DiffError::Unreadable {
        path: path.to_path_buf(),
        message: message.to_string(),
    }
}

/// Reads `dir/summary.json`.
pub fn read_summary(dir: &Path) -> Result<Summary, DiffError> {
    let path = dir.join(SUMMARY_JSON);
    let text = routersim_config::input::read_text_file(&path).map_err(|e| {
        unreadable(
            &path,
            format!("cannot read it ({e}); is this a routersim report directory?"),
        )
    })?;
    serde_json::from_str(&text).map_err(|e| unreadable(&path, format!("not a summary: {e}")))
}

/// A report's `source` in `summary.json`: `sim` (also when absent) or `live`.
pub fn read_source(dir: &Path) -> Result<String, DiffError> {
    let path = dir.join(SUMMARY_JSON);
    let text = routersim_config::input::read_text_file(&path)
        .map_err(|e| unreadable(&path, format!("cannot read it ({e})")))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| unreadable(&path, format!("not JSON: {e}")))?;
    Ok(value
        .get("source")
        .and_then(serde_json::Value::as_str)
        .unwrap_or(SOURCE_SIM)
        .to_string())
}

/// The `source` of a simulated report (and of a summary without one).
pub const SOURCE_SIM: &str = "sim";

/// Two requests of reports from different sources are the same request when their arrivals
/// are this close (µs), unless their ids already joined them.
pub const ARRIVAL_TOLERANCE_US: u64 = 1_000;

/// One metric in both reports.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MetricChange {
    /// The metric's name ([`Summary::metric`]).
    pub name: String,
    /// In report A.
    pub a: f64,
    /// In report B.
    pub b: f64,
}

impl MetricChange {
    /// `b − a`.
    pub fn change(&self) -> f64 {
        self.b - self.a
    }

    /// `(b − a) / |a|`; `None` when `a` is 0.
    pub fn relative(&self) -> Option<f64> {
        (self.a != 0.0).then(|| (self.b - self.a) / self.a.abs())
    }
}

/// The summary metrics a diff shows, in order (then `failed.<kind>`, `cooldowns.<id>` and
/// `cooled_ms.<id>` for every kind and deployment either report has, and the stream metrics
/// when either report streamed).
pub const DIFF_METRICS: &[&str] = &[
    "requests",
    "ok",
    "failed",
    "failed_rate",
    "fallback_rate",
    "retry_rate",
    "retries",
    "fallbacks",
    "attempts",
    "attempts_per_request_mean",
    "attempts_max",
    "p50_latency_ms",
    "p90_latency_ms",
    "p99_latency_ms",
    "max_latency_ms",
    "mean_latency_ms",
    "cooldowns",
    "cooled_ms_total",
    "all_cooled",
    "half_open",
    "recovered",
    "duration_ms",
];

const STREAM_METRICS: &[&str] = &[
    "streamed",
    "continuation_rate",
    "p50_ttft_ms",
    "p99_ttft_ms",
    "tokens_delivered",
    "tokens_billed",
    "stream_breaks",
];

/// Every metric of [`DIFF_METRICS`] (and the per-kind, per-deployment and stream ones) in both
/// summaries.
pub fn compare_summaries(a: &Summary, b: &Summary) -> Vec<MetricChange> {
    let mut names: Vec<String> = DIFF_METRICS.iter().map(|m| m.to_string()).collect();
    let mut kinds: Vec<&String> = a.failed_by_kind.keys().collect();
    kinds.extend(b.failed_by_kind.keys());
    kinds.sort();
    kinds.dedup();
    names.extend(kinds.iter().map(|k| format!("failed.{k}")));
    let mut ids: Vec<&String> = a.cooldowns.by_deployment.keys().collect();
    ids.extend(b.cooldowns.by_deployment.keys());
    ids.sort();
    ids.dedup();
    names.extend(ids.iter().map(|id| format!("cooldowns.{id}")));
    names.extend(ids.iter().map(|id| format!("cooled_ms.{id}")));
    if a.streams.requests > 0 || b.streams.requests > 0 {
        names.extend(STREAM_METRICS.iter().map(|m| m.to_string()));
    }
    names
        .into_iter()
        .filter_map(|name| {
            // A failure kind this version does not know reads as 0 rather than vanishing.
            let value = |s: &Summary| {
                s.metric(&name).or_else(|| {
                    name.strip_prefix("failed.")
                        .map(|k| s.failed_by_kind.get(k).copied().unwrap_or(0) as f64)
                })
            };
            Some(MetricChange {
                a: value(a)?,
                b: value(b)?,
                name,
            })
        })
        .collect()
}

/// The first request whose attempts differ.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FirstDifference {
    /// Its id.
    pub request_id: u64,
    /// Its attempts in A (`deployment_id:outcome`, in attempt order; empty if none).
    pub a: Vec<String>,
    /// Its attempts in B.
    pub b: Vec<String>,
}

/// The attempt comparison (as JSON: `{"status": "compared" | "joined" | "missing", …}`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Attempts {
    /// Both reports have `attempts.csv`.
    Compared {
        /// Requests with at least one attempt in A.
        requests_a: u64,
        /// In B.
        requests_b: u64,
        /// The first request (lowest id) whose sequence differs; `None` if none does.
        first: Option<FirstDifference>,
    },
    /// Reports from different sources: requests joined by id, then by arrival.
    Joined {
        /// Requests in A (`requests.csv` rows).
        requests_a: u64,
        /// In B.
        requests_b: u64,
        /// Pairs joined by their id.
        by_id: u64,
        /// Pairs joined by arrival time.
        by_arrival: u64,
        /// The first joined request (in A's arrival order) whose sequence differs.
        first: Option<JoinedDifference>,
    },
    /// A report has no `attempts.csv` (written with `--trace none`): only the summaries were
    /// compared.
    Missing {
        /// The reports without it.
        reports: Vec<PathBuf>,
    },
}

/// The first joined request whose attempts differ.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct JoinedDifference {
    /// Its id in A.
    pub request_id_a: u64,
    /// Its id in B.
    pub request_id_b: u64,
    /// Its arrival in A, µs since the run start.
    pub arrival_us_a: u64,
    /// In B.
    pub arrival_us_b: u64,
    /// Its attempts in A (`deployment_id:outcome`, in attempt order).
    pub a: Vec<String>,
    /// In B.
    pub b: Vec<String>,
}

/// The whole comparison.
#[derive(Clone, Debug)]
pub struct ReportDiff {
    /// A's summary.
    pub a: Summary,
    /// B's summary.
    pub b: Summary,
    /// The metrics side by side.
    pub metrics: Vec<MetricChange>,
    /// The attempts.
    pub attempts: Attempts,
    /// A's and B's `source` (`sim`, `live`).
    pub sources: (String, String),
    /// Rates a report's `summary.json` states differently from its own `requests.csv`.
    pub disagreements: Vec<RateDisagreement>,
}

/// Compares two report directories.
pub fn diff_reports(a: &Path, b: &Path) -> Result<ReportDiff, DiffError> {
    let summary_a = read_summary(a)?;
    let summary_b = read_summary(b)?;
    require_complete(a)?;
    require_complete(b)?;
    let sources = (read_source(a)?, read_source(b)?);
    let metrics = compare_summaries(&summary_a, &summary_b);
    let mut disagreements = rate_disagreements("A", a, &summary_a)?;
    disagreements.extend(rate_disagreements("B", b, &summary_b)?);
    let across = sources.0 != sources.1 || sources.0 != SOURCE_SIM;
    let needed: &[&str] = if across {
        &[ATTEMPTS_CSV, REQUESTS_CSV]
    } else {
        &[ATTEMPTS_CSV]
    };
    let missing: Vec<PathBuf> = [a, b]
        .into_iter()
        .filter(|dir| needed.iter().any(|f| !dir.join(f).is_file()))
        .map(Path::to_path_buf)
        .collect();
    let attempts = if !missing.is_empty() {
        Attempts::Missing { reports: missing }
    } else if across {
        joined_difference(a, b)?
    } else {
        first_difference(&a.join(ATTEMPTS_CSV), &b.join(ATTEMPTS_CSV))?
    };
    Ok(ReportDiff {
        a: summary_a,
        b: summary_b,
        metrics,
        attempts,
        sources,
        disagreements,
    })
}

/// The columns of `attempts.csv` a diff reads.
struct Columns {
    request_id: usize,
    attempt: usize,
    deployment_id: usize,
    outcome: usize,
}

fn open(path: &Path) -> Result<(csv::Reader<std::fs::File>, Columns), DiffError> {
    let mut reader = csv::Reader::from_path(path).map_err(|e| unreadable(path, e))?;
    let header = reader.byte_headers().map_err(|e| unreadable(path, e))?;
    let column = |name: &str| {
        header
            .iter()
            .position(|h| h == name.as_bytes())
            .ok_or_else(|| unreadable(path, format!("no `{name}` column")))
    };
    let columns = Columns {
        request_id: column("request_id")?,
        attempt: column("attempt")?,
        deployment_id: column("deployment_id")?,
        outcome: column("outcome")?,
    };
    Ok((reader, columns))
}

/// Calls `row(request_id, attempt, deployment_id, outcome)` for every row.
fn for_each_row(path: &Path, mut row: impl FnMut(u64, u64, &[u8], &[u8])) -> Result<(), DiffError> {
    let (mut reader, c) = open(path)?;
    let mut record = csv::ByteRecord::new();
    let mut line = 1u64;
    while reader
        .read_byte_record(&mut record)
        .map_err(|e| unreadable(path, e))?
    {
        line += 1;
        let number = |i: usize, what: &str| {
            std::str::from_utf8(&record[i])
                .ok()
                .and_then(|s| s.parse::<u64>().ok())
                .ok_or_else(|| unreadable(path, format!("line {line}: {what} is not a number")))
        };
        let id = number(c.request_id, "request_id")?;
        let attempt = number(c.attempt, "attempt")?;
        row(id, attempt, &record[c.deployment_id], &record[c.outcome]);
    }
    Ok(())
}

/// FNV-1a, 64 bits: a fixed hash, the same on every machine.
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // A separator, so ("ab", "c") and ("a", "bc") differ.
        h ^= 0xff;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// SplitMix64's finaliser.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Per-request fingerprints of a file, by request id (only ids that have rows).
fn fingerprints(path: &Path) -> Result<BTreeMap<u64, u64>, DiffError> {
    let mut prints: BTreeMap<u64, u64> = BTreeMap::new();
    for_each_row(path, |id, attempt, deployment, outcome| {
        let h = mix(fnv1a(&[deployment, outcome]) ^ mix(attempt.wrapping_add(1)));
        let print = prints.entry(id).or_insert(0);
        *print = print.wrapping_add(h | 1);
    })?;
    Ok(prints)
}

/// The lowest id whose fingerprint differs (or that only one side has rows for).
fn lowest_difference(a: &BTreeMap<u64, u64>, b: &BTreeMap<u64, u64>) -> Option<u64> {
    let (mut a, mut b) = (a.iter().peekable(), b.iter().peekable());
    loop {
        match (a.peek().copied(), b.peek().copied()) {
            (None, None) => return None,
            (Some((&id, _)), None) | (None, Some((&id, _))) => return Some(id),
            (Some((&ia, &pa)), Some((&ib, &pb))) => {
                if ia != ib {
                    return Some(ia.min(ib));
                }
                if pa != pb {
                    return Some(ia);
                }
                a.next();
                b.next();
            }
        }
    }
}

/// One request's attempts, `deployment_id:outcome` in attempt order.
fn sequence(path: &Path, request_id: u64) -> Result<Vec<String>, DiffError> {
    let mut rows: Vec<(u64, String)> = Vec::new();
    for_each_row(path, |id, attempt, deployment, outcome| {
        if id == request_id {
            rows.push((
                attempt,
                format!(
                    "{}:{}",
                    String::from_utf8_lossy(deployment),
                    String::from_utf8_lossy(outcome)
                ),
            ));
        }
    })?;
    rows.sort_by_key(|(attempt, _)| *attempt);
    Ok(rows.into_iter().map(|(_, s)| s).collect())
}

/// Compares two `attempts.csv` files request by request (see the module docs).
pub fn first_difference(a: &Path, b: &Path) -> Result<Attempts, DiffError> {
    let prints_a = fingerprints(a)?;
    let prints_b = fingerprints(b)?;
    let first = match lowest_difference(&prints_a, &prints_b) {
        None => None,
        Some(id) => Some(FirstDifference {
            request_id: id,
            a: sequence(a, id)?,
            b: sequence(b, id)?,
        }),
    };
    Ok(Attempts::Compared {
        requests_a: prints_a.len() as u64,
        requests_b: prints_b.len() as u64,
        first,
    })
}

/// Each request of `requests.csv`: id → arrival (µs since the run start).
fn arrivals(path: &Path) -> Result<BTreeMap<u64, u64>, DiffError> {
    let mut reader = csv::Reader::from_path(path).map_err(|e| unreadable(path, e))?;
    let header = reader.byte_headers().map_err(|e| unreadable(path, e))?;
    let column = |name: &str| {
        header
            .iter()
            .position(|h| h == name.as_bytes())
            .ok_or_else(|| unreadable(path, format!("no `{name}` column")))
    };
    let (id_col, arrival_col) = (column("request_id")?, column("arrival_ms")?);
    let mut out = BTreeMap::new();
    let mut record = csv::ByteRecord::new();
    let mut line = 1u64;
    while reader
        .read_byte_record(&mut record)
        .map_err(|e| unreadable(path, e))?
    {
        line += 1;
        let text = |i: usize| std::str::from_utf8(&record[i]).unwrap_or("");
        // A request without an id cannot be joined to its attempts.
        let Ok(id) = text(id_col).parse::<u64>() else {
            continue;
        };
        let arrival: f64 = text(arrival_col)
            .parse()
            .map_err(|_| unreadable(path, format!("line {line}: arrival_ms is not a number")))?;
        if !(arrival.is_finite() && arrival >= 0.0) {
            return Err(unreadable(
                path,
                format!("line {line}: arrival_ms is not a time"),
            ));
        }
        out.insert(id, (arrival * 1000.0).round() as u64);
    }
    Ok(out)
}

/// Joins A's and B's requests: `(A id, B id)` pairs, and how many joined by id.
fn join(a: &BTreeMap<u64, u64>, b: &BTreeMap<u64, u64>) -> (Vec<(u64, u64)>, u64) {
    let mut pairs: Vec<(u64, u64)> = a
        .keys()
        .filter(|id| b.contains_key(id))
        .map(|&id| (id, id))
        .collect();
    let by_id = pairs.len() as u64;
    let by_time = |m: &BTreeMap<u64, u64>, other: &BTreeMap<u64, u64>| {
        let mut rest: Vec<(u64, u64)> = m
            .iter()
            .filter(|(id, _)| !other.contains_key(id))
            .map(|(&id, &at)| (at, id))
            .collect();
        rest.sort_unstable();
        rest
    };
    let (rest_a, rest_b) = (by_time(a, b), by_time(b, a));
    // Two pointers over both arrival orders: the earliest unmatched arrivals pair first.
    let (mut i, mut j) = (0, 0);
    while i < rest_a.len() && j < rest_b.len() {
        let ((at_a, id_a), (at_b, id_b)) = (rest_a[i], rest_b[j]);
        if at_a.abs_diff(at_b) <= ARRIVAL_TOLERANCE_US {
            pairs.push((id_a, id_b));
            i += 1;
            j += 1;
        } else if at_a < at_b {
            i += 1;
        } else {
            j += 1;
        }
    }
    (pairs, by_id)
}

/// Compares reports from different sources request by request (see the module docs).
pub fn joined_difference(a: &Path, b: &Path) -> Result<Attempts, DiffError> {
    let (arrivals_a, arrivals_b) = (
        arrivals(&a.join(REQUESTS_CSV))?,
        arrivals(&b.join(REQUESTS_CSV))?,
    );
    let (attempts_a, attempts_b) = (a.join(ATTEMPTS_CSV), b.join(ATTEMPTS_CSV));
    let (prints_a, prints_b) = (fingerprints(&attempts_a)?, fingerprints(&attempts_b)?);
    let (mut pairs, by_id) = join(&arrivals_a, &arrivals_b);
    let by_arrival = pairs.len() as u64 - by_id;
    let arrival_a = |id: &u64| arrivals_a.get(id).copied().unwrap_or(0);
    pairs.sort_by_key(|(id_a, _)| (arrival_a(id_a), *id_a));
    let print = |m: &BTreeMap<u64, u64>, id: u64| m.get(&id).copied().unwrap_or(0);
    let first = pairs
        .iter()
        .find(|&&(id_a, id_b)| print(&prints_a, id_a) != print(&prints_b, id_b));
    let first = match first {
        None => None,
        Some(&(id_a, id_b)) => Some(JoinedDifference {
            request_id_a: id_a,
            request_id_b: id_b,
            arrival_us_a: arrival_a(&id_a),
            arrival_us_b: arrivals_b.get(&id_b).copied().unwrap_or(0),
            a: sequence(&attempts_a, id_a)?,
            b: sequence(&attempts_b, id_b)?,
        }),
    };
    Ok(Attempts::Joined {
        requests_a: arrivals_a.len() as u64,
        requests_b: arrivals_b.len() as u64,
        by_id,
        by_arrival,
        first,
    })
}

#[cfg(test)]
mod tests;
