//! Cases with a known answer.
use crate::common;
use rtshield_sim::linux26_slice_ms;
use rtshield_sim::{simulate, BalancerKind, Placement, SimConfig};
use rtshield_vocab::CpuSet;

fn machine(b: BalancerKind, ncpus: usize, rt: &str) -> SimConfig {
    let mut c = SimConfig::new(ncpus, b);
    if !rt.is_empty() {
        c.rt_cpus = CpuSet::parse_list(rt).unwrap();
    }
    c
}

/// N identical normal tasks on M CPUs finish with equal wall times, within
/// one time slice, under every balancer.
#[test]
fn identical_tasks_finish_together() {
    let slice = linux26_slice_ms(0) * 1_000_000 + 1_000_000; // one slice (+ the tick it is charged at)
    for (m, n) in [(4usize, 4usize), (4, 8), (3, 6), (2, 2)] {
        // 2 s of work each (1 loop per µs).
        let sc = common::scenario((0..n).map(|i| common::normal(i, 2_000_000)).collect(), 1.0);
        for b in BalancerKind::ALL {
            // ARTiS gets one RT CPU with no RT task on it: it must not hurt.
            let rt = if b.is_artis() { "1" } else { "" };
            let p = Placement::Spread;
            let mut cfg = machine(b, m, rt);
            cfg.placement = p;
            let out = simulate(&sc, &cfg).unwrap();
            let g = &out.report.groups[0];
            assert_eq!(g.tasks, n);
            let spread = g.wall_max_ns - g.wall_min_ns;
            assert!(
                spread <= slice,
                "{b} {p:?} {n} tasks on {m} CPUs: wall times {}..{} ns differ by more than a slice",
                g.wall_min_ns,
                g.wall_max_ns
            );
            // And they took about n/m times their work.
            let expect = 2e9 * n as f64 / m as f64;
            assert!(
                (g.wall_mean_ns - expect).abs() < 0.05 * expect + slice as f64,
                "{b} {p:?}"
            );
        }
    }
}

/// All tasks forked on CPU 0: the pulling balancers spread them over the
/// machine (wall times are not equal then: the first 200 ms are unfair).
#[test]
fn pull_balancers_spread_tasks_started_on_one_cpu() {
    let sc = common::scenario((0..8).map(|i| common::normal(i, 2_000_000)).collect(), 1.0);
    for b in [BalancerKind::Linux26, BalancerKind::Ule] {
        let mut cfg = machine(b, 4, "");
        cfg.placement = Placement::First;
        let out = simulate(&sc, &cfg).unwrap();
        for cpu in &out.report.cpus {
            assert!(
                cpu.idle_share < 0.1,
                "{b}: cpu{} idle {:.2}",
                cpu.cpu,
                cpu.idle_share
            );
        }
        let n: u64 = out.report.tasks.iter().map(|t| t.migrations).sum();
        assert!(n >= 6, "{b}: only {n} migrations");
        // Makespan close to the ideal 4 s.
        assert!(out.report.run.makespan_ns < 4_600_000_000, "{b}");
    }
}

