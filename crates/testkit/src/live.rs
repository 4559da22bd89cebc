//! Live tests on the machine itself: they run as root on a machine with
//! at least CPUs 0 and 1 (any count: 2, 4, 64), with a cgroup v1 cpuset
//! hierarchy for the partition tests, and partition only a private parent
//! cgroup holding what the test started ([`PrivateParent`]), never the
//! whole machine. Everything they make in the kernel is registered with
//! the [`crate::reaper`] before it is made.

use crate::reaper::{self, Object, Registration};
use crate::testenv::{require, require_root};
use rtshield_vocab::CpuSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Where the live tests expect the cgroup v1 cpuset hierarchy.
pub const CPUSET_MOUNT: &str = "/sys/fs/cgroup/cpuset";

/// This machine's online CPUs (the host's list, e.g. `0-1`).
pub fn online_cpus() -> String {
    fs::read_to_string(rtshield_sys::kpath::CPU_ONLINE)
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// Whether CPUs 0 and 1 are online: what every live test needs (the
/// measurement on CPU 1, the rest on CPU 0), whatever the CPU count.
pub fn has_cpus_0_and_1() -> bool {
    CpuSet::parse_list(&online_cpus()).is_ok_and(|c| c.contains(0) && c.contains(1))
}

/// [`require`] CPUs 0 and 1 online (`why`: what needs them).
#[track_caller]
pub fn require_cpus_0_and_1(why: &str) -> bool {
    require(
        has_cpus_0_and_1(),
        &format!("{why} needs CPUs 0 and 1 (online {})", online_cpus()),
    )
}

/// Whether a live partition test can run: root, a cgroup v1 cpuset
/// hierarchy at [`CPUSET_MOUNT`], CPUs 0 and 1 online (any count; the
/// private parent holds those two) — else a `SKIP`, or a failure under
/// `RTSHIELD_REQUIRE_ROOT=1`. `why`: what the test does.
#[track_caller]
pub fn require_cpuset_v1_two_cpus(why: &str) -> bool {
    require_root(why)
        && require(
            Path::new(CPUSET_MOUNT).join("cpuset.cpus").exists(),
            &format!("no cgroup v1 cpuset hierarchy at {CPUSET_MOUNT}"),
        )
        && require_cpus_0_and_1(why)
}

/// A private parent cgroup (CPUs 0-1 by default, memory node 0) for a live
/// test's partition. On drop — even after a failed assertion — its `rt`
/// and `nrt` sets, itself and the partition's state file are removed (a
/// test kills what it started in it first); after a kill, by the reaper.
pub struct PrivateParent {
    /// Its name below the mount (the `--parent` given to rtshield).
    pub name: String,
    /// Its directory.
    pub cg: PathBuf,
    /// The state file a partition under it has.
    pub state: PathBuf,
    /// Dropped in reverse order: the state file, then the cgroup.
    _reg: [Registration; 2],
}

impl PrivateParent {
    /// Make `/sys/fs/cgroup/cpuset/PREFIX-PID` with CPUs 0-1.
    pub fn create(prefix: &str) -> PrivateParent {
        Self::with_cpus(prefix, "0-1")
    }

    /// Make `/sys/fs/cgroup/cpuset/PREFIX-PID` with the CPUs `cpus`.
    pub fn with_cpus(prefix: &str, cpus: &str) -> PrivateParent {
        let name = format!("{prefix}-{}", std::process::id());
        let cg = Path::new(CPUSET_MOUNT).join(&name);
        // Letters, digits and `-` are kept by the state file name encoding.
        let state = PathBuf::from(format!("/run/rtshield/partition-{name}.json"));
        let reg_cg = reaper::register(Object::Cgroup(cg.clone()));
        let reg_state = reaper::register(Object::File(state.clone()));
        fs::create_dir(&cg).unwrap();
        fs::write(cg.join("cpuset.cpus"), cpus).unwrap();
        fs::write(cg.join("cpuset.mems"), "0").unwrap();
        PrivateParent {
            name,
            cg,
            state,
            _reg: [reg_state, reg_cg],
        }
    }
}

/// tracefs mounted by the test itself in a private temporary directory
/// (to read the top-level state when it is mounted at no standard place,
/// or to hold a mount of its own while rtshield runs); registered before
/// it is mounted, detached on drop or by the reaper.
pub struct TracefsMount {
    dir: PathBuf,
    _reg: Registration,
}

impl TracefsMount {
    /// Mount tracefs at `$TMPDIR/rtshield-test-tracefs-<pid>-<n>`.
    #[track_caller]
    pub fn mount() -> TracefsMount {
        static N: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "rtshield-test-tracefs-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let reg = reaper::register(Object::Mount(dir.clone()));
        reaper::private_dir(&dir).unwrap();
        let c = |s: &str| std::ffi::CString::new(s).unwrap();
        let (src, target) = (c("tracefs"), c(dir.to_str().unwrap()));
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
        assert_eq!(rc, 0, "mount tracefs: {}", std::io::Error::last_os_error());
        TracefsMount { dir, _reg: reg }
    }

    /// The mount point.
    pub fn path(&self) -> &Path {
        &self.dir
    }
}

/// `f` on tracefs's `instances` directory (every mount of tracefs shows
/// the same instances): through the standard mount, else through a mount
/// of the test's own, detached after.
pub fn with_instances<T>(f: impl FnOnce(&Path) -> T) -> T {
    match rtshield_sys::find_tracefs(&rtshield_sys::Root::host()) {
        Some(at) => f(&Path::new(&at).join("instances")),
        None => {
            let m = TracefsMount::mount();
            f(&m.path().join("instances"))
        }
    }
}

/// Whether the trace instance of process `pid` (`rtshield-<pid>`) exists.
pub fn instance_exists(pid: u32) -> bool {
    with_instances(|d| d.join(format!("rtshield-{pid}")).exists())
}

/// Whether process `pid`'s instance records (`tracing_on` is 1): seen
/// through the standard mount or that process's own, else through a
/// mount of the test's own.
pub fn instance_records(pid: u32) -> bool {
    let records = |instances: &Path| {
        fs::read_to_string(instances.join(format!("rtshield-{pid}/tracing_on")))
            .is_ok_and(|s| s.trim() == "1")
    };
    let own = Path::new(&rtshield_sys::tracefs_private_mount(pid)).join("instances");
    records(&own) || with_instances(records)
}
