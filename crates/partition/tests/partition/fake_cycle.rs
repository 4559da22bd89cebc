//! The whole create/undo cycle on fake v1 (both prefix styles) and v2
//! trees: every file byte-for-byte after undo, dry runs, killed creates,
//! refusing IRQs, forking tasks, and refusals that change nothing.

use rtshield_partition::{create, undo, CreateOptions, Knobs};
use rtshield_sys::Root;
use rtshield_testkit::{diff_trees, file_text, snapshot_tree, FakeSpec, FakeStyle, FAKE_MARKER};
use rtshield_vocab::{CpuSet, InputError};
use std::fs;

fn full(cpus: &str) -> CreateOptions {
    CreateOptions {
        names: Default::default(),
        cpus: CpuSet::parse(cpus).unwrap(),
        parent: None,
        knobs: Knobs::resolve(false, &[], &[], false).unwrap(),
    }
}

fn spec(style: FakeStyle) -> FakeSpec {
    let mut s = FakeSpec::standard(style);
    s.config
        .refuse
        .insert("/proc/irq/30/smp_affinity_list".into(), "EIO".into());
    s.config.fork_on_move.insert("101".into(), vec![150]);
    s
}

fn cpuset_file(style: FakeStyle, dir: &str, name: &str) -> String {
    match style {
        FakeStyle::V1Prefix => format!("/sys/fs/cgroup/cpuset{dir}/cpuset.{name}"),
        FakeStyle::V1NoPrefix => format!("/sys/fs/cgroup/cpuset{dir}/{name}"),
        FakeStyle::V2 => format!("/sys/fs/cgroup{dir}/cpuset.{name}"),
    }
}

fn tasks_file(style: FakeStyle, dir: &str) -> String {
    match style {
        FakeStyle::V2 => format!("/sys/fs/cgroup{dir}/cgroup.procs"),
        _ => format!("/sys/fs/cgroup/cpuset{dir}/tasks"),
    }
}

