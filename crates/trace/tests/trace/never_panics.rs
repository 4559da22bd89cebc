//! The parser and the analysis take whatever a kernel (or a corrupted
//! file) gives them: errors, never panics.

use proptest::prelude::*;
use rtshield_trace::{analyse, parse, parse_line, split};

const LINE: &str = " stress-ng-cpu-4242 [001] d.h1. 1000.000103: sched_switch: prev_comm=a b prev_pid=1 prev_prio=0 prev_state=R ==> next_comm=c next_pid=2 next_prio=9";

proptest! {
    #[test]
    fn arbitrary_text_never_panics(s in "\\PC{0,200}") {
        let _ = parse_line(&s);
        let _ = parse(&s);
    }

    #[test]
    fn mutated_lines_never_panic(cut in 0usize..LINE.len(), ins in "[ \\[\\]:=>\\-0-9a-zé]{0,6}") {
        // Splice junk in at any char boundary of a real line.
        let mut at = cut;
        while !LINE.is_char_boundary(at) {
            at -= 1;
        }
        let s = format!("{}{}{}", &LINE[..at], ins, &LINE[at..]);
        if let Ok(recs) = parse(&s) {
            let _ = split(&recs, 2);
            let _ = analyse(&recs, 1, 2, 1_000_000_000_000);
        }
    }
}

proptest! {
    #[test]
    fn extreme_numbers_never_panic(expires in any::<u64>(), now in any::<u64>(), e in any::<u64>(), secs in 0u64..20_000_000_000) {
        let t = format!(
            "s-7 [000] d..1. {secs}.000001: hrtimer_start: hrtimer=01 function=hrtimer_wakeup expires={expires} softexpires={expires} mode=ABS\n\
             <idle>-0 [000] d.h1. {secs}.000002: hrtimer_expire_entry: hrtimer=01 now={now} function=hrtimer_wakeup\n\
             <idle>-0 [000] d.h1. {secs}.000003: sched_waking: comm=s pid=7 prio=0 target_cpu=000\n\
             <idle>-0 [000] d..2. {secs}.000004: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=s next_pid=7 next_prio=0\n"
        );
        if let Ok(recs) = parse(&t) {
            let _ = split(&recs, 7);
            let _ = analyse(&recs, 0, 7, e);
            let _ = analyse(&recs, 0, 7, expires);
        }
    }
}

fn fixture_records() -> Vec<rtshield_trace::Record> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
    let mut out = Vec::new();
    for name in ["preempt.txt", "irq-storm.txt", "hypervisor.txt"] {
        let text = std::fs::read_to_string(format!("{dir}/{name}")).unwrap();
        out.extend(parse(&text).unwrap());
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn any_window_on_the_fixtures_is_an_answer_or_an_error(
        e in prop_oneof![any::<u64>(), 999_999_000_000u64..3_000_002_000_000],
        cpu in 0u32..3,
        pid in prop_oneof![Just(100u32), Just(4242), Just(0), any::<u32>()],
    ) {
        let recs = fixture_records();
        if let Ok(s) = analyse(&recs, cpu, pid, e) {
            // Every ns of the window is in exactly one bucket.
            let sum: u64 = s.irqs.iter().map(|i| i.total_ns).sum::<u64>()
                + s.threads.iter().map(|t| t.ns).sum::<u64>()
                + s.unaccounted_ns;
            prop_assert_eq!(sum, s.latency_ns);
        }
    }
}
