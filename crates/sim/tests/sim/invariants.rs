//! Invariants over many generated scenarios, checked against the recorded
//! run segments (an independent view of what each CPU did), not against
//! the simulator's own counters.
use crate::common;
use proptest::prelude::*;
use rtshield_scenario::TaskSpec;
use rtshield_sim::{simulate, BalancerKind, Placement, SegmentKind, SimConfig};
use rtshield_vocab::CpuSet;
use rtshield_vocab::Policy;

#[derive(Debug, Clone)]
struct Gen {
    kind: u8,
    loops: u64,
    sloop: Option<u64>,
    sleep_us: u64,
    irq: Option<u64>,
    mask_bits: u32,
    cpu: u32,
    prio: i32,
    rr: bool,
    nice: i32,
}

fn gen_task() -> impl Strategy<Value = Gen> {
    (
        0u8..3,
        1u64..400_000,
        proptest::option::of(500u64..15_000),
        0u64..3_000,
        proptest::option::of(200u64..8_000),
        1u32..32,
        0u32..5,
        1i32..99,
        any::<bool>(),
        -5i32..6,
    )
        .prop_map(
            |(kind, loops, sloop, sleep_us, irq, mask_bits, cpu, prio, rr, nice)| Gen {
                kind,
                loops,
                sloop,
                sleep_us,
                irq,
                mask_bits,
                cpu,
                prio,
                rr,
                nice,
            },
        )
}

fn build(gens: &[Gen], ncpus: u32) -> Vec<TaskSpec> {
    gens.iter()
        .enumerate()
        .map(|(i, g)| {
            let mut t = common::normal(i, g.loops);
            t.sloop = g.sloop;
            t.sleep_ns = g.sleep_us * 1000;
            t.irq_period = g.irq;
            t.nice = g.nice;
            let all = (1u32 << ncpus) - 1;
            let mut bits = g.mask_bits & all;
            if g.irq.is_some() || bits == 0 {
                bits |= 1; // CPU 0 is always NRT: ARTiS can always migrate
            }
            t.cpu_mask = Some(
                (0..ncpus)
                    .filter(|c| bits & (1 << c) != 0)
                    .collect::<CpuSet>(),
            );
            match g.kind {
                1 => {
                    // RT0: FIFO 99 bound to one CPU, sleeping now and then.
                    t.policy = Policy::Fifo;
                    t.priority = 99;
                    t.cpu_mask = Some(CpuSet::single(g.cpu % ncpus));
                    t.sloop = Some(g.sloop.unwrap_or(2_000));
                    t.sleep_ns = t.sleep_ns.max(500_000);
                }
                2 => {
                    t.policy = if g.rr { Policy::Rr } else { Policy::Fifo };
                    t.priority = g.prio;
                }
                _ => {}
            }
            t
        })
        .collect()
}

