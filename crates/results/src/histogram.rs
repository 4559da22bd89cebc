//! The linear latency histogram ([`Histogram`]): its statistics, its
//! percentiles, and the merge of two of them. One owner: `measure` fills
//! it, resumed runs and campaign overlays merge it, readers and reports
//! derive from it.

use crate::{Corrected, HistStats, Histogram, ThreadResult, LE_BOUNDS_NS, PERCENTILES};
use std::collections::BTreeMap;

impl Histogram {
    /// The buckets of both added up (same resolution and size, else an
    /// error naming both layouts); overflow and underflow add up too.
    pub fn merge(&self, other: &Histogram) -> Result<Histogram, String> {
        if self.resolution_ns != other.resolution_ns || self.buckets != other.buckets {
            return Err(format!(
                "histograms differ ({} buckets of {} ns vs {} of {} ns)",
                self.buckets, self.resolution_ns, other.buckets, other.resolution_ns
            ));
        }
        let mut m: BTreeMap<u64, u64> = BTreeMap::new();
        for [i, c] in self.counts.iter().chain(&other.counts) {
            *m.entry(*i).or_insert(0) += c;
        }
        Ok(Histogram {
            resolution_ns: self.resolution_ns,
            buckets: self.buckets,
            counts: m
                .into_iter()
                .filter(|(_, c)| *c > 0)
                .map(|(i, c)| [i, c])
                .collect(),
            overflow: self.overflow + other.overflow,
            underflow: self.underflow + other.underflow,
        })
    }
}

/// Count, minimum, maximum and sum of integer samples (ns), O(1) per
/// sample and no allocation: the measuring thread's exact figures, the
/// live interval figures and each part of a split latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MinMaxSum {
    /// Samples added.
    pub count: u64,
    /// Smallest sample (`i64::MAX` before the first).
    pub min: i64,
    /// Largest sample (`i64::MIN` before the first).
    pub max: i64,
    /// Sum of the samples (i128: no overflow in hours of nanoseconds).
    pub sum: i128,
}

impl Default for MinMaxSum {
    fn default() -> Self {
        MinMaxSum {
            count: 0,
            min: i64::MAX,
            max: i64::MIN,
            sum: 0,
        }
    }
}

impl MinMaxSum {
    /// Add one sample.
    #[inline(always)]
    pub fn add(&mut self, v: i64) {
        self.count += 1;
        self.sum += v as i128;
        if v < self.min {
            self.min = v;
        }
        if v > self.max {
            self.max = v;
        }
    }

    /// The smallest sample, unknown before the first.
    pub fn min(&self) -> Option<i64> {
        (self.count > 0).then_some(self.min)
    }

    /// The largest sample, unknown before the first.
    pub fn max(&self) -> Option<i64> {
        (self.count > 0).then_some(self.max)
    }

    /// The mean, unknown before the first sample.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }
}

/// Exact counts of samples at or below each bound of [`LE_BOUNDS_NS`]
/// (kept by the thread that drains a measuring thread's ring: one binary
/// search per sample, no allocation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LeCounter {
    /// Samples in (bound i-1, bound i]; the last slot: above every bound.
    slots: [u64; LE_BOUNDS_NS.len() + 1],
}

impl LeCounter {
    /// Count one sample (ns); one below zero is at or below every bound.
    #[inline]
    pub fn add(&mut self, v: i64) {
        let i = LE_BOUNDS_NS.partition_point(|&b| (b as i128) < v as i128);
        self.slots[i] += 1;
    }

    /// `[bound_ns, samples at or below it]` for every bound
    /// ([`ThreadResult::le_counts`]).
    pub fn cumulative(&self) -> Vec<[u64; 2]> {
        let mut acc = 0;
        LE_BOUNDS_NS
            .iter()
            .zip(&self.slots)
            .map(|(&b, &c)| {
                acc += c;
                [b, acc]
            })
            .collect()
    }
}

/// Threads pooled into one, as a campaign overlay shows a group of runs:
/// the histograms summed (a thread whose buckets differ from the first
/// thread's is left out), samples added, minimum and maximum exact, the
/// mean weighted by samples; percentiles from the summed histogram. The
/// first thread gives the CPU and period. None when no sample is left.
pub fn pool_threads<'a>(
    threads: impl IntoIterator<Item = &'a ThreadResult>,
) -> Option<ThreadResult> {
    let mut it = threads.into_iter();
    let t0 = it.next()?;
    let (mut h, mut n, mut sum) = (
        t0.histogram.clone(),
        t0.samples,
        t0.avg_ns * t0.samples as f64,
    );
    let (mut min, mut max) = (t0.min_ns, t0.max_ns);
    for t in it {
        let Ok(m) = h.merge(&t.histogram) else {
            continue;
        };
        h = m;
        n += t.samples;
        sum += t.avg_ns * t.samples as f64;
        min = min.min(t.min_ns);
        max = max.max(t.max_ns);
    }
    if n == 0 {
        return None;
    }
    Some(thread_from_histogram(
        0,
        t0.cpu,
        t0.period_ns,
        n,
        min,
        max,
        sum / n as f64,
        h,
    ))
}

