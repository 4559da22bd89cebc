//! The real-kernel runner on tiny scenarios (each well under a second).
//! `loops_per_us = 1` makes one iteration one microsecond of CPU time on
//! any build, so the amounts of work below are known.

use rtshield_scenario::parse_str;
use rtshield_scenario_run::{plan, PlanOptions};
use rtshield_scenario_run::{run, RunOptions, RunOutcome};
use rtshield_sys::{get_affinity, Root};
use rtshield_vocab::CpuSet;
use std::sync::atomic::{AtomicBool, Ordering};

fn online() -> CpuSet {
    get_affinity(0).unwrap()
}

fn go(text: &str, timeout_ns: Option<u64>, interrupt: Option<&AtomicBool>) -> RunOutcome {
    let s = parse_str(text, "test.scn").unwrap();
    let on = online();
    let p = plan(&s, &on, PlanOptions::default()).unwrap();
    run(
        &s,
        &p,
        &on,
        &RunOptions {
            root: Root::host(),
            timeout_ns,
            loops_per_us: None,
            interrupt,
        },
    )
    .unwrap()
}

#[test]
fn pinned_tasks_spend_their_time_on_their_cpu() {
    let on = online();
    let (first, last) = (on.first().unwrap(), on.last().unwrap());
    let text = format!(
        "loops_per_us = 1\n{{ loop = 30000; cpu_mask = {first} }}\n{{ loop = 30000; cpu_mask = {last} }}\n"
    );
    let o = go(&text, None, None);
    let r = &o.report;
    assert_eq!(r.run.unfinished, 0);
    for (t, cpu) in r.tasks.iter().zip([first, last]) {
        assert!(t.finished);
        assert_eq!(t.cpu_mask, cpu.to_string());
        assert!(t.cpu_share[cpu as usize] > 0.9, "{t:?}");
        assert_eq!(t.migrations, 0, "a pinned task never changes CPU: {t:?}");
        assert!(t.cpu_ns > 0 && t.cpu_ns <= t.wall_ns, "{t:?}");
        if t.kernel_migrations.is_some() {
            // The kernel agrees (the sched file exists with CONFIG_SCHED_DEBUG).
            assert_eq!(t.kernel_migrations, Some(0), "{t:?}");
        }
        assert!(t.voluntary_switches.is_some(), "status is always there");
    }
    assert_eq!(r.source, "kernel");
    assert_eq!(r.cpus.len(), on.len());
    assert!(r
        .warnings
        .iter()
        .any(|w| w.starts_with("loops_per_us = 1 (given)")));
}

#[test]
fn tasks_start_together_after_the_release() {
    let o = go("loops_per_us = 1\n{ loop = 5000; count = 6 }\n", None, None);
    assert_eq!(o.task_start_ns.len(), 6);
    assert!(
        o.task_start_ns.iter().all(|&s| s >= o.release_ns),
        "no task may start before the start signal"
    );
    let (min, max) = (
        *o.task_start_ns.iter().min().unwrap(),
        *o.task_start_ns.iter().max().unwrap(),
    );
    assert_eq!(o.report.run.start_skew_ns, Some(max - min));
    assert!(o.report.tasks.iter().all(|t| t.finished));
    // Group statistics come from the tasks' own wall times.
    let g = &o.report.groups[0];
    assert_eq!(g.tasks, 6);
    let walls: Vec<u64> = o.report.tasks.iter().map(|t| t.wall_ns).collect();
    assert_eq!(g.wall_min_ns, *walls.iter().min().unwrap());
    assert_eq!(g.wall_max_ns, *walls.iter().max().unwrap());
}

#[test]
fn timeout_stops_every_task_and_reports_the_unfinished() {
    let last = online().last().unwrap();
    // 20 s of work, and an RT task asleep for 5 s: both must stop at once.
    let text = format!(
        "loops_per_us = 1\n{{ loop = 20000000 }}\n\
         {{ loop = 1000000; sloop = 10; sleep = 5s; sched = FIFO; priority = 10; cpu_mask = {last} }}\n"
    );
    let o = go(&text, Some(100_000_000), None);
    assert!(o.timed_out && !o.interrupted);
    let r = &o.report;
    assert_eq!(
        r.tasks.len(),
        2,
        "unfinished tasks are reported, not dropped"
    );
    assert_eq!(r.run.unfinished, 2);
    assert!(r.tasks.iter().all(|t| !t.finished));
    let notes: Vec<&String> = r
        .warnings
        .iter()
        .filter(|w| w.contains("unfinished"))
        .collect();
    assert_eq!(notes.len(), 2, "{:?}", r.warnings);
    assert!(
        notes[0].contains("when the timeout of 100 ms ended the run"),
        "{}",
        notes[0]
    );
    assert!(
        notes[1].starts_with("task fifo10.1 unfinished: 10 of 1000000 iterations"),
        "{}",
        notes[1]
    );
}

#[test]
fn interrupt_flag_ends_the_run_with_results() {
    let flag = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(std::time::Duration::from_millis(80));
            flag.store(true, Ordering::SeqCst);
        });
        let o = go(
            "loops_per_us = 1\n{ loop = 20000000; irq_period = 1000 }\n",
            None,
            Some(&flag),
        );
        assert!(o.interrupted);
        assert_eq!(o.report.run.unfinished, 1);
        assert!(o
            .report
            .warnings
            .iter()
            .any(|w| w.contains("when the run was interrupted")));
        assert!(o
            .report
            .warnings
            .iter()
            .any(|w| w.starts_with("irq_period:")));
    });
}
