//! `rtshield partition` through the binary, on fake trees (`--sysroot`).

use crate::util::{all_text as text, rtshield_at as rtshield};
use rtshield_testkit::{snapshot_tree, FakeSpec, FakeStyle};
use std::fs;

#[test]
fn create_status_undo_through_the_binary() {
    for style in [FakeStyle::V1Prefix, FakeStyle::V2] {
        let d = tempfile::tempdir().unwrap();
        let mut sp = FakeSpec::standard(style);
        sp.config
            .refuse
            .insert("/proc/irq/30/smp_affinity_list".into(), "EIO".into());
        sp.build(d.path()).unwrap();
        let before = snapshot_tree(d.path());

        let o = rtshield(d.path(), &["partition", "create", "0x8", "--json"]);
        assert!(o.status.success(), "{}", text(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["rt_cpus"], "3");
        assert_eq!(v["nrt_cpus"], "0-2");
        assert_eq!(v["refused_files"][0]["name"], "irq 30");
        assert_eq!(v["refused_tasks"].as_array().unwrap().len(), 2);

        let o = rtshield(d.path(), &["partition", "status"]);
        let t = text(&o);
        assert!(t.contains("state: complete"), "{t}");
        assert!(t.contains("rt   CPUs 3"), "{t}");

        let o = rtshield(d.path(), &["partition", "list"]);
        assert!(text(&o).contains("rt 3  nrt 0-2"), "{}", text(&o));

        // Undo dry run: changes nothing.
        let mid = snapshot_tree(d.path());
        let o = rtshield(d.path(), &["partition", "undo", "--dry-run"]);
        assert!(text(&o).contains("rmdir /sys/fs/cgroup"), "{}", text(&o));
        assert_eq!(mid, snapshot_tree(d.path()));

        let o = rtshield(d.path(), &["partition", "undo"]);
        assert!(o.status.success(), "{}", text(&o));
        assert!(text(&o).contains("Everything is back"), "{}", text(&o));
        assert_eq!(before, snapshot_tree(d.path()), "{style:?}");
        let o = rtshield(d.path(), &["partition", "undo"]);
        assert!(text(&o).contains("Nothing to undo"));
    }
}

#[test]
fn create_text_output_names_refusals_and_boot_params() {
    let d = tempfile::tempdir().unwrap();
    FakeSpec::standard(FakeStyle::V1NoPrefix)
        .build(d.path())
        .unwrap();
    let o = rtshield(d.path(), &["partition", "create", "2-3"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("Moved 4 task(s) to nrt"), "{t}");
    assert!(
        t.contains("note: PID 1 (init) kept in /sys/fs/cgroup/cpuset (use --move-init"),
        "{t}"
    );
    assert!(t.contains("ksoftirqd/3"), "{t}");
    assert!(t.contains("PF_NO_SETAFFINITY"), "{t}");
    assert!(t.contains("[missing] nohz_full=2-3"), "{t}");
    assert!(t.contains("add to the kernel command line:"), "{t}");
    assert_eq!(
        fs::read_to_string(d.path().join("sys/fs/cgroup/cpuset/rt/cpus")).unwrap(),
        "2-3\n"
    );
}

#[test]
fn bad_input_exits_2_and_changes_nothing() {
    let d = tempfile::tempdir().unwrap();
    FakeSpec::standard(FakeStyle::V1Prefix)
        .build(d.path())
        .unwrap();
    let before = snapshot_tree(d.path());
    for (args, want) in [
        (vec!["partition", "create", "9"], "CPU 9 does not exist"),
        (vec!["partition", "create", "0-3"], "housekeeping"),
        (vec!["partition", "create", "1-x"], "invalid CPU set '1-x'"),
        (
            vec!["partition", "create", "3", "--skip", "irqs"],
            "unknown knob 'irqs'",
        ),
        (
            vec!["partition", "create", "3", "--rt-throttle", "maybe"],
            "--rt-throttle",
        ),
        (
            vec!["partition", "create", "3", "--parent", "nope"],
            "does not exist",
        ),
        (
            vec!["partition", "move", "rtx", "1"],
            "unknown partition 'rtx'",
        ),
        (
            vec!["partition", "move", "1", "2"],
            "no partition named in '1 2'",
        ),
        (vec!["partition", "move", "rt", "x1"], "'x1' is not a PID"),
        (
            vec!["partition", "move", "rt"],
            "partition move: no PID given",
        ),
        (vec!["partition", "move"], "required"),
        (
            vec!["partition", "run", "rtx", "--", "true"],
            "unknown partition 'rtx'",
        ),
        (
            vec!["partition", "run", "rt", "--fifo", "0", "--", "true"],
            "--fifo",
        ),
        (vec!["partition", "undo", "--bogus"], "--bogus"),
    ] {
        let o = rtshield(d.path(), &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(want), "{args:?}: {}", text(&o));
        assert_eq!(before, snapshot_tree(d.path()), "{args:?}");
        // Nor a state file (the snapshot leaves /run out).
        assert!(!d.path().join("run").exists(), "{args:?}");
    }
    // Not bad input, but refused: no partition to move into.
    let o = rtshield(d.path(), &["partition", "move", "rt", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("no rt partition"), "{}", text(&o));
}

/// SPEC §1 writes `move PID… rt|nrt`, the issue `move rt|nrt PID…`: both work.
#[test]
fn move_accepts_both_orders() {
    let d = tempfile::tempdir().unwrap();
    FakeSpec::standard(FakeStyle::V1Prefix)
        .build(d.path())
        .unwrap();
    let o = rtshield(d.path(), &["partition", "create", "3"]);
    assert!(o.status.success(), "{}", text(&o));
    let tasks = |p: &str| {
        fs::read_to_string(d.path().join(format!("sys/fs/cgroup/cpuset/{p}/tasks"))).unwrap()
    };
    let o = rtshield(d.path(), &["partition", "move", "101", "102", "rt"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("101: 1 thread(s) moved to rt"),
        "{}",
        text(&o)
    );
    assert_eq!(tasks("rt"), "101\n102\n");
    let o = rtshield(d.path(), &["partition", "move", "nrt", "101"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(tasks("rt"), "102\n");
    assert!(tasks("nrt").contains("101\n"), "{}", tasks("nrt"));
    // The kernel's cgroup code applies the cpuset to the task's affinity.
    let st = fs::read_to_string(d.path().join("proc/102/status")).unwrap();
    assert!(st.contains("Cpus_allowed_list:\t3\n"), "{st}");
    // A PID that does not exist is bad input, named.
    let o = rtshield(d.path(), &["partition", "move", "999", "rt"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no process 999"), "{}", text(&o));
    // Undo puts tasks moved since back in the parent, and everything else.
    let o = rtshield(d.path(), &["partition", "undo"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        fs::read_to_string(d.path().join("sys/fs/cgroup/cpuset/tasks")).unwrap(),
        "1\n2\n14\n22\n35\n101\n102\n"
    );
    assert!(!d.path().join("sys/fs/cgroup/cpuset/rt").exists());
}

/// A cset shield or a partrt partition is reported by `status` and
/// `audit`, and `create` refuses next to it, naming the tool and its undo.
#[test]
fn other_tools_partitions_are_reported_and_create_refuses() {
    for (tool, rt, nrt, undo) in [
        ("cset", "user", "system", "cset shield --reset"),
        ("partrt", "rt", "nrt", "partrt undo"),
    ] {
        let d = tempfile::tempdir().unwrap();
        FakeSpec::standard(FakeStyle::V1Prefix)
            .build(d.path())
            .unwrap();
        let base = d.path().join("sys/fs/cgroup/cpuset");
        for (dir, cpus) in [(rt, "3\n"), (nrt, "0-2\n")] {
            fs::create_dir_all(base.join(dir)).unwrap();
            fs::write(base.join(dir).join("cpuset.cpus"), cpus).unwrap();
            fs::write(base.join(dir).join("tasks"), "").unwrap();
        }
        let before = snapshot_tree(d.path());
        for args in [
            &["partition", "create", "3"][..],
            &["partition", "create", "1", "--dry-run"],
        ] {
            let o = rtshield(d.path(), args);
            let t = text(&o);
            assert_eq!(o.status.code(), Some(2), "{tool}: {t}");
            assert!(
                t.contains(&format!("a {tool} partition: {rt} = CPUs 3")),
                "{t}"
            );
            assert!(t.contains(&format!("undo it first with `{undo}`")), "{t}");
        }
        assert_eq!(before, snapshot_tree(d.path()), "{tool}: nothing changed");
        let o = rtshield(d.path(), &["partition", "status"]);
        let t = text(&o);
        assert!(o.status.success(), "{t}");
        assert!(
            t.contains(&format!(
                "made by another tool: {tool} partition: {rt} = CPUs 3"
            )),
            "{t}"
        );
        let o = rtshield(d.path(), &["audit", "--watch", "0s", "--json"]);
        assert!(o.status.success(), "{}", text(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["selection"], "CPUs 3 (the rt partition)", "{tool}");
        let part = v["cpus"][0]["partition"].as_str().unwrap();
        assert!(part.starts_with(&format!("rt ({tool}: ")), "{part}");
        let findings = v["findings"].to_string();
        assert!(findings.contains(undo), "{findings}");
    }
}

/// Without --parent, undo and status act on the only rtshield partition,
/// wherever it is; with several, they name them and exit 2.
#[test]
fn undo_and_status_find_the_only_partition_under_any_parent() {
    let d = tempfile::tempdir().unwrap();
    FakeSpec::standard(FakeStyle::V1Prefix)
        .build(d.path())
        .unwrap();
    let before = snapshot_tree(d.path());
    for p in ["lab", "lab2"] {
        fs::create_dir_all(d.path().join("sys/fs/cgroup/cpuset").join(p)).unwrap();
        for (f, v) in [
            ("cpuset.cpus", "0-3\n"),
            ("cpuset.mems", "0\n"),
            ("tasks", ""),
        ] {
            fs::write(d.path().join("sys/fs/cgroup/cpuset").join(p).join(f), v).unwrap();
        }
    }
    let o = rtshield(d.path(), &["partition", "create", "3", "--parent", "lab"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = rtshield(d.path(), &["partition", "status"]);
    let t = text(&o);
    assert!(
        t.contains("the only rtshield partition is under --parent lab"),
        "{t}"
    );
    assert!(t.contains("rt   CPUs 3"), "{t}");
    let o = rtshield(d.path(), &["partition", "create", "2", "--parent", "lab2"]);
    assert!(o.status.success(), "{}", text(&o));
    for cmd in ["status", "undo"] {
        let o = rtshield(d.path(), &["partition", cmd]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{t}");
        assert!(
            t.contains(
                "2 rtshield partitions exist; say which one with `--parent lab`, `--parent lab2`"
            ),
            "{t}"
        );
    }
    let o = rtshield(d.path(), &["partition", "undo", "--parent", "lab2"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = rtshield(d.path(), &["partition", "undo"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("Everything is back"), "{t}");
    for p in ["lab", "lab2"] {
        fs::remove_dir_all(d.path().join("sys/fs/cgroup/cpuset").join(p)).unwrap();
    }
    assert_eq!(before, snapshot_tree(d.path()));
}

/// partrt reads `create 8` as the mask 0x8; rtshield reads CPU 8, and when
/// that CPU does not exist the error says lists are meant.
#[test]
fn a_bare_number_is_a_cpu_list_and_the_error_says_so() {
    let d = tempfile::tempdir().unwrap();
    FakeSpec::standard(FakeStyle::V1Prefix)
        .build(d.path())
        .unwrap();
    let before = snapshot_tree(d.path());
    let o = rtshield(d.path(), &["partition", "create", "8"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("CPU 8 does not exist"), "{t}");
    assert!(
        t.contains("`8` is read as a CPU list (`2` = CPU 2, `1,3-5`), not as partrt's hex mask: write `0x8` for the mask (as partrt's hex mask 0x8 it would be CPUs 3)"),
        "{t}"
    );
    assert_eq!(before, snapshot_tree(d.path()));
    // The mask itself and the profiles through the binary.
    let o = rtshield(
        d.path(),
        &[
            "partition",
            "create",
            "0x8",
            "--profile",
            "tuned",
            "--dry-run",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = rtshield(d.path(), &["partition", "create", "0x8", "--profile", "rt"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("unknown profile 'rt'"), "{}", text(&o));
}

/// The isolation tag of a run comes from the CPUs it measured: a
/// partition of CPU 1 under one parent does not tag a run on CPU 0 (every
/// earlier version tagged it `partition` because a state file existed),
/// and a run on CPU 1 names the partition's parent.
#[test]
fn a_partition_of_cpu_1_under_a_parent_does_not_tag_a_run_on_cpu_0() {
    let d = tempfile::tempdir().unwrap();
    FakeSpec::standard(FakeStyle::V1Prefix)
        .build(d.path())
        .unwrap();
    let lab = d.path().join("sys/fs/cgroup/cpuset/lab");
    fs::create_dir_all(&lab).unwrap();
    for (f, v) in [
        ("cpuset.cpus", "0-3\n"),
        ("cpuset.mems", "0\n"),
        ("tasks", ""),
    ] {
        fs::write(lab.join(f), v).unwrap();
    }
    let o = rtshield(d.path(), &["partition", "create", "1", "--parent", "lab"]);
    assert!(o.status.success(), "{}", text(&o));
    for (cpu, want) in [("0", "none"), ("1", "partition:lab")] {
        let out = d.path().join(format!("out-{cpu}"));
        let o = rtshield(
            d.path(),
            &[
                "measure",
                "--cpus",
                cpu,
                "--period",
                "1ms",
                "--samples",
                "20",
                "-q",
                "--out",
                out.to_str().unwrap(),
                "--no-store",
            ],
        );
        assert!(o.status.success(), "{}", text(&o));
        let r = crate::util::json(&out.join("results.json"));
        assert_eq!(r["tags"]["isolation"], want, "CPU {cpu}");
        assert_eq!(r["tags"]["isolation_detected"], want, "CPU {cpu}");
    }
}

/// partrt compatibility: `list --profile partrt` prints partrt's lines
/// (`Name:rt CPUs: 3`, which partrt's test suite parses with
/// `line.split(":")[2]`).
#[test]
fn list_with_profile_partrt_prints_partrts_name_lines() {
    let d = tempfile::tempdir().unwrap();
    FakeSpec::standard(FakeStyle::V1Prefix)
        .build(d.path())
        .unwrap();
    let o = rtshield(d.path(), &["partition", "list", "--profile", "partrt"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "Could not find any partitions\n"
    );
    let o = rtshield(d.path(), &["partition", "create", "0x8"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = rtshield(d.path(), &["partition", "list", "--profile", "partrt"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(out, "Name:rt CPUs: 3\nName:nrt CPUs: 0-2\n");
    let third: Vec<&str> = out
        .lines()
        .map(|l| l.split(':').nth(2).unwrap().trim())
        .collect();
    assert_eq!(third, ["3", "0-2"]);
    let o = rtshield(d.path(), &["partition", "list", "--profile", "tuned"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

/// partrt's `run -c MASK` and `move -c MASK PID`: a CPU subset of the
/// partition, refused ("Invalid cpumask") when it is not inside it, before
/// anything changes.
#[test]
fn run_and_move_take_a_cpu_subset_of_the_partition() {
    let d = tempfile::tempdir().unwrap();
    FakeSpec::standard(FakeStyle::V1Prefix)
        .build(d.path())
        .unwrap();
    let o = rtshield(d.path(), &["partition", "create", "1-3"]);
    assert!(o.status.success(), "{}", text(&o));
    // run: this test's own child pins itself (a real affinity of a process
    // the test started; CPU 1 exists on a 2-CPU machine).
    let o = rtshield(
        d.path(),
        &[
            "partition",
            "run",
            "-c",
            "0x2",
            "rt",
            "--",
            "grep",
            "Cpus_allowed_list",
            "/proc/self/status",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "Cpus_allowed_list:\t1\n"
    );
    let o = rtshield(
        d.path(),
        &["partition", "run", "-c", "0", "rt", "--", "true"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("Invalid cpumask: CPUs 0 are not all in partition rt (CPUs 1-3)"),
        "{}",
        text(&o)
    );
    // move: the fake task 101 (the fake kernel emulates its affinity).
    let tasks = || fs::read_to_string(d.path().join("sys/fs/cgroup/cpuset/rt/tasks")).unwrap();
    let o = rtshield(d.path(), &["partition", "move", "-c", "0,3", "101", "rt"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("Invalid cpumask"), "{}", text(&o));
    assert_eq!(tasks(), "", "nothing moved on refusal");
    let o = rtshield(d.path(), &["partition", "move", "-c", "0x8", "101", "rt"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(tasks(), "101\n");
    let st = fs::read_to_string(d.path().join("proc/101/status")).unwrap();
    assert!(st.contains("Cpus_allowed_list:\t3\n"), "{st}");
    // The `run` child (a host process, now exited) is still listed in the
    // fake rt cgroup; the emulation drops it as the kernel drops an exited
    // task, so undo can remove the cgroups.
    let o = rtshield(d.path(), &["partition", "undo"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!d.path().join("sys/fs/cgroup/cpuset/rt").exists());
}

/// `--rt-name`/`--nrt-name` (partrt's `-r`/`-n`): create makes the cpusets
/// under those names and records them; run, move, status, list and undo
/// find them from the state file, and `rt`/`nrt` keep naming the roles.
#[test]
fn create_names_the_cpusets_and_later_commands_find_them() {
    let d = tempfile::tempdir().unwrap();
    FakeSpec::standard(FakeStyle::V1Prefix)
        .build(d.path())
        .unwrap();
    let before = snapshot_tree(d.path());
    let cg = |p: &str| d.path().join("sys/fs/cgroup/cpuset").join(p);
    let o = rtshield(
        d.path(),
        &[
            "partition",
            "create",
            "3",
            "--rt-name",
            "rt1",
            "--nrt-name",
            "nrt1",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("/sys/fs/cgroup/cpuset/rt1"),
        "{}",
        text(&o)
    );
    assert_eq!(fs::read_to_string(cg("rt1/cpuset.cpus")).unwrap(), "3\n");
    assert_eq!(fs::read_to_string(cg("nrt1/cpuset.cpus")).unwrap(), "0-2\n");
    assert!(!cg("rt").exists() && !cg("nrt").exists());
    let o = rtshield(d.path(), &["partition", "list", "--profile", "partrt"]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "Name:rt1 CPUs: 3\nName:nrt1 CPUs: 0-2\n"
    );
    let o = rtshield(d.path(), &["partition", "status"]);
    assert!(
        text(&o).contains("/sys/fs/cgroup/cpuset/rt1"),
        "{}",
        text(&o)
    );
    // By role or by name; anything else is refused naming both.
    for (which, pid) in [("rt1", "101"), ("nrt", "101"), ("rt", "102")] {
        let o = rtshield(d.path(), &["partition", "move", pid, which]);
        assert!(o.status.success(), "{which}: {}", text(&o));
    }
    assert_eq!(fs::read_to_string(cg("rt1/tasks")).unwrap(), "102\n");
    // Every other command finds the partition too (one discovery, from
    // the state file): audit audits rt1 as the rt partition.
    let o = rtshield(d.path(), &["audit", "--watch", "0s", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["selection"], "CPUs 3 (the rt partition)", "{v}");
    let o = rtshield(d.path(), &["partition", "move", "101", "fast"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = rtshield(d.path(), &["partition", "run", "nrt2", "--", "true"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("unknown partition 'nrt2' (expected rt or nrt, or rt1 / nrt1 as this partition names them)"),
        "{}",
        text(&o)
    );
    let o = rtshield(d.path(), &["partition", "undo"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(before, snapshot_tree(d.path()));
    for (args, needle) in [
        (
            vec!["--rt-name", "a/b"],
            "--rt-name 'a/b': a partition name is",
        ),
        (
            vec!["--rt-name", "fast", "--nrt-name", "rt"],
            "swapping them",
        ),
        (
            vec!["--nrt-name", "rt"],
            "both partitions would be named 'rt'",
        ),
        (
            vec!["--rt-name", "x", "--nrt-name", "x"],
            "both partitions would be named 'x'",
        ),
    ] {
        let mut a = vec!["partition", "create", "3"];
        a.extend(args);
        let o = rtshield(d.path(), &a);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(needle), "{}", text(&o));
        assert_eq!(before, snapshot_tree(d.path()));
    }
}

/// A partition whose sets were renamed (`--rt-name`) is still found by the
/// one discovery every other command uses: a run on its CPU is tagged with
/// it, a run elsewhere is not.
#[test]
fn a_renamed_partition_still_tags_a_run_on_its_cpu() {
    let d = tempfile::tempdir().unwrap();
    FakeSpec::standard(FakeStyle::V1Prefix)
        .build(d.path())
        .unwrap();
    let o = rtshield(
        d.path(),
        &[
            "partition",
            "create",
            "1",
            "--rt-name",
            "fast",
            "--nrt-name",
            "slow",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    for (cpu, want) in [("0", "none"), ("1", "partition")] {
        let out = d.path().join(format!("out-{cpu}"));
        let o = rtshield(
            d.path(),
            &[
                "measure",
                "--cpus",
                cpu,
                "--period",
                "1ms",
                "--samples",
                "20",
                "-q",
                "--out",
                out.to_str().unwrap(),
                "--no-store",
            ],
        );
        assert!(o.status.success(), "{}", text(&o));
        let r = crate::util::json(&out.join("results.json"));
        assert_eq!(r["tags"]["isolation"], want, "CPU {cpu}");
    }
}

/// `measure --partition --partition-parent lab` finds a partition made
/// under `lab` with renamed sets (`Partitions::under`).
#[test]
fn measure_joins_a_renamed_partition_under_a_parent() {
    let d = tempfile::tempdir().unwrap();
    FakeSpec::standard(FakeStyle::V1Prefix)
        .build(d.path())
        .unwrap();
    let lab = d.path().join("sys/fs/cgroup/cpuset/lab");
    fs::create_dir_all(&lab).unwrap();
    for (f, v) in [
        ("cpuset.cpus", "0-3\n"),
        ("cpuset.mems", "0\n"),
        ("tasks", ""),
    ] {
        fs::write(lab.join(f), v).unwrap();
    }
    let o = rtshield(
        d.path(),
        &[
            "partition",
            "create",
            "1",
            "--parent",
            "lab",
            "--rt-name",
            "fast",
            "--nrt-name",
            "slow",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let out = d.path().join("out");
    let o = rtshield(
        d.path(),
        &[
            "measure",
            "--partition",
            "--partition-parent",
            "lab",
            "--policy",
            "other",
            "--cpus",
            "1",
            "--samples",
            "20",
            "-q",
            "--no-store",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let tasks = fs::read_to_string(lab.join("fast/tasks")).unwrap();
    assert!(
        !tasks.trim().is_empty(),
        "the measuring threads joined fast"
    );
}
