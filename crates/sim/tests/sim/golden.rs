//! The simulator's output, pinned: the compare table and a hash of every
//! file `simulate` writes (JSON report, event trace, Gantt chart) for the
//! example scenarios under the four balancers. A change to the engine or a
//! balancer that moves a single event shows here.
//!
//! After an intended change, rewrite the golden file with
//! `RTSHIELD_BLESS=1 cargo test -p rtshield-sim --test sim golden` and explain
//! the new figures in the commit.

use rtshield_scenario::parse_str;
use rtshield_sim::{
    render_comparison, render_gantt_svg, simulate, trace_to_csv, BalancerKind, SimConfig,
};
use rtshield_vocab::CpuSet;
use std::fmt::Write;

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/examples.txt");

/// FNV-1a, 64 bits: stable across platforms and Rust versions.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn example(name: &str) -> String {
    let p = format!(
        "{}/../../examples/scenarios/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn render(name: &str, text: &str) -> String {
    let sc = parse_str(text, name).unwrap();
    let mut runs = Vec::new();
    let mut out = String::new();
    for b in BalancerKind::ALL {
        let mut cfg = SimConfig::new(4, b);
        cfg.rt_cpus = CpuSet::parse_list("1-3").unwrap();
        cfg.record_trace = true;
        cfg.record_segments = true;
        let r = simulate(&sc, &cfg).unwrap();
        let rt: Vec<bool> = (0..4).map(|i| cfg.is_rt_cpu(i)).collect();
        let svg = render_gantt_svg(
            r.segments.as_ref().unwrap(),
            4,
            &rt,
            r.extra.simulated_ns,
            name,
        );
        writeln!(
            out,
            "{b}: json {:016x} trace {:016x} gantt {:016x} events {}",
            fnv(r.to_json().as_bytes()),
            fnv(trace_to_csv(r.trace.as_ref().unwrap()).as_bytes()),
            fnv(svg.as_bytes()),
            r.extra.events
        )
        .unwrap();
        runs.push(r);
    }
    out.push_str(&render_comparison(&runs));
    out
}

#[test]
fn example_outputs_are_unchanged() {
    // Annex B with every `loop` divided by 10 (same shape, 10x shorter:
    // the full one takes seconds in a debug build).
    let annex = example("annex-b.scn")
        .replace("loop = 10000000", "loop = 1000000")
        .replace("loop = 110000000", "loop = 11000000");
    let mut got = String::new();
    for (name, text) in [
        ("annex-b-small.scn", annex),
        ("irq-mix.scn", example("irq-mix.scn")),
        ("rt-and-normal.scn", example("rt-and-normal.scn")),
    ] {
        writeln!(got, "== {name}").unwrap();
        got.push_str(&render(name, &text));
    }
    if std::env::var_os("RTSHIELD_BLESS").is_some() {
        std::fs::create_dir_all(std::path::Path::new(GOLDEN).parent().unwrap()).unwrap();
        std::fs::write(GOLDEN, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(GOLDEN).expect("golden file (RTSHIELD_BLESS=1 writes it)");
    if got != want {
        let line = got
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .map_or(got.lines().count().min(want.lines().count()), |i| i);
        panic!(
            "simulator output changed (first difference at line {}):\n got: {:?}\nwant: {:?}",
            line + 1,
            got.lines().nth(line),
            want.lines().nth(line)
        );
    }
}
