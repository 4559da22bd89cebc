//! Annex A's fixed-point statistics, RT0 latency accounting, and the
//! report built at the end of a run.

use crate::engine::{Class, Engine, MIG_KIND_NAMES};
use hdrhistogram::Histogram;
use rtshield_scenario::{
    group_reports, BalanceReport, CpuReport, LatencySummary, RunSummary, TaskReport, BALANCE_SCHEMA,
};
use serde::Serialize;
use std::collections::BTreeMap;

// Annex A, migration-attempt period: 11 bits, weight 2028/2048 (~100 attempts).
pub(crate) const FSHIFT_P: u32 = 11;
pub(crate) const FIXED_P_1: u128 = 1 << FSHIFT_P;
pub(crate) const EXP_PERIOD: u128 = 2028;

// Annex A, RT share: 15 bits, e^(-1/500) per tick.
pub(crate) const FSHIFT_RT: u32 = 15;
pub(crate) const FIXED_RT_1: u64 = 1 << FSHIFT_RT;
pub(crate) const EXP_RT: u64 = 32703;
/// The largest value the truncating update can reach: 32264 (0.9846).
pub(crate) const MAX_RT: u64 = FIXED_RT_1 - FIXED_RT_1 / (FIXED_RT_1 - EXP_RT);

/// `CALC_PERIOD`: period = (period·2028 + n·20) >> 11 (n in fixed point).
pub(crate) fn calc_period(period: u128, n: u128) -> u128 {
    (period * EXP_PERIOD + n * (FIXED_P_1 - EXP_PERIOD)) >> FSHIFT_P
}

/// `CALC_RT` for one tick: 1 in the mean if an RT task was running.
pub(crate) fn calc_rt(load: u64, rt_running: bool) -> u64 {
    let n = if rt_running { FIXED_RT_1 } else { 0 };
    (load * EXP_RT + n * (FIXED_RT_1 - EXP_RT)) >> FSHIFT_RT
}

/// The thesis multiplier M = 1 / (1 − RT), with RT ≤ MAX_RT < 1.
pub(crate) fn rt_multiplier(rt: u64) -> f64 {
    let rt = rt.min(MAX_RT);
    FIXED_RT_1 as f64 / (FIXED_RT_1 - rt) as f64
}

/// The 2005 patch's `get_rt_ratio()`: ⌊MAX_RT / (MAX_RT − rt)⌋, the
/// denominator forced to 1 when it would be 0.
pub(crate) fn rt_ratio_2005(rt: u64) -> u64 {
    let rt = rt.min(MAX_RT);
    let nrt = if MAX_RT - rt == 0 { 1 } else { MAX_RT - rt };
    (nrt + rt) / nrt
}

/// Upper bounds (ns) of the latency histogram buckets in the report.
pub(crate) const LATENCY_BUCKETS: [u64; 19] = [
    0,
    1_000,
    2_000,
    5_000,
    10_000,
    20_000,
    50_000,
    100_000,
    200_000,
    500_000,
    1_000_000,
    2_000_000,
    5_000_000,
    10_000_000,
    20_000_000,
    50_000_000,
    100_000_000,
    1_000_000_000,
    u64::MAX,
];

/// RT0 wake-up latencies on one CPU.
pub(crate) struct LatencyAcc {
    pub count: u64,
    pub sum: u128,
    pub min: u64,
    pub max: u64,
    pub buckets: [u64; LATENCY_BUCKETS.len()],
    hist: Histogram<u64>,
}

impl LatencyAcc {
    pub(crate) fn new() -> Self {
        LatencyAcc {
            count: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
            buckets: [0; LATENCY_BUCKETS.len()],
            hist: Histogram::new(3).expect("3 significant digits is valid"),
        }
    }

    pub(crate) fn record(&mut self, ns: u64) {
        self.count += 1;
        self.sum += u128::from(ns);
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        let i = LATENCY_BUCKETS.iter().position(|&b| ns <= b).unwrap();
        self.buckets[i] += 1;
        let _ = self.hist.record(ns);
    }

    fn summary(&self, cpu: usize) -> LatencySummary {
        LatencySummary {
            cpu: cpu as u32,
            samples: self.count,
            // No wake-up on the CPU: no figure (unknown, never 0).
            min_ns: (self.count > 0).then_some(self.min),
            avg_ns: (self.count > 0).then(|| self.sum as f64 / self.count as f64),
            max_ns: (self.count > 0).then_some(self.max),
            p99_ns: (self.count > 0).then(|| self.hist.value_at_quantile(0.99).min(self.max)),
            histogram: LATENCY_BUCKETS
                .iter()
                .zip(self.buckets.iter())
                .filter(|(_, &n)| n > 0)
                .map(|(&b, &n)| [b, n])
                .collect(),
        }
    }
}

