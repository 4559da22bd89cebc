//! Every kernel object a test creates (cgroups, tracefs mounts and
//! instances, mounts, network namespaces, knob values) is registered here
//! *before* it is created, in a registry file named after the creating
//! process, and undone when its [`Registration`] drops. A test process
//! killed midway (SIGKILL, a crashed harness) cannot drop anything: the
//! next test process that starts reaps the entries of dead processes
//! ([`reap`], run once per process by the kit's helpers), as the tool
//! itself undoes a partition left behind. It also removes the trace
//! leftovers of dead rtshield processes (`tracefs::remove_leftovers`):
//! a test's rtshield child dies with the test (the kit's commands set
//! `PR_SET_PDEATHSIG`) and leaves its instance behind.
//!
//! The registry: `/run/rtshield-tests/` as root, else
//! `$TMPDIR/rtshield-tests-<uid>/` (a 0700 directory of the caller); one
//! JSON file per object, `<pid>-<start time>-<n>.json` (the start time
//! tells a dead process from a new one that got its pid).

use rtshield_sys::{find_tracefs, trace_instance_pid, Root};
use serde_json::{json, Value};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A kernel object (or a test's private directory) to undo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Object {
    /// A cgroup directory the test made: its tasks go back to the
    /// hierarchy's root and its subtree is removed, deepest first.
    Cgroup(PathBuf),
    /// A filesystem mounted by the test at this directory: detached, then
    /// the (empty) directory removed.
    Mount(PathBuf),
    /// A tracefs instance the test made (`rtshield-<pid>` below
    /// `instances/`, by name: any tracefs mount shows it): stopped and
    /// removed.
    TraceInstance(String),
    /// A file the test (or rtshield for it) made: removed.
    File(PathBuf),
    /// A kernel knob the test changed: its old value written back.
    Restore {
        /// The knob (`/proc/irq/N/smp_affinity_list`, a sysctl, ...).
        path: PathBuf,
        /// The value to write back.
        value: String,
    },
    /// A network namespace (`ip netns del NAME`).
    Netns(String),
    /// A private directory of the test kit (`$TMPDIR/rtshield-test-*`):
    /// removed with its content.
    Dir(PathBuf),
}

impl Object {
    fn to_json(&self) -> Value {
        let p = |p: &Path| p.to_string_lossy().into_owned();
        match self {
            Object::Cgroup(d) => json!({"kind": "cgroup", "path": p(d)}),
            Object::Mount(d) => json!({"kind": "mount", "path": p(d)}),
            Object::TraceInstance(n) => json!({"kind": "trace-instance", "name": n}),
            Object::File(f) => json!({"kind": "file", "path": p(f)}),
            Object::Restore { path, value } => {
                json!({"kind": "restore", "path": p(path), "value": value})
            }
            Object::Netns(n) => json!({"kind": "netns", "name": n}),
            Object::Dir(d) => json!({"kind": "dir", "path": p(d)}),
        }
    }

    fn from_json(v: &Value) -> Option<Object> {
        let path = || v["path"].as_str().map(PathBuf::from);
        Some(match v["kind"].as_str()? {
            "cgroup" => Object::Cgroup(path()?),
            "mount" => Object::Mount(path()?),
            "trace-instance" => Object::TraceInstance(v["name"].as_str()?.to_string()),
            "file" => Object::File(path()?),
            "restore" => Object::Restore {
                path: path()?,
                value: v["value"].as_str()?.to_string(),
            },
            "netns" => Object::Netns(v["name"].as_str()?.to_string()),
            "dir" => Object::Dir(path()?),
            _ => return None,
        })
    }

    /// Undo it; what could not be undone, as an error naming the object.
    pub fn undo(&self) -> Result<(), String> {
        let r = match self {
            Object::Cgroup(d) => remove_cgroup(d),
            Object::Mount(d) => unmount(d),
            Object::TraceInstance(n) => remove_instance(n),
            Object::File(f) => gone(fs::remove_file(f)),
            Object::Restore { path, value } => fs::write(path, value),
            Object::Netns(n) => ip_netns_del(n),
            Object::Dir(d) => remove_private_dir(d),
        };
        r.map_err(|e| format!("{self:?}: {e}"))
    }

