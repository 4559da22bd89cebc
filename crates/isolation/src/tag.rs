//! The isolation tag of a run: what isolated *the CPUs it measured*, not
//! what exists somewhere on the machine. A partition of CPU 1 under one
//! parent says nothing about a run on CPU 0.
//!
//! Each measuring thread is placed by its CPU (when pinned) and by the
//! cpuset cgroup it ran in ([`Placement`]). A partition applies to it when
//! its shielded set holds the thread's CPUs, or when the thread ran in that
//! shielded set (or below it); `isolcpus` and `nohz_full` apply when the
//! kernel command line lists the thread's CPUs. An unpinned thread's CPUs
//! are those of its cgroup. The tag joins, over every thread, what applies
//! with `+`, in the order rtshield's partitions (`partition` at the
//! hierarchy's root, `partition:<parent>` below it), `cset`, `partrt`,
//! `isolcpus`, `nohz_full`; `none` when nothing does.

use crate::detect::Isolation;
use crate::partitions::Owner;
use rtshield_sys::Root;
use rtshield_vocab::CpuSet;

/// Where one measuring thread ran.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Placement {
    /// The CPU it was pinned to; `None`: it kept the inherited affinity.
    pub cpu: Option<u32>,
    /// The cpuset cgroup directory it ran in (`/sys/fs/cgroup/cpuset/rt`);
    /// `None` when unknown.
    pub cgroup: Option<String>,
}

impl Isolation {
    /// The isolation tag of a run whose measuring threads ran at
    /// `threads` (see the module's documentation).
    pub fn tag(&self, root: &Root, threads: &[Placement]) -> String {
        let parts = self.partitions.all();
        // One slot per partition (in lookup order), then the command line.
        let mut applies = vec![false; parts.len()];
        let (mut isolcpus, mut nohz_full) = (false, false);
        for t in threads {
            let cpus = t.cpu.map(CpuSet::single).or_else(|| {
                let h = self.partitions.hierarchy()?;
                h.effective_cpus(root, t.cgroup.as_deref()?)
            });
            let cpus = cpus.filter(|c| !c.is_empty());
            for (a, p) in applies.iter_mut().zip(parts) {
                let by_cpu = cpus.as_ref().is_some_and(|c| p.rt_covers(c));
                let by_cgroup = t.cgroup.as_deref().is_some_and(|g| p.rt_holds(g));
                *a |= by_cpu || by_cgroup;
            }
            let within = |set: &Option<CpuSet>| match (&cpus, set) {
                (Some(c), Some(s)) => c.is_subset(s),
                _ => false,
            };
            isolcpus |= within(&self.isolcpus);
            nohz_full |= within(&self.nohz_full);
        }
        let mut names: Vec<String> = Vec::new();
        for owner in [Owner::Rtshield, Owner::Cset, Owner::Partrt] {
            for (_, p) in applies
                .iter()
                .zip(parts)
                .filter(|(a, p)| **a && p.owner == owner)
            {
                names.push(p.tag());
            }
        }
        if isolcpus {
            names.push("isolcpus".into());
        }
        if nohz_full {
            names.push("nohz_full".into());
        }
        if names.is_empty() {
            "none".into()
        } else {
            names.join("+")
        }
    }
}
