//! Synthetic, deterministic result files for tests and `bench/` scripts
//! (no real measurement needed): a latency histogram shaped like a real
//! one (a peak and a long tail) and a day-long `timeline.csv`.

use rtshield_results::thread_from_histogram;
use rtshield_results::{format_timeline_row, TimelineRow, TIMELINE_FILE, TIMELINE_HEADER};
use rtshield_results::{Histogram, RunResult};
use rtshield_sys::SysInfo;
use std::collections::BTreeMap;
use std::path::Path;

/// xorshift64*: tiny, deterministic, good enough for test data.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [0, 1).
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// One run: one thread per CPU of `cpus`, `samples` each, peak near
/// `peak_us`, a tail whose weight grows with `tail` (0 = none, 1 = heavy),
/// histogram of `buckets` µs.
pub fn synth_run_result(
    label: &str,
    seed: u64,
    cpus: &[u32],
    samples: u64,
    peak_us: f64,
    tail: f64,
    buckets: u64,
) -> RunResult {
    let mut rng = Rng::new(seed);
    let threads = cpus
        .iter()
        .enumerate()
        .map(|(i, &cpu)| {
            let mut counts: BTreeMap<u64, u64> = BTreeMap::new();
            let (mut min, mut max, mut sum, mut overflow) = (i64::MAX, 0i64, 0f64, 0u64);
            for _ in 0..samples {
                let u = rng.unit();
                // Body: a narrow bump around the peak; tail: exponential.
                let us = if rng.unit() < 0.02 + 0.2 * tail {
                    peak_us + (-u.max(1e-12).ln()) * (5.0 + 60.0 * tail)
                } else {
                    peak_us * (0.8 + 0.4 * u)
                };
                let ns = (us * 1000.0) as i64;
                min = min.min(ns);
                max = max.max(ns);
                sum += ns as f64;
                let b = (ns / 1000) as u64;
                if b >= buckets {
                    overflow += 1;
                } else {
                    *counts.entry(b).or_default() += 1;
                }
            }
            let h = Histogram {
                resolution_ns: 1000,
                buckets,
                counts: counts.into_iter().map(|(b, c)| [b, c]).collect(),
                overflow,
                underflow: 0,
            };
            let mut t = thread_from_histogram(
                i as u32,
                Some(cpu),
                Some(200_000),
                samples,
                (samples > 0).then_some(min),
                (samples > 0).then_some(max),
                (samples > 0).then(|| sum / samples as f64),
                h,
            );
            // What a measured run records beside its histogram.
            t.tid = Some(1000 + i as i32);
            t.policy = Some(rtshield_vocab::Policy::Fifo);
            t.priority = Some(98);
            (t.overruns, t.missed_periods, t.lost) = (Some(0), Some(0), Some(0));
            t
        })
        .collect();
    RunResult {
        kind: Default::default(),
        noise: None,
        schema: rtshield_results::SCHEMA.into(),
        tool: "rtshield 0.1.0".into(),
        label: Some(label.into()),
        started_at: Some("2026-11-22T06:00:00Z".into()),
        duration_s: Some(samples as f64 * 200e-6),
        command: vec![
            "rtshield".into(),
            "measure".into(),
            "--period".into(),
            "200us".into(),
        ],
        config: Some("main {\n  stats.period = 5 s\n}\n".into()),
        settings: rtshield_results::Settings {
            mode: Some("nanosleep".into()),
            resolution_ns: 1000,
            histo_buckets: Some(buckets),
            stats_period_ns: Some(5_000_000_000),
            requested_duration_ns: None,
            requested_samples: Some(samples),
            memlock: Some(true),
            cpu_dma_latency: None,
        },
        sysinfo: SysInfo {
            hostname: Some("testbox".into()),
            kernel_release: Some("6.1.0-rt".into()),
            arch: "x86_64".into(),
            preempt_model: Some("PREEMPT_RT".into()),
            cpu_count: 4,
            ..Default::default()
        },
        warnings: vec![],
        end_reason: Some("samples".into()),
        threads,
        programs: vec![],
        tags: BTreeMap::from([(
            "load".to_string(),
            if tail > 0.0 { "cpu" } else { "none" }.to_string(),
        )]),
        trace: None,
        verdict: None,
        drift: Default::default(),
    }
}

/// `intervals` rows per thread in the format `rtshield run` writes
/// (`elapsed_s,phase,thread,cpu,…,ival_max_ns,max_max_ns,…`), 5 s apart,
/// alternating 5 min `load` and 30 s `rest` as in the torture article.
pub fn synth_timeline_csv(seed: u64, intervals: usize, cpus: &[u32]) -> String {
    let mut rng = Rng::new(seed);
    let mut s = String::with_capacity(intervals * cpus.len() * 80 + 200);
    s.push_str(TIMELINE_HEADER);
    s.push('\n');
    let mut maxmax = vec![0u64; cpus.len()];
    for i in 0..intervals {
        let t = (i as u64 + 1) * 5;
        let phase = if (t - 5) % 330 < 300 { "load" } else { "rest" };
        for (k, &cpu) in cpus.iter().enumerate() {
            let base = if phase == "load" { 40_000 } else { 15_000 };
            let spike = if rng.unit() < 0.001 {
                (rng.unit() * 900_000.0) as u64
            } else {
                0
            };
            let max = base + (rng.unit() * 30_000.0) as u64 + spike;
            maxmax[k] = maxmax[k].max(max);
            let load = if phase == "load" { 98.5 } else { 1.5 };
            s.push_str(&format_timeline_row(&TimelineRow {
                elapsed_s: t as f64,
                phase,
                thread: k as u32,
                cpu: Some(cpu),
                samples: (i as u64 + 1) * 25000,
                ival_samples: 25000,
                ival_min_ns: 2000,
                ival_avg_ns: 6500.0,
                ival_max_ns: max as i64,
                max_max_ns: maxmax[k] as i64,
                overruns: 0,
                lost: 0,
                load_total: Some(load),
                load_cpus: Vec::new(),
            }));
            s.push('\n');
        }
    }
    s
}

/// Write `results.json` (and `timeline.csv`) into `dir` (created with its
/// missing parents), through the path layer like every file rtshield
/// writes.
pub fn write_synth_run_dir(
    dir: &Path,
    r: &RunResult,
    timeline: Option<&str>,
) -> std::io::Result<()> {
    use rtshield_safefs::{DirPolicy, SafeDir};
    let d = SafeDir::open_or_create(dir, 0o755, DirPolicy::Strict)?;
    d.write("results.json", serde_json::to_string_pretty(r)?.as_bytes())?;
    if let Some(t) = timeline {
        d.write(TIMELINE_FILE, t.as_bytes())?;
    }
    Ok(())
}