    /// Whether it is still there (for tests of the reaper).
    pub fn exists(&self) -> bool {
        match self {
            Object::Cgroup(d) | Object::Dir(d) => d.exists(),
            Object::TraceInstance(n) => {
                with_tracefs(|at| at.join("instances").join(n).exists()).unwrap_or(false)
            }
            Object::File(f) => f.exists(),
            Object::Mount(d) => is_mount_point(d),
            Object::Restore { path, value } => {
                fs::read_to_string(path).is_ok_and(|v| v.trim() != value.trim())
            }
            Object::Netns(n) => Path::new("/run/netns").join(n).exists(),
        }
    }
}

/// `NotFound` is success: undoing twice (or something never made) is fine.
fn gone(r: io::Result<()>) -> io::Result<()> {
    match r {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        r => r,
    }
}

/// The registry directory, made private to the caller on first use.
fn registry() -> io::Result<PathBuf> {
    let dir = if rtshield_sys::is_root() {
        PathBuf::from("/run/rtshield-tests")
    } else {
        // SAFETY: getuid has no preconditions and cannot fail.
        std::env::temp_dir().join(format!("rtshield-tests-{}", unsafe { libc::getuid() }))
    };
    private_dir(&dir)?;
    Ok(dir)
}

/// `dir` as a directory only the caller can use: made 0700, or accepted
/// when it is a real directory (not a link) it owns, closed to others.
pub(crate) fn private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    let m = fs::symlink_metadata(dir)?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if !m.file_type().is_dir() || m.uid() != me || m.mode() & 0o077 != 0 {
        return Err(io::Error::other(format!(
            "{} is not a private directory of uid {me}",
            dir.display()
        )));
    }
    Ok(())
}

/// This process's start time (`/proc/self/stat` field 22), which tells
/// it from a later process given the same pid.
fn start_time(pid: u32) -> Option<u64> {
    let s = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &s[s.rfind(')')? + 1..];
    let f: Vec<&str> = after.split_whitespace().collect();
    // A zombie is dead for our purpose.
    if matches!(f.first(), Some(&"Z") | Some(&"X")) {
        return None;
    }
    f.get(19)?.parse().ok()
}

/// Whether the process that wrote an entry still runs.
fn alive(pid: u32, start: u64) -> bool {
    start_time(pid) == Some(start)
}

/// A registered object: undone (and unregistered) on drop, or by the
/// next test process's [`reap`] if this one is killed first.
#[derive(Debug)]
pub struct Registration {
    object: Object,
    entry: Option<PathBuf>,
}

impl Registration {
    /// The object.
    pub fn object(&self) -> &Object {
        &self.object
    }

    /// Undo now, reporting a failure (drop only prints it).
    pub fn undo(mut self) -> Result<(), String> {
        self.finish()
    }

    fn finish(&mut self) -> Result<(), String> {
        let r = self.object.undo();
        // Unregistered only once undone: a failure stays for the reaper.
        if r.is_ok() {
            if let Some(e) = self.entry.take() {
                let _ = fs::remove_file(e);
            }
        }
        r
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if self.entry.is_none() && !self.object.exists() {
            return;
        }
        if let Err(e) = self.finish() {
            eprintln!("rtshield-testkit: cannot undo {e}");
        }
    }
}

