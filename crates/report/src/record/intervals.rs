//! Latency per virtual second: the `p50_ms,p90_ms,p99_ms` columns of `timeseries.csv` and the
//! interval histograms of `latency.hlog`.
//!
//! Why samples, forgotten at each second and interval: request ends arrive in virtual-time
//! order, so a second is complete as soon as a later one starts. Its percentiles go into the
//! timeseries row (three numbers) and an interval's histogram into `latency.hlog` (streamed),
//! both computed from the samples kept (see `quantiles` and `hlog`; no histogram is filled
//! and reset): memory is the busiest interval's sample count, whatever the run's length.
//!
//! `latency.hlog` is HdrHistogram's interval-log format (the format of Java's
//! `HistogramLogWriter`, read by `HistogramLogAnalyzer`, `HistogramLogProcessor` and the
//! `hdrhistogram` crate's `IntervalLogIterator`): one line per 10 virtual seconds
//! ([`HLOG_INTERVAL_SECS`]) in which at least one request ended (a quiet interval has no line),
//! its timestamp the interval's start in virtual seconds since the run start. Why 10 s and not
//! 1 s: each line is a deflate-compressed histogram, and compressing one every second was a
//! fifth of the one-hour bench run; the per-second percentiles come from the samples. `StartTime` and `BaseTime` are both 0 (the scenario's epoch,
//! not the wall clock), so the bytes depend only on the events. Values are microseconds of
//! end-to-end latency, as in `latency.hgrm`; each histogram is V2 + deflate encoded (the
//! encoding the Java reader expects).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::time::SystemTime;

use hdrhistogram::Histogram;
use hdrhistogram::serialization::V2Serializer;
use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;

use super::histogram::{new_histogram, record_us};
use super::hlog::{base64_into, encode_v2};
use super::quantiles::SecondSamples;
use crate::error::ReportError;
use crate::timeseries::Timeseries;

/// The legend line Java's `HistogramLogWriter` writes after the header comments.
const LEGEND: &str =
    "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"";

/// Virtual seconds per `latency.hlog` interval.
pub(super) const HLOG_INTERVAL_SECS: u64 = 10;

/// The latencies of the requests ending in the current second, and `latency.hlog`.
pub(super) struct LatencyIntervals {
    /// The second being filled (`None` before the first request end).
    second: Option<u64>,
    /// The start of the `latency.hlog` interval being filled, seconds.
    interval: Option<u64>,
    /// The range of the interval histograms: records only each new largest latency (see
    /// [`super::hlog`]); the interval's latencies themselves are in `interval_samples`.
    range: Histogram<u64>,
    /// The largest latency recorded in `range`.
    range_max: u64,
    /// The `latency.hlog` interval's latencies, as recorded (sorted when written).
    interval_samples: Vec<u64>,
    /// The same, for the percentiles (see [`SecondSamples`]).
    samples: SecondSamples,
    /// An empty histogram of the same shape: which values are equivalent.
    shape: Histogram<u64>,
    /// `latency.hlog`; `None` after a write error (the error is kept by the caller).
    log: Option<(PathBuf, BufWriter<File>)>,
    serializer: ReusedDeflate,
    /// Scratch for one interval line.
    line: Vec<u8>,
}

impl std::fmt::Debug for LatencyIntervals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LatencyIntervals")
            .field("second", &self.second)
            .field("samples", &self.samples)
            .finish_non_exhaustive()
    }
}

impl LatencyIntervals {
    /// Creates `path` and writes the log's header.
    pub(super) fn create(path: PathBuf) -> Result<Self, ReportError> {
        let file = File::create(&path).map_err(|e| ReportError::io(&path, e))?;
        let mut out = BufWriter::new(file);
        let header = write_header(&mut out);
        if let Err(e) = header {
            return Err(ReportError::io(&path, e));
        }
        Ok(Self {
            second: None,
            interval: None,
            range: new_histogram()?,
            range_max: 0,
            interval_samples: Vec::new(),
            samples: SecondSamples::default(),
            shape: new_histogram()?,
            log: Some((path, out)),
            serializer: ReusedDeflate::new(),
            line: Vec::new(),
        })
    }

    /// A request ended in `second` after `latency_us`. A second before the current one (only
    /// possible if a sink is fed out of order) counts in the current one.
    pub(super) fn record(
        &mut self,
        second: u64,
        latency_us: u64,
        series: &mut Timeseries,
        error: &mut Option<ReportError>,
    ) {
        match self.second {
            Some(current) if second > current => {
                self.close_second(series);
                self.second = Some(second);
            }
            Some(_) => {}
            None => self.second = Some(second),
        }
        let interval = second - second % HLOG_INTERVAL_SECS;
        match self.interval {
            Some(current) if interval > current => {
                self.write_interval(error);
                self.interval = Some(interval);
            }
            Some(_) => {}
            None => self.interval = Some(interval),
        }
        if latency_us > self.range_max {
            record_us(&mut self.range, latency_us, 1);
            self.range_max = latency_us;
        }
        self.interval_samples.push(latency_us);
        self.samples.push(latency_us);
    }

