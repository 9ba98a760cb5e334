//! The imported traffic: one request per arrival the log shows (its model group, whether it
//! streamed, its tokens and tags), in arrival order. Written as a traffic file in the
//! simulator's format (`traffic_file:`, read as the run goes, so a long log replays in flat
//! memory); a short one is then written into the scenario itself as explicit `traffic:`
//! entries.
//!
//! A request's output tokens are what its answer had (a cut stream's intended length is its
//! `max_tokens`), its input tokens the prompt tokens the log reports; either is left to the
//! simulator's defaults when the log does not say.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use crate::call::{Outcome, Scope};
use crate::error::ImportError;
use crate::requests::Request;

/// The traffic file's name beside the scenario.
pub const TRAFFIC_CSV: &str = "traffic.csv";
/// Logs of at most this many requests get explicit `traffic:` entries.
pub const EXPLICIT_MAX: u64 = 1000;

/// One imported arrival.
#[derive(Clone, Debug, PartialEq)]
pub struct Arrival {
    /// Seconds since the log's start.
    pub at: f64,
    /// The model group asked for.
    pub model: String,
    /// Whether it streamed.
    pub stream: bool,
    /// Prompt tokens, when the log says.
    pub input_tokens: Option<u32>,
    /// Output tokens, when the log says.
    pub output_tokens: Option<u32>,
    /// Its tags.
    pub tags: Vec<String>,
}

impl Arrival {
    /// The arrival of `request`, `t0` being the log's start.
    pub fn of(request: &Request, t0: f64) -> Self {
        let first = &request.calls[0];
        let last = request.calls.last().unwrap_or(first);
        let answered = request
            .calls
            .iter()
            .rev()
            .find(|c| c.outcome == Outcome::Ok)
            .and_then(|c| c.output_tokens);
        let asked = request.calls.iter().find_map(|c| c.max_tokens);
        Self {
            at: (request.arrival - t0).max(0.0),
            model: first.requested_group().to_string(),
            stream: request.calls.iter().any(|c| c.stream == Some(true)),
            input_tokens: request
                .calls
                .iter()
                .rev()
                .find_map(|c| c.input_tokens.filter(|t| *t > 0)),
            output_tokens: answered
                .or(asked)
                .or_else(|| {
                    // A spend row of a failed request still says what it produced.
                    (last.scope == Scope::Request)
                        .then_some(last.output_tokens)
                        .flatten()
                })
                .filter(|t| *t > 0),
            tags: first.tags.iter().map(|t| t.to_string()).collect(),
        }
    }
}

/// Seconds as a scenario duration, to the microsecond (`8.161123s`, `12s`).
pub fn seconds(s: f64) -> String {
    let us = (s.max(0.0) * 1e6).round() as u64;
    let (whole, frac) = (us / 1_000_000, us % 1_000_000);
    if frac == 0 {
        format!("{whole}s")
    } else {
        let frac = format!("{frac:06}");
        format!("{whole}.{}s", frac.trim_end_matches('0'))
    }
}

/// Writes the traffic file a row at a time.
pub struct TrafficWriter {
    path: PathBuf,
    out: csv::Writer<BufWriter<File>>,
    /// Rows written.
    pub rows: u64,
}

impl TrafficWriter {
    /// Creates `dir/traffic.csv` with its header.
    pub fn create(dir: &Path) -> Result<Self, ImportError> {
        let path = dir.join(TRAFFIC_CSV);
        let file = File::create(&path).map_err(|e| ImportError::output(&path, e))?;
        let mut out = csv::Writer::from_writer(BufWriter::new(file));
        out.write_record([
            "at",
            "model",
            "stream",
            "input_tokens",
            "output_tokens",
            "tags",
        ])
        .map_err(|e| ImportError::output(&path, e))?;
        Ok(Self { path, out, rows: 0 })
    }

    /// Writes one arrival.
    pub fn write(&mut self, a: &Arrival) -> Result<(), ImportError> {
        let opt = |n: Option<u32>| n.map(|n| n.to_string()).unwrap_or_default();
        self.out
            .write_record([
                seconds(a.at),
                a.model.clone(),
                a.stream.to_string(),
                opt(a.input_tokens),
                opt(a.output_tokens),
                a.tags.join(";"),
            ])
            .map_err(|e| ImportError::output(&self.path, e))?;
        self.rows += 1;
        Ok(())
    }

    /// Flushes the file.
    pub fn finish(mut self) -> Result<PathBuf, ImportError> {
        self.out
            .flush()
            .map_err(|e| ImportError::output(&self.path, e))?;
        Ok(self.path)
    }
}

/// The traffic file's rows as explicit `traffic:` entries (YAML lines).
pub fn explicit_entries(path: &Path) -> Result<String, ImportError> {
    let mut reader = csv::Reader::from_path(path).map_err(|e| ImportError::output(path, e))?;
    let mut text = String::from("traffic:\n");
    for record in reader.records() {
        let r = record.map_err(|e| ImportError::output(path, e))?;
        let cell = |i: usize| r.get(i).unwrap_or("");
        let mut entry = format!("  - {{at: {}, model: {}", cell(0), yaml_string(cell(1)));
        if cell(2) == "true" {
            entry.push_str(", stream: true");
        }
        for (key, i) in [("input_tokens", 3), ("output_tokens", 4)] {
            if !cell(i).is_empty() {
                entry.push_str(&format!(", {key}: {}", cell(i)));
            }
        }
        if !cell(5).is_empty() {
            let tags: Vec<String> = cell(5).split(';').map(yaml_string).collect();
            entry.push_str(&format!(", metadata: {{tags: [{}]}}", tags.join(", ")));
        }
        entry.push_str("}\n");
        text.push_str(&entry);
    }
    Ok(text)
}

/// A string as a YAML flow scalar (quoted unless plainly safe).
pub fn yaml_string(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
        && !s.starts_with(['-', '.', '/'])
        && !matches!(
            s,
            "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n"
        )
        && s.parse::<f64>().is_err();
    if plain {
        s.to_string()
    } else {
        serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_names_are_written_so_the_loader_reads_them_back() {
        assert_eq!(seconds(8.161_123_4), "8.161123s");
        assert_eq!(seconds(12.0), "12s");
        assert_eq!(seconds(0.5), "0.5s");
        assert_eq!(yaml_string("gpt-4o"), "gpt-4o");
        assert_eq!(yaml_string("yes"), "\"yes\"");
        assert_eq!(yaml_string("a: b"), "\"a: b\"");
        assert_eq!(yaml_string("1.5"), "\"1.5\"");
    }
}