/// Register `object` for cleanup before creating it. Panics when the
/// registry cannot be written: a test must not make what nothing could
/// undo after a kill.
#[track_caller]
pub fn register(object: Object) -> Registration {
    reap_once();
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let me = std::process::id();
    let start = start_time(me).expect("read /proc/self/stat");
    let dir = registry().unwrap_or_else(|e| panic!("test registry: {e}"));
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    let entry = dir.join(format!("{me}-{start}-{n}.json"));
    let mut v = object.to_json();
    v["pid"] = json!(me);
    v["start"] = json!(start);
    v["seq"] = json!(n);
    let tmp = dir.join(format!(".{me}-{start}-{n}.tmp"));
    fs::write(&tmp, v.to_string())
        .and_then(|()| fs::rename(&tmp, &entry))
        .unwrap_or_else(|e| panic!("test registry {}: {e}", entry.display()));
    Registration {
        object,
        entry: Some(entry),
    }
}

/// An entry of the registry.
struct Entry {
    file: PathBuf,
    pid: u32,
    start: u64,
    seq: u64,
    object: Option<Object>,
}

fn entries(dir: &Path) -> Vec<Entry> {
    let mut v: Vec<Entry> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
        .filter_map(|e| {
            let j: Value = serde_json::from_str(&fs::read_to_string(e.path()).ok()?).ok()?;
            Some(Entry {
                file: e.path(),
                pid: j["pid"].as_u64()? as u32,
                start: j["start"].as_u64()?,
                seq: j["seq"].as_u64().unwrap_or(0),
                object: Object::from_json(&j),
            })
        })
        .collect();
    // Last made, first undone (a cgroup's state file before the cgroup).
    v.sort_by(|a, b| (a.pid, a.start, b.seq).cmp(&(b.pid, b.start, a.seq)));
    v
}

/// The objects process `pid` has registered and not undone yet.
pub fn registered_by(pid: u32) -> Vec<Object> {
    let Ok(dir) = registry() else {
        return vec![];
    };
    entries(&dir)
        .into_iter()
        .filter(|e| e.pid == pid)
        .filter_map(|e| e.object)
        .collect()
}

/// Undo the registered objects of every dead test process, then remove
/// the trace leftovers of dead rtshield processes. Returns what was
/// undone, one line each (failures too, marked `cannot`: the entry stays
/// for the next reaper). Entries of live processes are never touched.
pub fn reap() -> Vec<String> {
    let Ok(dir) = registry() else {
        return vec![];
    };
    let mut done = Vec::new();
    for e in entries(&dir) {
        if alive(e.pid, e.start) {
            continue;
        }
        // Claimed by renaming: two reapers never undo the same entry.
        let claimed = e
            .file
            .with_extension(format!("reaping-{}", std::process::id()));
        if fs::rename(&e.file, &claimed).is_err() {
            continue;
        }
        match e.object.as_ref().map(Object::undo) {
            Some(Ok(())) | None => {
                done.push(format!(
                    "undid {:?} of dead test process {}",
                    e.object, e.pid
                ));
                let _ = fs::remove_file(&claimed);
            }
            Some(Err(err)) => {
                done.push(format!("cannot undo {err} (kept for the next reaper)"));
                let _ = fs::rename(&claimed, &e.file);
            }
        }
    }
    // Claims of reapers that died while reaping.
    for f in fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = f.file_name().to_string_lossy().into_owned();
        if let Some((base, pid)) = name.rsplit_once(".reaping-") {
            if pid.parse().is_ok_and(|p| start_time(p).is_none()) {
                let _ = fs::rename(f.path(), dir.join(format!("{base}.json")));
            }
        }
    }
    if rtshield_sys::is_root() {
        for l in rtshield_sys::remove_tracing_leftovers(&Root::host()) {
            done.push(format!("removed {} of dead process {}", l.name, l.pid));
        }
        done.extend(remove_dead_instances());
    }
    done
}