impl Default for LatencyAcc {
    fn default() -> Self {
        Self::new()
    }
}

/// What the simulator reports beyond the shared balance report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimExtra {
    /// Events processed (ticks included).
    pub events: u64,
    /// Simulated time at the end of the run, ns.
    pub simulated_ns: u64,
    /// The tick used, ns.
    pub tick_ns: u64,
    /// The iteration rate used (iterations per µs).
    pub loops_per_us: f64,
    /// The masking-section length used, ns.
    pub mask_len_ns: u64,
    /// The FIFO migration cost used, ns.
    pub migration_cost_ns: u64,
    /// The locked-balance cost used, ns.
    pub lock_cost_ns: u64,
    /// The FIFO push/drain cost used, ns.
    pub fifo_cost_ns: u64,
    /// The ARTiS constant K used.
    pub artis_k: u64,
    /// The ARTiS constant C used, ns.
    pub artis_c_ns: u64,
    /// Time from the start to the first normal task's end: the window over
    /// which `normal_tasks_mean` is averaged.
    pub placement_window_ns: u64,
    /// Per CPU, the time-averaged number of normal tasks that belonged to it
    /// (queued, running or sleeping there) during the placement window.
    pub normal_tasks_mean: Vec<f64>,
    /// Per CPU, the final decayed RT share (annex A), 0..0.9846.
    pub rt_stat: Vec<f64>,
    /// Interrupt-masking sections executed, in total and by non-RT0 tasks on RT CPUs.
    pub masking_sections: u64,
    /// Of them, those run by tasks other than RT0 on RT CPUs (what ARTiS must migrate away).
    pub masking_sections_on_rt_by_non_rt0: u64,
}

pub(crate) fn build(e: &Engine) -> (BalanceReport, SimExtra) {
    let n = e.cpus.len();
    let end = e.now;
    let tasks = task_reports(e);
    let groups = group_reports(&tasks, n);
    let span = end.max(1) as f64;
    let cpus: Vec<CpuReport> = e
        .cpus
        .iter()
        .enumerate()
        .map(|(c, cpu)| CpuReport {
            cpu: c as u32,
            idle_share: 1.0 - cpu.busy_ns as f64 / span,
            busy_share: cpu.busy_ns as f64 / span,
            rt_share: cpu.rt_ns as f64 / span,
        })
        .collect();
    let unfinished = e.tasks.iter().filter(|t| t.finish_ns.is_none()).count();
    let migrations_by_kind: BTreeMap<String, u64> = MIG_KIND_NAMES
        .iter()
        .zip(e.mig_kinds.iter())
        .map(|(k, &v)| (k.to_string(), v))
        .collect();
    let rt0_cpus: Vec<usize> = (0..n)
        .filter(|&c| {
            e.latency[c].count > 0 || e.tasks.iter().any(|t| t.class == Class::Rt0 && t.cpu == c)
        })
        .collect();
    let rt0_latency = rt0_cpus.iter().map(|&c| e.latency[c].summary(c)).collect();
    let mut warnings = e.warnings.clone();
    if unfinished > 0 {
        warnings.push(format!(
            "{unfinished} task(s) had not finished when the simulation stopped at {}",
            rtshield_scenario::fmt_ns(end as f64)
        ));
    }
    let report = BalanceReport {
        schema: BALANCE_SCHEMA.to_string(),
        source: "simulation".to_string(),
        balancer: e.cfg.balancer.name().to_string(),
        scenario: e.scenario.source.clone(),
        ncpus: n,
        rt_cpus: e.cfg.rt_cpus.to_list(),
        seed: Some(e.cfg.seed),
        tasks,
        groups,
        cpus,
        run: RunSummary {
            makespan_ns: end,
            idle_while_waiting_ns: e.idle_while_waiting_ns,
            start_skew_ns: Some(e.start_skew_ns),
            unfinished,
        },
        migrations_by_kind,
        rt0_latency,
        warnings,
    };
    let extra = extra(e);
    (report, extra)
}

