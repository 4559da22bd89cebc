//! Statistics: the exact accumulator kept by the measuring thread, and the
//! histograms the main thread builds from the ring.
//!
//! Definitions (the systress article §4.3.4, documented in the README):
//! - bucket `i` of the linear histogram counts samples in `[i*res, (i+1)*res)`;
//!   there are `histo_size/res + 1` buckets, so a sample equal to the
//!   histogram size is still inside (the systress article lists 0..=20 for `20 us`);
//!   larger samples are *overflow*, negative ones *underflow*;
//! - `_H` statistics use the bucket values `i*res` of the samples inside;
//!   the median is the sample of rank `ceil(n/2)` (the lower median), the
//!   standard deviation is the population one, the mode is the fullest
//!   bucket (the smallest on a tie);
//! - percentiles come from an HDR histogram (3 significant digits, 0 to 1 h)
//!   that sees every sample that came through the ring, overflow included.

use rtshield_results::{
    percentile_supported, Corrected, HistStats, Histogram, LeCounter, MinMaxSum, WorstCase,
    DEEP_PERCENTILES, PERCENTILES,
};
use std::collections::BTreeMap;

/// Exact figures kept on the measuring thread: no allocation, O(1) per sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Accum {
    /// Count, minimum, maximum and sum of the latencies.
    pub lat: MinMaxSum,
    /// The last latency.
    pub cur: i64,
    /// Wake-ups later than the following period.
    pub overruns: u64,
    /// Periods skipped because of overruns.
    pub missed: u64,
    /// Samples the ring could not take.
    pub lost: u64,
    /// Wake-ups later than the trace threshold (`--trace-on`); final
    /// figure only (not published live).
    pub spikes: u64,
}

impl Accum {
    /// Add one latency, ns (count, min, max, sum and the last value).
    #[inline(always)]
    pub fn add(&mut self, v: i64) {
        self.lat.add(v);
        self.cur = v;
    }
}

/// Upper bound of the HDR histograms (1 hour in ns): larger values saturate.
pub(crate) const HDR_MAX_NS: u64 = 3_600_000_000_000;
/// Synthetic samples added per overrun in the corrected view, at most
/// (a stall of hours at a 10 µs period would otherwise mean 10⁹ records);
/// the remainder is recorded at one period.
pub(crate) const MAX_CORRECTED_PER_SAMPLE: u64 = 1_000_000;

/// The main thread's view of one measuring thread: every sample that came
/// through the ring.
#[derive(Debug, Clone)]
pub struct ThreadHistograms {
    /// Bucket width of `buckets`, ns.
    pub resolution_ns: u64,
    /// Linear buckets, `histo_size/res + 1` of them.
    pub buckets: Vec<u64>,
    /// Samples at or above the last bucket's end (`histo_size`).
    pub overflow: u64,
    /// Negative samples (a clock anomaly), not in `buckets`.
    pub underflow: u64,
    /// Samples seen through the ring.
    pub samples: u64,
    /// Every sample in a high-dynamic-range histogram (3 significant digits, up to 1 h): the percentiles.
    pub hdr: hdrhistogram::Histogram<u64>,
    /// Coordinated-omission-corrected: each missed period added as the
    /// sample it would have produced (latency − k·period).
    pub hdr_corrected: hdrhistogram::Histogram<u64>,
    /// Samples in `hdr_corrected` (the real ones plus the synthetic ones).
    pub corrected_samples: u64,
    /// Largest sample seen through the ring, ns.
    pub max_ns: i64,
    /// Periods since the start: each sample's own and those its overrun
    /// skipped (the next deadline is that much later).
    pub periods: u64,
    /// Each new maximum and when it happened (the torture article's list),
    /// the latest [`MAX_WORST_CASES`] kept.
    pub worst: Vec<WorstCase>,
    /// Exact counts at the fixed `le` scale (the OpenMetrics buckets).
    pub le: LeCounter,
    /// The 0-based numbers of the first samples in the last bucket or
    /// beyond (cyclictest's `-h N` overflows), at most N = buckets − 1 of
    /// them, as cyclictest keeps its `outliers`.
    pub overflow_at: Vec<u64>,
}

