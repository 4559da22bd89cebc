//! Exploration, not assertions: prints the tables the documentation's
//! figures come from. Run with
//! `cargo run -p rtshield-sim --release --example explore`.

// The scenario builders the tests use, so the figures and the tests agree.
#[path = "../tests/sim/common.rs"]
mod common;
use rtshield_sim::*;

fn main() {
    explore_annex_b();
    explore_fraction();
}

fn explore_annex_b() {
    let sc = common::annex_b(10);
    let mut runs = Vec::new();
    for b in BalancerKind::ALL {
        let mut cfg = SimConfig::new(4, b);
        cfg.rt_cpus = rtshield_vocab::CpuSet::parse_list("1-3").unwrap();
        runs.push(simulate(&sc, &cfg).unwrap());
    }
    println!("{}", render_comparison(&runs));
}

fn explore_fraction() {
    for (run_ms, sleep_ms, n) in [(3u64, 1u64, 5usize), (2, 1, 8), (9, 1, 11), (1, 1, 6)] {
        let sc = common::rt_fraction(run_ms, sleep_ms, n);
        for b in [
            BalancerKind::Linux26,
            BalancerKind::Ule,
            BalancerKind::Artis,
            BalancerKind::Artis2005,
        ] {
            let mut cfg = SimConfig::new(2, b);
            cfg.rt_cpus = rtshield_vocab::CpuSet::single(1);
            cfg.duration_ns = Some(30_000_000_000);
            let out = simulate(&sc, &cfg).unwrap();
            println!(
                "f={}/{} n={n} {b}: rt={:.3} normal/cpu={:?}",
                run_ms,
                run_ms + sleep_ms,
                out.extra.rt_stat[1],
                out.extra.normal_tasks_mean
            );
        }
    }
}
