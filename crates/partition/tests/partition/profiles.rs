//! `--profile partrt|tuned` and `--move-init` on fake trees: the files each
//! profile writes, partrt's hotplug cycle, init kept in the root group by
//! default, and `undo` putting every file back byte for byte.

use rtshield_partition::Profile;
use rtshield_partition::{create, undo, CreateOptions, Knobs};
use rtshield_sys::Root;
use rtshield_testkit::put;
use rtshield_testkit::{file_text, snapshot_tree, FakeSpec, FakeStyle};
use rtshield_vocab::CpuSet;
use std::path::Path;

/// The standard 4-CPU fake machine plus the files the profiles touch.
fn tree() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    FakeSpec::standard(FakeStyle::V1Prefix)
        .build(d.path())
        .unwrap();
    for (p, v) in [
        ("/proc/sys/kernel/watchdog", "1\n"),
        ("/proc/sys/kernel/nmi_watchdog", "1\n"),
        ("/proc/sys/kernel/hung_task_timeout_secs", "120\n"),
        ("/proc/sys/kernel/numa_balancing", "1\n"),
        ("/sys/devices/virtual/workqueue/writeback/numa", "1\n"),
        (
            "/sys/devices/system/machinecheck/machinecheck0/check_interval",
            "300\n",
        ),
        (
            "/sys/devices/system/machinecheck/machinecheck0/ignore_ce",
            "0\n",
        ),
        (
            "/sys/devices/system/machinecheck/machinecheck1/ignore_ce",
            "0\n",
        ),
        ("/sys/devices/system/cpu/cpu3/online", "1\n"),
    ] {
        put(d.path(), p, v);
    }
    d
}

fn opts(cpus: &str, profile: Profile, move_init: bool) -> CreateOptions {
    let mut knobs = Knobs::resolve(false, &[], &[], false)
        .unwrap()
        .with_profile(profile, &[]);
    knobs.move_init = move_init;
    CreateOptions {
        names: Default::default(),
        cpus: CpuSet::parse(cpus).unwrap(),
        parent: None,
        knobs,
    }
}

/// Create with `o`, run `check`, undo, and compare every file with before.
fn cycle(o: CreateOptions, check: impl Fn(&Path, &rtshield_partition::CreateReport)) {
    let d = tree();
    let base = d.path();
    let before = snapshot_tree(base);
    let mut k = rtshield_testkit::fake_kernel(Root::new(base), false).unwrap();
    let rep = create(&mut k, &o).unwrap();
    check(base, &rep);
    let u = undo(&mut k, None).unwrap();
    assert!(u.errors.is_empty(), "{:?}", u.errors);
    let dd = rtshield_testkit::diff_trees(&before, &snapshot_tree(base));
    assert!(dd.is_empty(), "differs after undo:\n{}", dd.join("\n"));
}

#[test]
fn default_profile_keeps_init_and_the_watchdog() {
    cycle(opts("3", Profile::Default, false), |b, rep| {
        assert_eq!(file_text(b, "/proc/sys/vm/stat_interval"), "10\n");
        assert_eq!(file_text(b, "/proc/sys/kernel/timer_migration"), "0\n");
        assert_eq!(file_text(b, "/proc/sys/kernel/watchdog_cpumask"), "0-2\n");
        assert_eq!(file_text(b, "/proc/sys/kernel/watchdog"), "1\n");
        assert_eq!(file_text(b, "/proc/sys/kernel/numa_balancing"), "1\n");
        assert_eq!(file_text(b, "/sys/devices/system/cpu/cpu3/online"), "1\n");
        assert!(!rep.plan.join("\n").contains("cpu3/online"));
        let root_tasks = file_text(b, "/sys/fs/cgroup/cpuset/tasks");
        assert!(root_tasks.lines().any(|l| l == "1"), "{root_tasks}");
    });
}

#[test]
fn move_init_moves_pid_1_as_partrt_does() {
    cycle(opts("3", Profile::Default, true), |b, rep| {
        let nrt = file_text(b, "/sys/fs/cgroup/cpuset/nrt/tasks");
        assert!(nrt.lines().any(|l| l == "1"), "{nrt}");
        assert!(
            rep.notes.iter().all(|n| !n.starts_with("PID 1")),
            "{:?}",
            rep.notes
        );
    });
}

