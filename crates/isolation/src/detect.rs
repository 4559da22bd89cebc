//! Which CPU isolation is in force on the machine, whoever set it up:
//! rtshield's own partitions (found from their state files, under any
//! `--parent`), a cset shield, a partrt partition, and `isolcpus=` /
//! `nohz_full=` on the kernel command line ([`Isolation::detect`]); and
//! the one line reports give another tool's partition
//! ([`ForeignPartition`]). What isolated one *run* is [`Isolation::tag`].

use crate::partitions::{Owner, Partition, Partitions};
use crate::state::STATE_DIR;
use rtshield_sys::{cmd_cpus, isolation_params};
use rtshield_sys::{kpath, Root};
use rtshield_vocab::CpuSet;
use serde::Serialize;

/// One isolation mechanism found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Found {
    /// `partition` (rtshield), `cset`, `partrt`, `isolcpus`, `nohz_full`.
    pub method: String,
    /// Where: the state file, the cgroup directory or the command-line value.
    pub detail: String,
}

/// What is in force on the machine.
#[derive(Debug, Clone)]
pub struct Isolation {
    /// Each mechanism found: rtshield's partitions (one per state file),
    /// cset, partrt, then `isolcpus`, `nohz_full`.
    pub found: Vec<Found>,
    /// The partitions behind the `partition`, `cset` and `partrt` entries.
    pub partitions: Partitions,
    /// The CPUs of `isolcpus=` (flags left out), when given.
    pub isolcpus: Option<CpuSet>,
    /// The CPUs of `nohz_full=`, when given.
    pub nohz_full: Option<CpuSet>,
}

impl Isolation {
    /// Detect the isolation in force under `root`.
    pub fn detect(root: &Root) -> Isolation {
        let partitions = Partitions::discover(root);
        let mut found: Vec<Found> = partitions
            .state_files()
            .iter()
            .map(|n| Found {
                method: "partition".into(),
                detail: format!("{STATE_DIR}/{n}"),
            })
            .collect();
        for owner in [Owner::Cset, Owner::Partrt] {
            let whole = partitions
                .all()
                .iter()
                .find(|p| p.owner == owner && p.nrt.is_some());
            if let Some(rt) = whole.and_then(|p| p.rt.as_ref()) {
                found.push(Found {
                    method: whole.map(Partition::tag).unwrap_or_default(),
                    detail: rt.dir.clone(),
                });
            }
        }
        let params = isolation_params(&root.read_opt(kpath::CMDLINE).unwrap_or_default());
        for k in ["isolcpus", "nohz_full"] {
            if let Some(v) = params.get(k) {
                found.push(Found {
                    method: k.into(),
                    detail: v.clone(),
                });
            }
        }
        let cpus = |k: &str| params.get(k).and_then(|v| cmd_cpus(v));
        Isolation {
            found,
            isolcpus: cpus("isolcpus"),
            nohz_full: cpus("nohz_full"),
            partitions,
        }
    }

    /// `none`, or the methods in force anywhere on the machine joined with
    /// `+` (`partition+isolcpus`).
    pub fn summary(&self) -> String {
        if self.found.is_empty() {
            return "none".into();
        }
        let mut ms: Vec<&str> = self.found.iter().map(|f| f.method.as_str()).collect();
        ms.dedup();
        ms.join("+")
    }

    /// The partition another tool made, if any (cset's first).
    pub fn foreign_partition(&self) -> Option<ForeignPartition> {
        self.partitions.foreign_partition()
    }
}

impl Partitions {
    /// The report form of the partition another tool made, if any (cset's
    /// first; see [`Partitions::foreign`]).
    pub fn foreign_partition(&self) -> Option<ForeignPartition> {
        ForeignPartition::of(self.foreign()?)
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
    /// The shielded set's directory (cset's `user`, partrt's `rt`).
    pub rt_dir: String,
    /// The shielded set's CPUs (empty when unreadable).
    pub rt_cpus: CpuSet,
    /// The housekeeping set's directory (cset's `system`, partrt's `nrt`).
    pub nrt_dir: String,
    /// The housekeeping set's CPUs (empty when unreadable).
    pub nrt_cpus: CpuSet,
}

impl ForeignPartition {
    /// The report form of another tool's partition with both its sets.
    fn of(p: &Partition) -> Option<ForeignPartition> {
        let (rt, nrt) = (p.rt.as_ref()?, p.nrt.as_ref()?);
        Some(ForeignPartition {
            tool: p.tag(),
            undo: p.owner.undo()?.into(),
            rt_dir: rt.dir.clone(),
            rt_cpus: rt.cpus.clone().unwrap_or_default(),
            nrt_dir: nrt.dir.clone(),
            nrt_cpus: nrt.cpus.clone().unwrap_or_default(),
        })
    }

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
    Partitions::discover(root).foreign_partition()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool_undo(i: &Isolation) -> Option<(String, String)> {
        i.foreign_partition().map(|f| (f.tool, f.undo))
    }

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
        assert_eq!(Isolation::detect(&Root::new(d.path())).summary(), "none");
    }

    #[test]
    fn cset_shield() {
        let d = tree(&[
            ("sys/fs/cgroup/cpuset/user/cpuset.cpus", "1-3\n"),
            ("sys/fs/cgroup/cpuset/system/cpuset.cpus", "0\n"),
        ]);
        let i = Isolation::detect(&Root::new(d.path()));
        assert_eq!(i.summary(), "cset");
        assert_eq!(i.found[0].detail, "/sys/fs/cgroup/cpuset/user");
        assert_eq!(
            tool_undo(&i),
            Some(("cset".into(), "cset shield --reset".into()))
        );
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
        let i = Isolation::detect(&Root::new(d.path()));
        assert_eq!(i.summary(), "partrt+isolcpus+nohz_full");
        assert_eq!(i.found[1].detail, "managed_irq,3");
        assert_eq!(tool_undo(&i), Some(("partrt".into(), "partrt undo".into())));
        // The same cpusets with rtshield's state file are rtshield's.
        let mut with_state = files.to_vec();
        with_state.push(("run/rtshield/partition.json", "{}"));
        let d = tree(&with_state);
        let i = Isolation::detect(&Root::new(d.path()));
        assert_eq!(i.summary(), "partition+isolcpus+nohz_full");
        assert_eq!(tool_undo(&i), None);
        assert_eq!(foreign_partition(&Root::new(d.path())), None);
        // A partition under --parent is found from its state file.
        let d = tree(&[("run/rtshield/partition-lab%2Fa.json", "{}")]);
        let i = Isolation::detect(&Root::new(d.path()));
        assert_eq!(i.summary(), "partition");
        assert_eq!(i.found[0].detail, "/run/rtshield/partition-lab%2Fa.json");
    }
}
