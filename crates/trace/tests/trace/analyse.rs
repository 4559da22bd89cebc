//! The analyser on hand-written traces whose answers are computed by hand
//! in the comments (all times in ns; text timestamps are µs).

use crate::fixture;
use rtshield_trace::{analyse, render_text, split, Event, ItemKind, SpikeFile, Split};

#[test]
fn a_preempting_fifo_thread_is_named() {
    let r = fixture("preempt.txt");
    assert_eq!(r.len(), 9);
    let s = analyse(&r, 1, 100, 1_000_000_100_000).unwrap();
    assert_eq!(s.comm, "rtshield-meas");
    // switch-in 1000.001908 - expected 1000.000100000
    assert_eq!(s.switch_in_ns, 1_000_001_908_000);
    assert_eq!(s.latency_ns, 1_808_000);
    // now=1000000103500 - expected
    assert_eq!(s.timer_expiry_ns, Some(1_000_000_103_500));
    assert_eq!(s.irq_latency_ns, Some(3_500));
    // sched_waking at .000105 to switch-in at .001908
    assert_eq!(s.wakeup_ns, Some(1_000_000_105_000));
    assert_eq!(s.thread_latency_ns, Some(1_803_000));
    // local_timer .000103 -> .000108
    assert_eq!(s.irqs.len(), 1);
    assert_eq!(s.irqs[0].kind, ItemKind::Vector);
    assert_eq!(s.irqs[0].name, "local_timer");
    assert_eq!(s.irqs[0].number, Some(236));
    assert_eq!(
        (s.irqs[0].count, s.irqs[0].total_ns, s.irqs[0].max_ns),
        (1, 5_000, 5_000)
    );
    // stress-ng: .000108 -> .001908. From .000100 to the local timer entry
    // at .000103 the timer had not fired: the thread was not runnable, so
    // stress-ng was not blocking it; those 3 us are interrupt delivery
    // (unaccounted), not the thread's.
    assert_eq!(s.threads.len(), 1);
    let t = &s.threads[0];
    assert_eq!(
        (t.comm.as_str(), t.pid, t.kernel_prio),
        ("stress-ng-cpu", 4242, Some(0))
    );
    assert_eq!(t.ns, 1_800_000);
    assert_eq!(s.unaccounted_ns, 3_000);
    assert_eq!(
        s.verdict,
        "blocked 1.8 ms by thread `stress-ng-cpu` (pid 4242, RT 99)"
    );
    assert_eq!(
        split(&r, 100),
        vec![Split {
            expected_ns: 1_000_000_100_000,
            irq_latency_ns: 3_500,
            thread_latency_ns: 1_803_000
        }]
    );
}

#[test]
fn an_irq_storm_is_named_with_its_count() {
    let r = fixture("irq-storm.txt");
    let s = analyse(&r, 1, 100, 2_000_000_500_000).unwrap();
    assert_eq!(s.latency_ns, 810_000);
    assert_eq!(s.irq_latency_ns, Some(798_000));
    assert_eq!(s.thread_latency_ns, Some(11_000));
    let irq = &s.irqs[0];
    assert_eq!(
        (irq.kind, irq.name.as_str(), irq.number),
        (ItemKind::Irq, "eth0-rx", Some(24))
    );
    // The first run started before the window: 190 us inside it, then 3 x 200 us.
    assert_eq!((irq.count, irq.total_ns, irq.max_ns), (4, 790_000, 200_000));
    let find = |k: ItemKind| s.irqs.iter().find(|i| i.kind == k).unwrap();
    assert_eq!(find(ItemKind::Vector).total_ns, 4_000);
    let soft = find(ItemKind::Softirq);
    assert_eq!(
        (soft.name.as_str(), soft.number, soft.total_ns),
        ("SCHED", Some(7), 4_000)
    );
    assert!(s.threads.is_empty(), "{:?}", s.threads);
    // Idle gaps between the runs: 2 + 2 + 2 + 1 + 1 + 4 us.
    assert_eq!(s.unaccounted_ns, 12_000);
    let sum: u64 = s.irqs.iter().map(|i| i.total_ns).sum::<u64>() + s.unaccounted_ns;
    assert_eq!(sum, s.latency_ns);
    assert_eq!(s.verdict, "delayed 0.79 ms by IRQ 24 `eth0-rx` (4 runs)");
}

