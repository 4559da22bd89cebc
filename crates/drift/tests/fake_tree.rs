//! The drift watch on fake kernel trees: one event per change, at the
//! tick that saw it, none without a change.

use rtshield_drift::{Effect, Watch, WatchSpec};
use rtshield_sys::Root;
use rtshield_testkit::{FakeSpec, FakeStyle as Style};
use rtshield_vocab::CpuSet;
use std::fs;
use std::path::Path;

const S: u64 = 1_000_000_000;

fn tree(style: Style) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    FakeSpec::standard(style).build(d.path()).unwrap();
    d
}

fn put(base: &Path, p: &str, v: &str) {
    let f = base.join(p.trim_start_matches('/'));
    fs::create_dir_all(f.parent().unwrap()).unwrap();
    fs::write(f, v).unwrap();
}

fn watch(base: &Path, cpus: &str, parent: Option<&str>) -> Watch {
    Watch::new(
        WatchSpec {
            root: Root::new(base),
            cpus: CpuSet::parse_list(cpus).unwrap(),
            parent: parent.map(str::to_string),
            // No task of the fake tree is ours.
            own_pid: 999_999,
        },
        0,
    )
}

#[test]
fn an_irq_gaining_the_measured_cpu_is_one_event_at_the_tick_that_saw_it() {
    let d = tree(Style::V1Prefix);
    let mut w = watch(d.path(), "1", None);
    for t in 1..=3 {
        assert!(w.tick(t * S).is_empty(), "no change, tick {t}");
    }
    put(d.path(), "/proc/irq/41/effective_affinity_list", "0-1\n");
    put(d.path(), "/proc/irq/41/smp_affinity_list", "0-1\n");
    fs::create_dir_all(d.path().join("proc/irq/41/eth0")).unwrap();
    let ev = w.tick(4 * S);
    assert_eq!(ev.len(), 1, "{ev:#?}");
    let e = &ev[0];
    assert_eq!((e.at_ns, e.since_ns), (4 * S, 3 * S));
    assert_eq!(e.kind, "irq_affinity");
    assert_eq!(e.object, "irq 41 (eth0)");
    assert_eq!(
        (e.before.as_deref(), e.after.as_deref()),
        (Some("0"), Some("0-1"))
    );
    assert_eq!(e.effect, Effect::Exposes);
    assert_eq!(e.cpus, "1");
    // Seen once: the next ticks are quiet.
    for t in 5..=8 {
        assert!(w.tick(t * S).is_empty(), "tick {t}");
    }
    // An IRQ moving between unmeasured CPUs is a change, not an exposure.
    put(d.path(), "/proc/irq/36/effective_affinity_list", "2\n");
    let ev = w.tick(9 * S);
    assert_eq!(ev.len(), 1, "{ev:#?}");
    assert_eq!(ev[0].effect, Effect::Changes);
    assert_eq!(w.info().ticks, 10);
    assert_eq!(w.info().irqs, 4);
}

#[test]
fn knobs_governors_idle_states_and_hotplug_are_events() {
    let d = tree(Style::V1Prefix);
    put(
        d.path(),
        "/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor",
        "performance\n",
    );
    put(
        d.path(),
        "/sys/devices/system/cpu/cpu1/cpuidle/state1/disable",
        "1\n",
    );
    let mut w = watch(d.path(), "1", None);
    assert!(w.tick(S).is_empty());
    put(d.path(), "/proc/sys/kernel/timer_migration", "0\n");
    put(d.path(), "/proc/sys/kernel/sched_rt_runtime_us", "-1\n");
    put(
        d.path(),
        "/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor",
        "powersave\n",
    );
    put(
        d.path(),
        "/sys/devices/system/cpu/cpu1/cpuidle/state1/disable",
        "0\n",
    );
    put(d.path(), "/sys/devices/system/cpu/online", "0-2\n");
    put(d.path(), "/proc/irq/default_smp_affinity", "3\n");
    put(
        d.path(),
        "/sys/devices/virtual/workqueue/writeback/cpumask",
        "1\n",
    );
    let ev = w.tick(2 * S);
    let mut kinds: Vec<&str> = ev.iter().map(|e| e.kind.as_str()).collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "cpu_online",
            "cpufreq_governor",
            "cpuidle_state",
            "irq_default_affinity",
            "rt_throttling",
            "timer_migration",
            "workqueue_cpumask"
        ],
        "{ev:#?}"
    );
    let idle = ev.iter().find(|e| e.kind == "cpuidle_state").unwrap();
    assert_eq!(idle.object, "cpu1 state1");
    assert_eq!(idle.effect, Effect::Exposes);
    let rt = ev.iter().find(|e| e.kind == "rt_throttling").unwrap();
    assert_eq!(rt.after.as_deref(), Some("-1/1000000"));
    // The default affinity was 0-3 (mask f), now 0-1: not newly including 1.
    let def = ev
        .iter()
        .find(|e| e.kind == "irq_default_affinity")
        .unwrap();
    assert_eq!(def.effect, Effect::Changes);
    assert!(w.tick(3 * S).is_empty());
}

