//! A small, fixed [`RunResult`] for tests and documentation (used by the
//! tests of this crate and of the crates that read results).

use crate::*;
use std::collections::BTreeMap;

/// One thread on CPU 1, 10 samples of 2.1, 3.5, 3.5, 3.5, 4.7, 5.5, 5.5,
/// 6.9, 20.9 and 150.4 µs (the last overflows a 100 µs histogram). The
/// figures are those the engine computes from these samples (checked by
/// rtshield-measure's tests).
pub fn example_result() -> RunResult {
    let pct = |v: &[i64]| -> BTreeMap<String, i64> {
        PERCENTILES
            .iter()
            .zip(v)
            .map(|(k, v)| (k.to_string(), *v))
            .collect()
    };
    RunResult {
        kind: Default::default(),
        noise: None,
        schema: SCHEMA.into(),
        tool: "rtshield 0.1.0".into(),
        label: Some("example".into()),
        started_at: Some("2026-11-22T05:47:39Z".into()),
        duration_s: Some(0.002),
        command: vec![
            "rtshield".into(),
            "measure".into(),
            "--cpus".into(),
            "1".into(),
        ],
        config: None,
        settings: Settings {
            mode: Some("nanosleep".into()),
            resolution_ns: 1000,
            histo_buckets: Some(101),
            stats_period_ns: Some(1_000_000_000),
            requested_duration_ns: None,
            requested_samples: Some(10),
            memlock: Some(true),
            cpu_dma_latency: Some(0),
        },
        sysinfo: rtshield_sys::SysInfo {
            kernel_release: Some("6.18.0".into()),
            arch: "x86_64".into(),
            cpus_online: Some("0-1".into()),
            cpu_count: 2,
            ..Default::default()
        },
        warnings: vec![],
        end_reason: Some("samples".into()),
        threads: vec![ThreadResult {
            index: 0,
            tid: Some(4242),
            cpu: Some(1),
            policy: Some(rtshield_vocab::Policy::Fifo),
            priority: Some(98),
            requested_policy: None,
            period_ns: Some(200_000),
            samples: Some(10),
            min_ns: Some(2_100),
            max_ns: Some(150_400),
            cur_ns: Some(150_400),
            avg_ns: Some(20_650.0),
            overruns: Some(0),
            missed_periods: Some(0),
            lost: Some(0),
            histogram: Some(Histogram {
                resolution_ns: 1000,
                buckets: 101,
                counts: vec![[2, 1], [3, 3], [4, 1], [5, 2], [6, 1], [20, 1]],
                overflow: 1,
                underflow: 0,
            }),
            hist_stats: Some(HistStats {
                samples: 9,
                avg_ns: 5666.666666666667,
                median_ns: 4000,
                std_ns: 5206.833117271102,
                mode_ns: 3000,
            }),
            // HDR answers are the top of their 3-digit equivalence range
            // (4.7 µs -> 4703 ns), capped at the exact maximum. Ten
            // samples support p50 and p90 only (a percentile q needs
            // 1/(1 − q) samples).
            percentiles: pct(&[4_703, 20_911]),
            percentile_bounds: BTreeMap::new(),
            corrected: Some(Corrected {
                samples: 10,
                max_ns: Some(150_400),
                percentiles: pct(&[4_703, 20_911]),
            }),
            worst_cases: vec![],
            split: None,
            le_counts: Some(
                LE_BOUNDS_NS
                    .iter()
                    .map(|&b| {
                        let n = [0, 0, 5, 8, 8, 9, 9]
                            .get(LE_BOUNDS_NS.iter().position(|&x| x == b).unwrap_or(99));
                        [b, *n.unwrap_or(&10)]
                    })
                    .collect(),
            ),
            // The 150.4 us sample, the 10th, is past the 100 us histogram.
            overflow_cycles: Some(vec![9]),
        }],
        programs: vec![],
        tags: BTreeMap::new(),
        trace: None,
        verdict: None,
        drift: Default::default(),
    }
}
