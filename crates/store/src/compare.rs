//! `runs compare A B`: is B's latency really different from A's?
//!
//! For each statistic (p50 … max) both sides' values come from their pooled
//! histograms (every thread of every run of the side), and the ratio B/A
//! gets a 95 % confidence interval from a bootstrap:
//!
//! - with at least [`MIN_RUNS`] runs on each side, the runs are resampled
//!   with replacement (the repeats are the unit of variation: this captures
//!   run-to-run drift that no single histogram shows), then the samples of
//!   the resampled runs as below (a two-stage bootstrap: resampling 3 runs
//!   alone gave p99.9 to max intervals so narrow that 10 to 17 % of
//!   same-distribution comparisons came out different);
//! - otherwise the samples inside each histogram are resampled, with the
//!   Poisson bootstrap (each bucket's count redrawn as Poisson(count)), which
//!   for large samples is equivalent to resampling samples one by one.
//!   The maximum is the exception: a resample of n samples can never exceed
//!   the observed maximum, so that bootstrap is inconsistent for it; the
//!   maximum uses the m-out-of-n bootstrap instead (m = n / [`MAX_SUBSAMPLE`],
//!   each count redrawn as Poisson(count / 4)), which is consistent for
//!   extremes.
//!
//! The verdict is `B worse` when the whole interval lies above 1, `B better`
//! when it lies below 1, and `no significant difference` otherwise; two
//! values at most one histogram bucket apart are never a difference (the
//! histogram cannot tell them apart), and a statistic that falls among the
//! samples beyond a histogram gets `beyond the histogram` (those samples
//! are known only at the run's maximum: no interval can be drawn). Samples
//! beyond a histogram count at that run's exact maximum (the only value
//! known for them). A noise run keeps the gaps beyond its 10 ms histogram
//! in a coarser tail (100 µs buckets up to 1 s, [`thread_values`]): they
//! are resampled at their buckets, the top one at the exact maximum, and
//! two values at most a tail bucket apart are never a difference; so the
//! `max` row of noise runs gets an interval. The resampling is seeded, so
//! the same runs always give the same output.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Poisson};
use rtshield_results::{Histogram, RunResult, ThreadResult};
use serde::Serialize;

/// Runs needed on each side to resample runs rather than samples.
pub const MIN_RUNS: usize = 3;

/// The maximum's subsample divisor in the samples bootstrap.
pub(crate) const MAX_SUBSAMPLE: u64 = 4;

/// Bootstrap iterations.
pub const ITERATIONS: usize = 1000;

/// A statistic `runs compare` can report.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Stat {
    /// A percentile, e.g. 99.9.
    Percentile(f64),
    /// The largest sample (bootstrapped m-out-of-n, see the module notes).
    Max,
}

impl Stat {
    /// Parse `p99.9`, `99.9`, `p50`, `max`, `median`.
    pub fn parse(s: &str) -> Result<Stat, String> {
        let t = s.trim();
        match t {
            "max" => return Ok(Stat::Max),
            "median" => return Ok(Stat::Percentile(50.0)),
            _ => {}
        }
        let num = t.strip_prefix('p').unwrap_or(t);
        match num.parse::<f64>() {
            Ok(p) if p > 0.0 && p < 100.0 => Ok(Stat::Percentile(p)),
            _ => Err(format!(
                "`{s}` is not a statistic: use p50, p99, p99.9, p99.99 (0 < p < 100) or max"
            )),
        }
    }

    /// The name as printed (`p99.9`, `max`).
    pub fn name(&self) -> String {
        match self {
            Stat::Max => "max".into(),
            Stat::Percentile(p) => format!("p{p}"),
        }
    }
}

/// The default statistics.
pub fn default_stats() -> Vec<Stat> {
    vec![
        Stat::Percentile(50.0),
        Stat::Percentile(99.0),
        Stat::Percentile(99.9),
        Stat::Percentile(99.99),
        Stat::Max,
    ]
}

/// How the interval was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Runs resampled (≥ MIN_RUNS per side).
    Runs,
    /// Samples resampled within the histograms.
    Samples,
}

