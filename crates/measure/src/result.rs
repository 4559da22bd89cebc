//! [`Measurement`] → [`RunResult`] (the file schema).

use crate::Measurement;
use rtshield_results::{ProgramResult, RunResult, Settings, ThreadResult, SCHEMA};
use rtshield_sys::SysInfo;
use rtshield_text::secret::redact;
use std::collections::BTreeMap;

/// What the caller knows that the engine does not.
#[derive(Debug, Clone, Default)]
pub struct ResultContext {
    /// argv of the command that produced the run.
    pub command: Vec<String>,
    /// The configuration file's text, when run from one.
    pub config: Option<String>,
    /// A short label for reports, `None`: the output directory's name is used by readers.
    pub label: Option<String>,
    /// Provenance tags written with the run (isolation, load, partition, campaign axes).
    pub tags: BTreeMap<String, String>,
    /// The load programs and built-in loads that ran beside the measurement.
    pub programs: Vec<ProgramResult>,
    /// Added after the engine's own warnings.
    pub warnings: Vec<String>,
    /// The machine as read at the start of the run.
    pub sysinfo: SysInfo,
    /// The limits the run is judged against (`--max-latency`): recorded
    /// with the verdict in the result when any is given.
    pub limits: rtshield_results::Limits,
    /// The drift watch's events and figures (`rtshield-run` watches;
    /// default: not watched).
    pub drift: rtshield_results::Drift,
}

