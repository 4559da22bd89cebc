//! `Partitions::discover` and the isolation tag on small fake trees: who
//! owns which set, where a stanza's `rt` is, when that is ambiguous, and
//! what a run on each CPU is tagged.

use rtshield_isolation::{Isolation, Owner, Partitions, Placement};
use rtshield_sys::Root;
use rtshield_vocab::CpuSet;

const MOUNT: &str = "sys/fs/cgroup/cpuset";

/// A cgroup v1 tree with 4 CPUs, the cpusets `sets` (path below the mount,
/// CPUs) and the state files `states` (names in `/run/rtshield`).
fn tree(sets: &[(&str, &str)], states: &[&str], cmdline: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let w = |p: &str, body: &str| {
        let f = d.path().join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, body).unwrap();
    };
    w(
        "proc/self/mountinfo",
        "30 25 0:26 / /sys/fs/cgroup/cpuset rw,nosuid shared:12 - cgroup cgroup rw,cpuset\n",
    );
    w("proc/cmdline", cmdline);
    w(&format!("{MOUNT}/cpuset.cpus"), "0-3\n");
    for (dir, cpus) in sets {
        w(&format!("{MOUNT}/{dir}/cpuset.cpus"), &format!("{cpus}\n"));
    }
    for s in states {
        w(&format!("run/rtshield/{s}"), "{}");
    }
    d
}

fn dir(rel: &str) -> String {
    format!("/{MOUNT}/{rel}")
}

fn pinned(cpu: u32) -> Placement {
    Placement {
        cpu: Some(cpu),
        cgroup: None,
    }
}

#[test]
fn every_owner_is_found_once_in_lookup_order() {
    let d = tree(
        &[
            ("lab/rt", "1"),
            ("lab/nrt", "0"),
            ("rt", "3"),
            ("nrt", "0-2"),
            ("user", "2"),
            ("system", "0-1"),
        ],
        &["partition-lab.json"],
        "quiet\n",
    );
    let p = Partitions::discover(&Root::new(d.path()));
    let owners: Vec<(Owner, Option<&str>)> = p
        .all()
        .iter()
        .map(|x| (x.owner, x.parent.as_deref()))
        .collect();
    assert_eq!(
        owners,
        vec![
            (Owner::Rtshield, Some("lab")),
            (Owner::Partrt, None),
            (Owner::Cset, None),
        ]
    );
    // A stanza's `cgroup rt`: the parent with a state file first.
    assert_eq!(p.rt().unwrap().dir, dir("lab/rt"));
    assert_eq!(p.nrt().unwrap().dir, dir("lab/nrt"));
    assert_eq!(p.rt().unwrap().cpus, Some(CpuSet::parse_list("1").unwrap()));
    // rt sets under two parents (the root's is partrt's): refused, naming both.
    let why = p.ambiguous().unwrap();
    assert!(why.contains("several parents (/, lab)"), "{why}");
    assert_eq!(p.covering(1).unwrap().tag(), "partition:lab");
    assert_eq!(p.covering(3).unwrap().tag(), "partrt");
    assert_eq!(p.covering(2).unwrap().tag(), "cset");
    assert!(p.covering(0).is_none());
    // cset's first among the other tools.
    assert_eq!(p.foreign().unwrap().owner, Owner::Cset);
    assert_eq!(p.rtshield_parents(), &[Some("lab".to_string())]);
    assert_eq!(
        p.under(&Root::new(d.path()), "lab"),
        (Some(dir("lab/rt")), Some(dir("lab/nrt")))
    );
}

#[test]
fn the_root_is_rtshield_with_its_state_file_and_cset_is_the_last_resort() {
    let d = tree(&[("rt", "3"), ("nrt", "0-2")], &["partition.json"], "");
    let p = Partitions::discover(&Root::new(d.path()));
    assert_eq!(p.all().len(), 1);
    assert_eq!(p.all()[0].owner, Owner::Rtshield);
    assert_eq!(p.all()[0].tag(), "partition");
    assert!(p.ambiguous().is_none());
    assert!(p.foreign().is_none());

    let d = tree(&[("user", "1-3"), ("system", "0")], &[], "");
    let p = Partitions::discover(&Root::new(d.path()));
    assert_eq!(p.rt().unwrap().dir, dir("user"));
    assert_eq!(p.nrt().unwrap().dir, dir("system"));
    assert!(p.ambiguous().is_none());

    // No hierarchy at all: nothing found, and the reason is kept.
    let d = tempfile::tempdir().unwrap();
    let p = Partitions::discover(&Root::new(d.path()));
    assert!(p.all().is_empty() && p.rt().is_none());
    assert!(p.hierarchy_or_why().unwrap_err().contains("no cpuset"));
}

#[test]
fn a_run_is_tagged_by_the_cpus_it_measured() {
    let d = tree(
        &[
            ("lab/rt", "1"),
            ("lab/nrt", "0"),
            ("rt", "3"),
            ("nrt", "0-2"),
        ],
        &["partition-lab.json", "partition.json"],
        "quiet isolcpus=managed_irq,2-3 nohz_full=3\n",
    );
    let root = Root::new(d.path());
    let iso = Isolation::detect(&root);
    let tag = |t: &[Placement]| iso.tag(&root, t);
    // Machine-wide, everything is in force; per run, only what covers it.
    assert_eq!(iso.summary(), "partition+isolcpus+nohz_full");
    assert_eq!(tag(&[pinned(0)]), "none");
    assert_eq!(tag(&[pinned(1)]), "partition:lab");
    assert_eq!(tag(&[pinned(2)]), "isolcpus");
    assert_eq!(tag(&[pinned(3)]), "partition+isolcpus+nohz_full");
    // Several threads: what applies to any of them, in a fixed order.
    assert_eq!(
        tag(&[pinned(3), pinned(1)]),
        "partition:lab+partition+isolcpus+nohz_full"
    );
    // An unpinned thread: the cgroup it ran in decides, with its CPUs.
    let in_lab_rt = Placement {
        cpu: None,
        cgroup: Some(dir("lab/rt")),
    };
    assert_eq!(tag(&[in_lab_rt]), "partition:lab");
    let unknown = Placement::default();
    assert_eq!(tag(&[unknown]), "none");
}

#[test]
fn the_cgroup_a_thread_joined_names_its_partition() {
    // The rt set's CPUs unreadable: the thread's cgroup still says where
    // it ran.
    let d = tree(&[("lab/nrt", "0")], &["partition-lab.json"], "");
    std::fs::create_dir_all(d.path().join(MOUNT).join("lab/rt")).unwrap();
    std::fs::write(d.path().join(MOUNT).join("lab/rt/cpuset.cpus"), "x\n").unwrap();
    let root = Root::new(d.path());
    let iso = Isolation::detect(&root);
    let t = Placement {
        cpu: Some(1),
        cgroup: Some(dir("lab/rt")),
    };
    assert_eq!(iso.tag(&root, &[t]), "partition:lab");
    assert_eq!(iso.tag(&root, &[pinned(1)]), "none");
}
