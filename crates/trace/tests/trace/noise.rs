//! Noise attribution (`rtshield_trace::noise`): a recorded-format fixture
//! with answers computed by hand, and the invariants as properties.

use proptest::prelude::*;
use rtshield_trace::{
    explain_noise, CauseKind, Explained, NoiseClass, NoiseEvent, NoiseOptions, NoiseTally,
    NoiseTimeline,
};
use rtshield_trace::{parse, Event, Record};

const SPINNER: u32 = 4000;

fn storm() -> Vec<Record> {
    let text = include_str!("../fixtures/noise-irq-storm.txt");
    parse(text).unwrap()
}

fn gaps() -> Vec<NoiseEvent> {
    vec![
        NoiseEvent {
            start_ns: 3_000_000_100_500,
            len_ns: 201_000,
        },
        NoiseEvent {
            start_ns: 3_000_010_000_200,
            len_ns: 3_000,
        },
        NoiseEvent {
            start_ns: 3_000_400_000_000,
            len_ns: 1_700_000,
        },
    ]
}

#[test]
fn irq_storm_tick_and_hypervisor_fixture() {
    let x = explain_noise(&storm(), 1, SPINNER, &gaps(), NoiseOptions::default());
    // 1. The storm: 40 runs of IRQ 24, each stamped [e, e+4] µs so taken
    //    as [e, e+5) µs; back to back they cover [101, 301) µs, all inside
    //    the gap [100.5, 301.5): 200 µs of IRQ, 0.5 + 0.5 µs unexplained.
    assert_eq!(x[0].class, NoiseClass::Irq);
    assert_eq!(x[0].causes.len(), 1);
    let c = &x[0].causes[0];
    assert_eq!(c.source.label(), "IRQ eth0-rx:24");
    assert_eq!((c.ns, c.runs), (200_000, 40));
    assert_eq!(x[0].unexplained_ns, 1_000);
    // 2. The tick: local_timer stamped [10000, 10002] µs, so
    //    [10000, 10003) µs, clipped to the gap from 10000.2: 2.8 µs.
    assert_eq!(x[1].class, NoiseClass::Tick);
    assert_eq!(x[1].causes[0].source.label(), "tick (local_timer:236)");
    assert_eq!(x[1].causes[0].ns, 2_800);
    assert_eq!(x[1].unexplained_ns, 200);
    // 3. Nothing on CPU 1 (CPU 0's IRQs are not CPU 1's noise).
    assert_eq!(x[2].class, NoiseClass::Unexplained);
    assert!(x[2].causes.is_empty());
    assert_eq!(x[2].unexplained_ns, 1_700_000);

    let mut t = NoiseTally::default();
    x.iter().for_each(|e| t.add(e));
    assert_eq!(
        ["HW", "NMI", "IRQ", "SIRQ", "THREAD"].map(|c| t.column(c)),
        [1, 0, 2, 0, 0]
    );
    let top = t.top(5);
    assert_eq!(top[0].0.name, "eth0-rx");
    assert_eq!(top[1].0.kind, CauseKind::Tick);
    assert_eq!(t.unexplained_ns, 1_000 + 200 + 1_700_000);
}

#[test]
fn streaming_with_forgetting_gives_the_same_answers() {
    // Fed in chunks, each gap explained once the trace has passed its end,
    // and everything before it forgotten.
    let recs = storm();
    let whole = explain_noise(&recs, 1, SPINNER, &gaps(), NoiseOptions::default());
    let mut tl = NoiseTimeline::new(1, SPINNER, NoiseOptions::default());
    let mut out = Vec::new();
    let mut fed = 0;
    for g in gaps() {
        while fed < recs.len() && recs[fed].ts_ns <= g.end_ns() + 1_000 {
            tl.feed(&recs[fed]);
            fed += 1;
        }
        out.push(tl.explain(&g));
        tl.forget_before(g.end_ns());
    }
    assert_eq!(out, whole);
}

// ---- properties -------------------------------------------------------

const PIDS: [u32; 4] = [0, SPINNER, 7, 9];

/// A record of a random kind on CPU 0 or 1.
fn record(ts_ns: u64, cpu: u32, kind: u8, n: u32) -> Record {
    let event = match kind {
        0 => Event::IrqHandlerEntry {
            irq: n % 3,
            name: format!("dev{}", n % 3),
        },
        1 => Event::IrqHandlerExit {
            irq: n % 3,
            ret: "handled".into(),
        },
        2 => Event::VectorEntry {
            name: "local_timer".into(),
            vector: 236,
        },
        3 => Event::VectorExit {
            name: "local_timer".into(),
            vector: 236,
        },
        4 => Event::HrtimerExpireEntry {
            hrtimer: "01".into(),
            function: if n % 2 == 0 {
                "tick_nohz_handler".into()
            } else {
                "hrtimer_wakeup".into()
            },
            now_ns: None,
        },
        5 => Event::SoftirqEntry {
            vec: n % 10,
            action: "TIMER".into(),
        },
        6 => Event::SoftirqExit {
            vec: n % 10,
            action: "TIMER".into(),
        },
        7 => Event::Other {
            name: "nmi_handler".into(),
            fields: format!("perf_event_nmi_handler() delta_ns: {} handled: 1", n % 5000),
        },
        _ => {
            let next = PIDS[(n % 4) as usize];
            Event::SchedSwitch {
                prev_comm: "p".into(),
                prev_pid: 1,
                prev_prio: 120,
                prev_state: "R".into(),
                next_comm: format!("t{next}"),
                next_pid: next,
                next_prio: 120,
            }
        }
    };
    Record {
        comm: "x".into(),
        pid: 1,
        cpu,
        ts_ns,
        event,
    }
}

