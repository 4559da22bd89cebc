//! Exploration helpers, not assertions: run with
//! `cargo test -p rtshield-sim --release --test explore -- --ignored --nocapture`
//! to print the tables the README's figures come from.
mod common;
use rtshield_sim::*;

#[test]
#[ignore]
fn explore_annex_b() {
    let sc = common::annex_b(10);
    let mut runs = Vec::new();
    for b in BalancerKind::ALL {
        let mut cfg = SimConfig::new(4, b);
        cfg.rt_cpus = rtshield_sys::CpuSet::parse_list("1-3").unwrap();
        runs.push(simulate(&sc, &cfg).unwrap());
    }
    println!("{}", table::render(&runs));
}

#[test]
#[ignore]
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
            cfg.rt_cpus = rtshield_sys::CpuSet::single(1);
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