/// Instances `rtshield-<pid>` of dead processes that `remove_leftovers`
/// could not see (no standard mount and no dead owner's mount to list
/// them through, as after an older rtshield): listed through a mount of
/// the reaper's own when needed.
fn remove_dead_instances() -> Vec<String> {
    with_tracefs(|at| {
        let dir = at.join("instances");
        let mut done = Vec::new();
        for e in fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = trace_instance_pid(&name) else {
                continue;
            };
            if Path::new(&format!("/proc/{pid}")).exists() && start_time(pid).is_some() {
                continue;
            }
            let _ = fs::write(e.path().join("tracing_on"), "0");
            if fs::remove_dir(e.path()).is_ok() {
                done.push(format!("removed {name} of dead process {pid}"));
            }
        }
        done
    })
    .unwrap_or_default()
}

/// [`reap`] once per test process, at the first use of the kit's
/// registry or commands.
pub fn reap_once() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for line in reap() {
            eprintln!("rtshield-testkit: {line}");
        }
    });
}

/// Whether `d` is a mount point now (`/proc/self/mountinfo`).
pub fn is_mount_point(d: &Path) -> bool {
    let d = d.to_string_lossy();
    rtshield_sys::cgroup_mounts(&Root::host())
        .iter()
        .any(|m| m.mount_point == d)
}