#[test]
fn partrt_profile_writes_partrt_values_and_cycles_the_rt_cpus() {
    cycle(opts("0x8", Profile::Partrt, false), |b, rep| {
        assert_eq!(file_text(b, "/proc/sys/vm/stat_interval"), "1000\n");
        assert_eq!(file_text(b, "/proc/sys/kernel/watchdog"), "0\n");
        assert_eq!(file_text(b, "/proc/sys/kernel/sched_rt_runtime_us"), "-1\n");
        assert_eq!(
            file_text(b, "/sys/devices/virtual/workqueue/writeback/numa"),
            "0\n"
        );
        assert_eq!(
            file_text(
                b,
                "/sys/devices/system/machinecheck/machinecheck0/check_interval"
            ),
            "0\n"
        );
        // Not partrt's: left alone.
        assert_eq!(file_text(b, "/proc/sys/kernel/watchdog_cpumask"), "0-3\n");
        assert_eq!(file_text(b, "/proc/sys/kernel/timer_migration"), "1\n");
        assert_eq!(file_text(b, "/sys/devices/system/cpu/cpu3/online"), "1\n");
        assert!(
            rep.notes.iter().any(|n| n.contains("hotplug cycle")),
            "{:?}",
            rep.notes
        );
    });
}

#[test]
fn partrt_hotplug_cycle_order_in_the_dry_run() {
    let d = tree();
    let mut k = rtshield_testkit::fake_kernel(Root::new(d.path()), true).unwrap();
    let rep = create(&mut k, &opts("0x8", Profile::Partrt, false)).unwrap();
    // Offline, then online, after every other knob; rt's cpuset written again.
    let plan = rep.plan.join("\n");
    let knob = plan.find("stat_interval <- 1000").expect(&plan);
    let off = plan.find("cpu3/online <- 0").expect(&plan);
    let on = plan.find("cpu3/online <- 1").expect(&plan);
    assert!(knob < off && off < on, "{plan}");
    assert!(plan[on..].contains("rt/cpuset.cpus <- 3"), "{plan}");
}

#[test]
fn tuned_profile_writes_cpu_partitioning_values() {
    cycle(opts("2-3", Profile::Tuned, false), |b, _| {
        assert_eq!(
            file_text(b, "/proc/sys/kernel/hung_task_timeout_secs"),
            "600\n"
        );
        assert_eq!(file_text(b, "/proc/sys/kernel/nmi_watchdog"), "0\n");
        assert_eq!(file_text(b, "/proc/sys/kernel/numa_balancing"), "0\n");
        assert_eq!(file_text(b, "/proc/sys/vm/stat_interval"), "10\n");
        assert_eq!(file_text(b, "/proc/sys/kernel/timer_migration"), "0\n");
        for mc in ["machinecheck0", "machinecheck1"] {
            assert_eq!(
                file_text(
                    b,
                    &format!("/sys/devices/system/machinecheck/{mc}/ignore_ce")
                ),
                "1\n"
            );
        }
        // Workqueues and IRQs as always: off the rt CPUs.
        assert_eq!(
            file_text(b, "/sys/devices/virtual/workqueue/writeback/cpumask"),
            "3\n"
        );
        assert_eq!(
            file_text(b, "/proc/sys/kernel/sched_rt_runtime_us"),
            "950000\n"
        );
        assert_eq!(file_text(b, "/proc/sys/kernel/watchdog"), "1\n");
    });
}

#[test]
fn unknown_profile_is_refused() {
    let e = Profile::parse("realtime").unwrap_err().to_string();
    assert!(e.contains("expected one of: default, partrt, tuned"), "{e}");
}

/// partrt's `create` letters keep one file each (`Keep`), and only that
/// one: every other file of the profile is written as without it.
#[test]
fn partrt_letters_keep_one_file_each() {
    use rtshield_partition::Keep;
    let wb_mask = "/sys/devices/virtual/workqueue/writeback/cpumask";
    let files: &[(&str, &str, &str)] = &[
        ("a", "/sys/devices/virtual/workqueue/writeback/numa", "1\n"),
        ("b", wb_mask, "f\n"),
        (
            "c",
            "/sys/devices/system/machinecheck/machinecheck0/check_interval",
            "300\n",
        ),
        ("m", "/proc/sys/vm/stat_interval", "1\n"),
        ("u", "/sys/devices/virtual/workqueue/cpumask", "f\n"),
        (
            "u",
            "/sys/devices/virtual/workqueue/blkcg_punt_bio/cpumask",
            "f\n",
        ),
        ("w", "/proc/sys/kernel/watchdog", "1\n"),
        ("r", "/sys/devices/system/cpu/cpu3/online", "1\n"),
    ];
    for letter in ["a", "b", "c", "m", "u", "w", "r"] {
        let mut o = opts("0x8", Profile::Partrt, true);
        o.knobs.keep = Keep {
            writeback_numa: letter == "a",
            writeback_cpumask: letter == "b",
            machine_check: letter == "c",
            stat_interval: letter == "m",
            hotplug: letter == "r",
            unbound_workqueues: letter == "u",
            watchdog: letter == "w",
        };
        let d = tree();
        let mut k = rtshield_testkit::fake_kernel(Root::new(d.path()), true).unwrap();
        let plan = create(&mut k, &o).unwrap().plan.join("\n");
        for (l, f, old) in files {
            let written = plan.contains(&format!("{f} <- "));
            assert_eq!(
                written,
                *l != letter,
                "-{letter}: {f} (was {old:?})\n{plan}"
            );
        }
    }
}