    /// Closes the last second and flushes the log.
    pub(super) fn finish(&mut self, series: &mut Timeseries, error: &mut Option<ReportError>) {
        self.close_second(series);
        self.write_interval(error);
        if let Some((path, out)) = self.log.as_mut()
            && let Err(e) = out.flush()
        {
            error.get_or_insert(ReportError::io(path.clone(), e));
            self.log = None;
        }
    }

    /// Writes the current second's percentiles into the timeseries and forgets its samples.
    fn close_second(&mut self, series: &mut Timeseries) {
        let Some(second) = self.second else { return };
        if self.samples.is_empty() {
            return;
        }
        series.set_latency(
            second,
            self.samples.quantiles(&self.shape, [0.5, 0.9, 0.99]),
        );
        self.samples.clear();
    }

    /// Writes the current interval's histogram to `latency.hlog` and forgets its samples.
    fn write_interval(&mut self, error: &mut Option<ReportError>) {
        let Some(start) = self.interval else { return };
        if self.interval_samples.is_empty() {
            return;
        }
        if let Some((path, out)) = self.log.as_mut() {
            self.line.clear();
            let written = self
                .serializer
                .write_line(
                    &self.range,
                    &mut self.interval_samples,
                    start,
                    &mut self.line,
                )
                .and_then(|()| out.write_all(&self.line));
            if let Err(e) = written {
                error.get_or_insert(ReportError::io(path.clone(), e));
                self.log = None;
            }
        }
        self.interval_samples.clear();
    }
}

fn write_header(out: &mut impl Write) -> io::Result<()> {
    let mut header = Vec::new();
    IntervalLogWriterBuilder::new()
        .add_comment(
            "[Logged with routersim: one interval per 10 virtual seconds with a request end]",
        )
        .add_comment("[Histogram log format version 1.3]")
        .add_comment("[Values: end-to-end request latency in microseconds]")
        .with_start_time(SystemTime::UNIX_EPOCH)
        .with_base_time(SystemTime::UNIX_EPOCH)
        .begin_log_with(&mut header, &mut V2Serializer::new())?;
    out.write_all(&header)?;
    writeln!(out, "{LEGEND}")
}

/// The V2 + deflate encoding of `hdrhistogram`'s `V2DeflateSerializer` (same cookie, same
/// length field, a zlib stream of the V2 bytes), with the zlib stream written by hand in
/// deflate's *stored* blocks (level 0, RFC 1950/1951): every reader (`hdrhistogram`'s
/// deserializer, Java's `Inflater`) inflates it like any other zlib stream.
///
/// Why not compress: resetting a compressor zeroes its ~300 KB of tables and compressing a
/// histogram walks them; together that was two thirds of `latency.hlog`'s cost and ~6 % of the
/// whole traced harness, to save ~2 KB a line in a file one line per 10 virtual seconds.
///
/// The V2 bytes come from the interval's samples (see [`super::hlog`]), not a walk of every
/// bucket of a histogram; the line is what `IntervalLogWriter::write_histogram` writes.
pub(super) struct ReusedDeflate {
    /// For shapes [`encode_v2`] hands back to `V2Serializer`.
    v2: V2Serializer,
    uncompressed: Vec<u8>,
    compressed: Vec<u8>,
}

/// `V2_COMPRESSED_COOKIE` of the `hdrhistogram` crate (`0x1c849304 | 0x10`), not exported there.
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9304 | 0x10;

impl ReusedDeflate {
    fn new() -> Self {
        Self {
            v2: V2Serializer::new(),
            uncompressed: Vec::new(),
            compressed: Vec::new(),
        }
    }

    /// Appends the interval line of `samples` (sorted here; start `start` s, length
    /// [`HLOG_INTERVAL_SECS`]) for a histogram shaped like `range`: `start,length,max,` then
    /// the base64 of the V2 + deflate bytes.
    fn write_line(
        &mut self,
        range: &Histogram<u64>,
        samples: &mut [u64],
        start: u64,
        line: &mut Vec<u8>,
    ) -> io::Result<()> {
        self.uncompressed.clear();
        samples.sort_unstable();
        let max = encode_v2(range, samples, &mut self.v2, &mut self.uncompressed)?;
        self.compressed.clear();
        self.compressed
            .extend_from_slice(&V2_COMPRESSED_COOKIE.to_be_bytes());
        self.compressed.extend_from_slice(&[0; 4]);
        zlib_stored(&self.uncompressed, &mut self.compressed);
        let payload = u32::try_from(self.compressed.len() - 8).map_err(io::Error::other)?;
        self.compressed[4..8].copy_from_slice(&payload.to_be_bytes());
        // As `write_histogram` formats them (the Java writer's columns).
        let (start, length, max) = (start as f64, HLOG_INTERVAL_SECS as f64, max as f64);
        write!(line, "{start:.3},{length:.3},{max:.3},")?;
        base64_into(&self.compressed, line);
        line.push(b'\n');
        Ok(())
    }
}

