//! What a partition command may act on (issue 21 finding 8, adversary
//! cases n08a-d), on fake trees only: `--parent` names an existing cgroup
//! below the hierarchy's root, and `partition move` takes only tasks
//! inside that parent's subtree, never PID 1 or a kernel thread without
//! `--force` (and never PID 1 from outside the subtree, even with it).

use crate::util::{all_text as text, rtshield_at as rtshield};
use rtshield_testkit::{snapshot_tree as snapshot, FakeSpec, FakeStyle as Style};
use std::fs;
use std::path::Path;

const MOUNT: &str = "sys/fs/cgroup/cpuset";

fn ids(base: &Path, dir: &str) -> Vec<u32> {
    fs::read_to_string(base.join(MOUNT).join(dir).join("tasks"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect()
}

/// A cpuset `name` below the root of a v1 tree, CPUs 0-3, holding `tasks`.
fn cgroup(base: &Path, name: &str, tasks: &str) {
    let p = base.join(MOUNT).join(name);
    fs::create_dir(&p).unwrap();
    for (f, v) in [
        ("cpuset.cpus", "0-3\n"),
        ("cpuset.effective_cpus", "0-3\n"),
        ("cpuset.mems", "0\n"),
        ("cpuset.cpu_exclusive", "0\n"),
        ("cpuset.sched_load_balance", "1\n"),
        ("cgroup.procs", ""),
        ("notify_on_release", "0\n"),
        ("tasks", tasks),
    ] {
        fs::write(p.join(f), v).unwrap();
    }
}

/// A standard v1 tree with a private parent `P` holding task 102 only
/// (as a lab's private cgroup would), partitioned with rt = CPU 3.
fn tree_with_private_parent(base: &Path) {
    FakeSpec::standard(Style::V1Prefix).build(base).unwrap();
    cgroup(base, "P", "102\n");
    let root_tasks: String = ids(base, "")
        .iter()
        .filter(|&&t| t != 102)
        .map(|t| format!("{t}\n"))
        .collect();
    fs::write(base.join(MOUNT).join("tasks"), root_tasks).unwrap();
    let o = rtshield(base, &["partition", "create", "3", "--parent", "P"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(ids(base, "P/nrt"), vec![102]);
}

/// n08a/b: `--parent ""` and `/` (and every other name of the root, `.`,
/// `..`, a missing cgroup) are refused with exit 2 and nothing changes —
/// they used to plan moving every task of the machine. Each command that
/// takes `--parent` checks it the same way.
#[test]
fn parent_naming_the_root_or_leaving_the_hierarchy_is_refused() {
    let d = tempfile::tempdir().unwrap();
    FakeSpec::standard(Style::V1Prefix).build(d.path()).unwrap();
    cgroup(d.path(), "lab", "");
    let before = snapshot(d.path());
    let bad = [
        ("", "not the root itself"),
        ("/", "not the root itself"),
        ("//", "not the root itself"),
        ("/sys/fs/cgroup/cpuset", "not the root itself"),
        ("/sys/fs/cgroup/cpuset/", "not the root itself"),
        (".", "without `.` or `..`"),
        ("lab/..", "without `.` or `..`"),
        ("../cpu", "without `.` or `..`"),
        ("nope", "does not exist"),
    ];
    for (p, why) in bad {
        for args in [
            vec!["partition", "create", "1", "--parent", p, "--dry-run"],
            vec!["partition", "create", "1", "--parent", p],
            vec!["partition", "status", "--parent", p],
            vec!["partition", "move", "rt", "101", "--parent", p],
            vec!["partition", "run", "rt", "--parent", p, "--", "true"],
        ] {
            let o = rtshield(d.path(), &args);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
            assert!(text(&o).contains(why), "{args:?}: {}", text(&o));
            assert!(!text(&o).contains("move "), "{args:?}: {}", text(&o));
        }
        // undo: the same syntax checks (a parent removed since is not an
        // error there: its knobs may still need restoring).
        if why != "does not exist" {
            let o = rtshield(d.path(), &["partition", "undo", "--parent", p]);
            assert_eq!(o.status.code(), Some(2), "undo {p:?}: {}", text(&o));
        }
    }
    assert_eq!(before, snapshot(d.path()));
    // A real sub-cgroup is accepted.
    let o = rtshield(
        d.path(),
        &["partition", "create", "1", "--parent", "lab", "--dry-run"],
    );
    assert!(o.status.success(), "{}", text(&o));
}

/// n08c/d: `partition move rt 1 --parent P` wrote PID 1 (which P does not
/// hold) into `P/rt`; the same for kthreadd. Now refused (exit 2), even
/// with `--force`, which only lifts the PID 1 / kernel thread rule inside
/// the subtree. A task P does hold is moved.
#[test]
fn move_takes_only_tasks_inside_the_parents_subtree() {
    let d = tempfile::tempdir().unwrap();
    let base = d.path();
    tree_with_private_parent(base);
    let before = snapshot(base);
    for pid in ["1", "2", "101"] {
        for force in [false, true] {
            let mut args = vec!["partition", "move", "rt", pid, "--parent", "P"];
            if force {
                args.push("--force");
            }
            let o = rtshield(base, &args);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
            assert!(
                text(&o).contains("is not in cgroup /sys/fs/cgroup/cpuset/P or below it"),
                "{args:?}: {}",
                text(&o)
            );
        }
    }
    // One refused PID among good ones: nothing moves at all.
    let o = rtshield(
        base,
        &["partition", "move", "rt", "102", "1", "--parent", "P"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert_eq!(before, snapshot(base));
    assert!(ids(base, "").contains(&1) && ids(base, "").contains(&2));
    // 102 is in P/nrt: inside the subtree.
    let o = rtshield(base, &["partition", "move", "rt", "102", "--parent", "P"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(ids(base, "P/rt"), vec![102]);
    assert!(ids(base, "").contains(&1));
}

/// Without `--parent` (the whole machine) every task is in scope, but PID 1
/// and kernel threads move only with `--force`.
#[test]
fn move_leaves_pid_1_and_kernel_threads_alone_without_force() {
    let d = tempfile::tempdir().unwrap();
    let base = d.path();
    FakeSpec::standard(Style::V1Prefix).build(base).unwrap();
    let o = rtshield(base, &["partition", "create", "3"]);
    assert!(o.status.success(), "{}", text(&o));
    let mid = snapshot(base);
    for (pid, what) in [
        ("1", "PID 1 (init)"),
        ("2", "a kernel thread"),
        ("35", "a kernel thread"),
    ] {
        let o = rtshield(base, &["partition", "move", "rt", pid]);
        assert_eq!(o.status.code(), Some(2), "{pid}: {}", text(&o));
        assert!(text(&o).contains(what), "{pid}: {}", text(&o));
        assert!(text(&o).contains("without --force"), "{pid}: {}", text(&o));
    }
    assert_eq!(mid, snapshot(base));
    let o = rtshield(base, &["partition", "move", "rt", "101"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = rtshield(base, &["partition", "move", "rt", "35", "--force"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(ids(base, "rt"), vec![35, 101]);
    let o = rtshield(base, &["partition", "undo"]);
    assert!(o.status.success(), "{}", text(&o));
}

/// A campaign's `[partition] parent` naming the root or leaving the
/// hierarchy is refused when the file is read (exit 2), before the
/// start-up undo or any cell.
#[test]
fn a_campaign_parent_naming_the_root_is_refused_at_parse_time() {
    for p in ["", "/", "a/../b", "."] {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("c.toml");
        fs::write(
            &f,
            format!(
                "name = \"x\"\ncpus = \"1\"\nduration = \"2s\"\n[axes]\nisolation = [\"partition\"]\n\
                 [partition]\nparent = {p:?}\n"
            ),
        )
        .unwrap();
        let o = crate::util::rtshield(&["campaign", f.to_str().unwrap(), "--dry-run"]);
        assert_eq!(o.status.code(), Some(2), "{p:?}: {}", text(&o));
        assert!(
            text(&o).contains("[partition] parent"),
            "{p:?}: {}",
            text(&o)
        );
    }
}