/// Build a thread result from a histogram and the exact min/max/avg the
/// tool reported: `_H` statistics and percentiles are computed from the
/// histogram (bucket lower edges); a percentile that falls into the
/// overflow is reported as the exact maximum.
#[allow(clippy::too_many_arguments)]
pub fn thread_from_histogram(
    index: u32,
    cpu: Option<u32>,
    period_ns: u64,
    samples: u64,
    min_ns: i64,
    max_ns: i64,
    avg_ns: f64,
    h: Histogram,
) -> ThreadResult {
    let percentiles = hist_percentiles(&h, max_ns);
    ThreadResult {
        index,
        tid: 0,
        cpu,
        policy: "FIFO".into(),
        priority: 0,
        requested_policy: None,
        period_ns,
        samples,
        min_ns,
        max_ns,
        cur_ns: 0,
        avg_ns,
        overruns: 0,
        missed_periods: 0,
        lost: 0,
        hist_stats: hist_stats(&h),
        corrected: Corrected {
            samples,
            max_ns,
            percentiles: percentiles.clone(),
        },
        percentiles,
        histogram: h,
        worst_cases: Vec::new(),
        unknown: Vec::new(),
        split: None,
        le_counts: None,
        overflow_cycles: None,
    }
}

/// The systress article's `_H` statistics over the samples inside the histogram.
pub fn hist_stats(h: &Histogram) -> HistStats {
    HistStats::from_buckets(h.counts.iter().map(|c| (c[0], c[1])), h.resolution_ns)
}

/// Percentiles over all samples (histogram + overflow): the lower edge of
/// the bucket holding the p-th sample, or `max_ns` when it is an overflow.
pub fn hist_percentiles(h: &Histogram, max_ns: i64) -> BTreeMap<String, i64> {
    let total: u64 = h.counts.iter().map(|c| c[1]).sum::<u64>() + h.overflow;
    let mut out = BTreeMap::new();
    if total == 0 {
        return out;
    }
    for key in PERCENTILES {
        let p: f64 = key.parse().unwrap_or(100.0);
        // Rank of the sample: ceil(p% of total), at least 1.
        let rank = ((p / 100.0 * total as f64).ceil() as u64).max(1);
        let mut acc = 0;
        let mut v = max_ns;
        for c in &h.counts {
            acc += c[1];
            if acc >= rank {
                v = (c[0] * h.resolution_ns) as i64;
                break;
            }
        }
        out.insert((*key).to_string(), v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_max_sum_is_exact_and_unknown_before_a_sample() {
        let mut a = MinMaxSum::default();
        assert_eq!((a.min(), a.max(), a.mean()), (None, None, None));
        for v in [5, -2, 17, 4] {
            a.add(v);
        }
        assert_eq!(
            (a.count, a.min(), a.max(), a.sum),
            (4, Some(-2), Some(17), 24)
        );
        assert_eq!(a.mean(), Some(6.0));
    }

    #[test]
    fn pooled_threads_skip_another_bucket_layout() {
        let h = |counts: Vec<[u64; 2]>, buckets: u64| Histogram {
            resolution_ns: 1000,
            buckets,
            counts,
            overflow: 1,
            underflow: 1,
        };
        let a = thread_from_histogram(
            0,
            Some(1),
            200_000,
            5,
            10_000,
            90_000,
            20_000.0,
            h(vec![[10, 3]], 100),
        );
        let b = thread_from_histogram(
            1,
            Some(2),
            200_000,
            4,
            9_000,
            80_000,
            30_000.0,
            h(vec![[10, 1], [12, 1]], 100),
        );
        let other =
            thread_from_histogram(2, Some(3), 200_000, 7, 1, 999_999, 1.0, h(vec![[1, 5]], 50));
        let p = pool_threads([&a, &other, &b]).unwrap();
        assert_eq!(p.histogram.counts, vec![[10, 4], [12, 1]]);
        assert_eq!((p.histogram.overflow, p.histogram.underflow), (2, 2));
        assert_eq!(
            (p.samples, p.min_ns, p.max_ns, p.cpu),
            (9, 9_000, 90_000, Some(1))
        );
        assert!((p.avg_ns - 220_000.0 / 9.0).abs() < 1e-6);
        assert!(pool_threads([]).is_none());
    }
}