impl Measurement {
    /// The measurement as the file schema, with what the caller knows from `ctx`.
    pub fn to_result(&self, ctx: &ResultContext) -> RunResult {
        let spec = &self.spec;
        let threads: Vec<ThreadResult> = self
            .threads
            .iter()
            .map(|t| {
                let h = &t.hist;
                ThreadResult {
                    index: t.spec.index,
                    tid: Some(t.tid),
                    cpu: t.cpu,
                    policy: Some(t.policy),
                    priority: Some(t.priority),
                    requested_policy: (t.policy != t.spec.policy).then_some(t.spec.policy),
                    period_ns: Some(t.spec.period_ns),
                    samples: Some(t.exact.lat.count),
                    // No sample yet: no minimum, maximum, mean or last
                    // sample (unknown, never 0).
                    min_ns: t.exact.lat.min(),
                    max_ns: t.exact.lat.max(),
                    cur_ns: (t.exact.lat.count > 0).then_some(t.exact.cur),
                    avg_ns: t.exact.lat.mean(),
                    overruns: Some(t.exact.overruns),
                    missed_periods: Some(t.exact.missed),
                    lost: Some(t.exact.lost),
                    histogram: Some(h.to_histogram()),
                    hist_stats: Some(h.hist_stats()),
                    percentiles: h.percentiles(),
                    percentile_bounds: Default::default(),
                    corrected: Some(h.corrected()),
                    worst_cases: h.worst.clone(),
                    split: t.split.clone(),
                    le_counts: Some(h.le.cumulative()),
                    // A lost sample shifts every later number: unknown then.
                    overflow_cycles: (t.exact.lost == 0).then(|| h.overflow_at.clone()),
                }
            })
            .collect();
        let verdict = (!ctx.limits.is_empty())
            .then(|| rtshield_results::Verdict::judge(&threads, ctx.limits));
        let mut warnings = self.warnings.clone();
        warnings.extend(ctx.warnings.iter().cloned());
        RunResult {
            kind: Default::default(),
            noise: None,
            schema: SCHEMA.to_string(),
            tool: format!("rtshield {}", env!("CARGO_PKG_VERSION")),
            label: ctx.label.clone(),
            started_at: Some(self.started_at.clone()),
            duration_s: Some(self.elapsed_ns as f64 / 1e9),
            // Redacted again here, whoever built the context: every
            // result file and stored run is made from this.
            command: rtshield_text::secret::redact_args(&ctx.command),
            config: ctx.config.as_deref().map(|c| redact(c).into_owned()),
            settings: Settings {
                mode: Some(spec.mode.name().to_string()),
                resolution_ns: spec.resolution_ns,
                histo_buckets: Some(spec.histo_size_ns / spec.resolution_ns.max(1) + 1),
                stats_period_ns: Some(spec.stats_period_ns),
                requested_duration_ns: spec.duration_ns,
                requested_samples: spec.samples,
                memlock: Some(self.memlocked),
                cpu_dma_latency: self.cpu_dma_latency,
            },
            sysinfo: ctx.sysinfo.clone(),
            warnings,
            end_reason: Some(self.end.name()),
            threads,
            programs: ctx
                .programs
                .iter()
                .map(|p| ProgramResult {
                    command: redact(&p.command).into_owned(),
                    ..p.clone()
                })
                .collect(),
            tags: ctx.tags.clone(),
            trace: self.trace.clone(),
            verdict,
            drift: ctx.drift.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{Accum, ThreadHistograms};
    use crate::{EndReason, MeasureSpec, ThreadMeasurement};
    use rtshield_vocab::Policy;

    /// A finished one-thread measurement fed with `samples` (ns) the way
    /// the engine feeds them: the thread's exact accumulator, and the
    /// histograms on the main thread.
    fn measured(histo_size_ns: u64, samples: &[i64]) -> Measurement {
        let mut spec = MeasureSpec::new(&[1], 200_000);
        spec.histo_size_ns = histo_size_ns;
        let mut exact = Accum::default();
        let mut hist = ThreadHistograms::new(histo_size_ns, 1000);
        for &v in samples {
            exact.add(v);
            hist.record(v, 0, 200_000);
        }
        Measurement {
            threads: vec![ThreadMeasurement {
                spec: spec.threads[0].clone(),
                tid: 4242,
                cpu: Some(1),
                policy: Policy::Fifo,
                priority: 98,
                fallback: None,
                exact,
                hist,
                split: None,
            }],
            spec,
            started_at: "2026-11-22T05:47:39Z".into(),
            elapsed_ns: 2_000_000,
            end: EndReason::Samples,
            warnings: vec![],
            cpu_dma_latency: Some(0),
            memlocked: true,
            partial: false,
            trace: None,
        }
    }

    #[test]
    fn overflow_samples_count_in_min_max_avg_not_in_the_h_columns() {
        // The systress article's situation: a 20 us histogram, and samples beyond it.
        // In us: 2.4 3.0 17.2 17.9 17.0 18.5 20.999 | 25.0 100.3 (overflow).
        let m = measured(
            20_000,
            &[
                2_400, 3_000, 17_200, 17_900, 17_000, 18_500, 20_999, 25_000, 100_300,
            ],
        );
        let r = m.to_result(&ResultContext::default());
        let t = &r.threads[0];
        // Exact figures over all nine: sum 222 299 ns.
        assert_eq!(
            (t.samples, t.min_ns, t.max_ns),
            (Some(9), Some(2_400), Some(100_300))
        );
        assert!((t.avg_ns.unwrap() - 222_299.0 / 9.0).abs() < 1e-9);
        let th = t.histogram.as_ref().unwrap();
        assert_eq!(th.overflow, 2);
        assert_eq!(th.counts, vec![[2, 1], [3, 1], [17, 3], [18, 1], [20, 1]]);
        // Over the histogram: buckets 2 3 17 17 17 18 20 (us): n 7, mean
        // 94/7 = 13.43, lower median (rank 4) 17, mode 17, population
        // variance 1604/7 - (94/7)^2 = 48.82 -> std 6.99.
        let h = t.hist_stats.as_ref().unwrap();
        assert_eq!(h.samples, 7);
        assert!((h.avg_ns - 94_000.0 / 7.0).abs() < 1e-6);
        assert_eq!((h.median_ns, h.mode_ns), (17_000, 17_000));
        let var = 1604.0 / 7.0 - (94.0f64 / 7.0).powi(2);
        assert!((h.std_ns - var.sqrt() * 1000.0).abs() < 1e-6);
        // Nine samples support p50 only: p99.9999 is "not enough
        // samples" (it would only repeat the maximum).
        assert_eq!(t.percentiles.keys().collect::<Vec<_>>(), ["50"]);
        // The systress SUMMARY line: L_avg 24.7 -> 25 (with the overflow;
        // 13 without), L_avg_H 13, L_std_H 7.
        let txt = rtshield_results::to_systress_txt(&r, t);
        assert_eq!(
            txt.lines().last().unwrap(),
            "#      0  4242        9      2    100     25          7       13       17        7        17"
        );
        assert!(txt.starts_with("       0        0\n       1        0\n       2        1\n"));
        assert_eq!(txt.lines().position(|l| l.is_empty()), Some(21));
    }

    /// Issue 22: a thread stopped before its first wake-up has no
    /// minimum, maximum, mean or last sample; results.json says null.
    #[test]
    fn a_thread_without_samples_has_unknown_figures() {
        let r = measured(100_000, &[]).to_result(&ResultContext::default());
        let t = &r.threads[0];
        assert_eq!(t.samples, Some(0));
        assert_eq!((t.min_ns, t.max_ns, t.cur_ns), (None, None, None));
        assert_eq!(t.avg_ns, None);
        let json = rtshield_results::to_json(&r);
        for k in ["min_ns", "max_ns", "avg_ns", "cur_ns"] {
            assert!(json.contains(&format!("\"{k}\": null")), "{k}: {json}");
        }
    }

    #[test]
    fn the_example_fixture_is_what_the_engine_computes() {
        // rtshield_results::example_result documents its figures; check them here.
        let m = measured(
            100_000,
            &[
                2_100, 3_500, 3_500, 3_500, 4_700, 5_500, 5_500, 6_900, 20_900, 150_400,
            ],
        );
        let r = m.to_result(&ResultContext::default());
        let ex = rtshield_results::example_result();
        let (t, e) = (&r.threads[0], &ex.threads[0]);
        assert_eq!(
            (t.samples, t.min_ns, t.max_ns, t.avg_ns),
            (e.samples, e.min_ns, e.max_ns, e.avg_ns)
        );
        assert_eq!(t.histogram, e.histogram);
        assert_eq!(t.hist_stats, e.hist_stats);
        assert_eq!(t.percentiles, e.percentiles);
        assert_eq!(t.corrected, e.corrected);
        assert_eq!(t.le_counts, e.le_counts);
        assert_eq!(t.overflow_cycles, e.overflow_cycles);
        assert_eq!(r.settings.histo_buckets, ex.settings.histo_buckets);
        assert_eq!(r.verdict, None, "no limit given: no verdict");
    }

    #[test]
    fn the_verdict_is_recorded_with_its_limit() {
        let m = measured(100_000, &[2_100, 150_400]);
        let r = m.to_result(&ResultContext {
            limits: rtshield_results::Limits {
                max_latency_ns: Some(100_000),
            },
            ..Default::default()
        });
        let v = r.verdict.expect("a limit was given");
        assert!(!v.passed);
        assert_eq!(v.limits.max_latency_ns, Some(100_000));
        assert_eq!(v.threads[0].failures[0].measured, Some(150_400));
    }

    #[test]
    fn overflow_cycle_numbers_as_cyclictest_keeps_them() {
        // A 5 us histogram (cyclictest -h 5): samples of 5 us or more are
        // its overflows, numbered from 0, at most 5 of them listed.
        let m = measured(
            5_000,
            &[
                1_000, 5_000, 2_000, 9_000, 7_000, 6_000, 5_500, 8_000, 1_000,
            ],
        );
        let r = m.to_result(&ResultContext::default());
        let t = &r.threads[0];
        assert_eq!(t.overflow_cycles, Some(vec![1, 3, 4, 5, 6]));
        // Every sample counted at each bound, the overflow included.
        let le = t.le_counts.as_ref().unwrap();
        assert_eq!(le[0], [1_000, 2]);
        assert_eq!(le[2], [5_000, 4]);
        assert_eq!(le[3], [10_000, 9]);
        // cyclictest -h 5 prints 5 rows and 6 overflows, the 6th "others".
        let text = rtshield_results::to_cyclictest_hist(&r);
        assert!(
            text.contains("\n000004 000000\n# Total: 000000003\n"),
            "{text}"
        );
        assert!(text.contains("# Histogram Overflows: 00006\n"), "{text}");
        assert!(
            text.ends_with("# Thread 0: 00001 00003 00004 00005 00006 # 00001 others\n\n"),
            "{text}"
        );
    }
}