/// What a row's interval says about B against A (the JSON spelling is the
/// text `runs compare` prints).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Verdict {
    /// The whole interval of B/A lies above 1, and the values are more than a bucket apart.
    #[serde(rename = "B worse")]
    Worse,
    /// The whole interval of B/A lies below 1, and the values are more than a bucket apart.
    #[serde(rename = "B better")]
    Better,
    /// The interval holds 1, or the values are at most one histogram bucket apart.
    #[serde(rename = "no significant difference")]
    Same,
    /// The statistic lies beyond a histogram (its samples are known only
    /// as "above the histogram", counted at the run's maximum): no
    /// interval can be drawn from it.
    #[serde(rename = "beyond the histogram")]
    Beyond,
    /// A side has no value for the statistic (a run that did not record
    /// it): no verdict can be drawn, and none is guessed.
    #[serde(rename = "unknown")]
    Unknown,
}

impl Verdict {
    /// The verdict as printed (`B worse`, `B better`, `no significant difference`, `beyond the histogram`).
    pub fn as_str(&self) -> &'static str {
        match self {
            Verdict::Worse => "B worse",
            Verdict::Better => "B better",
            Verdict::Same => "no significant difference",
            Verdict::Beyond => "beyond the histogram",
            Verdict::Unknown => "unknown",
        }
    }
}

/// One line of the comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The statistic's name (`p99.9`, `max`: [`Stat::name`]).
    pub stat: String,
    /// Side A's value, ns.
    pub a_ns: i64,
    /// Side B's value, ns.
    pub b_ns: i64,
    /// b / a (1 when both are 0).
    pub ratio: f64,
    /// Lower end of the 95 % bootstrap interval of the ratio.
    pub ci_low: f64,
    /// Upper end of the 95 % bootstrap interval of the ratio (infinite when A's value can be 0).
    pub ci_high: f64,
    /// What the interval says.
    pub verdict: Verdict,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Runs on side A.
    pub runs_a: usize,
    /// Runs on side B.
    pub runs_b: usize,
    /// Samples of side A over every thread of every run (inside the histograms, overflow counted at each run's maximum).
    pub samples_a: u64,
    /// Samples of side B, counted as for A.
    pub samples_b: u64,
    /// Whether runs or samples were resampled (runs when both sides have [`MIN_RUNS`]).
    pub method: Method,
    /// Bootstrap iterations behind each interval ([`ITERATIONS`]).
    pub iterations: usize,
    /// One row per statistic asked for, in the order asked.
    pub rows: Vec<Row>,
    /// Noise runs (`rtshield noise`): the share of the CPU available, B
    /// against A; absent when neither side holds a noise run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available: Option<crate::AvailableRow>,
}

/// The threads of `r` that have a histogram, with it.
fn hists(r: &RunResult) -> Vec<(&ThreadResult, &Histogram)> {
    r.threads
        .iter()
        .filter_map(|t| t.histogram.as_ref().map(|h| (t, h)))
        .collect()
}

/// A run reduced to counts on a value grid shared by both sides.
struct Dense {
    counts: Vec<u64>,
}

/// One value of a thread's distribution for the bootstrap.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Val {
    /// The bucket's lower edge, or an exact value (a maximum), ns.
    pub at: i64,
    pub count: u64,
    /// The width of the bucket it stands for, ns (two values at most
    /// this far apart are never a difference).
    pub width: u64,
    /// `at` is a sample's exact value, not a bucket's edge.
    pub exact: bool,
}