/// Worst cases kept per thread: each is larger than the one before, so a
/// real run has a handful; a latency that only grows keeps the latest.
pub(crate) const MAX_WORST_CASES: usize = 256;

impl ThreadHistograms {
    /// Empty histograms for `histo_size_ns` in buckets `resolution_ns` wide (one more bucket for a sample equal to the size).
    pub fn new(histo_size_ns: u64, resolution_ns: u64) -> Self {
        let res = resolution_ns.max(1);
        let n = (histo_size_ns / res + 1) as usize;
        let hdr = || {
            hdrhistogram::Histogram::new_with_bounds(1, HDR_MAX_NS, 3)
                .expect("static HDR bounds are valid")
        };
        ThreadHistograms {
            resolution_ns: res,
            buckets: vec![0; n],
            overflow: 0,
            underflow: 0,
            samples: 0,
            hdr: hdr(),
            hdr_corrected: hdr(),
            corrected_samples: 0,
            max_ns: i64::MIN,
            periods: 0,
            worst: Vec::new(),
            le: LeCounter::default(),
            overflow_at: Vec::new(),
        }
    }

    /// Record one sample; `missed` periods of `period_ns` were skipped
    /// just before it (overrun).
    pub fn record(&mut self, v: i64, missed: u64, period_ns: u64) {
        // This sample's number (0-based), as cyclictest's `stat->cycles`.
        let number = self.samples;
        self.samples += 1;
        self.le.add(v);
        // This sample's deadline: one period after the previous one's, plus
        // the periods earlier overruns skipped (the loop moves its next
        // deadline past the periods an overrun jumped over).
        let deadline = self.periods.saturating_add(1).saturating_mul(period_ns);
        self.periods = self.periods.saturating_add(1).saturating_add(missed);
        if v > self.max_ns {
            self.max_ns = v;
            // Off the hot path (this is the draining thread); the time is
            // the deadline plus the latency, from the start.
            if self.worst.len() == MAX_WORST_CASES {
                self.worst.remove(0);
            }
            self.worst.push(WorstCase {
                at_ns: deadline.saturating_add(v.max(0) as u64),
                latency_ns: v,
            });
        }
        if v < 0 {
            self.underflow += 1;
        } else {
            // try_from: on 32-bit targets a huge latency must overflow, not
            // wrap into a low bucket.
            let i = usize::try_from(v as u64 / self.resolution_ns).unwrap_or(usize::MAX);
            match self.buckets.get_mut(i) {
                Some(c) => *c += 1,
                None => self.overflow += 1,
            }
            // cyclictest -h N: N rows, a sample of N units or more overflows.
            let n = self.buckets.len() - 1;
            if i >= n && self.overflow_at.len() < n {
                self.overflow_at.push(number);
            }
        }
        let hv = v.max(0) as u64;
        self.hdr.saturating_record(hv);
        self.hdr_corrected.saturating_record(hv);
        self.corrected_samples += 1;
        if missed > 0 && period_ns > 0 {
            let exact = missed.min(MAX_CORRECTED_PER_SAMPLE);
            for k in 1..=exact {
                let w = (hv as i128 - (k as i128) * period_ns as i128).max(0) as u64;
                self.hdr_corrected.saturating_record(w);
            }
            if missed > exact {
                self.hdr_corrected
                    .saturating_record_n(period_ns, missed - exact);
            }
            self.corrected_samples += missed;
        }
    }

    /// The systress article's `_H` statistics over the linear histogram.
    pub fn hist_stats(&self) -> HistStats {
        hist_stats(&self.buckets, self.resolution_ns)
    }

    /// p50 ... p99.9999 in ns, capped at the exact maximum seen.
    pub fn percentiles(&self) -> BTreeMap<String, i64> {
        percentiles(&self.hdr, self.max_ns)
    }

