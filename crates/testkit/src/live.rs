//! Live partition tests on the machine itself: they run as root on a
//! 2-CPU machine with a cgroup v1 cpuset hierarchy, and partition only a
//! private parent cgroup holding what the test started ([`PrivateParent`]),
//! never the whole machine.

use crate::testenv::{require, require_root};
use std::fs;
use std::path::{Path, PathBuf};

/// Where the live tests expect the cgroup v1 cpuset hierarchy.
pub const CPUSET_MOUNT: &str = "/sys/fs/cgroup/cpuset";

/// This machine's online CPUs (the host's list, e.g. `0-1`).
pub fn online_cpus() -> String {
    fs::read_to_string(rtshield_sys::kpath::CPU_ONLINE)
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// Whether a live partition test can run: root, a cgroup v1 cpuset
/// hierarchy at [`CPUSET_MOUNT`], CPUs 0-1 online (else a `SKIP`, or a
/// failure under `RTSHIELD_REQUIRE_ROOT=1`). `why`: what the test does.
#[track_caller]
pub fn require_cpuset_v1_two_cpus(why: &str) -> bool {
    require_root(why)
        && require(
            Path::new(CPUSET_MOUNT).join("cpuset.cpus").exists(),
            &format!("no cgroup v1 cpuset hierarchy at {CPUSET_MOUNT}"),
        )
        && require(
            online_cpus() == "0-1",
            &format!("written for a 2-CPU machine (online {})", online_cpus()),
        )
}

/// A private parent cgroup (CPUs 0-1, memory node 0) for a live test's
/// partition. On drop — even after a failed assertion — its `rt` and `nrt`
/// sets, itself and the partition's state file are removed (a test kills
/// what it started in it first).
pub struct PrivateParent {
    /// Its name below the mount (the `--parent` given to rtshield).
    pub name: String,
    /// Its directory.
    pub cg: PathBuf,
    /// The state file a partition under it has.
    pub state: PathBuf,
}

impl PrivateParent {
    /// Make `/sys/fs/cgroup/cpuset/PREFIX-PID`.
    pub fn create(prefix: &str) -> PrivateParent {
        let name = format!("{prefix}-{}", std::process::id());
        let p = PrivateParent {
            cg: Path::new(CPUSET_MOUNT).join(&name),
            // Letters, digits and `-` are kept by the state file name encoding.
            state: PathBuf::from(format!("/run/rtshield/partition-{name}.json")),
            name,
        };
        fs::create_dir(&p.cg).unwrap();
        fs::write(p.cg.join("cpuset.cpus"), "0-1").unwrap();
        fs::write(p.cg.join("cpuset.mems"), "0").unwrap();
        p
    }
}

impl Drop for PrivateParent {
    fn drop(&mut self) {
        for sub in ["rt", "nrt"] {
            let _ = fs::remove_dir(self.cg.join(sub));
        }
        let _ = fs::remove_dir(&self.cg);
        let _ = fs::remove_file(&self.state);
    }
}