#[allow(clippy::too_many_lines)] // one create/undo cycle, checked step by step
fn full_cycle(style: FakeStyle) {
    let d = tempfile::tempdir().unwrap();
    let base = d.path();
    let sp = spec(style);
    sp.build(base).unwrap();
    let before = snapshot_tree(base);
    let root = Root::new(base);

    let mut k = rtshield_testkit::fake_kernel(root.clone(), false).unwrap();
    let rep = create(&mut k, &full("0x8")).unwrap();
    assert_eq!(rep.rt_cpus, "3");
    assert_eq!(rep.nrt_cpus, "0-2");
    assert_eq!(file_text(base, &cpuset_file(style, "/rt", "cpus")), "3\n");
    assert_eq!(
        file_text(base, &cpuset_file(style, "/nrt", "cpus")),
        "0-2\n"
    );
    // Every movable task went to nrt, the fork included (second pass);
    // init (PID 1) stays in the root group without --move-init.
    assert_eq!(
        file_text(base, &tasks_file(style, "/nrt")),
        "2\n35\n101\n102\n150\n"
    );
    assert_eq!(file_text(base, &tasks_file(style, "")), "1\n14\n22\n");
    assert!(
        rep.notes
            .iter()
            .any(|n| n.starts_with("PID 1 (init) kept in")),
        "{:?}",
        rep.notes
    );
    assert!(rep.move_passes >= 2, "{}", rep.move_passes);
    let refused: Vec<&str> = rep.refused_tasks.iter().map(|r| r.what.as_str()).collect();
    assert_eq!(refused, ["14", "22"]);
    assert!(
        rep.refused_tasks[1].reason.contains("PF_NO_SETAFFINITY"),
        "{:?}",
        rep.refused_tasks
    );
    assert_eq!(rep.refused_tasks[1].name, "ksoftirqd/3");
    // IRQs: moved off CPU 3, the refusing one listed with its errno.
    assert_eq!(file_text(base, "/proc/irq/24/smp_affinity_list"), "0-2\n");
    assert_eq!(file_text(base, "/proc/irq/36/smp_affinity_list"), "0-2\n");
    assert_eq!(file_text(base, "/proc/irq/41/smp_affinity_list"), "0\n");
    assert_eq!(file_text(base, "/proc/irq/30/smp_affinity_list"), "0-3\n");
    assert_eq!(rep.refused_files.len(), 1);
    assert_eq!(rep.refused_files[0].name, "irq 30");
    assert!(
        rep.refused_files[0].reason.starts_with("EIO"),
        "{:?}",
        rep.refused_files
    );
    assert_eq!(file_text(base, "/proc/irq/default_smp_affinity"), "7\n");
    assert_eq!(
        file_text(base, "/sys/devices/virtual/workqueue/cpumask"),
        "7\n"
    );
    assert_eq!(
        file_text(base, "/sys/devices/virtual/workqueue/writeback/cpumask"),
        "7\n"
    );
    assert_eq!(file_text(base, "/proc/sys/kernel/timer_migration"), "0\n");
    assert_eq!(file_text(base, "/proc/sys/vm/stat_interval"), "10\n");
    assert_eq!(
        file_text(base, "/proc/sys/kernel/watchdog_cpumask"),
        "0-2\n"
    );
    // RT throttling untouched unless asked.
    assert_eq!(
        file_text(base, "/proc/sys/kernel/sched_rt_runtime_us"),
        "950000\n"
    );
    match style {
        FakeStyle::V2 => {
            assert_eq!(rep.v2_partition.as_deref(), Some("isolated"));
            assert_eq!(
                file_text(base, "/sys/fs/cgroup/cgroup.subtree_control"),
                "cpu memory cpuset\n"
            );
        }
        _ => {
            assert_eq!(
                file_text(base, &cpuset_file(style, "/rt", "sched_load_balance")),
                "0\n"
            );
            assert_eq!(
                file_text(base, &cpuset_file(style, "/rt", "cpu_exclusive")),
                "1\n"
            );
            assert_eq!(
                file_text(base, &cpuset_file(style, "", "sched_load_balance")),
                "0\n"
            );
        }
    }
    // Boot advice from this kernel's (fake) config.
    let params: Vec<&str> = rep.boot_params.iter().map(|b| b.param.as_str()).collect();
    assert!(params.contains(&"nohz_full=3"), "{params:?}");
    assert!(params.contains(&"rcu_nocbs=3"), "{params:?}");
    assert!(params.contains(&"irqaffinity=0-2"), "{params:?}");
    assert!(rep.boot_params.iter().all(|b| !b.present));
    let st = rtshield_partition::status(&k, None).unwrap();
    assert_eq!(st.state, "complete");
    assert_eq!(st.partitions.len(), 2);
    assert_eq!(st.partitions[0].cpus.as_deref(), Some("3"));

    // A second create is refused and changes nothing.
    let mid = snapshot_tree(base);
    let e = create(&mut k, &full("3")).unwrap_err();
    assert!(e.to_string().contains("already exists"), "{e}");
    assert!(diff_trees(&mid, &snapshot_tree(base)).is_empty());

    let u = undo(&mut k, None).unwrap();
    assert!(u.errors.is_empty(), "{:?}", u.errors);
    assert!(!u.nothing_to_undo);
    let after = snapshot_tree(base);
    let mut expected = before.clone();
    // The task forked during the move is a new task: it now lives in the parent.
    let tf = tasks_file(style, "").trim_start_matches('/').to_string();
    expected.insert(tf, b"1\n2\n14\n22\n35\n101\n102\n150\n".to_vec());
    expected.insert("proc/150/".into(), vec![]);
    expected.insert(
        "proc/150/status".into(),
        fs::read(base.join("proc/101/status")).unwrap(),
    );
    let dd = diff_trees(&expected, &after);
    assert!(
        dd.is_empty(),
        "{style:?} differs after undo:\n{}",
        dd.join("\n")
    );
    // Idempotent.
    let again = undo(&mut k, None).unwrap();
    assert!(again.nothing_to_undo);
    assert!(diff_trees(&expected, &snapshot_tree(base)).is_empty());
}

