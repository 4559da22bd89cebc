//! `partition undo` runs as root and writes what its state file says: a
//! planted or edited state file must not make it write or remove anything
//! outside the places `create` itself writes, and state files of different
//! parents must never be confused. All on fake trees.

use rtshield_isolation::{Knob, State, STATE_DIR};
use rtshield_partition::{create, undo, CreateOptions, Knobs};
use rtshield_sys::Root;
use rtshield_testkit::input_error;
use rtshield_testkit::{FakeSpec, FakeStyle};
use rtshield_vocab::CpuSet;
use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};

const MOUNT: &str = "/sys/fs/cgroup/cpuset";

/// Every file below `p`, with content (state files included).
fn tree(p: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![p.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            let q = e.path();
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                out.insert(q.clone(), b"/".to_vec());
                stack.push(q);
            } else if ft.is_symlink() {
                out.insert(q.clone(), b"@".to_vec());
            } else {
                out.insert(q.clone(), fs::read(&q).unwrap_or_default());
            }
        }
    }
    out
}

/// A fake tree with a completed full-mode partition of CPU 3; returns the
/// temp dir (holding `tree/` and, beside it, `victim` and `victimdir/`).
fn partitioned() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let base = d.path().join("tree");
    FakeSpec::standard(FakeStyle::V1Prefix)
        .build(&base)
        .unwrap();
    fs::write(d.path().join("victim"), "precious").unwrap();
    fs::create_dir(d.path().join("victimdir")).unwrap();
    let mut k = rtshield_testkit::fake_kernel(Root::new(&base), false).unwrap();
    let o = CreateOptions {
        names: Default::default(),
        cpus: CpuSet::parse("3").unwrap(),
        parent: None,
        knobs: Knobs::resolve(false, &[], &[], false).unwrap(),
    };
    create(&mut k, &o).unwrap();
    (d, base)
}

fn state_file(base: &Path) -> PathBuf {
    base.join("run/rtshield/partition.json")
}

fn load(base: &Path) -> State {
    State::load(&Root::new(base), &format!("{STATE_DIR}/partition.json"))
        .unwrap()
        .unwrap()
}

fn save(base: &Path, s: &State) {
    s.save(&Root::new(base), &format!("{STATE_DIR}/partition.json"))
        .unwrap();
}

/// Edit the saved state (through the real writer, so mode and owner are
/// right) and check that undo refuses it naming `entry`, before any write:
/// the whole temp dir — tree, victim file and directory — is unchanged.
fn refused_before_any_write(edit: impl FnOnce(&mut State), entry: &str) {
    let (d, base) = partitioned();
    let mut s = load(&base);
    edit(&mut s);
    save(&base, &s);
    let before = tree(d.path());
    let mut k = rtshield_testkit::fake_kernel(Root::new(&base), false).unwrap();
    let msg = input_error(&undo(&mut k, None).unwrap_err());
    assert!(
        msg.contains(entry) && msg.contains("nothing was changed"),
        "{entry}: {msg}"
    );
    assert_eq!(tree(d.path()), before, "{entry}: something changed");
    assert_eq!(
        fs::read_to_string(d.path().join("victim")).unwrap(),
        "precious"
    );
    assert!(d.path().join("victimdir").is_dir());
}

fn bad_file(path: &str) -> rtshield_isolation::FileChange {
    rtshield_isolation::FileChange {
        knob: Knob::Sysctl,
        path: path.into(),
        old: Some("owned\n".into()),
        new: "x\n".into(),
        restore: None,
    }
}

/// The old code wrote `old` to any path: `/etc/...` in the tree, or
/// through `..` right out of `--sysroot` onto the victim.
#[test]
fn file_paths_outside_the_knob_roots_abort_undo() {
    // Appended last: undo restores files newest first, so without the
    // check this would be the first write.
    refused_before_any_write(
        |s| s.files.push(bad_file("/proc/irq/../../../victim")),
        "files[",
    );
    refused_before_any_write(
        |s| s.files.insert(0, bad_file("/etc/passwd")),
        "files[0].path \"/etc/passwd\": not below /sys/fs/cgroup/cpuset, /proc/irq",
    );
    refused_before_any_write(
        |s| s.files.insert(0, bad_file("proc/sys/kernel/x")),
        "not an absolute path",
    );
    // A knob root itself is not a file create writes.
    refused_before_any_write(|s| s.files.insert(0, bad_file("/proc/sys")), "files[0]");
}

