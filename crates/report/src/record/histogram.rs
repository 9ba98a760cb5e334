//! The histogram helpers every latency the recorder keeps is read and written with.
//!
//! Why a module of their own: the per-second rows, the windows, the hlog intervals and the
//! summary all record microseconds and read milliseconds the same way; one definition below
//! all of them.

use hdrhistogram::Histogram;

use crate::error::ReportError;
use crate::units::ms_f64;

/// Significant digits of every histogram.
const HISTOGRAM_SIGFIG: u8 = 3;

/// An empty histogram of microseconds that grows as needed.
pub(super) fn new_histogram() -> Result<Histogram<u64>, ReportError> {
    Histogram::new(HISTOGRAM_SIGFIG).map_err(|e| ReportError::Histogram(e.to_string()))
}

/// Records `count` samples of `us`. `record_n` grows the (auto-resizing) histogram;
/// `saturating_record_n` would clamp instead, so it is only the fallback.
pub(super) fn record_us(hist: &mut Histogram<u64>, us: u64, count: u64) {
    if hist.record_n(us, count).is_err() {
        hist.saturating_record_n(us, count);
    }
}

/// A percentile in ms. Percentiles are bucket-highest values; cap them at the exact maximum.
pub(super) fn percentile_ms(hist: &Histogram<u64>, q: f64, max_us: u64) -> f64 {
    if hist.is_empty() {
        0.0
    } else {
        ms_f64(hist.value_at_quantile(q).min(max_us))
    }
}