fn unmount(d: &Path) -> io::Result<()> {
    if is_mount_point(d) {
        let c = std::ffi::CString::new(d.to_string_lossy().as_bytes()).map_err(io::Error::other)?;
        // SAFETY: a valid NUL-terminated path. MNT_DETACH: gone from the
        // tree now even if something still holds a file in it.
        if unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    gone(fs::remove_dir(d))
}

/// The cgroup hierarchy's root holding `d`: the longest cgroup mount
/// point that is a prefix of it.
fn cgroup_root(d: &Path) -> Option<PathBuf> {
    rtshield_sys::cgroup_mounts(&Root::host())
        .into_iter()
        .filter(|m| m.fs_type == "cgroup" || m.fs_type == "cgroup2")
        .map(|m| PathBuf::from(m.mount_point))
        .filter(|m| d.starts_with(m) && d != m)
        .max_by_key(|m| m.as_os_str().len())
}

/// Move the tasks of `d`'s subtree to the hierarchy's root (where they
/// were before the test put them there; nothing is killed), then remove
/// the subtree deepest first, retrying for up to 5 s while exiting tasks
/// still hold a cgroup.
fn remove_cgroup(d: &Path) -> io::Result<()> {
    if !d.exists() {
        return Ok(());
    }
    let root = cgroup_root(d)
        .ok_or_else(|| io::Error::other(format!("{} is in no cgroup hierarchy", d.display())))?;
    let mut dirs = vec![d.to_path_buf()];
    let mut i = 0;
    while i < dirs.len() {
        for e in fs::read_dir(&dirs[i]).into_iter().flatten().flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                dirs.push(e.path());
            }
        }
        i += 1;
    }
    let end = Instant::now() + Duration::from_secs(5);
    for dir in dirs.iter().rev() {
        loop {
            for (list, to) in [("tasks", "tasks"), ("cgroup.procs", "cgroup.procs")] {
                for id in fs::read_to_string(dir.join(list))
                    .unwrap_or_default()
                    .split_whitespace()
                {
                    let _ = fs::write(root.join(to), id);
                }
            }
            match gone(fs::remove_dir(dir)) {
                Ok(()) => break,
                Err(e) if Instant::now() >= end => return Err(e),
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }
    Ok(())
}

/// `f` on a tracefs mount: the standard one, else a temporary one of the
/// reaper's own (not registered: the reaper cannot register while it
/// reaps), detached after.
fn with_tracefs<T>(f: impl FnOnce(&Path) -> T) -> io::Result<T> {
    if let Some(at) = find_tracefs(&Root::host()) {
        return Ok(f(Path::new(&at)));
    }
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "rtshield-test-reap-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    private_dir(&dir)?;
    let c = |s: &str| std::ffi::CString::new(s).map_err(io::Error::other);
    let (src, target) = (c("tracefs")?, c(&dir.to_string_lossy())?);
    // SAFETY: valid NUL-terminated strings; no data.
    let rc = unsafe {
        libc::mount(
            src.as_ptr(),
            target.as_ptr(),
            src.as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        )
    };
    if rc != 0 {
        let e = io::Error::last_os_error();
        let _ = fs::remove_dir(&dir);
        return Err(e);
    }
    let r = f(&dir);
    unmount(&dir)?;
    Ok(r)
}

/// Stop and remove the trace instance `name` (an `rtshield-` one only).
fn remove_instance(name: &str) -> io::Result<()> {
    if !name.starts_with(rtshield_sys::TRACE_INSTANCE_PREFIX) || name.contains('/') {
        return Err(io::Error::other(format!(
            "{name:?} is not an rtshield instance"
        )));
    }
    with_tracefs(|at| {
        let d = at.join("instances").join(name);
        let _ = fs::write(d.join("tracing_on"), "0");
        gone(fs::remove_dir(d))
    })?
}

fn ip_netns_del(name: &str) -> io::Result<()> {
    if !Path::new("/run/netns").join(name).exists() {
        return Ok(());
    }
    let o = std::process::Command::new("ip")
        .args(["netns", "del", name])
        .output()?;
    if o.status.success() {
        Ok(())
    } else {
        Err(io::Error::other(
            String::from_utf8_lossy(&o.stderr).into_owned(),
        ))
    }
}

/// The kit's private directories only (`rtshield-test-*` directly in the
/// temporary directory): never anything else, whatever the entry says.
fn remove_private_dir(d: &Path) -> io::Result<()> {
    let ours = d.parent() == Some(std::env::temp_dir().as_path())
        && d.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("rtshield-test-"));
    if !ours {
        return Err(io::Error::other(format!(
            "{} is not a test kit directory",
            d.display()
        )));
    }
    gone(fs::remove_dir_all(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_round_trip_through_their_entries() {
        for o in [
            Object::Cgroup("/sys/fs/cgroup/cpuset/x-1".into()),
            Object::Mount("/tmp/m".into()),
            Object::TraceInstance("rtshield-1".into()),
            Object::File("/run/rtshield/partition-x.json".into()),
            Object::Restore {
                path: "/proc/irq/24/smp_affinity_list".into(),
                value: "0-1".into(),
            },
            Object::Netns("rtshield-a-1".into()),
            Object::Dir("/tmp/rtshield-test-home-1".into()),
        ] {
            assert_eq!(Object::from_json(&o.to_json()), Some(o));
        }
        assert_eq!(Object::from_json(&json!({"kind": "rm -rf"})), None);
    }

    #[test]
    fn a_dead_process_s_file_is_reaped_a_live_one_s_kept() {
        let d = tempfile::tempdir().unwrap();
        let mine = d.path().join("mine");
        let dead = d.path().join("dead");
        fs::write(&mine, "").unwrap();
        fs::write(&dead, "").unwrap();
        let keep = register(Object::File(mine.clone()));
        // An entry as a killed process leaves it: pid of a process gone.
        let gone_pid = {
            let mut c = std::process::Command::new("true").spawn().unwrap();
            let p = c.id();
            c.wait().unwrap();
            p
        };
        let dir = registry().unwrap();
        let mut v = Object::File(dead.clone()).to_json();
        v["pid"] = json!(gone_pid);
        v["start"] = json!(1);
        v["seq"] = json!(0);
        let entry = dir.join(format!("{gone_pid}-1-0.json"));
        fs::write(&entry, v.to_string()).unwrap();
        let done = reap();
        assert!(!dead.exists(), "{done:?}");
        assert!(!entry.exists());
        assert!(mine.exists(), "a live process's object was undone");
        drop(keep);
        assert!(!mine.exists(), "dropping the registration undoes it");
    }

    #[test]
    fn only_the_kit_s_own_directories_are_removed() {
        let d = tempfile::tempdir().unwrap();
        let e = remove_private_dir(d.path()).unwrap_err();
        assert!(e.to_string().contains("not a test kit directory"), "{e}");
        assert!(d.path().exists());
    }
}