#[test]
fn directories_and_tasks_outside_the_hierarchy_abort_undo() {
    refused_before_any_write(
        |s| s.dirs.push(format!("{MOUNT}/../../../../../victimdir")),
        "path contains `..`",
    );
    refused_before_any_write(|s| s.dirs.insert(0, MOUNT.into()), "dirs[0]");
    refused_before_any_write(|s| s.dirs.insert(0, "/proc/irq/24".into()), "dirs[0]");
    refused_before_any_write(
        |s| {
            s.tasks.push(rtshield_isolation::TaskMove {
                tid: 1,
                name: "init".into(),
                from: "/tmp".into(),
            })
        },
        "from \"/tmp\"",
    );
    refused_before_any_write(|s| s.rt_dir = "/sys/fs/cgroup/cpusetx/rt".into(), "rt_dir");
    // The recorded hierarchy must be a cgroup mount of this system.
    refused_before_any_write(
        |s| s.hierarchy.mount = "/etc".into(),
        "hierarchy.mount \"/etc\": not a cgroup mount point",
    );
}

/// A symlink inside the fake tree leading out of it.
#[test]
fn a_symlink_out_of_the_sysroot_aborts_undo() {
    let (d, base) = partitioned();
    let irq = base.join("proc/irq/77");
    fs::create_dir_all(d.path().join("victimdir")).unwrap();
    symlink(d.path().join("victimdir"), &irq).unwrap();
    let mut s = load(&base);
    s.files.push(bad_file("/proc/irq/77/smp_affinity_list"));
    save(&base, &s);
    let mut k = rtshield_testkit::fake_kernel(Root::new(&base), false).unwrap();
    let msg = input_error(&undo(&mut k, None).unwrap_err());
    assert!(msg.contains("leads out of the --sysroot tree"), "{msg}");
    assert!(!d.path().join("victimdir/smp_affinity_list").exists());
}

/// The state directory and file as rtshield leaves them.
#[test]
fn state_is_private() {
    let (_d, base) = partitioned();
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode(&base.join("run/rtshield")), 0o700);
    assert_eq!(mode(&state_file(&base)), 0o600);
    // No temporary file left beside it.
    let names: Vec<String> = fs::read_dir(base.join("run/rtshield"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["partition.json"]);
}

/// A state file others could have written, or a link, is refused before
/// anything is done; the partition stays (and a correct file undoes it).
#[test]
fn an_untrusted_state_file_is_refused() {
    let (d, base) = partitioned();
    let sf = state_file(&base);
    let undo_err = |base: &Path| {
        let mut k = rtshield_testkit::fake_kernel(Root::new(base), false).unwrap();
        input_error(&undo(&mut k, None).unwrap_err())
    };
    let set = |p: &Path, m: u32| fs::set_permissions(p, fs::Permissions::from_mode(m)).unwrap();

    set(&sf, 0o644);
    let before = tree(d.path());
    let msg = undo_err(&base);
    assert!(
        msg.contains("mode 644") && msg.contains("not trusted"),
        "{msg}"
    );
    assert_eq!(tree(d.path()), before);
    set(&sf, 0o600);

    set(&base.join("run/rtshield"), 0o777);
    let msg = undo_err(&base);
    assert!(
        msg.contains("run/rtshield: not trusted") && msg.contains("mode 777"),
        "{msg}"
    );
    assert_eq!(tree(d.path()), before);
    set(&base.join("run/rtshield"), 0o700);

    // The state replaced by a symlink to a copy elsewhere.
    let copy = d.path().join("copy.json");
    fs::copy(&sf, &copy).unwrap();
    set(&copy, 0o600);
    let real = d.path().join("real.json");
    fs::rename(&sf, &real).unwrap();
    symlink(&copy, &sf).unwrap();
    let msg = undo_err(&base);
    assert!(msg.contains("symbolic link"), "{msg}");
    fs::remove_file(&sf).unwrap();
    fs::rename(&real, &sf).unwrap();

    // The foreign-owner case needs root to chown (SKIP, or a failure
    // under RTSHIELD_REQUIRE_ROOT=1).
    if rtshield_testkit::require_root("the foreign-owner case chowns the state file") {
        // Owned by someone else (nobody), mode 0600: refused.
        std::os::unix::fs::chown(&sf, Some(65534), Some(65534)).unwrap();
        let msg = undo_err(&base);
        assert!(msg.contains("owned by uid 65534"), "{msg}");
        std::os::unix::fs::chown(&sf, Some(0), Some(0)).unwrap();
    }

    let mut k = rtshield_testkit::fake_kernel(Root::new(&base), false).unwrap();
    let rep = undo(&mut k, None).unwrap();
    assert!(rep.errors.is_empty(), "{:?}", rep.errors);
}

