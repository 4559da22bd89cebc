//! Live (root, cgroup v1 cpuset, CPUs 0 and 1): tests own their
//! environment even when they are killed (issue 23). A test makes a
//! private parent cgroup with a partition in it, a tracefs mount of its
//! own, a traced rtshield measure and a stray `sleep` inside the cgroup;
//! each kernel object is registered before it is made. Run normally, the
//! test undoes everything when its objects drop. Run as a holder (this
//! test binary started by the other test below, filtered to it), it stops
//! there and is SIGKILLed: then nothing is undone until the reaper runs,
//! and after it nothing remains — no cgroup, state file, mount, trace
//! instance, private home — and `~/.local/share/rtshield` is untouched.

use crate::util::*;
use rtshield_testkit::{instance_exists, instance_records};
use rtshield_testkit::{is_mount_point, registered_by, KernelObject as Object};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Where a holder writes what it made, then waits to be killed.
const HOLD_VAR: &str = "RTSHIELD_TEST_HOLD_FILE";
/// The test the killing test runs as a holder.
const HOLDER: &str = "reaper_live::registered_objects_are_undone_at_drop_or_by_the_reaper";

/// What the holder made, as it tells the killing test.
fn made(p: &PrivateParent, m: &TracefsMount, measure: u32, sleep: u32) -> serde_json::Value {
    serde_json::json!({
        "pid": std::process::id(),
        "cgroup": p.cg,
        "state": p.state,
        "mount": m.path(),
        "measure": measure,
        "sleep": sleep,
    })
}

/// Move process `pid` (all its threads) into cgroup `cg`.
fn enter(cg: &Path, pid: u32) {
    std::fs::write(cg.join("cgroup.procs"), pid.to_string()).unwrap();
}

#[test]
fn registered_objects_are_undone_at_drop_or_by_the_reaper() {
    if !require_cpuset_v1_two_cpus("makes a cgroup, a partition, a mount and a traced run") {
        return;
    }
    let hold = std::env::var_os(HOLD_VAR).map(PathBuf::from);
    // A holder runs alone in its process; the killing test holds the
    // turns for it.
    let _turns = hold
        .is_none()
        .then(|| (cpuset_partition_lock(), crate::trace_live::one_at_a_time()));
    let p = PrivateParent::create("rtshield-reap");
    let m = TracefsMount::mount();
    ok(command()
        .args(["partition", "create", "1", "--parent", &p.name])
        .output()
        .unwrap());
    // A stray process in the partition, as a test's child that outlives
    // it would be (no death signal): the reaper moves it out, kills
    // nothing.
    let mut sleep = Kill(Command::new("sleep").arg("600").spawn().unwrap());
    enter(&p.cg.join("nrt"), sleep.0.id());
    let out = rtshield_testkit::private_home().join("m");
    let measure = Kill(
        command()
            .args([
                "measure",
                "--cpus",
                "1",
                "--prio",
                "10",
                "--duration",
                "120s",
            ])
            .args(["--trace-on", "50ms", "-q", "--out"])
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mpid = measure.0.id();
    enter(&p.cg, mpid);
    wait_until(Duration::from_secs(20), "the measure traces", || {
        instance_records(mpid)
    });
    let mine = registered_by(std::process::id());
    for o in [
        Object::Cgroup(p.cg.clone()),
        Object::File(p.state.clone()),
        Object::Mount(m.path().to_path_buf()),
    ] {
        assert!(mine.contains(&o), "{o:?} not registered: {mine:?}");
    }
    if let Some(file) = hold {
        std::fs::write(&file, made(&p, &m, mpid, sleep.0.id()).to_string()).unwrap();
        std::thread::sleep(Duration::from_secs(120));
        panic!("held for 120 s and not killed");
    }
    let (cg, state, dir) = (p.cg.clone(), p.state.clone(), m.path().to_path_buf());
    let mut measure = measure;
    // SAFETY: signalling our own child; SIGINT ends it cleanly.
    unsafe { libc::kill(mpid as i32, libc::SIGINT) };
    let st = poll(Duration::from_secs(30), "the measure ends", || {
        measure.0.try_wait().unwrap()
    });
    assert!(st.success(), "{st:?}");
    let _ = sleep.0.kill();
    let _ = sleep.0.wait();
    drop(m);
    drop(p);
    assert!(!cg.exists() && !state.exists(), "cgroup or state file left");
    assert!(!is_mount_point(&dir) && !dir.exists(), "mount left");
    assert!(!instance_exists(mpid));
    let mine = registered_by(std::process::id());
    assert!(
        !mine
            .iter()
            .any(|o| matches!(o, Object::Cgroup(_) | Object::Mount(_))),
        "{mine:?}"
    );
}

/// `~/.local/share/rtshield` of the real user (from the password file:
/// `HOME` may be a test's): every entry with its size and mtime.
fn real_store_listing() -> Vec<String> {
    // SAFETY: getpwuid returns a pointer into static storage or null;
    // read at once.
    let home = unsafe {
        let pw = libc::getpwuid(libc::getuid());
        assert!(!pw.is_null());
        std::ffi::CStr::from_ptr((*pw).pw_dir)
            .to_string_lossy()
            .into_owned()
    };
    let dir = Path::new(&home).join(".local/share/rtshield");
    let mut v: Vec<String> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let m = e.metadata().ok()?;
            Some(format!(
                "{:?} {} {:?}",
                e.file_name(),
                m.len(),
                m.modified().ok()
            ))
        })
        .collect();
    v.sort();
    v
}