/// A thread's distribution: its histogram's buckets, then what lies
/// beyond it. A noise run's tail (`noise.cpus[].tail`, 100 µs buckets up
/// to 1 s) gives the lengths of the gaps beyond the 10 ms histogram, its
/// top sample at the thread's exact maximum; without a tail (a latency
/// run, an older file) they are all at the exact maximum and `beyond` is
/// set (no interval can be drawn from them), as for what a tail's own
/// overflow holds.
pub(crate) fn thread_values(r: &RunResult, t: &ThreadResult, h: &Histogram) -> (Vec<Val>, bool) {
    let res = h.resolution_ns;
    let mut v: Vec<Val> = h
        .counts
        .iter()
        .map(|c| Val {
            at: c[0].saturating_mul(res) as i64,
            count: c[1],
            width: res,
            exact: false,
        })
        .collect();
    if h.overflow == 0 {
        return (v, false);
    }
    // Samples past the histogram imply a maximum; a file without one
    // (out of range for a thread with samples) puts them at its end,
    // where they are known to lie at least.
    let max_ns = t.max_ns.unwrap_or_else(|| end_ns(h));
    let at_max = |count| Val {
        at: max_ns,
        count,
        width: res,
        exact: true,
    };
    let Some(tail) = tail_of(r, t).filter(|tail| {
        let n = tail
            .counts
            .iter()
            .fold(tail.overflow, |a, c| a.saturating_add(c[1]));
        n == h.overflow && tail.underflow == 0
    }) else {
        v.push(at_max(h.overflow));
        return (v, true);
    };
    let tres = tail.resolution_ns.max(1);
    let top = tail.counts.last().map(|c| c[0]);
    for c in &tail.counts {
        let edge = c[0].saturating_mul(tres) as i64;
        // The top bucket's largest sample is the exact maximum.
        let exact_max = tail.overflow == 0
            && c[1] > 0
            && Some(c[0]) == top
            && (edge..edge.saturating_add(tres as i64)).contains(&max_ns);
        let n = if exact_max { c[1] - 1 } else { c[1] };
        if n > 0 {
            v.push(Val {
                at: edge,
                count: n,
                width: tres,
                exact: false,
            });
        }
        if exact_max {
            v.push(Val {
                width: tres,
                ..at_max(1)
            });
        }
    }
    if tail.overflow > 0 {
        v.push(Val {
            width: tres,
            ..at_max(tail.overflow)
        });
    }
    (v, tail.overflow > 0)
}

/// Where a histogram ends, ns: its overflow samples lie at or above it.
fn end_ns(h: &Histogram) -> i64 {
    i64::try_from(h.buckets.saturating_mul(h.resolution_ns)).unwrap_or(i64::MAX)
}

/// The tail of a noise run's thread `t` (its CPU's).
fn tail_of<'a>(r: &'a RunResult, t: &ThreadResult) -> Option<&'a Histogram> {
    let cpu = t.cpu?;
    r.noise
        .as_ref()?
        .cpus
        .iter()
        .find(|c| c.cpu == cpu)?
        .tail
        .as_ref()
}

/// Both sides on one value grid.
struct Grid {
    /// Sorted distinct values, ns.
    values: Vec<i64>,
    /// The widest bucket that stands at each value.
    widths: Vec<u64>,
    a: Vec<Dense>,
    b: Vec<Dense>,
    /// The values that stand for samples beyond every histogram (each
    /// such thread's maximum).
    beyond: Vec<i64>,
    /// The widest bucket of the histograms themselves (tails apart), ns.
    widest: i64,
}

impl Grid {
    /// How far apart two values may be and still be one bucket.
    fn tolerance(&self, va: i64, vb: i64) -> i64 {
        let w = |v: i64| {
            self.values
                .binary_search(&v)
                .map_or(0, |i| self.widths[i] as i64)
        };
        self.widest.max(w(va)).max(w(vb))
    }
}

/// Build the shared grid and each run's counts. A thread without a
/// histogram (an import of cyclictest without `-h`) has no distribution to
/// resample: it is left out.
fn densify(a: &[RunResult], b: &[RunResult]) -> Grid {
    let mut beyond = Vec::new();
    let mut all: Vec<Vec<Val>> = Vec::new();
    for r in a.iter().chain(b) {
        let mut v = Vec::new();
        for (t, h) in hists(r) {
            let (vals, over) = thread_values(r, t, h);
            if over {
                beyond.push(t.max_ns.unwrap_or_else(|| end_ns(h)));
            }
            v.extend(vals);
        }
        all.push(v);
    }
    beyond.sort_unstable();
    beyond.dedup();
    let widest = a
        .iter()
        .chain(b)
        .flat_map(hists)
        .map(|(_, h)| h.resolution_ns as i64)
        .max()
        .unwrap_or(1);
    let mut values: Vec<i64> = all.iter().flatten().map(|p| p.at).collect();
    values.sort_unstable();
    values.dedup();
    let mut widths = vec![0u64; values.len()];
    let mut dense: Vec<Dense> = all
        .iter()
        .map(|ps| {
            let mut counts = vec![0u64; values.len()];
            for p in ps {
                let i = values.binary_search(&p.at).expect("value is on the grid");
                counts[i] = counts[i].saturating_add(p.count);
                widths[i] = widths[i].max(p.width);
            }
            Dense { counts }
        })
        .collect();
    let db = dense.split_off(a.len());
    Grid {
        values,
        widths,
        a: dense,
        b: db,
        beyond,
        widest,
    }
}

