//! A synthetic log for `routersim bench --import N`: N rows of a steady incident, written as a
//! router writes them (each row when its call ends), so the benchmark reads what a real log
//! looks like and memory can be watched as N grows.
//!
//! The incident: 1,000 calls a second over two groups of two deployments; `d1` answers 429
//! (Retry-After 2 s) from 30 % to 50 % of the log, and each of those requests is retried on
//! `d2`. Latencies are drawn from a fixed-seed generator (40–400 ms), so the bytes are the
//! same on every run.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::format::Format;

/// One row of the synthetic log.
struct Row {
    start: f64,
    latency: f64,
    group: &'static str,
    deployment: &'static str,
    status: u16,
    request: u64,
}

/// A row waiting for its end.
struct Pending(f64, u64, Row);

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        self.0.total_cmp(&other.0).is_eq() && self.1 == other.1
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Pending {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

fn write_row(out: &mut impl Write, format: Format, row: &Row) -> io::Result<()> {
    let t = 1_800_000_000.0 + row.start;
    match format {
        Format::Csv => writeln!(
            out,
            "{t:.6},{},{},{},{:.1},{},req-{},false,,20",
            row.group,
            row.deployment,
            row.status,
            row.latency * 1000.0,
            if row.status == 429 { "2" } else { "" },
            row.request
        ),
        _ => {
            let (status, error) = if row.status == 200 {
                ("success", String::new())
            } else {
                (
                    "failure",
                    r#","error_information":{"error_code":"429","error_class":"RateLimitError","error_message":"rate limited"},"hidden_params":{"additional_headers":{"retry-after":"2"}}"#
                        .to_string(),
                )
            };
            writeln!(
                out,
                r#"{{"id":"chatcmpl-{r}","litellm_call_id":"call-{r}","trace_id":"trace-{r}","call_type":"acompletion","stream":false,"status":"{status}","startTime":{t:.6},"endTime":{end:.6},"completionStartTime":{end:.6},"model":"openai/{d}","model_group":"{g}","model_id":"{d}","api_base":"https://api.example.com/v1","prompt_tokens":500,"completion_tokens":20,"total_tokens":520,"request_tags":["batch"],"metadata":{{"user_api_key_hash":"0123456789abcdef","user_api_key_user_id":"user-1"}},"messages":[{{"role":"user","content":"hello"}}],"model_parameters":{{"max_tokens":20}}{error}}}"#,
                r = row.request,
                end = t + row.latency,
                d = row.deployment,
                g = row.group,
            )
        }
    }
}

/// Writes `rows` rows of the synthetic incident to `path` in `format` (the plain CSV or
/// LiteLLM's standard logging payload, about 700 bytes a line).
pub fn write_synthetic_log(path: &Path, rows: u64, format: Format) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    if format == Format::Csv {
        writeln!(
            out,
            "timestamp,model_group,deployment,status,latency_ms,retry_after_s,request_id,stream,ttft_ms,output_tokens"
        )?;
    }
    let span = rows as f64 / 1000.0;
    let (storm_from, storm_to) = (0.3 * span, 0.5 * span);
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut draw = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1_u64 << 53) as f64
    };
    let mut pending: BinaryHeap<Reverse<Pending>> = BinaryHeap::new();
    let (mut written, mut seq, mut request) = (0_u64, 0_u64, 0_u64);
    while written + (pending.len() as u64) < rows {
        let start = request as f64 / 1000.0;
        let (group, pair) = if request % 2 == 0 {
            ("g1", ["d1", "d2"])
        } else {
            ("g2", ["d3", "d4"])
        };
        let deployment = pair[usize::from(draw() < 0.5)];
        let latency = 0.04 + 0.36 * draw() * draw();
        let storm = deployment == "d1" && (storm_from..storm_to).contains(&start);
        let mut push = |row: Row| {
            seq += 1;
            pending.push(Reverse(Pending(row.start + row.latency, seq, row)));
        };
        if storm {
            push(Row {
                start,
                latency: 0.02,
                group,
                deployment,
                status: 429,
                request,
            });
            push(Row {
                start: start + 0.03,
                latency,
                group,
                deployment: "d2",
                status: 200,
                request,
            });
        } else {
            push(Row {
                start,
                latency,
                group,
                deployment,
                status: 200,
                request,
            });
        }
        request += 1;
        while let Some(Reverse(top)) = pending.peek() {
            if top.0 > start || written >= rows {
                break;
            }
            let Some(Reverse(Pending(_, _, row))) = pending.pop() else {
                break;
            };
            write_row(&mut out, format, &row)?;
            written += 1;
        }
    }
    while let Some(Reverse(Pending(_, _, row))) = pending.pop() {
        if written >= rows {
            break;
        }
        write_row(&mut out, format, &row)?;
        written += 1;
    }
    out.flush()
}