/// The cpuset cgroup of process `pid` (`/` for the root).
fn cpuset_of(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/cgroup"))
        .ok()?
        .lines()
        .find_map(|l| {
            let mut f = l.splitn(3, ':');
            let (_, ctl, path) = (f.next()?, f.next()?, f.next()?);
            ctl.split(',')
                .any(|c| c == "cpuset")
                .then(|| path.to_string())
        })
}

/// Issue 23's "done means": the test binary killed midway (SIGKILL, as
/// a CI timeout or a closed terminal does) leaves its objects; the
/// reaper of the next test start undoes them all, and the user's store
/// was never written.
#[test]
fn a_test_binary_killed_midway_leaves_nothing_once_reaped() {
    if !require_cpuset_v1_two_cpus("kills a test that made cgroups, mounts and a traced run") {
        return;
    }
    let _turns = (cpuset_partition_lock(), crate::trace_live::one_at_a_time());
    let store_before = real_store_listing();
    let d = tempfile::tempdir().unwrap();
    let ready = d.path().join("ready.json");
    let mut c = Command::new(std::env::current_exe().unwrap());
    rtshield_testkit::isolate(&mut c);
    let mut holder = Kill(
        c.args([HOLDER, "--exact", "--nocapture", "--test-threads", "1"])
            .env(HOLD_VAR, &ready)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(d.path().join("holder.err")).unwrap())
            .spawn()
            .unwrap(),
    );
    let made: serde_json::Value = poll(Duration::from_secs(90), "the holder's objects", || {
        serde_json::from_str(&std::fs::read_to_string(&ready).ok()?).ok()
    });
    let pid = made["pid"].as_u64().unwrap() as u32;
    let path = |k: &str| PathBuf::from(made[k].as_str().unwrap());
    let (cg, state, mount) = (path("cgroup"), path("state"), path("mount"));
    let (mpid, spid) = (
        made["measure"].as_u64().unwrap() as u32,
        made["sleep"].as_u64().unwrap() as u32,
    );
    // The stray sleep is this test's to end, whatever happens below.
    struct EndSleep(u32);
    impl Drop for EndSleep {
        fn drop(&mut self) {
            if std::fs::read_to_string(format!("/proc/{}/comm", self.0))
                .is_ok_and(|c| c.trim() == "sleep")
            {
                // SAFETY: the holder test started it; its comm is checked.
                unsafe { libc::kill(self.0 as i32, libc::SIGKILL) };
            }
        }
    }
    let _end_sleep = EndSleep(spid);

    holder.0.kill().unwrap();
    holder.0.wait().unwrap();
    // The measure dies with the holder (death signal): SIGKILLed too.
    wait_gone(mpid as i32, 20);
    // Nothing could undo anything: all of it is still there.
    assert!(cg.join("rt").exists() && cg.join("nrt").exists() && state.exists());
    assert!(is_mount_point(&mount), "the holder's tracefs mount");
    assert!(instance_exists(mpid), "the killed measure's instance");
    assert!(!registered_by(pid).is_empty());
    assert_eq!(cpuset_of(spid).map(|c| c.ends_with("/nrt")), Some(true));

    let done = rtshield_testkit::reap();
    eprintln!("reaped: {done:#?}");
    assert!(!cg.exists(), "cgroup {} left: {done:?}", cg.display());
    assert!(!state.exists(), "state file left");
    assert!(!is_mount_point(&mount) && !mount.exists(), "mount left");
    assert!(!instance_exists(mpid), "instance rtshield-{mpid} left");
    let own = rtshield_sys::tracefs_private_mount(mpid);
    assert!(!is_mount_point(Path::new(&own)), "{own} left");
    assert_eq!(registered_by(pid), vec![], "registry entries left");
    let home = std::env::temp_dir().join(format!("rtshield-test-home-{pid}"));
    assert!(!home.exists(), "{} left", home.display());
    // The stray process was moved back to the root cpuset, not killed.
    assert_eq!(cpuset_of(spid).as_deref(), Some("/"));
    assert_eq!(
        real_store_listing(),
        store_before,
        "~/.local/share/rtshield changed"
    );
}
