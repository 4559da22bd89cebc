//! Issue 22, "round trip": for every format rtshield writes and reads back
//! (results.json, cyclictest JSON, cyclictest `-h` text, the systress
//! text), a generated run → write → read gives back the same policy,
//! priority, period, duration, counts and percentiles, or unknown where
//! the format cannot carry them: never 0, never a guess. (The store's
//! round trip is in rtshield-store's tests.)

use proptest::prelude::*;
use rtshield_results::*;
use rtshield_vocab::Policy;
use std::path::Path;

/// One generated thread: µs values (cyclictest's unit), a histogram of
/// `size` µs (rtshield's buckets `0..=size`) whose last bucket is empty
/// (cyclictest's `-h size` has no row for it), `overflow` samples past it.
#[derive(Debug, Clone)]
struct Gen {
    policy: Policy,
    priority: i32,
    period_us: u64,
    size: u64,
    counts: Vec<(u64, u64)>,
    overflow: u64,
    beyond_us: u64,
}

fn thread_gen(size: u64) -> impl Strategy<Value = Gen> {
    (
        prop_oneof![
            (1i32..=99).prop_map(|p| (Policy::Fifo, p)),
            (1i32..=99).prop_map(|p| (Policy::Rr, p)),
            Just((Policy::Other, 0)),
        ],
        100u64..=10_000,
        prop::collection::vec((0u64..1000, 1u64..5000), 1..12),
        0u64..40,
        0u64..5000,
        // A thread that measured nothing (a run stopped before its first
        // wake-up): no minimum, maximum or mean, never 0.
        prop::bool::weighted(0.15),
    )
        .prop_map(
            move |((policy, priority), period_us, raw, overflow, beyond_us, empty)| {
                let mut m = std::collections::BTreeMap::new();
                for (b, c) in raw {
                    *m.entry(b % size).or_insert(0) += c;
                }
                if empty {
                    m.clear();
                }
                Gen {
                    policy,
                    priority,
                    period_us,
                    size,
                    counts: m.into_iter().collect(),
                    overflow: if empty { 0 } else { overflow },
                    beyond_us,
                }
            },
        )
}

fn thread(i: u32, g: &Gen) -> ThreadResult {
    let mut t = example_result().threads.remove(0);
    let h = Histogram {
        resolution_ns: 1000,
        buckets: g.size + 1,
        counts: g.counts.iter().map(|&(b, c)| [b, c]).collect(),
        overflow: g.overflow,
        underflow: 0,
    };
    let n: u64 = g.counts.iter().map(|c| c.1).sum::<u64>() + g.overflow;
    let min = g.counts.first().map(|c| c.0 as i64 * 1000);
    let max = if g.overflow > 0 {
        Some((g.size + 1 + g.beyond_us) as i64 * 1000)
    } else {
        g.counts.last().map(|c| c.0 as i64 * 1000)
    };
    let (percentiles, percentile_bounds) = hist_percentiles(&h);
    t.index = i;
    t.tid = Some(1000 + i as i32);
    t.cpu = Some(i);
    t.policy = Some(g.policy);
    t.priority = Some(g.priority);
    t.period_ns = Some(g.period_us * 1000);
    t.samples = Some(n);
    t.min_ns = min;
    t.max_ns = max;
    t.cur_ns = max;
    // Whole hundredths of a µs: what cyclictest's `%.2f` carries.
    t.avg_ns = min
        .zip(max)
        .map(|(min, max)| ((min + max) / 20) as f64 * 10.0);
    t.overruns = Some(g.overflow / 2);
    t.missed_periods = Some(g.overflow);
    t.lost = Some(0);
    t.hist_stats = Some(hist_stats(&h));
    t.histogram = Some(h);
    t.percentiles = percentiles;
    t.percentile_bounds = percentile_bounds;
    t.corrected = None;
    t.worst_cases = Vec::new();
    t.le_counts = None;
    t.overflow_cycles = None;
    t
}

fn run_gen() -> impl Strategy<Value = RunResult> {
    // One histogram size for the run (`--histo-size`), 10..300 µs.
    (10u64..=300)
        .prop_flat_map(|size| {
            (
                prop::collection::vec(thread_gen(size), 1..=3),
                1u64..=86_400_000,
            )
        })
        .prop_map(|(gens, ms)| {
            let mut r = example_result();
            r.duration_s = Some(ms as f64 / 1000.0);
            r.settings.histo_buckets = Some(gens[0].size + 1);
            r.threads = gens
                .iter()
                .enumerate()
                .map(|(i, g)| thread(i as u32, g))
                .collect();
            r
        })
}

/// The histogram as cyclictest's `-h N` formats carry it: rows `0..N-1`.
fn as_cyclictest(h: &Histogram) -> Histogram {
    Histogram {
        buckets: h.buckets - 1,
        ..h.clone()
    }
}

