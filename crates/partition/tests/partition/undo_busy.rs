//! Undo survives dying tasks (issue 23 item 8): a partition that still
//! holds tasks in the middle of exiting (they cannot be moved: ESRCH;
//! `rmdir` says EBUSY until they are gone — 150 threads in `O_SYNC`
//! writes take a while) is removed once they are gone, waiting a bounded
//! time; past it, the error says what is left and the state is kept.

use rtshield_partition::{create, undo, CreateOptions, Knobs};
use rtshield_sys::Root;
use rtshield_testkit::{
    snapshot_tree as snapshot, FakeConfig, FakeSpec, FakeStyle as Style, FAKE_MARKER as MARKER,
};
use rtshield_vocab::CpuSet;
use std::fs;
use std::path::Path;
use std::time::Duration;

/// A fake tree partitioned with rt = CPU 3; then task 777 appears in
/// `nrt`, exiting: gone after `rmdirs` failed removals of its cgroup.
fn partitioned_with_a_dying_task(base: &Path, rmdirs: u32) -> FakeSpec {
    let sp = FakeSpec::standard(Style::V1Prefix);
    sp.build(base).unwrap();
    let mut k = rtshield_testkit::fake_kernel(Root::new(base), false).unwrap();
    create(
        &mut k,
        &CreateOptions {
            names: Default::default(),
            cpus: CpuSet::parse("3").unwrap(),
            parent: None,
            knobs: Knobs::resolve(false, &[], &[], false).unwrap(),
        },
    )
    .unwrap();
    let nrt = base.join("sys/fs/cgroup/cpuset/nrt/tasks");
    let mut tasks = fs::read_to_string(&nrt).unwrap();
    tasks.push_str("777\n");
    fs::write(&nrt, tasks).unwrap();
    let mut cfg: FakeConfig = serde_json::from_str(
        &fs::read_to_string(base.join(MARKER.trim_start_matches('/'))).unwrap(),
    )
    .unwrap();
    cfg.dying_tids.insert("777".into(), rmdirs);
    fs::write(
        base.join(MARKER.trim_start_matches('/')),
        serde_json::to_string(&cfg).unwrap(),
    )
    .unwrap();
    sp
}

#[test]
fn undo_waits_for_exiting_tasks_then_removes_the_partition() {
    let d = tempfile::tempdir().unwrap();
    partitioned_with_a_dying_task(d.path(), 4);
    let mut k = rtshield_testkit::fake_kernel(Root::new(d.path()), false).unwrap();
    let rep = undo(&mut k, None).unwrap();
    assert!(rep.errors.is_empty(), "{:?}", rep.errors);
    assert_eq!(rep.removed_dirs.len(), 2, "{:?}", rep.removed_dirs);
    assert!(!d.path().join("sys/fs/cgroup/cpuset/nrt").exists());
    assert!(!d.path().join("run/rtshield/partition.json").exists());
}

#[test]
fn undo_gives_up_after_the_bound_and_says_what_is_left() {
    let d = tempfile::tempdir().unwrap();
    partitioned_with_a_dying_task(d.path(), u32::MAX);
    let mut k = rtshield_testkit::fake_kernel(Root::new(d.path()), false).unwrap();
    k.busy_wait = Duration::from_millis(300);
    let started = std::time::Instant::now();
    let rep = undo(&mut k, None).unwrap();
    assert!(started.elapsed() >= Duration::from_millis(300));
    let errors = rep.errors.join("\n");
    assert!(
        errors.contains("rmdir /sys/fs/cgroup/cpuset/nrt")
            && errors.contains("1 task(s) still in it")
            && errors.contains("777"),
        "{errors}"
    );
    // Everything else was put back; the state stays for the next undo.
    assert!(d.path().join("run/rtshield/partition.json").exists());
    assert!(!d.path().join("sys/fs/cgroup/cpuset/rt").exists());
    let before = snapshot(d.path());
    // Once the task is gone, the next undo finishes the job.
    let nrt = d.path().join("sys/fs/cgroup/cpuset/nrt/tasks");
    let left = fs::read_to_string(&nrt).unwrap().replace("777\n", "");
    fs::write(&nrt, left).unwrap();
    assert_ne!(before, snapshot(d.path()));
    let mut k = rtshield_testkit::fake_kernel(Root::new(d.path()), false).unwrap();
    let rep = undo(&mut k, None).unwrap();
    assert!(rep.errors.is_empty(), "{:?}", rep.errors);
    assert!(!d.path().join("sys/fs/cgroup/cpuset/nrt").exists());
}
