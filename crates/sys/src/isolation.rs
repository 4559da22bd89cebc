//! Which CPU isolation is in force, whoever set it up: rtshield's own
//! partitions (found from its state files, under any `--parent`), a cset
//! shield (`user`/`system` cpusets), a partrt partition (`rt`/`nrt`
//! without an rtshield state file), and `isolcpus=`/`nohz_full=` on the
//! kernel command line. Runs record this, so a cpuset run and a plain run
//! never both read `isolation none`.

use crate::cgroup::Hierarchy;
use crate::partstate::STATE_DIR;
use crate::sysinfo::isolation_params;
use crate::{CpuSet, Root};
use serde::Serialize;

/// One isolation mechanism found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Found {
    /// `partition` (rtshield), `cset`, `partrt`, `isolcpus`, `nohz_full`.
    pub method: String,
    /// Where: the cgroup directory or the command-line value.
    pub detail: String,
}

/// What is in force.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Isolation {
    pub found: Vec<Found>,
}

impl Isolation {
    /// `none`, or the methods joined with `+` (`partition+isolcpus`).
    pub fn summary(&self) -> String {
        if self.found.is_empty() {
            return "none".into();
        }
        let mut ms: Vec<&str> = self.found.iter().map(|f| f.method.as_str()).collect();
        ms.dedup();
        ms.join("+")
    }

    /// Whether a partition made by another tool is present: its name and
    /// the command that undoes it.
    pub fn foreign_partition(&self) -> Option<(&'static str, &'static str)> {
        self.found.iter().find_map(|f| match f.method.as_str() {
            "cset" => Some(("cset", "cset shield --reset")),
            "partrt" => Some(("partrt", "partrt undo")),
            _ => None,
        })
    }
}

/// A partition made by another tool (cset or partrt): what `audit`,
/// `partition status` and `partition create` report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ForeignPartition {
    /// `cset` or `partrt`.
    pub tool: String,
    /// The command that undoes it (`cset shield --reset`, `partrt undo`).
    pub undo: String,
    /// The shielded set's directory (cset's `user`, partrt's `rt`) and CPUs.
    pub rt_dir: String,
    pub rt_cpus: CpuSet,
    /// The housekeeping set's directory (cset's `system`, partrt's `nrt`).
    pub nrt_dir: String,
    pub nrt_cpus: CpuSet,
}

impl ForeignPartition {
    /// One line for reports: `cset shield: user = CPUs 1-3
    /// (/sys/fs/cgroup/cpuset/user), system = CPUs 0; undo it with `cset
    /// shield --reset``.
    pub fn describe(&self) -> String {
        let name = |d: &str| d.rsplit('/').next().unwrap_or(d).to_string();
        format!(
            "{} partition: {} = CPUs {} ({}), {} = CPUs {}; undo it with `{}`",
            self.tool,
            name(&self.rt_dir),
            self.rt_cpus.to_list(),
            self.rt_dir,
            name(&self.nrt_dir),
            self.nrt_cpus.to_list(),
            self.undo
        )
    }
}

/// The cset shield or partrt partition present under `root`, if any
/// (cset's first: its `user`/`system` names are its own).
pub fn foreign_partition(root: &Root) -> Option<ForeignPartition> {
    let iso = detect(root);
    let (tool, undo) = iso.foreign_partition()?;
    let h = Hierarchy::detect(root).ok()?;
    let (rt, nrt) = if tool == "cset" {
        ("user", "system")
    } else {
        ("rt", "nrt")
    };
    let rt_dir = h.find_cpuset(root, None, rt)?;
    let nrt_dir = h.find_cpuset(root, None, nrt)?;
    let cpus = |dir: &str| {
        root.read_opt(h.file(dir, "cpus"))
            .and_then(|s| CpuSet::parse_list(s.trim()).ok())
            .unwrap_or_default()
    };
    Some(ForeignPartition {
        tool: tool.into(),
        undo: undo.into(),
        rt_cpus: cpus(&rt_dir),
        nrt_cpus: cpus(&nrt_dir),
        rt_dir,
        nrt_dir,
    })
}

