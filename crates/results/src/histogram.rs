//! The linear latency histogram ([`Histogram`]): its statistics, its
//! percentiles, and the merge of two of them. One owner: `measure` fills
//! it, resumed runs and campaign overlays merge it, readers and reports
//! derive from it.

use crate::{
    percentile_supported, HistStats, Histogram, PercentileBound, ThreadResult, BEYOND_HISTOGRAM,
    DEEP_PERCENTILES, LE_BOUNDS_NS, PERCENTILES,
};
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
            let e = m.entry(*i).or_insert(0);
            *e = e.saturating_add(*c);
        }
        Ok(Histogram {
            resolution_ns: self.resolution_ns,
            buckets: self.buckets,
            counts: m
                .into_iter()
                .filter(|(_, c)| *c > 0)
                .map(|(i, c)| [i, c])
                .collect(),
            overflow: self.overflow.saturating_add(other.overflow),
            underflow: self.underflow.saturating_add(other.underflow),
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
/// thread's is left out, and so is one without a histogram), samples
/// added, minimum and maximum exact, the mean weighted by samples;
/// percentiles from the summed histogram. The first thread gives the CPU
/// and period. None when no sample is left.
pub fn pool_threads<'a>(
    threads: impl IntoIterator<Item = &'a ThreadResult>,
) -> Option<ThreadResult> {
    let mut it = threads
        .into_iter()
        .filter(|t| t.histogram.is_some() && t.samples.is_some());
    let t0 = it.next()?;
    let (mut h, mut n) = (t0.histogram.clone()?, t0.samples?);
    // A thread without samples has no mean, minimum or maximum: it adds
    // nothing to them.
    let weighted = |t: &ThreadResult, n: u64| t.avg_ns.map_or(0.0, |a| a * n as f64);
    let mut sum = weighted(t0, n);
    let (mut min, mut max) = (t0.min_ns, t0.max_ns);
    for t in it {
        let (Some(th), Some(tn)) = (&t.histogram, t.samples) else {
            continue;
        };
        let Ok(m) = h.merge(th) else {
            continue;
        };
        h = m;
        n += tn;
        sum += weighted(t, tn);
        min = crate::merge::pick(min, t.min_ns, i64::min);
        max = crate::merge::pick(max, t.max_ns, i64::max);
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
        Some(sum / n as f64),
        h,
    ))
}

/// Build a thread result from a histogram and the exact min/max/avg the
/// tool reported: `_H` statistics and percentiles are computed from the
/// histogram (bucket lower edges); a percentile whose rank falls into the
/// overflow is only a bound ([`hist_percentiles`]). Everything a
/// histogram does not say (tid, policy, priority, last sample, overruns,
/// missed periods, lost samples, the corrected view) is unknown: the
/// reader fills in what its file records.
#[allow(clippy::too_many_arguments)]
pub fn thread_from_histogram(
    index: u32,
    cpu: Option<u32>,
    period_ns: Option<u64>,
    samples: u64,
    min_ns: Option<i64>,
    max_ns: Option<i64>,
    avg_ns: Option<f64>,
    h: Histogram,
) -> ThreadResult {
    let (percentiles, percentile_bounds) = hist_percentiles(&h);
    ThreadResult {
        index,
        tid: None,
        cpu,
        policy: None,
        priority: None,
        requested_policy: None,
        period_ns,
        samples: Some(samples),
        min_ns,
        max_ns,
        cur_ns: None,
        avg_ns,
        overruns: None,
        missed_periods: None,
        lost: None,
        hist_stats: Some(hist_stats(&h)),
        corrected: None,
        percentiles,
        percentile_bounds,
        histogram: Some(h),
        worst_cases: Vec::new(),
        split: None,
        le_counts: None,
        overflow_cycles: None,
    }
}

/// A thread of which only the exact figures are known (no histogram: no
/// percentile, no `_H` statistics, no overflow count).
pub(crate) fn thread_without_histogram(
    index: u32,
    cpu: Option<u32>,
    samples: Option<u64>,
    min_ns: Option<i64>,
    max_ns: Option<i64>,
    avg_ns: Option<f64>,
) -> ThreadResult {
    let h = Histogram {
        resolution_ns: 1000,
        buckets: 0,
        counts: Vec::new(),
        overflow: 0,
        underflow: 0,
    };
    let mut t = thread_from_histogram(index, cpu, None, 0, min_ns, max_ns, avg_ns, h);
    t.samples = samples;
    t.histogram = None;
    t.hist_stats = None;
    t.percentiles.clear();
    t.percentile_bounds.clear();
    t
}