/// Each task's report, as the kernel runner writes it (no kernel counters).
fn task_reports(e: &Engine) -> Vec<TaskReport> {
    let n = e.cpus.len();
    let end = e.now;
    e.tasks
        .iter()
        .zip(e.specs.iter())
        .enumerate()
        .map(|(i, (t, spec))| {
            let stop = t.finish_ns.unwrap_or(end);
            TaskReport {
                id: i,
                name: spec.name.clone(),
                group: spec.group.clone(),
                policy: spec.policy.name().to_string(),
                priority: spec.priority,
                cpu_mask: (0..n)
                    .filter(|&c| t.mask[c])
                    .map(|c| c as u32)
                    .collect::<rtshield_vocab::CpuSet>()
                    .to_list(),
                finished: t.finish_ns.is_some(),
                wall_ns: stop.saturating_sub(t.start_ns),
                cpu_ns: t.cpu_ns,
                cpu_share: t
                    .cpu_ns_on
                    .iter()
                    .map(|&x| {
                        if t.cpu_ns == 0 {
                            0.0
                        } else {
                            x as f64 / t.cpu_ns as f64
                        }
                    })
                    .collect(),
                migrations: t.migrations,
                kernel_migrations: None,
                voluntary_switches: None,
                involuntary_switches: None,
            }
        })
        .collect()
}

/// What only the simulator knows: its constants and placement figures.
fn extra(e: &Engine) -> SimExtra {
    let end = e.now;
    let window = e.placement_end.unwrap_or(end);
    SimExtra {
        events: e.events,
        simulated_ns: end,
        tick_ns: e.cfg.tick_ns,
        loops_per_us: e
            .scenario
            .globals
            .loops_per_us
            .unwrap_or(e.cfg.loops_per_us),
        mask_len_ns: e.cfg.mask_len_ns,
        migration_cost_ns: e.cfg.migration_cost_ns,
        lock_cost_ns: e.cfg.lock_cost_ns,
        fifo_cost_ns: e.cfg.fifo_cost_ns,
        artis_k: e.cfg.artis_k,
        artis_c_ns: e.cfg.artis_c_ns,
        placement_window_ns: window,
        normal_tasks_mean: e
            .cpus
            .iter()
            .map(|c| {
                if window == 0 {
                    0.0
                } else {
                    c.normal_area as f64 / window as f64
                }
            })
            .collect(),
        rt_stat: e
            .cpus
            .iter()
            .map(|c| c.rt_stat as f64 / FIXED_RT_1 as f64)
            .collect(),
        masking_sections: e.tasks.iter().map(|t| t.sections).sum(),
        masking_sections_on_rt_by_non_rt0: e.sections_on_rt_by_non_rt0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rt_share_saturates_at_annex_a_maximum() {
        assert_eq!(MAX_RT, 32264);
        let mut rt = 0;
        for _ in 0..20_000 {
            rt = calc_rt(rt, true);
        }
        assert_eq!(rt, MAX_RT);
        // 1/(1-RT) never divides by zero and tops out at 32768/504.
        assert!((rt_multiplier(rt) - 32768.0 / 504.0).abs() < 1e-9);
        assert_eq!(rt_ratio_2005(MAX_RT), MAX_RT + 1);
        assert_eq!(rt_ratio_2005(0), 1);
    }

    #[test]
    fn rt_share_decays_with_500_tick_constant() {
        let mut rt = 0;
        for _ in 0..500 {
            rt = calc_rt(rt, true);
        }
        // 1 − e^(−1) ≈ 0.632 (minus truncation losses).
        let share = rt as f64 / FIXED_RT_1 as f64;
        assert!((0.60..0.64).contains(&share), "{share}");
    }

    #[test]
    fn period_mean_converges_to_constant_period() {
        let mut p = 0u128;
        for _ in 0..2000 {
            p = calc_period(p, 1_000_000 * FIXED_P_1);
        }
        let pm = (p >> FSHIFT_P) as u64;
        assert!((999_000..=1_000_000).contains(&pm), "{pm}");
    }

    #[test]
    fn latency_summary_is_exact_for_small_sets() {
        let mut a = LatencyAcc::new();
        for v in [0, 0, 3_000, 7_000] {
            a.record(v);
        }
        let s = a.summary(2);
        assert_eq!(s.samples, 4);
        assert_eq!(s.min_ns, Some(0));
        assert_eq!(s.max_ns, Some(7_000));
        assert_eq!(s.avg_ns, Some(2_500.0));
        assert_eq!(s.histogram, vec![[0, 2], [5_000, 1], [10_000, 1]]);
        // A CPU without a wake-up: every figure unknown, never 0.
        let e = LatencyAcc::new().summary(3);
        assert_eq!(
            (e.samples, e.min_ns, e.max_ns, e.p99_ns),
            (0, None, None, None)
        );
        assert_eq!(e.avg_ns, None);
    }
}