/// Detect the isolation in force under `root`.
pub fn detect(root: &Root) -> Isolation {
    let mut found = Vec::new();
    let mut ours: Vec<String> = Vec::new();
    if let Ok(names) = root.read_dir_names(STATE_DIR) {
        for n in names {
            if n.starts_with("partition") && n.ends_with(".json") {
                found.push(Found {
                    method: "partition".into(),
                    detail: format!("{STATE_DIR}/{n}"),
                });
                ours.push(n);
            }
        }
    }
    if let Ok(h) = Hierarchy::detect(root) {
        let has = |name: &str| h.find_cpuset(root, None, name);
        if let (Some(user), Some(_)) = (has("user"), has("system")) {
            found.push(Found {
                method: "cset".into(),
                detail: user,
            });
        }
        // partrt's layout is rtshield's default one at the root; only the
        // absence of rtshield's root state file tells them apart.
        if let (Some(rt), Some(_)) = (has("rt"), has("nrt")) {
            if !ours.iter().any(|n| n == "partition.json") {
                found.push(Found {
                    method: "partrt".into(),
                    detail: rt,
                });
            }
        }
    }
    if let Some(cmd) = root.read_opt("/proc/cmdline") {
        let p = isolation_params(&cmd);
        for k in ["isolcpus", "nohz_full"] {
            if let Some(v) = p.get(k) {
                found.push(Found {
                    method: k.into(),
                    detail: v.clone(),
                });
            }
        }
    }
    Isolation { found }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let mi =
            "30 25 0:26 / /sys/fs/cgroup/cpuset rw,nosuid shared:12 - cgroup cgroup rw,cpuset\n";
        let mut all = vec![
            ("proc/self/mountinfo", mi),
            ("sys/fs/cgroup/cpuset/cpuset.cpus", "0-3\n"),
        ];
        all.extend_from_slice(files);
        for (p, body) in all {
            let p = d.path().join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        }
        d
    }

    #[test]
    fn nothing_is_none() {
        let d = tree(&[("proc/cmdline", "root=/dev/vda quiet\n")]);
        assert_eq!(detect(&Root::new(d.path())).summary(), "none");
    }

    #[test]
    fn cset_shield() {
        let d = tree(&[
            ("sys/fs/cgroup/cpuset/user/cpuset.cpus", "1-3\n"),
            ("sys/fs/cgroup/cpuset/system/cpuset.cpus", "0\n"),
        ]);
        let i = detect(&Root::new(d.path()));
        assert_eq!(i.summary(), "cset");
        assert_eq!(i.found[0].detail, "/sys/fs/cgroup/cpuset/user");
        assert_eq!(i.foreign_partition(), Some(("cset", "cset shield --reset")));
        let f = foreign_partition(&Root::new(d.path())).unwrap();
        assert_eq!(f.rt_cpus.to_list(), "1-3");
        assert_eq!(f.nrt_cpus.to_list(), "0");
        assert_eq!(
            f.describe(),
            "cset partition: user = CPUs 1-3 (/sys/fs/cgroup/cpuset/user), system = CPUs 0; undo it with `cset shield --reset`"
        );
    }

    #[test]
    fn partrt_versus_rtshield_and_isolcpus() {
        let files = [
            ("sys/fs/cgroup/cpuset/rt/cpuset.cpus", "3\n"),
            ("sys/fs/cgroup/cpuset/nrt/cpuset.cpus", "0-2\n"),
            ("proc/cmdline", "quiet isolcpus=managed_irq,3 nohz_full=3\n"),
        ];
        let d = tree(&files);
        let i = detect(&Root::new(d.path()));
        assert_eq!(i.summary(), "partrt+isolcpus+nohz_full");
        assert_eq!(i.found[1].detail, "managed_irq,3");
        assert_eq!(i.foreign_partition(), Some(("partrt", "partrt undo")));
        // The same cpusets with rtshield's state file are rtshield's.
        let mut with_state = files.to_vec();
        with_state.push(("run/rtshield/partition.json", "{}"));
        let d = tree(&with_state);
        let i = detect(&Root::new(d.path()));
        assert_eq!(i.summary(), "partition+isolcpus+nohz_full");
        assert_eq!(i.foreign_partition(), None);
        assert_eq!(foreign_partition(&Root::new(d.path())), None);
        // A partition under --parent is found from its state file.
        let d = tree(&[("run/rtshield/partition-lab%2Fa.json", "{}")]);
        let i = detect(&Root::new(d.path()));
        assert_eq!(i.summary(), "partition");
        assert_eq!(i.found[0].detail, "/run/rtshield/partition-lab%2Fa.json");
    }
}