/// The statistic over counts on the grid; 0 for no samples.
fn stat_of(stat: Stat, grid: &[i64], counts: &[u64]) -> i64 {
    // Saturating: many runs of huge (in-range) counts must not wrap.
    let n: u64 = counts.iter().fold(0, |a, c| a.saturating_add(*c));
    if n == 0 {
        return 0;
    }
    match stat {
        Stat::Max => counts
            .iter()
            .rposition(|&c| c > 0)
            .map(|i| grid[i])
            .unwrap_or(0),
        Stat::Percentile(p) => {
            let rank = ((p / 100.0 * n as f64).ceil() as u64).max(1);
            let mut acc = 0;
            for (i, &c) in counts.iter().enumerate() {
                acc += c;
                if acc >= rank {
                    return grid[i];
                }
            }
            *grid.last().unwrap_or(&0)
        }
    }
}

fn ratio(a: i64, b: i64) -> f64 {
    match (a, b) {
        (0, 0) => 1.0,
        (0, _) => f64::INFINITY,
        _ => b as f64 / a as f64,
    }
}

fn pool(runs: &[Dense], pick: impl Iterator<Item = usize>, out: &mut [u64]) {
    out.iter_mut().for_each(|x| *x = 0);
    for i in pick {
        for (o, &c) in out.iter_mut().zip(&runs[i].counts) {
            *o += c;
        }
    }
}

/// A Poisson(lambda) draw (0 for an empty bucket).
fn poisson(rng: &mut ChaCha8Rng, lambda: f64) -> u64 {
    match Poisson::new(lambda) {
        Ok(p) => p.sample(rng) as u64,
        // lambda is 0 (an empty bucket): the only draw is 0.
        Err(_) => 0,
    }
}