#[test]
fn full_cycle_v1_prefix() {
    full_cycle(FakeStyle::V1Prefix);
}

#[test]
fn full_cycle_v1_noprefix() {
    full_cycle(FakeStyle::V1NoPrefix);
}

#[test]
fn full_cycle_v2() {
    full_cycle(FakeStyle::V2);
}

#[test]
fn dry_run_changes_nothing_and_lists_every_write() {
    for style in [FakeStyle::V1Prefix, FakeStyle::V2] {
        let d = tempfile::tempdir().unwrap();
        spec(style).build(d.path()).unwrap();
        let before = snapshot_tree(d.path());
        let mut k = rtshield_testkit::fake_kernel(Root::new(d.path()), true).unwrap();
        let rep = create(&mut k, &full("3")).unwrap();
        assert!(rep.dry_run);
        assert!(diff_trees(&before, &snapshot_tree(d.path())).is_empty());
        // The snapshot leaves out /run (state files): nothing may appear there either.
        assert!(!d.path().join("run").exists());
        let plan = rep.plan.join("\n");
        assert!(
            plan.contains("write /proc/irq/24/smp_affinity_list <- 0-2"),
            "{plan}"
        );
        assert!(plan.contains("mkdir /sys/fs/cgroup"), "{plan}");
        assert!(plan.contains("move 6 tasks"), "{plan}");
        // The state is saved before the first change.
        assert!(
            rep.plan[0].starts_with("save state /run/rtshield/partition.json"),
            "{plan}"
        );
    }
}

#[test]
fn killed_create_can_be_undone_exactly() {
    for style in [FakeStyle::V1Prefix, FakeStyle::V1NoPrefix, FakeStyle::V2] {
        for n in [0, 1, 2, 4, 7, 9, 12, 15, 18, 30] {
            let d = tempfile::tempdir().unwrap();
            let mut sp = FakeSpec::standard(style);
            sp.config.kill_after_writes = Some(n);
            sp.build(d.path()).unwrap();
            let before = snapshot_tree(d.path());
            let mut k = rtshield_testkit::fake_kernel(Root::new(d.path()), false).unwrap();
            let res = create(&mut k, &full("3"));
            let killed = match &res {
                Err(e) => {
                    assert!(e.to_string().contains("simulated kill"), "{e}");
                    true
                }
                Ok(_) => false,
            };
            // The state file is there whatever the point of death.
            assert!(d.path().join("run/rtshield/partition.json").exists());
            // A new process (no kill) undoes it.
            sp.config.kill_after_writes = None;
            fs::write(
                d.path().join(FAKE_MARKER.trim_start_matches('/')),
                serde_json::to_string(&sp.config).unwrap(),
            )
            .unwrap();
            let mut k = rtshield_testkit::fake_kernel(Root::new(d.path()), false).unwrap();
            let st = rtshield_partition::status(&k, None).unwrap();
            assert_eq!(st.state, if killed { "incomplete" } else { "complete" });
            let u = undo(&mut k, None).unwrap();
            assert!(u.errors.is_empty(), "{style:?} n={n}: {:?}", u.errors);
            assert_eq!(u.was_incomplete, killed);
            let dd = diff_trees(&before, &snapshot_tree(d.path()));
            assert!(
                dd.is_empty(),
                "{style:?} killed after {n}:\n{}",
                dd.join("\n")
            );
        }
    }
}

fn refused(sp: &FakeSpec, opts: &CreateOptions, want: &str, input: bool) {
    let d = tempfile::tempdir().unwrap();
    sp.build(d.path()).unwrap();
    let before = snapshot_tree(d.path());
    let mut k = rtshield_testkit::fake_kernel(Root::new(d.path()), false).unwrap();
    let e = create(&mut k, opts).unwrap_err();
    assert!(e.to_string().contains(want), "wanted '{want}' in: {e:#}");
    assert_eq!(e.chain().any(|c| c.is::<InputError>()), input, "{e}");
    assert!(diff_trees(&before, &snapshot_tree(d.path())).is_empty());
    assert!(!d.path().join("run/rtshield/partition.json").exists());
}