    /// The non-zero buckets, for the file schema.
    pub fn to_histogram(&self) -> Histogram {
        Histogram {
            resolution_ns: self.resolution_ns,
            buckets: self.buckets.len() as u64,
            counts: self
                .buckets
                .iter()
                .enumerate()
                .filter(|(_, &c)| c > 0)
                .map(|(i, &c)| [i as u64, c])
                .collect(),
            overflow: self.overflow,
            underflow: self.underflow,
        }
    }

    /// The coordinated-omission-corrected figures for the file schema.
    pub fn corrected(&self) -> Corrected {
        Corrected {
            samples: self.corrected_samples,
            max_ns: (self.samples > 0).then_some(self.max_ns),
            percentiles: percentiles(&self.hdr_corrected, self.max_ns),
        }
    }
}

/// Percentile key (`"99.9"`) to quantile (0.999).
pub(crate) fn quantile(key: &str) -> f64 {
    key.parse::<f64>().unwrap_or(0.0) / 100.0
}

/// [`PERCENTILES`] and [`DEEP_PERCENTILES`] the sample count supports
/// (a percentile q needs 1/(1 − q) samples, else it only repeats the
/// maximum: "not enough samples", no value).
fn percentiles(h: &hdrhistogram::Histogram<u64>, max_ns: i64) -> BTreeMap<String, i64> {
    let n = h.len();
    PERCENTILES
        .iter()
        .chain(DEEP_PERCENTILES)
        .filter(|k| percentile_supported(k, n))
        .map(|k| {
            // The HDR answer is the top of an equivalence range: never
            // report more than the exact maximum.
            let v = (h.value_at_quantile(quantile(k)) as i64).min(max_ns.max(0));
            (k.to_string(), v)
        })
        .collect()
}