/// The lower edge of bucket `i`, ns, saturating at `i64::MAX`.
pub(crate) fn edge_ns(i: u64, res_ns: u64) -> i64 {
    i64::try_from(i.saturating_mul(res_ns)).unwrap_or(i64::MAX)
}

/// The systress article's `_H` statistics over the samples inside the histogram.
pub fn hist_stats(h: &Histogram) -> HistStats {
    HistStats::from_buckets(h.counts.iter().map(|c| (c[0], c[1])), h.resolution_ns)
}

/// Exact percentiles and bounds over the samples the histogram holds
/// (underflow, buckets, overflow): the lower edge of the bucket holding the
/// sample of rank ⌈q·n⌉ when that bucket is in the histogram; a bound (at
/// least the histogram's end) when the rank falls among the overflow;
/// nothing for a percentile the sample count does not support
/// ([`percentile_supported`]) or whose rank is an underflow (below zero:
/// a clock anomaly, not a latency).
pub fn hist_percentiles(
    h: &Histogram,
) -> (BTreeMap<String, i64>, BTreeMap<String, PercentileBound>) {
    let (mut exact, mut bounds) = (BTreeMap::new(), BTreeMap::new());
    // Saturating: a histogram read from a file is in range (docs/ranges.md),
    // one built by other code must not make this wrap either.
    let samples = h
        .counts
        .iter()
        .map(|c| c[1])
        .chain([h.underflow, h.overflow])
        .fold(0u64, u64::saturating_add);
    let end_ns = edge_ns(h.buckets, h.resolution_ns);
    for key in PERCENTILES.iter().chain(DEEP_PERCENTILES) {
        if !percentile_supported(key, samples) {
            continue;
        }
        let p: f64 = key.parse().unwrap_or(100.0);
        // Rank of the sample: ceil(p% of samples), at least 1.
        let rank = ((p / 100.0 * samples as f64).ceil() as u64).max(1);
        if rank <= h.underflow {
            continue;
        }
        let mut acc = h.underflow;
        let mut v = None;
        for c in &h.counts {
            acc = acc.saturating_add(c[1]);
            if acc >= rank {
                v = Some(edge_ns(c[0], h.resolution_ns));
                break;
            }
        }
        match v {
            Some(v) => {
                exact.insert((*key).to_string(), v);
            }
            None => {
                bounds.insert(
                    (*key).to_string(),
                    PercentileBound {
                        at_least_ns: end_ns,
                        reason: BEYOND_HISTOGRAM.to_string(),
                    },
                );
            }
        }
    }
    (exact, bounds)
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
            Some(200_000),
            5,
            Some(10_000),
            Some(90_000),
            Some(20_000.0),
            h(vec![[10, 3]], 100),
        );
        let b = thread_from_histogram(
            1,
            Some(2),
            Some(200_000),
            4,
            Some(9_000),
            Some(80_000),
            Some(30_000.0),
            h(vec![[10, 1], [12, 1]], 100),
        );
        let other = thread_from_histogram(
            2,
            Some(3),
            Some(200_000),
            7,
            Some(1),
            Some(999_999),
            Some(1.0),
            h(vec![[1, 5]], 50),
        );
        let p = pool_threads([&a, &other, &b]).unwrap();
        let ph = p.histogram.as_ref().unwrap();
        assert_eq!(ph.counts, vec![[10, 4], [12, 1]]);
        assert_eq!((ph.overflow, ph.underflow), (2, 2));
        assert_eq!(
            (p.samples, p.min_ns, p.max_ns, p.cpu),
            (Some(9), Some(9_000), Some(90_000), Some(1))
        );
        assert!((p.avg_ns.unwrap() - 220_000.0 / 9.0).abs() < 1e-6);
        assert!(pool_threads([]).is_none());
    }
}