fn check(
    gens: Vec<Gen>,
    ncpus: u32,
    rt_bits: u32,
    b: BalancerKind,
    seed: u64,
    mask_len: u64,
    placement: Placement,
) {
    let specs = build(&gens, ncpus);
    let sc = common::scenario(specs.clone(), 1.0);
    let mut cfg = SimConfig::new(ncpus as usize, b);
    cfg.rt_cpus = (1..ncpus).filter(|c| rt_bits & (1 << c) != 0).collect();
    cfg.seed = seed;
    cfg.mask_len_ns = mask_len;
    cfg.placement = placement;
    cfg.record_segments = true;
    let out = simulate(&sc, &cfg).unwrap();
    let segs = out.segments.as_ref().unwrap();
    let r = &out.report;

    // No task lost: every task is reported and finished.
    assert_eq!(r.tasks.len(), specs.len());
    assert_eq!(r.run.unfinished, 0);
    assert!(r.tasks.iter().all(|t| t.finished));

    // A CPU runs at most one task at a time.
    for c in 0..ncpus as usize {
        let mut mine: Vec<_> = segs.iter().filter(|s| s.cpu == c).collect();
        mine.sort_by_key(|s| (s.start, s.end));
        for w in mine.windows(2) {
            assert!(
                w[0].end <= w[1].start,
                "cpu{c} overlap: {:?} {:?}",
                w[0],
                w[1]
            );
        }
    }
    for (i, spec) in specs.iter().enumerate() {
        let mask = spec.cpu_mask.as_ref().unwrap();
        let mine: Vec<_> = segs.iter().filter(|s| s.task == i).collect();
        // Never outside the mask.
        assert!(
            mine.iter().all(|s| mask.contains(s.cpu as u32)),
            "task {i} ran outside {mask}"
        );
        // RT0 never migrates.
        if spec.is_rt0() {
            assert_eq!(r.tasks[i].migrations, 0, "RT0 task {i} migrated");
            assert!(mine.iter().all(|s| s.cpu == mine[0].cpu));
        }
        // CPU time = work + masking sections, and the segments add up to it.
        let work = spec.loops * 1000;
        let sections = spec.irq_period.map_or(0, |p| (work - 1) / (p * 1000));
        let masked = mine
            .iter()
            .filter(|s| s.kind == SegmentKind::Masked)
            .count() as u64;
        assert_eq!(masked, sections, "task {i} sections");
        assert_eq!(
            r.tasks[i].cpu_ns,
            work + sections * mask_len,
            "task {i} cpu time"
        );
        let seg_sum: u64 = mine.iter().map(|s| s.end - s.start).sum();
        assert_eq!(seg_sum, r.tasks[i].cpu_ns, "task {i} segments");
        let share: f64 = r.tasks[i].cpu_share.iter().sum();
        assert!((share - 1.0).abs() < 1e-9);
        // With ARTiS, no non-RT0 task is ever inside a masking section on an RT CPU.
        if b.is_artis() && !spec.is_rt0() {
            for s in mine.iter().filter(|s| s.kind == SegmentKind::Masked) {
                assert!(
                    !cfg.is_rt_cpu(s.cpu),
                    "task {i} masked interrupts on RT cpu{}",
                    s.cpu
                );
            }
        }
    }
    if b.is_artis() {
        assert_eq!(out.extra.masking_sections_on_rt_by_non_rt0, 0);
    }
}

fn balancer() -> impl Strategy<Value = BalancerKind> {
    prop_oneof![
        Just(BalancerKind::Linux26),
        Just(BalancerKind::Ule),
        Just(BalancerKind::Artis),
        Just(BalancerKind::Artis2005),
    ]
}

fn placement() -> impl Strategy<Value = Placement> {
    prop_oneof![
        Just(Placement::Spread),
        Just(Placement::Random),
        Just(Placement::First)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn invariants_hold(
        gens in proptest::collection::vec(gen_task(), 1..9),
        ncpus in 1u32..6,
        rt_bits in 0u32..32,
        b in balancer(),
        seed in 0u64..1000,
        mask_len in 1u64..50_000,
        p in placement(),
    ) {
        check(gens, ncpus, rt_bits, b, seed, mask_len, p);
    }
}

#[test]
fn artis_forces_masking_tasks_off_rt_cpus() {
    // A normal task that masks interrupts every 1 ms of work, started on
    // CPU 0, which is the RT CPU here.
    let mut t = common::normal(0, 50_000);
    t.irq_period = Some(1_000);
    t.cpu_mask = Some(CpuSet::parse_list("0-1").unwrap());
    let sc = common::scenario(vec![t], 1.0);
    for b in [BalancerKind::Artis, BalancerKind::Artis2005] {
        let mut cfg = SimConfig::new(2, b);
        cfg.rt_cpus = CpuSet::single(0);
        cfg.placement = Placement::First;
        cfg.record_segments = true;
        let out = simulate(&sc, &cfg).unwrap();
        let segs = out.segments.unwrap();
        let masked: Vec<_> = segs
            .iter()
            .filter(|s| s.kind == SegmentKind::Masked)
            .collect();
        assert_eq!(masked.len(), 49, "{b}");
        assert!(
            masked.iter().all(|s| s.cpu == 1),
            "{b}: a section ran on the RT CPU"
        );
        assert!(out.report.migrations_by_kind["rt->nrt forced"] >= 1, "{b}");
    }
    // linux26 knows nothing of RT CPUs: the task masks where it is.
    let mut cfg = SimConfig::new(2, BalancerKind::Linux26);
    cfg.rt_cpus = CpuSet::single(0);
    cfg.placement = Placement::First;
    let out = simulate(&sc, &cfg).unwrap();
    assert_eq!(out.report.migrations_by_kind["rt->nrt forced"], 0);
    assert_eq!(out.extra.masking_sections_on_rt_by_non_rt0, 49);
}