/// What every reader must give back for thread `t` (read back as `got`):
/// the counts, the percentiles of those counts (exact or a bound, never
/// the maximum), min and max, and policy, priority and period when
/// `settings` says the format carries them.
/// (`avg_ns`: the format's precision of the mean, whole µs in the text
/// formats.)
fn same_thread(
    t: &ThreadResult,
    got: &ThreadResult,
    hist: &Histogram,
    settings: bool,
    avg_ns: f64,
) {
    assert_eq!(got.samples, t.samples);
    assert_eq!((got.min_ns, got.max_ns), (t.min_ns, t.max_ns));
    match (got.avg_ns, t.avg_ns) {
        (Some(g), Some(w)) => assert!((g - w).abs() <= avg_ns, "{g} {w}"),
        // Unknown (no sample) stays unknown: never 0.
        (g, w) => assert_eq!(g, w),
    }
    assert_eq!(got.histogram.as_ref(), Some(hist));
    let (p, b) = hist_percentiles(hist);
    let n = t.samples.unwrap();
    for k in PERCENTILES {
        let want = if !percentile_supported(k, n) {
            Pct::NotEnoughSamples
        } else if let Some(v) = p.get(*k) {
            Pct::Exact(*v)
        } else if let Some(x) = b.get(*k) {
            Pct::AtLeast(x.at_least_ns, &x.reason)
        } else {
            Pct::Unknown
        };
        assert_eq!(got.pct(k), want, "p{k}");
    }
    if settings {
        assert_eq!(
            (got.policy, got.priority, got.period_ns),
            (t.policy, t.priority, t.period_ns)
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// results.json: everything, exactly.
    #[test]
    fn results_json_round_trips(r in run_gen()) {
        let text = to_json(&r);
        let back = parse_json(&text, Path::new("results.json")).unwrap();
        prop_assert_eq!(back, r);
    }

    /// cyclictest JSON (`export --format cyclictest-json`): policy,
    /// priority and period from the command line it carries, the
    /// duration from its start and end times (whole seconds), counts and
    /// percentiles; what it cannot carry (overruns) unknown.
    #[test]
    fn cyclictest_json_round_trips(mut r in run_gen()) {
        // The command line a run of these threads had (one policy, one
        // period for all: what rtshield's command line can say).
        let t0 = r.threads[0].clone();
        for t in &mut r.threads {
            t.policy = t0.policy;
            t.priority = t0.priority;
            t.period_ns = t0.period_ns;
        }
        let pol = t0.policy.unwrap().name();
        r.command = ["rtshield", "measure", "--cpus", "0-2", "--policy", pol, "--prio",
            &t0.priority.unwrap().to_string(), "--period",
            &format!("{}us", t0.period_ns.unwrap() / 1000), "--histo-size",
            &format!("{}us", r.settings.histo_buckets.unwrap() - 1)]
            .map(str::to_string).to_vec();
        let text = to_cyclictest_json(&r, &Limits::default());
        let back = read_cyclictest_json(&text, "c.json").unwrap();
        prop_assert_eq!(back.duration_s, Some(r.duration_s.unwrap().round()));
        prop_assert_eq!(back.threads.len(), r.threads.len());
        for (t, got) in r.threads.iter().zip(&back.threads) {
            // rtshield's command line says `--histo-size`: its buckets.
            same_thread(t, got, t.histogram.as_ref().unwrap(), true, 5.0);
            prop_assert_eq!(got.overruns, None);
            prop_assert_eq!(got.lost, None);
        }
    }

    /// rtshield's `histogram.txt` (cyclictest's `-h` layout plus `#`
    /// lines): everything the `#` lines carry, the duration to the ms.
    #[test]
    fn cyclictest_hist_round_trips(r in run_gen()) {
        let text = to_cyclictest_hist(&r);
        let back = read_cyclictest_hist(&text, "histogram.txt").unwrap();
        let d = back.duration_s.unwrap();
        prop_assert!((d - r.duration_s.unwrap()).abs() < 0.0005, "{}", d);
        prop_assert_eq!(back.end_reason.as_deref(), r.end_reason.as_deref());
        prop_assert_eq!(back.threads.len(), r.threads.len());
        for (t, got) in r.threads.iter().zip(&back.threads) {
            same_thread(t, got, &as_cyclictest(t.histogram.as_ref().unwrap()), true, 1000.0);
            prop_assert_eq!((got.overruns, got.missed_periods), (t.overruns, t.missed_periods));
        }
    }

    /// The systress text (`timer_threadNN.txt`), one thread per file.
    #[test]
    fn systress_txt_round_trips(r in run_gen()) {
        for t in &r.threads {
            let text = to_systress_txt(&r, t);
            let back = read_systress_txt(&text, "timer_thread00.txt").unwrap();
            let d = back.duration_s.unwrap();
            prop_assert!((d - r.duration_s.unwrap()).abs() < 0.0005, "{}", d);
            let got = &back.threads[0];
            same_thread(t, got, t.histogram.as_ref().unwrap(), true, 500.0);
            prop_assert_eq!((got.overruns, got.missed_periods), (t.overruns, t.missed_periods));
        }
    }
}

/// A source that records no histogram: percentiles unknown after any
/// round trip through results.json, never the maximum.
#[test]
fn no_histogram_stays_unknown_through_results_json() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/report/cyclictest-no-h.json"),
    )
    .unwrap();
    let r = read_cyclictest_json(&text, "c.json").unwrap();
    let back = parse_json(&to_json(&r), Path::new("results.json")).unwrap();
    assert_eq!(back, r);
    let t = &back.threads[0];
    assert!(t.histogram.is_none() && t.hist_stats.is_none());
    assert_eq!(t.pct("50"), Pct::Unknown);
    assert_eq!(t.pct("99.99"), Pct::NotEnoughSamples);
}
