//! The analyser on traces RECORDED on the development VM (see the headers
//! of `fixtures/recorded-*.txt` and `fixtures/record/`), not hand-written:
//! real kernels lose exits of some vectors, print command names with
//! spaces, and run threads in non-preemptible sections. Every expected
//! number below was checked by hand against the quoted trace lines.

use crate::fixture;
use rtshield_trace::{analyse, split, ItemKind};

const SLEEPER: u32 = 13011;
const BUSY: u32 = 13012;

#[test]
fn a_recorded_fifo_busy_thread_is_named_with_its_pid_and_about_2_ms() {
    let r = fixture("recorded-preempt.txt");
    // "entries-in-buffer/entries-written: 1000/1000"
    assert_eq!(r.len(), 1000);
    let s = analyse(&r, 1, SLEEPER, 5_853_117_166_088).unwrap();
    // hrtimer_expire_entry ... now=5853117169817
    assert_eq!(s.irq_latency_ns, Some(3_729));
    // sched_waking at 5853.117171, sched_switch to it at 5853.118943
    assert_eq!(s.wakeup_ns, Some(5_853_117_171_000));
    assert_eq!(s.switch_in_ns, 5_853_118_943_000);
    assert_eq!(s.latency_ns, 1_776_912);
    assert_eq!(s.thread_latency_ns, Some(1_772_000));
    // rts-busy held the CPU from the expiry to the switch-in except for
    // local_timer .169-.177 (8 us), irq 36 .302-.328 (26 us) and the BLOCK
    // softirq .330-.371 (41 us): 125 + 2 + 1572 us.
    let t = &s.threads[0];
    assert_eq!((t.comm.as_str(), t.pid), ("rts-busy", BUSY));
    assert_eq!((t.kernel_prio, t.priority.as_str()), (Some(9), "RT 90"));
    assert_eq!(t.ns, 1_699_000);
    assert!(
        (1_600_000..=2_400_000).contains(&t.ns),
        "within 20 % of 2 ms"
    );
    let item = |k: ItemKind, n: u32| {
        s.irqs
            .iter()
            .find(|i| i.kind == k && i.number == Some(n))
            .map(|i| (i.name.as_str(), i.count, i.total_ns))
    };
    assert_eq!(item(ItemKind::Softirq, 4), Some(("BLOCK", 1, 41_000)));
    assert_eq!(item(ItemKind::Irq, 36), Some(("virtio1-req.0", 1, 26_000)));
    assert_eq!(item(ItemKind::Vector, 236), Some(("local_timer", 1, 8_000)));
    // This kernel traces call_function_single_entry without its exit: the
    // 84 open entries before the window must not swallow it.
    assert_eq!(item(ItemKind::Vector, 251), None);
    // expected .166088 to the local_timer entry at .169000
    assert_eq!(s.unaccounted_ns, 2_912);
    let total = s.irqs.iter().map(|i| i.total_ns).sum::<u64>()
        + s.threads.iter().map(|t| t.ns).sum::<u64>()
        + s.unaccounted_ns;
    assert_eq!(
        total, s.latency_ns,
        "every ns of the window is attributed once"
    );
    assert_eq!(
        s.verdict,
        "blocked 1.7 ms by thread `rts-busy` (pid 13012, RT 90)"
    );
}

#[test]
fn the_next_wake_up_armed_late_blames_the_busy_thread_not_the_timer() {
    let r = fixture("recorded-preempt.txt");
    // The sleeper armed its 5853118166088 timer only at 5853.118950, after
    // rts-busy let it run: no IRQ latency to speak of; rts-busy held the
    // CPU from .166088 to its switch-out at .118943.
    let s = analyse(&r, 1, SLEEPER, 5_853_118_166_088).unwrap();
    assert_eq!(s.irq_latency_ns, None);
    assert_eq!(s.threads[0].pid, BUSY);
    assert_eq!(s.threads[0].ns, 776_912);
    assert!(
        s.verdict
            .starts_with("blocked 0.78 ms by thread `rts-busy`"),
        "{}",
        s.verdict
    );
}

#[test]
fn a_recorded_hypervisor_gap_is_unaccounted_time_before_a_late_timer() {
    let r = fixture("recorded-preempt.txt");
    // Armed at 5853.121186 for 5853122166088; the next event on CPU 1 is
    // local_timer_entry at 5853.154167, expiry now=5853154170377.
    let s = analyse(&r, 1, SLEEPER, 5_853_122_166_088).unwrap();
    assert_eq!(s.irq_latency_ns, Some(32_004_289));
    assert_eq!(s.thread_latency_ns, Some(80_000));
    assert_eq!(s.latency_ns, 32_089_912);
    assert_eq!(s.unaccounted_ns, 32_000_912);
    // rustc was current but the sleeper was not runnable: it only gets its
    // time after the timer fired (.222-.224, .238-.239, .247-.256).
    assert_eq!(s.threads.len(), 1);
    assert_eq!(
        (s.threads[0].comm.as_str(), s.threads[0].ns),
        ("rustc", 12_000)
    );
    assert_eq!(
        s.verdict,
        "timer IRQ 32 ms late, nothing ran: hypervisor, SMI or firmware"
    );
}