/// `--parent a-b`, `a_b` and `a/b` used to share `partition-a_b.json`:
/// `undo --parent a_b` removed the partition of `a-b`.
#[test]
fn parents_that_differ_get_different_state_files() {
    let d = tempfile::tempdir().unwrap();
    let base = d.path().join("tree");
    FakeSpec::standard(FakeStyle::V1Prefix)
        .build(&base)
        .unwrap();
    let mut k = rtshield_testkit::fake_kernel(Root::new(&base), false).unwrap();
    for (g, cpus) in [("a-b", "0-1"), ("a_b", "2-3"), ("a", "0-3"), ("a/b", "0-3")] {
        let p = format!("{MOUNT}/{g}");
        k.mkdir(&p).unwrap();
        k.write(&format!("{p}/cpuset.cpus"), &format!("{cpus}\n"))
            .unwrap();
        k.write(&format!("{p}/cpuset.mems"), "0\n").unwrap();
    }
    let opts = |parent: &str, cpu: &str| CreateOptions {
        names: Default::default(),
        cpus: CpuSet::parse(cpu).unwrap(),
        parent: Some(parent.into()),
        knobs: Knobs::resolve(true, &[], &[], false).unwrap(),
    };
    let mut files = vec![];
    for (g, cpu) in [("a-b", "1"), ("a_b", "3"), ("a/b", "2")] {
        files.push(create(&mut k, &opts(g, cpu)).unwrap().state_file);
    }
    assert_eq!(
        files,
        [
            "/run/rtshield/partition-a-b.json",
            "/run/rtshield/partition-a%5Fb.json",
            "/run/rtshield/partition-a%2Fb.json"
        ]
    );
    let rep = undo(&mut k, Some("a_b")).unwrap();
    assert_eq!(
        rep.removed_dirs,
        [format!("{MOUNT}/a_b/nrt"), format!("{MOUNT}/a_b/rt")]
    );
    assert!(base.join("sys/fs/cgroup/cpuset/a-b/rt").is_dir());
    assert!(base.join("sys/fs/cgroup/cpuset/a/b/rt").is_dir());
    undo(&mut k, Some("a-b")).unwrap();
    undo(&mut k, Some("a/b")).unwrap();
    assert!(!base.join("sys/fs/cgroup/cpuset/a-b/rt").exists());
    assert!(!base.join("sys/fs/cgroup/cpuset/a/b/rt").exists());
}

/// A state file of the old naming is still found for its own parent, and
/// only for it.
#[test]
fn legacy_state_names_are_read_for_their_own_parent_only() {
    let d = tempfile::tempdir().unwrap();
    let base = d.path().join("tree");
    FakeSpec::standard(FakeStyle::V1Prefix)
        .build(&base)
        .unwrap();
    let mut k = rtshield_testkit::fake_kernel(Root::new(&base), false).unwrap();
    for g in ["a-b", "a_b"] {
        let p = format!("{MOUNT}/{g}");
        k.mkdir(&p).unwrap();
        k.write(&format!("{p}/cpuset.cpus"), "0-3\n").unwrap();
        k.write(&format!("{p}/cpuset.mems"), "0\n").unwrap();
    }
    let o = CreateOptions {
        names: Default::default(),
        cpus: CpuSet::parse("3").unwrap(),
        parent: Some("a-b".into()),
        knobs: Knobs::resolve(true, &[], &[], false).unwrap(),
    };
    let rep = create(&mut k, &o).unwrap();
    // Rename it to what an older rtshield called it.
    let dir = base.join("run/rtshield");
    fs::rename(
        dir.join(rep.state_file.rsplit('/').next().unwrap()),
        dir.join("partition-a_b.json"),
    )
    .unwrap();
    let r = undo(&mut k, Some("a_b")).unwrap();
    assert!(r.nothing_to_undo, "a_b must not take a-b's state");
    assert!(base.join("sys/fs/cgroup/cpuset/a-b/rt").is_dir());
    let r = undo(&mut k, Some("a-b")).unwrap();
    assert_eq!(r.state_file, "/run/rtshield/partition-a_b.json");
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert!(!base.join("sys/fs/cgroup/cpuset/a-b/rt").exists());
}