#[test]
fn refusals_change_nothing() {
    let sp = FakeSpec::standard(FakeStyle::V1Prefix);
    refused(
        &sp,
        &full("7"),
        "CPU 7 does not exist (this machine has CPUs 0-3)",
        true,
    );
    refused(&sp, &full("0-3"), "at least one housekeeping CPU", true);
    refused(&sp, &full("0xf"), "at least one housekeeping CPU", true);
    let mut off = sp.clone();
    off.ncpus = 4;
    let d = tempfile::tempdir().unwrap();
    off.build(d.path()).unwrap();
    fs::write(d.path().join("sys/devices/system/cpu/online"), "0-2\n").unwrap();
    let before = snapshot_tree(d.path());
    let mut k = rtshield_testkit::fake_kernel(Root::new(d.path()), false).unwrap();
    let e = create(&mut k, &full("3")).unwrap_err();
    assert!(e.to_string().contains("CPU 3 is offline"), "{e}");
    assert!(diff_trees(&before, &snapshot_tree(d.path())).is_empty());

    // A hierarchy rtshield does not know.
    let d = tempfile::tempdir().unwrap();
    sp.build(d.path()).unwrap();
    fs::write(
        d.path().join("proc/self/mountinfo"),
        "34 31 0:31 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n",
    )
    .unwrap();
    let before = snapshot_tree(d.path());
    let mut k = rtshield_testkit::fake_kernel(Root::new(d.path()), false).unwrap();
    let e = create(&mut k, &full("3")).unwrap_err();
    assert!(e.to_string().contains("no cpuset cgroup hierarchy"), "{e}");
    assert!(diff_trees(&before, &snapshot_tree(d.path())).is_empty());

    // rt/nrt made by another tool.
    let d = tempfile::tempdir().unwrap();
    sp.build(d.path()).unwrap();
    fs::create_dir(d.path().join("sys/fs/cgroup/cpuset/rt")).unwrap();
    let mut k = rtshield_testkit::fake_kernel(Root::new(d.path()), false).unwrap();
    let e = create(&mut k, &full("3")).unwrap_err();
    assert!(
        e.to_string()
            .contains("already exists but rtshield has no state"),
        "{e}"
    );

    // A parent that does not exist.
    let mut o = full("3");
    o.parent = Some("nope".into());
    refused(
        &sp,
        &o,
        "cgroup /sys/fs/cgroup/cpuset/nope does not exist",
        true,
    );
    // A parent that climbs out of the hierarchy.
    o.parent = Some("../..".into());
    refused(&sp, &o, "--parent: '../..' must name a cgroup below", true);
}