#[test]
fn split_of_the_recorded_preemption() {
    let r = fixture("recorded-preempt.txt");
    let sp = split(&r, SLEEPER);
    // 60 loops; the late-armed 118166088 and the 32 catch-up wake-ups after
    // the gap (timers armed already expired, no switch-in) are not split.
    assert_eq!(sp.len(), 27);
    let at = |e: u64| sp.iter().find(|x| x.expected_ns == e).copied();
    let p = at(5_853_117_166_088).unwrap();
    assert_eq!((p.irq_latency_ns, p.thread_latency_ns), (3_729, 1_772_000));
    let g = at(5_853_122_166_088).unwrap();
    assert_eq!(
        (g.irq_latency_ns, g.thread_latency_ns),
        (32_004_289, 80_000)
    );
    assert!(at(5_853_118_166_088).is_none());
}

#[test]
fn a_recorded_periodic_sleeper_splits_every_wake_up() {
    let r = fixture("recorded-sleeper.txt");
    // "entries-in-buffer/entries-written: 773/773"
    assert_eq!(r.len(), 773);
    // A command name with a space: "lto cgu.01-20669".
    assert!(r.iter().any(|x| x.comm == "lto cgu.01" && x.pid == 20669));
    let sp = split(&r, 20735);
    assert_eq!(sp.len(), 60, "one per loop");
    let mut e: Vec<u64> = sp.iter().map(|x| x.expected_ns).collect();
    e.dedup();
    assert_eq!(e.len(), 60);
    assert!(e.windows(2).all(|w| w[1] - w[0] == 1_000_000), "1 ms apart");
    // The latest timer: expiry now=5995920697416 for 5995920587683.
    let w = sp.iter().max_by_key(|x| x.irq_latency_ns).unwrap();
    assert_eq!(
        (w.expected_ns, w.irq_latency_ns),
        (5_995_920_587_683, 109_733)
    );
    // The worst total: expiry now=5995915681442, sched_waking at .915683,
    // switch at .915715 (cargo stayed non-preemptible for 30 us after
    // need-resched was set).
    let w = sp
        .iter()
        .find(|x| x.expected_ns == 5_995_915_587_683)
        .unwrap();
    assert_eq!((w.irq_latency_ns, w.thread_latency_ns), (93_759, 32_000));
    let s = analyse(&r, 1, 20735, w.expected_ns).unwrap();
    // .587683 -> local_timer_entry .915681: no event
    assert_eq!(s.unaccounted_ns, 93_317);
    assert_eq!(
        (s.threads[0].comm.as_str(), s.threads[0].ns),
        ("cargo", 26_000)
    );
    assert_eq!(s.latency_ns, 127_317);
}

#[test]
fn wake_ups_from_idle_without_a_traced_switch_are_split_and_explained() {
    // This kernel traces no sched_switch out of the idle task: the
    // sleeper's first own line after its wake-up is its switch-in.
    let r = fixture("recorded-idle.txt");
    assert!(!r.iter().any(|x| matches!(
        &x.event,
        rtshield_trace::Event::SchedSwitch { prev_pid: 0, .. }
    )));
    let sp = split(&r, 32437);
    let at = |e: u64| sp.iter().find(|x| x.expected_ns == e).copied().unwrap();
    // expires=6208440146645; expiry now=6208440152676; sched_waking by
    // <idle> at .440153; the sleeper's hrtimer_start at .440161.
    let a = at(6_208_440_146_645);
    assert_eq!((a.irq_latency_ns, a.thread_latency_ns), (6_031, 8_000));
    // expires=6208440246645; now=6208440248376; waking .440249; own .440257
    let b = at(6_208_440_246_645);
    assert_eq!((b.irq_latency_ns, b.thread_latency_ns), (1_731, 8_000));

    let s = analyse(&r, 1, 32437, 6_208_440_146_645).unwrap();
    assert_eq!(s.comm, "rts-sleeper");
    assert_eq!(s.switch_in_ns, 6_208_440_161_000);
    assert_eq!(s.latency_ns, 14_355);
    // Idle (no event) .146645 -> local_timer_entry .152 and .157 -> .161;
    // the local timer .152 -> .157.
    assert_eq!(s.unaccounted_ns, 5_355 + 4_000);
    assert_eq!(s.irqs.len(), 1);
    assert_eq!(
        (s.irqs[0].name.as_str(), s.irqs[0].total_ns),
        ("local_timer", 5_000)
    );
    assert!(s.threads.is_empty());
}

