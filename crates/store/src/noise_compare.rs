//! `runs compare` on noise runs (`rtshield noise`): is B's share of the
//! CPU available really different from A's?
//!
//! The maximum noise and the percentiles of the noise lengths are compared
//! by [`crate::compare()`] itself (the runs' `threads[]` hold the noise
//! lengths' histograms). The share available, `100 × (Σ runtime − Σ
//! noise) / Σ runtime`, is one number per side; its 95 % interval for the
//! difference B − A (percentage points) comes from the same bootstrap:
//! with at least [`crate::MIN_RUNS`] runs a side the runs are resampled, then in
//! each resampled run its noise events are redrawn (each histogram
//! bucket's count as Poisson(count), an event beyond the histogram in its
//! tail's bucket or at the run's maximum, scaled so that the observed counts give the exact noise
//! time). A side with a run that is not a noise run, that spun for no
//! time, or whose noise lengths are unknown (a thread without its
//! histogram), has no value: the row is `unknown`, never a guess.

use crate::compare::{Method, Verdict, ITERATIONS};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Poisson};
use rtshield_results::RunResult;
use serde::Serialize;

/// The `% available` line of a noise comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AvailableRow {
    /// Side A's share available (%), pooled over its runs and CPUs; None:
    /// unknown.
    pub a_pct: Option<f64>,
    /// Side B's.
    pub b_pct: Option<f64>,
    /// 95 % interval of B − A, percentage points (None: unknown).
    pub diff_low: Option<f64>,
    /// See `diff_low`.
    pub diff_high: Option<f64>,
    /// `B worse` (less available), `B better`, no significant difference,
    /// or `unknown`.
    pub verdict: Verdict,
}

/// One run's noise: spinning time, exact noise time, and its events as
/// (value ns, count) for the redraw.
struct RunNoise {
    runtime_ns: f64,
    noise_ns: f64,
    events: Vec<(f64, u64)>,
    /// Σ value × count of `events` (0: no event).
    events_ns: f64,
}

fn run_noise(r: &RunResult) -> Option<RunNoise> {
    let n = r.noise.as_ref()?;
    let runtime: u128 = n.cpus.iter().map(|c| u128::from(c.runtime_ns)).sum();
    if runtime == 0 {
        return None;
    }
    let mut events = Vec::new();
    for t in &r.threads {
        // Without its histogram a run's events cannot be redrawn: unknown,
        // never a guess.
        let h = t.histogram.as_ref()?;
        for v in crate::compare::thread_values(r, t, h).0 {
            // The middle of the bucket; a maximum as it is.
            let mid = if v.exact { 0.0 } else { v.width as f64 / 2.0 };
            events.push((v.at as f64 + mid, v.count));
        }
    }
    let events_ns = events.iter().map(|(v, c)| v * *c as f64).sum();
    Some(RunNoise {
        runtime_ns: runtime as f64,
        noise_ns: n.cpus.iter().map(|c| u128::from(c.noise_ns)).sum::<u128>() as f64,
        events,
        events_ns,
    })
}

fn side(runs: &[RunResult]) -> Option<Vec<RunNoise>> {
    if runs.is_empty() {
        return None;
    }
    runs.iter().map(run_noise).collect()
}

fn pct(runs: &[&RunNoise], noise: impl Fn(&RunNoise) -> f64) -> f64 {
    let rt: f64 = runs.iter().map(|r| r.runtime_ns).sum();
    let no: f64 = runs.iter().map(|r| noise(r)).sum();
    100.0 * (rt - no).max(0.0) / rt
}

/// One run's noise time with its events redrawn.
fn redraw(r: &RunNoise, rng: &mut ChaCha8Rng) -> f64 {
    if r.events_ns <= 0.0 {
        return r.noise_ns;
    }
    let drawn: f64 = r
        .events
        .iter()
        .map(|&(v, c)| {
            let k = Poisson::new(c as f64).map_or(0.0, |p| p.sample(rng));
            v * k
        })
        .sum();
    drawn * r.noise_ns / r.events_ns
}

