//! The state directory and file stay private whatever the umask, and the
//! old fixed temporary name is not followed when planted as a symlink.
//! The test changes the process umask, so it runs in a process of its own:
//! the binary runs itself again with only this test selected.

use rtshield_partition::{create, undo, CreateOptions, Knobs};
use rtshield_sys::Root;
use rtshield_testkit::{FakeSpec, FakeStyle};
use rtshield_vocab::CpuSet;
use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::process::Command;

/// Set in the process that runs the test body.
const ALONE: &str = "RTSHIELD_TEST_UMASK_ALONE";

#[test]
fn umask_000_still_gives_a_private_state_and_planted_temp_links_are_ignored() {
    if std::env::var_os(ALONE).is_some() {
        return umask_000_alone();
    }
    // This test's name as libtest knows it (the module path without the
    // binary's name).
    let name = module_path!()
        .split_once("::")
        .map_or("", |(_, m)| m)
        .to_string()
        + "::umask_000_still_gives_a_private_state_and_planted_temp_links_are_ignored";
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &name, "--test-threads=1", "--nocapture"])
        .env(ALONE, "1")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    // The body ran (a name that selects nothing passes with 0 tests).
    assert!(text.contains("test result: ok. 1 passed"), "{text}");
}

/// The body, in a process of its own (it changes the umask).
fn umask_000_alone() {
    let d = tempfile::tempdir().unwrap();
    let base = d.path().join("tree");
    FakeSpec::standard(FakeStyle::V2).build(&base).unwrap();
    let victim = d.path().join("victim");
    fs::write(&victim, "precious").unwrap();
    // What the old code opened with File::create before renaming.
    fs::create_dir_all(base.join("run/rtshield")).unwrap();
    symlink(&victim, base.join("run/rtshield/partition.json.tmp")).unwrap();
    fs::set_permissions(base.join("run/rtshield"), fs::Permissions::from_mode(0o700)).unwrap();

    // SAFETY: umask has no preconditions; this is the only test in this binary.
    let old = unsafe { libc::umask(0) };
    let mut k = rtshield_testkit::fake_kernel(Root::new(&base), false).unwrap();
    let o = CreateOptions {
        names: Default::default(),
        cpus: CpuSet::parse("3").unwrap(),
        parent: None,
        knobs: Knobs::resolve(false, &[], &[], false).unwrap(),
    };
    let r = create(&mut k, &o);
    unsafe { libc::umask(old) };
    r.unwrap();
    let mode = |p: &str| fs::metadata(base.join(p)).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode("run/rtshield"), 0o700);
    assert_eq!(mode("run/rtshield/partition.json"), 0o600);
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");

    // A fresh state directory made under umask 000 is 0700 too.
    let d2 = tempfile::tempdir().unwrap();
    let base2 = d2.path().join("tree");
    FakeSpec::standard(FakeStyle::V2).build(&base2).unwrap();
    let old = unsafe { libc::umask(0) };
    let mut k2 = rtshield_testkit::fake_kernel(Root::new(&base2), false).unwrap();
    let r = create(&mut k2, &o);
    unsafe { libc::umask(old) };
    r.unwrap();
    let mode2 = |p: &str| fs::metadata(base2.join(p)).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode2("run"), 0o700);
    assert_eq!(mode2("run/rtshield"), 0o700);
    assert_eq!(mode2("run/rtshield/partition.json"), 0o600);
    undo(&mut k, None).unwrap();
    undo(&mut k2, None).unwrap();
}