#[test]
fn v2_refused_isolated_falls_back_to_root_and_says_why() {
    let d = tempfile::tempdir().unwrap();
    let mut sp = FakeSpec::standard(FakeStyle::V2);
    sp.config.partition_invalid.insert(
        "isolated".into(),
        "Cpu list in cpuset.cpus not exclusive".into(),
    );
    sp.build(d.path()).unwrap();
    let before = snapshot_tree(d.path());
    let mut k = rtshield_testkit::fake_kernel(Root::new(d.path()), false).unwrap();
    let rep = create(&mut k, &full("2-3")).unwrap();
    assert_eq!(rep.v2_partition.as_deref(), Some("root"));
    let notes = rep.notes.join("\n");
    assert!(
        notes.contains("isolated invalid (Cpu list in cpuset.cpus not exclusive)"),
        "{notes}"
    );
    undo(&mut k, None).unwrap();
    assert!(diff_trees(&before, &snapshot_tree(d.path())).is_empty());

    // Both refused: a member cpuset, explained.
    let d = tempfile::tempdir().unwrap();
    sp.config
        .partition_invalid
        .insert("root".into(), "Parent is not a partition root".into());
    sp.build(d.path()).unwrap();
    let mut k = rtshield_testkit::fake_kernel(Root::new(d.path()), false).unwrap();
    let rep = create(&mut k, &full("3")).unwrap();
    assert_eq!(rep.v2_partition.as_deref(), Some("member"));
    assert!(rep
        .notes
        .join("\n")
        .contains("Parent is not a partition root"));

    // Older kernels answer the write with EINVAL instead.
    let d = tempfile::tempdir().unwrap();
    let mut sp = FakeSpec::standard(FakeStyle::V2);
    sp.config.refuse.insert(
        "/sys/fs/cgroup/rt/cpuset.cpus.partition".into(),
        "EINVAL".into(),
    );
    sp.build(d.path()).unwrap();
    let before = snapshot_tree(d.path());
    let mut k = rtshield_testkit::fake_kernel(Root::new(d.path()), false).unwrap();
    let rep = create(&mut k, &full("3")).unwrap();
    assert_eq!(rep.v2_partition.as_deref(), Some("member"));
    let notes = rep.notes.join("\n");
    assert!(notes.contains("`isolated` refused (EINVAL)"), "{notes}");
    assert!(notes.contains("`root` refused (EINVAL)"), "{notes}");
    undo(&mut k, None).unwrap();
    assert!(diff_trees(&before, &snapshot_tree(d.path())).is_empty());
}

#[test]
fn parent_mode_leaves_machine_knobs_alone() {
    let d = tempfile::tempdir().unwrap();
    let sp = FakeSpec::standard(FakeStyle::V1Prefix);
    sp.build(d.path()).unwrap();
    // A private sub-cgroup holding only tasks 101 and 102.
    let mut k = rtshield_testkit::fake_kernel(Root::new(d.path()), false).unwrap();
    k.mkdir("/sys/fs/cgroup/cpuset/mine").unwrap();
    k.write("/sys/fs/cgroup/cpuset/mine/cpuset.cpus", "0-3\n")
        .unwrap();
    k.write("/sys/fs/cgroup/cpuset/mine/cpuset.mems", "0\n")
        .unwrap();
    k.write("/sys/fs/cgroup/cpuset/mine/tasks", "101\n")
        .unwrap();
    k.write("/sys/fs/cgroup/cpuset/mine/tasks", "102\n")
        .unwrap();
    let before = snapshot_tree(d.path());
    let mut o = full("3");
    o.parent = Some("mine".into());
    o.knobs = Knobs::resolve(true, &[], &[], false).unwrap();
    let rep = create(&mut k, &o).unwrap();
    assert_eq!(rep.state_file, "/run/rtshield/partition-mine.json");
    assert_eq!(
        file_text(d.path(), "/sys/fs/cgroup/cpuset/mine/nrt/tasks"),
        "101\n102\n"
    );
    assert_eq!(
        file_text(d.path(), "/sys/fs/cgroup/cpuset/tasks"),
        "1\n2\n14\n22\n35\n"
    );
    assert_eq!(file_text(d.path(), "/proc/irq/36/smp_affinity_list"), "3\n");
    assert!(rep
        .changed
        .iter()
        .all(|c| c.knob == rtshield_isolation::Knob::Cgroup));
    // The root-level state is separate: no partition there.
    assert_eq!(rtshield_partition::status(&k, None).unwrap().state, "none");
    undo(&mut k, Some("mine")).unwrap();
    let dd = diff_trees(&before, &snapshot_tree(d.path()));
    assert!(dd.is_empty(), "{}", dd.join("\n"));
}

#[test]
fn a_failing_cgroup_write_rolls_back_on_the_spot() {
    let d = tempfile::tempdir().unwrap();
    let mut sp = FakeSpec::standard(FakeStyle::V1Prefix);
    sp.config.refuse.insert(
        "/sys/fs/cgroup/cpuset/rt/cpuset.mems".into(),
        "ENOSPC".into(),
    );
    sp.build(d.path()).unwrap();
    let before = snapshot_tree(d.path());
    let mut k = rtshield_testkit::fake_kernel(Root::new(d.path()), false).unwrap();
    let e = create(&mut k, &full("3")).unwrap_err();
    let msg = format!("{e:#}");
    assert!(msg.contains("every change made so far was undone"), "{msg}");
    assert!(msg.contains("rt/cpuset.mems"), "{msg}");
    assert!(diff_trees(&before, &snapshot_tree(d.path())).is_empty());
    assert!(!d.path().join("run/rtshield/partition.json").exists());
}