#[test]
fn an_edited_hypervisor_gap_on_an_idle_cpu() {
    // recorded-idle.txt with the wake-up after 6208.440167 moved 900 us
    // later (see the fixture's header): expiry now=6208441148376, waking
    // .441149, the sleeper's own line at .441157.
    let r = fixture("recorded-gap-edited.txt");
    let s = analyse(&r, 1, 32437, 6_208_440_246_645).unwrap();
    assert_eq!(s.irq_latency_ns, Some(901_731));
    assert_eq!(s.thread_latency_ns, Some(8_000));
    assert_eq!(s.latency_ns, 910_355);
    // No event .246645 -> .441148, local timer .441148 -> .441153, idle
    // .441153 -> .441157.
    assert_eq!(s.unaccounted_ns, 901_355 + 4_000);
    assert_eq!(
        s.verdict,
        "timer IRQ 0.9 ms late, nothing ran: hypervisor, SMI or firmware"
    );
    let sp = split(&r, 32437);
    let g = sp
        .iter()
        .find(|x| x.expected_ns == 6_208_440_246_645)
        .unwrap();
    assert_eq!((g.irq_latency_ns, g.thread_latency_ns), (901_731, 8_000));
}

#[test]
fn a_recorded_disk_irq_delays_the_timer_interrupt() {
    let r = fixture("recorded-irq.txt");
    let s = analyse(&r, 1, 17915, 6_387_773_517_034).unwrap();
    // irq_handler_entry irq=36 at .773516, exit .773522; local_timer_entry
    // .773526, now=6387773526326; waking .773527; the switch from tar .773550.
    assert_eq!(s.irq_latency_ns, Some(9_292));
    assert_eq!(s.thread_latency_ns, Some(23_000));
    assert_eq!(s.latency_ns, 32_966);
    let item = |k: ItemKind, n: u32| {
        s.irqs
            .iter()
            .find(|i| i.kind == k && i.number == Some(n))
            .map(|i| (i.name.as_str(), i.count, i.total_ns, i.max_ns))
    };
    // Running at the expected time: .517034 -> .522 in the window, 6 us long.
    assert_eq!(
        item(ItemKind::Irq, 36),
        Some(("virtio1-req.0", 1, 4_966, 6_000))
    );
    assert_eq!(
        item(ItemKind::Vector, 236),
        Some(("local_timer", 1, 8_000, 8_000))
    );
    assert_eq!(item(ItemKind::Softirq, 4), Some(("BLOCK", 1, 6_000, 6_000)));
    // tar (nice 0) kept the CPU .534-.535 and .541-.550 after need-resched:
    // the kernel is not fully preemptible.
    assert_eq!(s.threads.len(), 1);
    let t = &s.threads[0];
    assert_eq!((t.comm.as_str(), t.pid, t.ns), ("tar", 17221, 10_000));
    // .522 -> .526: no event between the disk IRQ and the timer interrupt.
    assert_eq!(s.unaccounted_ns, 4_000);
    assert_eq!(
        s.verdict,
        "blocked 10 us by thread `tar` (pid 17221, nice 0)"
    );
}

#[test]
fn a_trace_read_as_a_stream_splits_the_same_as_a_whole_file() {
    // `--split` reads trace_pipe in pieces: the Splitter keeps a wake-up in
    // progress across them. Any cut gives the same splits as the file.
    use rtshield_trace::Splitter;
    for (name, pid) in [
        ("recorded-preempt.txt", SLEEPER),
        ("recorded-sleeper.txt", 20735),
    ] {
        let r = fixture(name);
        let whole = split(&r, pid);
        for cut in [1, 7, 100, r.len() / 2] {
            let mut s = Splitter::new(pid);
            let mut got = Vec::new();
            for chunk in r.chunks(cut) {
                got.extend(chunk.iter().filter_map(|x| s.feed(x)));
            }
            assert_eq!(got, whole, "{name}, chunks of {cut}");
        }
    }
}

#[test]
fn steal_time_is_said_next_to_unaccounted_time() {
    let r = fixture("recorded-preempt.txt");
    let mut s = analyse(&r, 1, SLEEPER, 5_853_122_166_088).unwrap();
    s.set_steal(30_000_000, 40_000_000);
    assert_eq!(
        s.verdict,
        "timer IRQ 32 ms late, nothing ran: hypervisor, SMI or firmware (VM steal time on CPU 1: 30 ms in the 40 ms around it)"
    );
    let j = serde_json::to_value(&s).unwrap();
    assert_eq!(j["steal_ns"], 30_000_000);
    assert_eq!(j["steal_window_ns"], 40_000_000);
    // A thread's verdict does not mention steal time.
    let mut b = analyse(&r, 1, SLEEPER, 5_853_117_166_088).unwrap();
    let before = b.verdict.clone();
    b.set_steal(0, 20_000_000);
    assert_eq!(b.verdict, before);
    assert!(rtshield_trace::render_text(&[s]).contains("VM steal time on CPU 1: 30 ms"));
}