/// The `% available` row for sides `a` and `b` (None when neither side
/// holds a noise run: a latency comparison has no such row).
pub fn compare_available(
    a: &[RunResult],
    b: &[RunResult],
    method: Method,
    seed: u64,
) -> Option<AvailableRow> {
    if !a.iter().chain(b).any(|r| r.noise.is_some()) {
        return None;
    }
    let (Some(sa), Some(sb)) = (side(a), side(b)) else {
        let pooled = |runs: &[RunResult]| {
            side(runs).map(|s| pct(&s.iter().collect::<Vec<_>>(), |r| r.noise_ns))
        };
        return Some(AvailableRow {
            a_pct: pooled(a),
            b_pct: pooled(b),
            diff_low: None,
            diff_high: None,
            verdict: Verdict::Unknown,
        });
    };
    let all = |s: &[RunNoise]| -> f64 { pct(&s.iter().collect::<Vec<_>>(), |r| r.noise_ns) };
    let (pa, pb) = (all(&sa), all(&sb));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut diffs = Vec::with_capacity(ITERATIONS);
    for _ in 0..ITERATIONS {
        let one = |s: &[RunNoise], rng: &mut ChaCha8Rng| -> f64 {
            let picked: Vec<&RunNoise> = match method {
                Method::Runs => (0..s.len())
                    .map(|_| &s[rng.random_range(0..s.len())])
                    .collect(),
                Method::Samples => s.iter().collect(),
            };
            let rt: f64 = picked.iter().map(|r| r.runtime_ns).sum();
            let no: f64 = picked.iter().map(|r| redraw(r, rng)).sum();
            100.0 * (rt - no).max(0.0) / rt
        };
        let xa = one(&sa, &mut rng);
        let xb = one(&sb, &mut rng);
        diffs.push(xb - xa);
    }
    diffs.sort_by(|x, y| x.partial_cmp(y).unwrap_or(std::cmp::Ordering::Equal));
    let q = |p: f64| diffs[((p * (diffs.len() - 1) as f64).round() as usize).min(diffs.len() - 1)];
    let (lo, hi) = (q(0.025), q(0.975));
    let verdict = if pa == pb {
        Verdict::Same
    } else if hi < 0.0 {
        Verdict::Worse
    } else if lo > 0.0 {
        Verdict::Better
    } else {
        Verdict::Same
    };
    Some(AvailableRow {
        a_pct: Some(pa),
        b_pct: Some(pb),
        diff_low: Some(lo),
        diff_high: Some(hi),
        verdict,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtshield_results::{CpuNoise, NoiseResult, RunKind};

    /// A noise run: `events` gaps of `len_ns` each in 1 s of spinning.
    fn noise_run(events: u64, len_ns: u64) -> RunResult {
        let mut r = rtshield_results::example_result();
        r.kind = RunKind::Noise;
        r.threads.truncate(1);
        let t = &mut r.threads[0];
        let h = t.histogram.as_mut().expect("the example has histograms");
        h.resolution_ns = 1_000;
        h.buckets = 10_001;
        h.counts = vec![[len_ns / 1_000, events]];
        h.overflow = 0;
        t.samples = Some(events);
        t.max_ns = Some(len_ns as i64);
        r.noise = Some(NoiseResult {
            threshold_ns: 1_000,
            runtime_ns: 1_000_000_000,
            period_ns: 1_000_000_000,
            cpus: vec![CpuNoise {
                cpu: 1,
                tid: 1,
                policy: "other".into(),
                priority: None,
                runtime_ns: 1_000_000_000,
                noise_ns: events * len_ns,
                available_pct: None,
                max_single_ns: Some(len_ns),
                events,
                lost: 0,
                iterations: 1,
                iterations_per_us: None,
                min_gap_ns: None,
                windows: 1,
                windows_missed: 0,
                steal_ns: None,
                classes: None,
                by_class: None,
                unexplained_ns: None,
                lost_ns: None,
                class_ns: None,
                offenders: None,
                longest: vec![],
                tail: None,
            }],
            trace: None,
        });
        r
    }

    #[test]
    fn much_more_noise_is_b_worse_and_the_same_is_not() {
        // A: 1000 gaps of 10 µs (1 %); B: 1000 gaps of 100 µs (10 %).
        let a = vec![noise_run(1_000, 10_000)];
        let b = vec![noise_run(1_000, 100_000)];
        let r = compare_available(&a, &b, Method::Samples, 1).unwrap();
        assert_eq!(r.verdict, Verdict::Worse, "{r:?}");
        assert!((r.a_pct.unwrap() - 99.0).abs() < 1e-9);
        assert!((r.b_pct.unwrap() - 90.0).abs() < 1e-9);
        assert!(r.diff_high.unwrap() < 0.0);
        let r = compare_available(&b, &a, Method::Samples, 1).unwrap();
        assert_eq!(r.verdict, Verdict::Better);
        let r = compare_available(&a, &a.clone(), Method::Samples, 1).unwrap();
        assert_eq!(r.verdict, Verdict::Same);
        // Runs resampled: three runs a side.
        let a3 = vec![
            noise_run(1_000, 10_000),
            noise_run(990, 10_000),
            noise_run(1_010, 10_000),
        ];
        let b3 = vec![
            noise_run(1_000, 100_000),
            noise_run(990, 100_000),
            noise_run(1_010, 100_000),
        ];
        let r = compare_available(&a3, &b3, Method::Runs, 1).unwrap();
        assert_eq!(r.verdict, Verdict::Worse);
    }

    #[test]
    fn a_latency_run_on_a_side_leaves_it_unknown() {
        let a = vec![noise_run(10, 10_000)];
        let lat = vec![rtshield_results::example_result()];
        let r = compare_available(&a, &lat, Method::Samples, 1).unwrap();
        assert_eq!(r.verdict, Verdict::Unknown);
        assert_eq!(r.b_pct, None);
        assert!(r.a_pct.is_some());
        assert_eq!((r.diff_low, r.diff_high), (None, None));
        // Two latency sides: no such row at all.
        assert!(compare_available(&lat, &lat, Method::Samples, 1).is_none());
    }

    #[test]
    fn a_noise_run_without_its_histogram_leaves_its_side_unknown() {
        let a = vec![noise_run(10, 10_000)];
        let mut b = vec![noise_run(10, 10_000)];
        b[0].threads[0].histogram = None;
        let r = compare_available(&a, &b, Method::Samples, 1).unwrap();
        assert_eq!(r.verdict, Verdict::Unknown, "{r:?}");
        assert_eq!(r.b_pct, None);
        assert_eq!((r.diff_low, r.diff_high), (None, None));
    }

    /// `noise_run(1000, 10 µs)` plus `long` gaps beyond its 10 ms
    /// histogram, kept in its tail (`with_tail`) or not (an older file).
    fn with_long(long: &[u64], with_tail: bool) -> RunResult {
        let mut r = noise_run(1_000, 10_000);
        let t = &mut r.threads[0];
        t.cpu = Some(1);
        t.max_ns = Some(*long.iter().max().unwrap() as i64);
        t.histogram.as_mut().unwrap().overflow = long.len() as u64;
        let c = &mut r.noise.as_mut().unwrap().cpus[0];
        c.noise_ns += long.iter().sum::<u64>();
        c.max_single_ns = long.iter().max().copied();
        let res = rtshield_results::NOISE_TAIL_RESOLUTION_NS;
        let mut counts: Vec<[u64; 2]> = Vec::new();
        for v in long {
            match counts.iter_mut().find(|c| c[0] == v / res) {
                Some(c) => c[1] += 1,
                None => counts.push([v / res, 1]),
            }
        }
        counts.sort_unstable();
        c.tail = with_tail.then_some(rtshield_results::Histogram {
            resolution_ns: res,
            buckets: 10_001,
            counts,
            overflow: 0,
            underflow: 0,
        });
        r
    }

    #[test]
    fn a_maximum_beyond_10_ms_gets_an_interval_from_the_tail() {
        use crate::compare::{compare, Stat};
        let ms = 1_000_000;
        // As on the development VM: maxima of 8 to 56 ms. A's long gaps
        // 12..31 ms, B's 40..59 ms.
        let a_long: Vec<u64> = (0..20).map(|k| (12 + k) * ms + 123_456).collect();
        let b_long: Vec<u64> = (0..20).map(|k| (40 + k) * ms + 654_321).collect();
        let a = vec![with_long(&a_long, true)];
        let b = vec![with_long(&b_long, true)];
        let c = compare(&a, &b, &[Stat::Max, Stat::Percentile(99.9)], 1);
        let max = &c.rows[0];
        assert_eq!(max.verdict, Verdict::Worse, "{max:?}");
        // The exact maxima, not bucket edges.
        assert_eq!((max.a_ns, max.b_ns), (31_123_456, 59_654_321));
        assert!(max.ci_low > 1.0 && max.ci_high.is_finite(), "{max:?}");
        // p99.9 of 1020 gaps is among the long ones: at its tail bucket.
        let p = &c.rows[1];
        assert_eq!(p.verdict, Verdict::Worse, "{p:?}");
        assert_eq!(p.a_ns % 100_000, 0, "{p:?}");
        // The same distribution on both sides: no difference.
        let a2 = vec![with_long(
            &a_long.iter().map(|v| v + 7_000).collect::<Vec<_>>(),
            true,
        )];
        let c = compare(&a, &a2, &[Stat::Max], 1);
        assert_eq!(c.rows[0].verdict, Verdict::Same, "{:?}", c.rows[0]);
        // Without the tail (a file written before it): beyond the histogram.
        let old = vec![with_long(&b_long, false)];
        let c = compare(&a, &old, &[Stat::Max], 1);
        assert_eq!(c.rows[0].verdict, Verdict::Beyond, "{:?}", c.rows[0]);
        // The share available redraws the long gaps from the tail too.
        let r = compare_available(&a, &b, Method::Samples, 1).unwrap();
        assert_eq!(r.verdict, Verdict::Worse, "{r:?}");
    }

    #[test]
    fn a_tail_that_does_not_add_up_to_the_overflow_is_not_used() {
        use crate::compare::{compare, Stat};
        let a = vec![with_long(&[12_000_000, 13_000_000], true)];
        let mut b = vec![with_long(&[40_000_000, 41_000_000], true)];
        b[0].threads[0].histogram.as_mut().unwrap().overflow = 3;
        let c = compare(&a, &b, &[Stat::Max], 1);
        assert_eq!(c.rows[0].verdict, Verdict::Beyond, "{:?}", c.rows[0]);
    }
}