/// Thesis §3.2.1: a FIFO task using a fraction f of CPU 1. linux26 counts
/// it as one task of the run-queue; ARTiS weighs CPU 1's normal tasks by
/// 1/(1 − f), so it puts N/(1 + 1/(1 − f)) of the N normal tasks there.
#[test]
fn rt_share_weighting_places_fewer_normal_tasks_on_the_rt_cpu() {
    // (f as compute/sleep ms, N normal tasks, predicted ARTiS count on CPU 1)
    for (run_ms, sleep_ms, n) in [(3u64, 1u64, 5usize), (2, 1, 8), (9, 1, 11), (1, 1, 6)] {
        let f = run_ms as f64 / (run_ms + sleep_ms) as f64;
        let sc = common::rt_fraction(run_ms, sleep_ms, n);
        let m = 1.0 / (1.0 - f);
        let predicted = n as f64 / (1.0 + m);
        let mut on_rt = Vec::new();
        for b in [BalancerKind::Linux26, BalancerKind::Artis] {
            let mut cfg = machine(b, 2, "1");
            cfg.duration_ns = Some(30_000_000_000);
            let out = simulate(&sc, &cfg).unwrap();
            // The multiplier ARTiS measured is the one the formula assumes.
            let rt = out.extra.rt_stat[1];
            assert!(
                (rt - f).abs() < 0.03,
                "{b}: measured RT share {rt}, expected {f}"
            );
            on_rt.push(out.extra.normal_tasks_mean[1]);
        }
        let (linux, artis) = (on_rt[0], on_rt[1]);
        // linux26: the FIFO task counts as one queued task → (N+1)/2 per CPU.
        let linux_expect = (n as f64 + 1.0) / 2.0 - 1.0;
        assert!(
            (linux - linux_expect).abs() <= 0.6,
            "f={f}: linux26 put {linux} on CPU 1, expected ≈{linux_expect}"
        );
        assert!(artis < linux, "f={f}: artis {artis} vs linux26 {linux}");
        assert!(
            (artis - predicted).abs() <= 0.55,
            "f={f}: artis put {artis} normal tasks on CPU 1, L/(1-RT) predicts {predicted}"
        );
    }
}

/// Annex B: linux26 gives 4:3:3:3, the RT-aware balancer 10:1:1:1.
#[test]
fn annex_b_ratios() {
    let sc = common::annex_b(20);
    for (b, expect) in [
        (BalancerKind::Linux26, [4.0, 3.0, 3.0, 3.0]),
        (BalancerKind::Artis, [10.0, 1.0, 1.0, 1.0]),
        (BalancerKind::Artis2005, [10.0, 1.0, 1.0, 1.0]),
    ] {
        let out = simulate(&sc, &machine(b, 4, "1-3")).unwrap();
        for (c, e) in expect.iter().enumerate() {
            let got = out.extra.normal_tasks_mean[c];
            assert!(
                (got - e).abs() < 0.25,
                "{b}: cpu{c} has {got} normal tasks, expected {e}"
            );
        }
    }
}

/// The latency half: normal tasks masking interrupts on RT CPUs delay RT0
/// wake-ups under linux26; ARTiS migrates them away first.
#[test]
fn rt0_latency_follows_masking_sections() {
    let mut tasks = Vec::new();
    for i in 0..4 {
        let mut t = common::normal(i, 3_000_000);
        t.irq_period = Some(50); // a 20 µs section every 50 µs of work
        tasks.push(t);
    }
    tasks.push(common::fifo(4, 99, 1, 300_000, 100, 900));
    let sc = common::scenario(tasks, 1.0);
    let mut lat = Vec::new();
    for b in [BalancerKind::Linux26, BalancerKind::Artis] {
        let mut cfg = machine(b, 2, "1");
        cfg.mask_len_ns = 20_000;
        cfg.duration_ns = Some(3_000_000_000);
        let out = simulate(&sc, &cfg).unwrap();
        let l = out
            .report
            .rt0_latency
            .iter()
            .find(|l| l.cpu == 1)
            .unwrap()
            .clone();
        assert!(l.samples > 2_000, "{b}: {} wake-ups", l.samples);
        lat.push((l, out.extra.masking_sections_on_rt_by_non_rt0));
    }
    let (linux, artis) = (&lat[0], &lat[1]);
    assert!(
        linux.1 > 1_000,
        "linux26 ran masking sections on the RT CPU"
    );
    assert!(
        linux.0.max_ns.is_some_and(|m| m > 10_000 && m <= 20_000),
        "{:?}",
        linux.0
    );
    assert!(linux.0.avg_ns.unwrap() > 100.0);
    assert_eq!(artis.1, 0);
    // Only the FIFO push/drain work (1 µs) can delay an RT0 wake-up on an ARTiS RT CPU.
    assert!(artis.0.max_ns.is_some_and(|m| m <= 1_000), "{:?}", artis.0);
}