/// `_H` statistics of a linear histogram (`counts[i]` samples at `i*res` ns).
pub(crate) fn hist_stats(counts: &[u64], res: u64) -> HistStats {
    HistStats::from_buckets(counts.iter().enumerate().map(|(i, &c)| (i as u64, c)), res)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accum_is_exact() {
        let mut a = Accum::default();
        // Before the first sample: unknown, never 0.
        assert_eq!((a.lat.min(), a.lat.max(), a.lat.mean()), (None, None, None));
        for v in [5, -2, 17, 4] {
            a.add(v);
        }
        assert_eq!(a.lat.count, 4);
        assert_eq!(a.lat.min, -2);
        assert_eq!(a.lat.max, 17);
        assert_eq!(a.cur, 4);
        assert_eq!(a.lat.mean(), Some(6.0));
    }

    #[test]
    fn a_latency_past_u32_buckets_overflows_on_every_target() {
        // At 1 ns resolution, 2^32 + 3 ns is bucket 2^32 + 3: on armv7 a
        // plain `as usize` would wrap it to bucket 3.
        let mut h = ThreadHistograms::new(10, 1);
        h.record((1i64 << 32) + 3, 0, 1_000_000);
        h.record(3, 0, 1_000_000);
        assert_eq!(h.overflow, 1);
        assert_eq!(h.buckets[3], 1);
        assert_eq!(h.samples, 2);
    }

    #[test]
    fn hist_stats_by_hand() {
        // samples (µs): 1, 2, 2, 3, 10 -> n 5, mean 3.6, median 2, mode 2,
        // variance (2.6²+1.6²+1.6²+0.6²+6.4²)/5 = 10.64
        let mut c = vec![0u64; 11];
        for v in [1, 2, 2, 3, 10] {
            c[v] += 1;
        }
        let s = hist_stats(&c, 1000);
        assert_eq!(s.samples, 5);
        assert!((s.avg_ns - 3600.0).abs() < 1e-9);
        assert_eq!(s.median_ns, 2000);
        assert_eq!(s.mode_ns, 2000);
        assert!((s.std_ns - 10.64f64.sqrt() * 1000.0).abs() < 1e-6);
    }

    #[test]
    fn median_is_lower_median_and_mode_smallest_tie() {
        // 1, 1, 4, 4: rank ceil(4/2) = 2 -> 1; tie between 1 and 4 -> 1.
        let c = [0, 2, 0, 0, 2];
        let s = hist_stats(&c, 1);
        assert_eq!(s.median_ns, 1);
        assert_eq!(s.mode_ns, 1);
        assert_eq!(s.avg_ns, 2.5);
        assert_eq!(s.std_ns, 1.5);
    }

    #[test]
    fn empty_histogram() {
        let s = hist_stats(&[0, 0, 0], 1000);
        assert_eq!(s.samples, 0);
        assert_eq!(s.median_ns, 0);
    }

    #[test]
    fn overflow_and_underflow() {
        // histo size 20 µs at µs resolution: buckets 0..=20.
        let mut h = ThreadHistograms::new(20_000, 1000);
        assert_eq!(h.buckets.len(), 21);
        for v in [2_500, 20_000, 20_999, 21_000, 100_000, -5] {
            h.record(v, 0, 200_000);
        }
        assert_eq!(h.samples, 6);
        assert_eq!(h.overflow, 2); // 21 µs and 100 µs
        assert_eq!(h.underflow, 1);
        assert_eq!(h.buckets[2], 1);
        assert_eq!(h.buckets[20], 2); // 20.000 and 20.999 µs
        let hs = h.hist_stats();
        assert_eq!(hs.samples, 3);
        assert_eq!(hs.median_ns, 20_000);
        assert_eq!(hs.mode_ns, 20_000);
        assert!((hs.avg_ns - 14_000.0).abs() < 1e-9);
        // Deviations -12, 6, 6 us: population variance 72 us².
        assert!((hs.std_ns - 72f64.sqrt() * 1000.0).abs() < 1e-6);
        let hist = h.to_histogram();
        assert_eq!(hist.counts, vec![[2, 1], [20, 2]]);
        assert_eq!(hist.overflow, 2);
        assert_eq!(hist.underflow, 1);
        // Overflowed samples still reach the maximum; six samples support
        // p50 only (a percentile q needs 1/(1 − q) samples): p99.9999 is
        // "not enough samples", not the maximum again.
        let p = h.percentiles();
        assert!(p.contains_key("50") && !p.contains_key("90"), "{p:?}");
        assert!(!p.contains_key("99.9999"));
        assert_eq!(h.max_ns, 100_000);
    }

    #[test]
    fn percentiles_by_hand() {
        // 1..=1000 µs, one each: p50 = 500 µs, p90 = 900 µs, p99 = 990 µs,
        // p99.9 and above = 1000 µs, within HDR's 0.1 %.
        let mut h = ThreadHistograms::new(2_000_000, 1000);
        for v in 1..=1000i64 {
            h.record(v * 1000, 0, 1_000_000);
        }
        let p = h.percentiles();
        let near = |k: &str, want: i64| {
            let got = p[k];
            assert!(
                (got - want).abs() <= want / 1000 + 1,
                "p{k}: got {got}, want {want}"
            );
        };
        near("50", 500_000);
        near("90", 900_000);
        near("99", 990_000);
        near("99.9", 999_000);
        // 1000 samples support p99.9, not p99.99 (10 000) and beyond.
        assert!(!p.contains_key("99.99") && !p.contains_key("99.9999"));
        // Overflowed samples (past the 2 ms histogram) reach the
        // percentiles: 10 000 more at 5 ms make p99.99 that.
        for _ in 0..10_000 {
            h.record(5_000_000, 0, 1_000_000);
        }
        let p = h.percentiles();
        assert!((p["99.99"] - 5_000_000).abs() <= 5_000, "{p:?}");
    }

    proptest::proptest! {
        #[test]
        fn any_sample_is_recorded_somewhere(
            v in proptest::prelude::any::<i64>(),
            missed in 0u64..2000,
            period in 0u64..10_000_000,
        ) {
            let mut h = ThreadHistograms::new(100_000, 1000);
            h.record(v, missed, period);
            let inside: u64 = h.buckets.iter().sum();
            proptest::prop_assert_eq!(inside + h.overflow + h.underflow, 1);
            let extra = if period > 0 { missed } else { 0 };
            proptest::prop_assert_eq!(h.corrected_samples, 1 + extra);
        }

        #[test]
        fn hist_stats_within_the_data(counts in proptest::collection::vec(0u64..1000, 1..200)) {
            let s = hist_stats(&counts, 1000);
            let lo = counts.iter().position(|&c| c > 0);
            let hi = counts.iter().rposition(|&c| c > 0);
            if let (Some(lo), Some(hi)) = (lo, hi) {
                let (lo, hi) = (lo as i64 * 1000, hi as i64 * 1000);
                proptest::prop_assert!(lo <= s.median_ns && s.median_ns <= hi);
                proptest::prop_assert!(lo <= s.mode_ns && s.mode_ns <= hi);
                proptest::prop_assert!(lo as f64 - 1e-6 <= s.avg_ns && s.avg_ns <= hi as f64 + 1e-6);
                proptest::prop_assert!(s.std_ns >= 0.0 && s.std_ns <= (hi - lo) as f64 + 1e-6);
            } else {
                proptest::prop_assert_eq!(s.samples, 0);
            }
        }
    }

    #[test]
    fn each_new_maximum_is_recorded_with_its_time() {
        // period 100 µs: samples at 10, 30, 20, 50 µs, then a 60 µs one
        // whose overrun skipped the 3 periods after it, then 900 µs.
        let mut h = ThreadHistograms::new(1_000_000, 1000);
        for (v, missed) in [
            (10_000, 0),
            (30_000, 0),
            (20_000, 0),
            (50_000, 0),
            (60_000, 3),
            (900_000, 0),
        ] {
            h.record(v, missed, 100_000);
        }
        let w: Vec<(u64, i64)> = h.worst.iter().map(|w| (w.at_ns, w.latency_ns)).collect();
        assert_eq!(
            w,
            [
                (110_000, 10_000),
                (230_000, 30_000),
                (450_000, 50_000),
                // deadline 5 periods; 3 skipped, so the next is the 9th
                (560_000, 60_000),
                (1_800_000, 900_000)
            ]
        );
    }

    #[test]
    fn deep_percentiles_only_with_enough_samples() {
        let mut h = ThreadHistograms::new(1_000_000, 1000);
        for v in 0..1000 {
            h.record(v * 10, 0, 100_000);
        }
        let p = h.percentiles();
        assert!(p.contains_key("99.9") && !p.contains_key("99.99"));
        assert!(!p.contains_key("99.9999") && !p.contains_key("99.99999"));
        // 10⁷ samples support p99.99999, not p99.999999.
        h.hdr.record_n(5, 10_000_000 - 1000).unwrap();
        let p = h.percentiles();
        assert!(p.contains_key("99.9999") && p.contains_key("99.99999"));
        assert!(!p.contains_key("99.999999"));
    }

    #[test]
    fn corrected_view_adds_missed_periods() {
        // period 100 µs; one sample of 350 µs that skipped 3 periods: the
        // corrected view adds 250, 150 and 50 µs.
        let mut h = ThreadHistograms::new(1_000_000, 1000);
        h.record(10_000, 0, 100_000);
        h.record(350_000, 3, 100_000);
        let c = h.corrected();
        assert_eq!(c.samples, 5);
        assert_eq!(c.max_ns, Some(350_000));
        // sorted: 10, 50, 150, 250, 350 -> median 150 µs
        let p50 = c.percentiles["50"];
        assert!((p50 - 150_000).abs() <= 150, "{p50}");
        // The raw view has only the two samples.
        assert_eq!(h.samples, 2);
        assert!((h.percentiles()["50"] - 10_000).abs() <= 10);
    }
}