/// Records in time order (steps of 0..5 µs, on a µs or ns grid), and gaps
/// anywhere over the same stretch.
fn scenario() -> impl Strategy<Value = (Vec<Record>, Vec<NoiseEvent>, u64)> {
    let steps = prop::collection::vec((0u64..5_000, 0u32..2, 0u8..9, any::<u32>()), 0..120);
    let gaps = prop::collection::vec((0u64..600_000, 1u64..200_000), 1..8);
    (steps, gaps, prop_oneof![Just(1u64), Just(1_000u64)]).prop_map(|(steps, gaps, res)| {
        let base = 1_000_000_000u64;
        let mut t = base;
        let recs = steps
            .into_iter()
            .map(|(dt, cpu, kind, n)| {
                t += dt;
                record(t / res * res, cpu, kind, n)
            })
            .collect();
        let evs = gaps
            .into_iter()
            .map(|(at, len)| NoiseEvent {
                start_ns: base + at,
                len_ns: len,
            })
            .collect();
        (recs, evs, res)
    })
}

/// The allowance of rule 6 in the properties (small, so that both
/// outcomes happen in 200 µs gaps).
const OVERHEAD: u64 = 2_000;

fn opts(res: u64) -> NoiseOptions {
    NoiseOptions {
        ts_resolution_ns: res,
        overhead_ns: OVERHEAD,
    }
}

fn explain(recs: &[Record], evs: &[NoiseEvent], res: u64) -> Vec<Explained> {
    explain_noise(recs, 1, SPINNER, evs, opts(res))
}

proptest! {
    #[test]
    fn every_nanosecond_lands_in_exactly_one_bucket((recs, evs, res) in scenario()) {
        for x in explain(&recs, &evs, res) {
            let causes: u64 = x.causes.iter().map(|c| c.ns).sum();
            prop_assert_eq!(causes + x.unexplained_ns, x.event.len_ns);
        }
    }

    #[test]
    fn a_thread_is_blamed_only_if_it_was_switched_in_during_the_gap((recs, evs, res) in scenario()) {
        for x in explain(&recs, &evs, res) {
            let (s, e) = (x.event.start_ns, x.event.end_ns());
            for c in x.causes.iter().filter(|c| c.source.kind == CauseKind::Thread) {
                let pid = c.source.pid.unwrap();
                prop_assert!(pid != SPINNER && pid != 0);
                let ran = recs.iter().any(|r| {
                    r.cpu == 1
                        && r.ts_ns + res > s
                        && r.ts_ns <= e
                        && matches!(r.event, Event::SchedSwitch { next_pid, .. } if next_pid == pid)
                });
                prop_assert!(ran, "thread {} blamed for {:?} without running", pid, x.event);
            }
        }
    }

    #[test]
    fn a_gap_with_no_event_of_its_cpu_is_unexplained((recs, evs, res) in scenario()) {
        for x in explain(&recs, &evs, res) {
            let (s, e) = (x.event.start_ns, x.event.end_ns());
            // An NMI is stamped at its end, up to 5 µs after its start here.
            let any = recs.iter().any(|r| r.cpu == 1 && r.ts_ns + res > s && r.ts_ns <= e + 5_000);
            if !any {
                prop_assert_eq!(x.class, NoiseClass::Unexplained);
                prop_assert!(x.causes.is_empty());
                prop_assert_eq!(x.unexplained_ns, x.event.len_ns);
            }
        }
    }

    #[test]
    fn other_cpus_never_matter((recs, evs, res) in scenario()) {
        let only: Vec<Record> = recs.iter().filter(|r| r.cpu == 1).cloned().collect();
        prop_assert_eq!(explain(&recs, &evs, res), explain(&only, &evs, res));
    }

    #[test]
    fn the_class_holds_the_most_time((recs, evs, res) in scenario()) {
        for x in explain(&recs, &evs, res) {
            let kind_ns = |k: CauseKind| -> u64 {
                x.causes.iter().filter(|c| c.source.kind == k).map(|c| c.ns).sum()
            };
            let kinds = [CauseKind::Nmi, CauseKind::Irq, CauseKind::Tick, CauseKind::Softirq, CauseKind::Thread];
            let best = kinds.iter().map(|&k| kind_ns(k)).max().unwrap();
            let runs: u64 = x.causes.iter().map(|c| u64::from(c.runs)).sum();
            let excess = x.unexplained_ns.saturating_sub(OVERHEAD * runs);
            match x.class {
                NoiseClass::Unexplained => prop_assert!(excess > best || x.causes.is_empty()),
                c => {
                    let k = kinds.iter().find(|k| k.class() == c).unwrap();
                    prop_assert_eq!(kind_ns(*k), best);
                    prop_assert!(best >= excess);
                }
            }
        }
    }

    #[test]
    fn explaining_in_order_while_forgetting_matches((recs, mut evs, res) in scenario()) {
        evs.sort_by_key(|e| e.start_ns);
        let whole = explain(&recs, &evs, res);
        let mut tl = NoiseTimeline::new(1, SPINNER, opts(res));
        for r in &recs {
            tl.feed(r);
        }
        for (g, want) in evs.iter().zip(&whole) {
            prop_assert_eq!(&tl.explain(g), want);
            tl.forget_before(g.start_ns);
        }
    }
}