#[test]
fn a_task_joining_rt_and_the_rt_cpus_changing_are_one_event_each() {
    let d = tree(Style::V1Prefix);
    let cg = "/sys/fs/cgroup/cpuset/lab";
    for (set, cpus) in [("", "0-3"), ("/rt", "3"), ("/nrt", "0-2")] {
        put(
            d.path(),
            &format!("{cg}{set}/cpuset.cpus"),
            &format!("{cpus}\n"),
        );
        put(d.path(), &format!("{cg}{set}/tasks"), "");
    }
    let mut w = watch(d.path(), "3", Some("lab"));
    assert!(w
        .info()
        .unwatched
        .iter()
        .all(|u| !u.starts_with("rt tasks")));
    assert!(w.tick(S).is_empty());
    put(
        d.path(),
        "/proc/4242/status",
        "Name:\tintruder\nTgid:\t4242\nPPid:\t1\n",
    );
    put(d.path(), "/proc/4242/comm", "intruder\n");
    put(d.path(), &format!("{cg}/rt/tasks"), "4242\n");
    let ev = w.tick(2 * S);
    assert_eq!(ev.len(), 1, "{ev:#?}");
    assert_eq!(ev[0].kind, "rt_task");
    assert_eq!(ev[0].object, "task 4242 (intruder)");
    assert_eq!((ev[0].at_ns, ev[0].since_ns), (2 * S, S));
    assert!(w.tick(3 * S).is_empty(), "still there: no new event");
    put(d.path(), &format!("{cg}/rt/cpuset.cpus"), "2-3\n");
    let ev = w.tick(4 * S);
    assert_eq!(ev.len(), 1, "{ev:#?}");
    assert_eq!(ev[0].kind, "cpuset_cpus");
    assert_eq!(ev[0].object, format!("{cg}/rt"));
    assert_eq!(
        (ev[0].before.as_deref(), ev[0].after.as_deref()),
        (Some("3"), Some("2-3"))
    );
    // Leaving rt (or exiting) is not an event.
    put(d.path(), &format!("{cg}/rt/tasks"), "");
    assert!(w.tick(5 * S).is_empty());
}

#[test]
fn a_v2_partition_turning_invalid_exposes_the_cpus() {
    let d = tree(Style::V2);
    let cg = "/sys/fs/cgroup/lab";
    for (set, cpus) in [("", "0-3"), ("/rt", "3"), ("/nrt", "0-2")] {
        put(
            d.path(),
            &format!("{cg}{set}/cpuset.cpus"),
            &format!("{cpus}\n"),
        );
        put(d.path(), &format!("{cg}{set}/cgroup.procs"), "");
    }
    put(
        d.path(),
        &format!("{cg}/rt/cpuset.cpus.partition"),
        "isolated\n",
    );
    let mut w = watch(d.path(), "3", Some("lab"));
    assert!(w.tick(S).is_empty());
    put(
        d.path(),
        &format!("{cg}/rt/cpuset.cpus.partition"),
        "isolated invalid (Cpu list in cpuset.cpus not exclusive)\n",
    );
    let ev = w.tick(2 * S);
    assert_eq!(ev.len(), 1, "{ev:#?}");
    assert_eq!(ev[0].kind, "cpuset_partition");
    assert_eq!(ev[0].effect, Effect::Exposes);
}

#[test]
fn the_watcher_thread_feeds_events_and_finishes_with_the_run_s_drift() {
    let d = tree(Style::V1Prefix);
    let w = rtshield_drift::Watcher::start(
        WatchSpec {
            root: Root::new(d.path()),
            cpus: CpuSet::parse_list("1").unwrap(),
            parent: None,
            own_pid: 999_999,
        },
        std::time::Duration::from_millis(100),
    );
    let feed = w.feed();
    // The baseline is read before the change (then any later tick sees
    // it, once).
    for _ in 0..200 {
        if w.so_far().drift_watch.unwrap().ticks >= 1 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    put(d.path(), "/proc/irq/24/effective_affinity_list", "1\n");
    let mut seen = Vec::new();
    for _ in 0..100 {
        seen.extend(feed.take_new());
        if !seen.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(seen.len(), 1, "{seen:#?}");
    let so_far = w.so_far();
    assert_eq!(so_far.events().len(), 1);
    let drift = w.finish();
    assert_eq!(drift.events().len(), 1, "{drift:#?}");
    let e = &drift.events()[0];
    // 0-3 → 1: CPU 1 was allowed before and after.
    assert_eq!(
        (e.kind.as_str(), e.effect),
        ("irq_affinity", Effect::Changes)
    );
    assert!(e.since_ns < e.at_ns);
    let info = drift.drift_watch.unwrap();
    assert_eq!(info.ran_on.as_deref(), Some("0,2-3"));
    assert_eq!(info.period_ns, 100_000_000);
    assert!(info.ticks >= 2 && info.mono_zero_ns.is_some(), "{info:?}");
}