/// Appends `data` to `out` as a zlib stream of stored (uncompressed) deflate blocks.
pub(super) fn zlib_stored(data: &[u8], out: &mut Vec<u8>) {
    // CMF: deflate, 32 KB window; FLG: no dictionary, "fastest", and CMF·256 + FLG ≡ 0 mod 31.
    out.extend_from_slice(&[0x78, 0x01]);
    let mut blocks = data.chunks(usize::from(u16::MAX)).peekable();
    if blocks.peek().is_none() {
        // An empty input is still one (final, empty) block.
        out.extend_from_slice(&[0x01, 0x00, 0x00, 0xff, 0xff]);
    }
    while let Some(block) = blocks.next() {
        out.push(u8::from(blocks.peek().is_none()));
        let len = u16::try_from(block.len()).unwrap_or(u16::MAX);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    out.extend_from_slice(&adler32(data).to_be_bytes());
}

/// zlib's checksum (RFC 1950 §8.2).
fn adler32(data: &[u8]) -> u32 {
    const MOD: u32 = 65_521;
    // The largest run whose sums cannot overflow a u32 before the modulo (zlib's NMAX).
    const NMAX: usize = 5552;
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in data.chunks(NMAX) {
        for &byte in chunk {
            a += u32::from(byte);
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use std::io::Read;
    use std::time::Duration;

    use hdrhistogram::Counter;
    use hdrhistogram::serialization::Serializer;

    use super::*;

    /// The former encoding: `V2Serializer` on the filled histogram, then the same stored zlib.
    struct FilledDeflate;

    impl Serializer for FilledDeflate {
        type SerializeError = io::Error;

        fn serialize<T: Counter, W: Write>(
            &mut self,
            h: &Histogram<T>,
            writer: &mut W,
        ) -> io::Result<usize> {
            let mut v2 = Vec::new();
            V2Serializer::new().serialize(h, &mut v2).unwrap();
            let mut body = Vec::new();
            zlib_stored(&v2, &mut body);
            let mut all = V2_COMPRESSED_COOKIE.to_be_bytes().to_vec();
            all.extend_from_slice(&(body.len() as u32).to_be_bytes());
            all.extend_from_slice(&body);
            writer.write_all(&all)?;
            Ok(all.len())
        }
    }

    /// Interval lines from the samples are those `IntervalLogWriter` writes for a histogram
    /// filled with them and reset after each interval (as before this encoder).
    #[test]
    fn lines_match_the_interval_log_writer() {
        let mut hist = new_histogram().unwrap();
        let mut range = new_histogram().unwrap();
        let mut range_max = 0;
        let mut deflate = ReusedDeflate::new();
        let mut samples = Vec::new();
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut random = move |bits: u32| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % (1 << bits)
        };
        for (i, start) in [0, 10, 20, 3600, 86_400, 86_410].into_iter().enumerate() {
            let mut values: Vec<u64> = match i {
                0 => vec![0],
                1 => vec![1_000, 1_000, 2_047, 2_048, 2_049, 4_095],
                2 => vec![90_000_000_000, 5],
                _ => (0..400 + 50 * i)
                    .map(|_| random(12 + 4 * i as u32))
                    .collect(),
            };
            values.push(random(20));
            for &v in &values {
                record_us(&mut hist, v, 1);
                if v > range_max {
                    record_us(&mut range, v, 1);
                    range_max = v;
                }
                samples.push(v);
            }
            let mut expected = Vec::new();
            IntervalLogWriterBuilder::new()
                .begin_log_with(&mut expected, &mut FilledDeflate)
                .unwrap()
                .write_histogram(
                    &hist,
                    Duration::from_secs(start),
                    Duration::from_secs(HLOG_INTERVAL_SECS),
                    None,
                )
                .unwrap();
            let mut got = Vec::new();
            deflate
                .write_line(&range, &mut samples, start, &mut got)
                .unwrap();
            assert_eq!(String::from_utf8(got), String::from_utf8(expected), "{i}");
            hist.reset();
            samples.clear();
        }
    }

    /// Every size around the block limit inflates back to its input.
    #[test]
    fn stored_zlib_inflates_back() -> Result<(), Box<dyn std::error::Error>> {
        for len in [0, 1, 2, 1000, 65_534, 65_535, 65_536, 140_000] {
            let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let mut z = Vec::new();
            zlib_stored(&data, &mut z);
            let mut back = Vec::new();
            flate2::read::ZlibDecoder::new(z.as_slice()).read_to_end(&mut back)?;
            assert_eq!(back, data, "{len}");
        }
        Ok(())
    }
}
