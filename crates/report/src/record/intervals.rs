//! Latency per virtual second: the `p50_ms,p90_ms,p99_ms` columns of `timeseries.csv` and the
//! interval histograms of `latency.hlog`.
//!
//! Why one histogram, reset at each second: request ends arrive in virtual-time order, so a
//! second is complete as soon as a later one starts. Its percentiles go into the timeseries
//! row (three numbers) and its histogram into `latency.hlog` (streamed), and the histogram is
//! reset: memory stays flat whatever the run's length.
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
use std::time::{Duration, SystemTime};

use hdrhistogram::Counter;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
use hdrhistogram::serialization::{Serializer, V2Serializer};

use super::hlog::encode_v2;
use super::quantiles::SecondSamples;
use super::summary::{new_histogram, record_us};
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
    /// The interval's latencies, for `latency.hlog`.
    hist: Histogram<u64>,
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
        let mut serializer = ReusedDeflate::new();
        let header = write_header(&mut out, &mut serializer);
        if let Err(e) = header {
            return Err(ReportError::io(&path, e));
        }
        Ok(Self {
            second: None,
            interval: None,
            hist: new_histogram()?,
            samples: SecondSamples::default(),
            shape: new_histogram()?,
            log: Some((path, out)),
            serializer,
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
        record_us(&mut self.hist, latency_us, 1);
        self.serializer.samples.push(latency_us);
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

    /// Writes the current interval's histogram to `latency.hlog` and resets it.
    fn write_interval(&mut self, error: &mut Option<ReportError>) {
        let Some(start) = self.interval else { return };
        if self.hist.is_empty() {
            return;
        }
        if let Some((path, out)) = self.log.as_mut() {
            self.line.clear();
            let written = IntervalLogWriterBuilder::new()
                .begin_log_with(&mut self.line, &mut self.serializer)
                .and_then(|mut w| {
                    w.write_histogram(
                        &self.hist,
                        Duration::from_secs(start),
                        Duration::from_secs(HLOG_INTERVAL_SECS),
                        None,
                    )
                    .map_err(|e| io::Error::other(e.to_string()))
                })
                .and_then(|()| out.write_all(&self.line));
            if let Err(e) = written {
                error.get_or_insert(ReportError::io(path.clone(), e));
                self.log = None;
            }
        }
        self.hist.reset();
        self.serializer.samples.clear();
    }
}

fn write_header(out: &mut impl Write, serializer: &mut ReusedDeflate) -> io::Result<()> {
    let mut header = Vec::new();
    IntervalLogWriterBuilder::new()
        .add_comment(
            "[Logged with routersim: one interval per 10 virtual seconds with a request end]",
        )
        .add_comment("[Histogram log format version 1.3]")
        .add_comment("[Values: end-to-end request latency in microseconds]")
        .with_start_time(SystemTime::UNIX_EPOCH)
        .with_base_time(SystemTime::UNIX_EPOCH)
        .begin_log_with(&mut header, serializer)?;
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
/// bucket: `samples` must hold exactly what the serialized histogram recorded since its reset
/// (otherwise `V2Serializer` encodes it).
pub(super) struct ReusedDeflate {
    v2: V2Serializer,
    /// The interval's latencies, as recorded (sorted when serialized); cleared with the histogram.
    samples: Vec<u64>,
    uncompressed: Vec<u8>,
    compressed: Vec<u8>,
}

/// `V2_COMPRESSED_COOKIE` of the `hdrhistogram` crate (`0x1c849304 | 0x10`), not exported there.
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9304 | 0x10;

impl ReusedDeflate {
    fn new() -> Self {
        Self {
            v2: V2Serializer::new(),
            samples: Vec::new(),
            uncompressed: Vec::new(),
            compressed: Vec::new(),
        }
    }
}

impl Serializer for ReusedDeflate {
    type SerializeError = io::Error;

    fn serialize<T: Counter, W: Write>(
        &mut self,
        h: &Histogram<T>,
        writer: &mut W,
    ) -> io::Result<usize> {
        self.uncompressed.clear();
        self.samples.sort_unstable();
        encode_v2(h, &self.samples, &mut self.v2, &mut self.uncompressed)?;
        self.compressed.clear();
        self.compressed
            .extend_from_slice(&V2_COMPRESSED_COOKIE.to_be_bytes());
        self.compressed.extend_from_slice(&[0; 4]);
        zlib_stored(&self.uncompressed, &mut self.compressed);
        let payload = u32::try_from(self.compressed.len() - 8).map_err(io::Error::other)?;
        self.compressed[4..8].copy_from_slice(&payload.to_be_bytes());
        writer.write_all(&self.compressed)?;
        Ok(self.compressed.len())
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
mod tests {
    use std::io::Read;

    use super::zlib_stored;

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