/// Compare side A with side B.
pub fn compare(a: &[RunResult], b: &[RunResult], stats: &[Stat], seed: u64) -> Comparison {
    let gr = densify(a, b);
    let (grid, da, db, beyond) = (&gr.values, &gr.a, &gr.b, &gr.beyond);
    let g = grid.len();
    let samples = |d: &[Dense]| {
        d.iter()
            .flat_map(|x| x.counts.iter())
            .fold(0u64, |a, c| a.saturating_add(*c))
    };
    let method = if a.len() >= MIN_RUNS && b.len() >= MIN_RUNS {
        Method::Runs
    } else {
        Method::Samples
    };
    let mut pa = vec![0u64; g];
    let mut pb = vec![0u64; g];
    pool(da, 0..da.len(), &mut pa);
    pool(db, 0..db.len(), &mut pb);
    let point: Vec<(i64, i64)> = stats
        .iter()
        .map(|&s| (stat_of(s, grid, &pa), stat_of(s, grid, &pb)))
        .collect();

    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut ratios: Vec<Vec<f64>> = vec![Vec::with_capacity(ITERATIONS); stats.len()];
    let mut ra = vec![0u64; g];
    let mut rb = vec![0u64; g];
    // Subsamples for the maximum.
    let mut ma = vec![0u64; g];
    let mut mb = vec![0u64; g];
    let sub = 1.0 / MAX_SUBSAMPLE as f64;
    let wants_max = stats.contains(&Stat::Max);
    // Pooled counts of the resampled runs (the runs method), from which
    // the samples are then redrawn: with a few runs a side, resampling the
    // runs alone leaves out how few samples each run has in its tail and
    // gives intervals far too narrow (17 % false differences on the
    // maximum with 3 runs a side); the two-stage bootstrap does not.
    let mut ca = vec![0u64; g];
    let mut cb = vec![0u64; g];
    for _ in 0..ITERATIONS {
        let (sa, sb) = match method {
            Method::Runs => {
                let ka: Vec<usize> = (0..da.len())
                    .map(|_| rng.random_range(0..da.len()))
                    .collect();
                let kb: Vec<usize> = (0..db.len())
                    .map(|_| rng.random_range(0..db.len()))
                    .collect();
                pool(da, ka.into_iter(), &mut ca);
                pool(db, kb.into_iter(), &mut cb);
                (&ca, &cb)
            }
            Method::Samples => (&pa, &pb),
        };
        for (r, &c) in ra.iter_mut().zip(sa) {
            *r = poisson(&mut rng, c as f64);
        }
        for (r, &c) in rb.iter_mut().zip(sb) {
            *r = poisson(&mut rng, c as f64);
        }
        if wants_max {
            for (r, &c) in ma.iter_mut().zip(sa) {
                *r = poisson(&mut rng, c as f64 * sub);
            }
            for (r, &c) in mb.iter_mut().zip(sb) {
                *r = poisson(&mut rng, c as f64 * sub);
            }
        }
        for (k, &s) in stats.iter().enumerate() {
            let (xa, xb) = if s == Stat::Max {
                (&ma, &mb)
            } else {
                (&ra, &rb)
            };
            ratios[k].push(ratio(stat_of(s, grid, xa), stat_of(s, grid, xb)));
        }
    }
    let rows = stats
        .iter()
        .zip(point)
        .zip(ratios)
        .map(|((s, (va, vb)), mut rs)| {
            rs.sort_by(|x, y| x.partial_cmp(y).unwrap_or(std::cmp::Ordering::Equal));
            let q = |p: f64| rs[((p * (rs.len() - 1) as f64).round() as usize).min(rs.len() - 1)];
            let (lo, hi) = if rs.is_empty() {
                (1.0, 1.0)
            } else {
                (q(0.025), q(0.975))
            };
            let verdict = if beyond.binary_search(&va).is_ok() || beyond.binary_search(&vb).is_ok()
            {
                Verdict::Beyond
            } else if (vb - va).abs() <= gr.tolerance(va, vb) {
                // One bucket apart: the histogram cannot tell them apart.
                Verdict::Same
            } else if lo > 1.0 {
                Verdict::Worse
            } else if hi < 1.0 {
                Verdict::Better
            } else {
                Verdict::Same
            };
            Row {
                stat: s.name(),
                a_ns: va,
                b_ns: vb,
                ratio: ratio(va, vb),
                ci_low: lo,
                ci_high: hi,
                verdict,
            }
        })
        .collect();
    Comparison {
        runs_a: a.len(),
        runs_b: b.len(),
        samples_a: samples(da),
        samples_b: samples(db),
        method,
        iterations: ITERATIONS,
        rows,
        available: crate::noise_compare::compare_available(a, b, method, seed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_names_parse() {
        assert_eq!(Stat::parse("p99.9").unwrap(), Stat::Percentile(99.9));
        assert_eq!(Stat::parse("max").unwrap(), Stat::Max);
        assert_eq!(Stat::parse("50").unwrap().name(), "p50");
        assert!(Stat::parse("p100").is_err());
        assert!(Stat::parse("mean").is_err());
    }

    #[test]
    fn percentile_and_max_on_a_grid_match_hand_values() {
        let grid = [10, 20, 30, 1000];
        let counts = [50, 40, 9, 1];
        // n = 100: p50 is the 50th sample (10), p90 the 90th (20), p99 the
        // 99th (30), max 1000.
        assert_eq!(stat_of(Stat::Percentile(50.0), &grid, &counts), 10);
        assert_eq!(stat_of(Stat::Percentile(90.0), &grid, &counts), 20);
        assert_eq!(stat_of(Stat::Percentile(99.0), &grid, &counts), 30);
        assert_eq!(stat_of(Stat::Percentile(99.5), &grid, &counts), 1000);
        assert_eq!(stat_of(Stat::Max, &grid, &counts), 1000);
        assert_eq!(stat_of(Stat::Max, &grid, &[0, 0, 0, 0]), 0);
    }
}