#[test]
fn a_hypervisor_gap_has_no_culprit() {
    let r = fixture("hypervisor.txt");
    assert!(matches!(r.last().unwrap().event, Event::Print { .. }));
    let s = analyse(&r, 1, 100, 3_000_000_200_000).unwrap();
    assert_eq!(s.latency_ns, 906_000);
    assert_eq!(s.irq_latency_ns, Some(900_400));
    assert_eq!(s.thread_latency_ns, Some(4_000));
    assert!(s.threads.is_empty());
    assert_eq!(s.irqs.len(), 1);
    assert_eq!(s.irqs[0].total_ns, 4_000);
    // Idle .000200 -> .001100, then .001104 -> .001106.
    assert_eq!(s.unaccounted_ns, 902_000);
    assert_eq!(
        s.verdict,
        "timer IRQ 0.9 ms late, nothing ran: hypervisor, SMI or firmware"
    );
    assert_eq!(
        split(&r, 100),
        vec![
            Split {
                expected_ns: 3_000_000_100_000,
                irq_latency_ns: 2_700,
                thread_latency_ns: 4_000
            },
            Split {
                expected_ns: 3_000_000_200_000,
                irq_latency_ns: 900_400,
                thread_latency_ns: 4_000
            },
        ]
    );
    // The on-time wake-up: nothing but its own timer.
    let ok = analyse(&r, 1, 100, 3_000_000_100_000).unwrap();
    assert_eq!(ok.latency_ns, 8_000);
    assert_eq!(ok.unaccounted_ns, 8_000 - 4_000);
}

#[test]
fn no_switch_in_is_an_error_and_other_threads_are_not_it() {
    let r = fixture("preempt.txt");
    let e = analyse(&r, 1, 100, 1_000_002_000_000).unwrap_err();
    assert!(e.0.contains("no switch to pid 100 on CPU 1"), "{e}");
    assert!(analyse(&r, 2, 100, 1_000_000_100_000).is_err());
    assert!(split(&r, 4242).is_empty());
}

#[test]
fn spikes_json_schema_and_text() {
    let r = fixture("preempt.txt");
    let s = analyse(&r, 1, 100, 1_000_000_100_000).unwrap();
    let file = SpikeFile::new(vec![s]);
    let v = serde_json::to_value(&file).unwrap();
    assert_eq!(v["version"], 1);
    let sp = &v["spikes"][0];
    for key in [
        "cpu",
        "pid",
        "comm",
        "expected_ns",
        "timer_expiry_ns",
        "wakeup_ns",
        "switch_in_ns",
        "latency_ns",
        "irq_latency_ns",
        "thread_latency_ns",
        "irqs",
        "threads",
        "unaccounted_ns",
        "verdict",
    ] {
        assert!(sp.get(key).is_some(), "missing {key} in {sp}");
    }
    assert_eq!(sp["irqs"][0]["kind"], "vector");
    assert_eq!(sp["threads"][0]["priority"], "RT 99");
    let back: SpikeFile = serde_json::from_value(v).unwrap();
    assert_eq!(back, file);
    let txt = render_text(&file.spikes);
    assert!(
        txt.starts_with("spike 1: CPU 1, thread `rtshield-meas` (pid 100)"),
        "{txt}"
    );
    assert!(
        txt.contains("  verdict: blocked 1.8 ms by thread `stress-ng-cpu`"),
        "{txt}"
    );
    assert!(
        txt.contains("thread `stress-ng-cpu` pid 4242 RT 99: 1.8 ms"),
        "{txt}"
    );
    assert!(
        txt.contains("vector 236 local_timer: 1 run(s), 5 us in window, longest 5 us"),
        "{txt}"
    );
}