#[test]
fn a_corrupt_state_file_is_reported_not_guessed() {
    let d = tempfile::tempdir().unwrap();
    FakeSpec::standard(FakeStyle::V1Prefix)
        .build(d.path())
        .unwrap();
    fs::create_dir_all(d.path().join("run/rtshield")).unwrap();
    fs::write(
        d.path().join("run/rtshield/partition.json"),
        "{ \"version\": 1, ",
    )
    .unwrap();
    // Private as rtshield makes them, so the content is what is judged.
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &str, m: u32| {
        fs::set_permissions(d.path().join(p), fs::Permissions::from_mode(m)).unwrap()
    };
    mode("run/rtshield", 0o700);
    mode("run/rtshield/partition.json", 0o600);
    let before = snapshot_tree(d.path());
    let mut k = rtshield_testkit::fake_kernel(Root::new(d.path()), false).unwrap();
    let e = undo(&mut k, None).unwrap_err();
    assert!(e.to_string().contains("corrupt state file"), "{e}");
    let e = create(&mut k, &full("3")).unwrap_err();
    assert!(e.to_string().contains("corrupt state file"), "{e}");
    assert!(diff_trees(&before, &snapshot_tree(d.path())).is_empty());
}

#[test]
fn undo_survives_an_irq_that_vanished_since_create() {
    let d = tempfile::tempdir().unwrap();
    FakeSpec::standard(FakeStyle::V1Prefix)
        .build(d.path())
        .unwrap();
    let mut k = rtshield_testkit::fake_kernel(Root::new(d.path()), false).unwrap();
    create(&mut k, &full("3")).unwrap();
    // The device behind irq 24 was unplugged: its /proc/irq entry is gone.
    fs::remove_dir_all(d.path().join("proc/irq/24")).unwrap();
    let before = snapshot_tree(d.path());
    let u = undo(&mut k, None).unwrap();
    assert!(u.errors.is_empty(), "{:?}", u.errors);
    assert_eq!(u.vanished, ["/proc/irq/24/smp_affinity_list"]);
    assert!(!d.path().join("run/rtshield/partition.json").exists());
    assert!(!d.path().join("proc/irq/24").exists());
    // Everything else is back.
    assert_eq!(file_text(d.path(), "/proc/irq/36/smp_affinity_list"), "3\n");
    assert!(diff_trees(&before, &snapshot_tree(d.path()))
        .iter()
        .all(|l| !l.contains("irq/24")));
}

#[test]
fn v2_without_cpus_exclusive_is_explained_not_fatal() {
    let d = tempfile::tempdir().unwrap();
    let mut sp = FakeSpec::standard(FakeStyle::V2);
    // Kernels before 6.7 have no cpuset.cpus.exclusive.
    sp.config.refuse.insert(
        "/sys/fs/cgroup/rt/cpuset.cpus.exclusive".into(),
        "ENOENT".into(),
    );
    sp.build(d.path()).unwrap();
    let before = snapshot_tree(d.path());
    let mut k = rtshield_testkit::fake_kernel(Root::new(d.path()), false).unwrap();
    let rep = create(&mut k, &full("3")).unwrap();
    assert!(
        rep.notes
            .iter()
            .any(|n| n.contains("no cpuset.cpus.exclusive (before 6.7)")),
        "{:?}",
        rep.notes
    );
    assert_eq!(rep.v2_partition.as_deref(), Some("isolated"));
    let u = undo(&mut k, None).unwrap();
    assert!(u.errors.is_empty(), "{:?}", u.errors);
    assert!(diff_trees(&before, &snapshot_tree(d.path())).is_empty());
}
