//! What the audit counts as shielded: the union of every rtshield
//! partition (from its state file: CPUs, directories, the IRQs the kernel
//! refused to move) and another tool's shield (cset's `user`, partrt's
//! `rt`), as `rtshield_isolation` finds them.

use rtshield_isolation::{ForeignPartition, Partitions, State, STATE_DIR};
use rtshield_sys::kpath;
use rtshield_sys::parse_task_ids;
use rtshield_sys::Hierarchy;
use rtshield_sys::Root;
use rtshield_vocab::CpuSet;
use std::collections::{BTreeMap, BTreeSet};

/// The shielded and housekeeping CPUs, wherever they come from.
pub(super) struct Shield {
    /// Every shielded CPU.
    pub rt: CpuSet,
    /// Every housekeeping CPU.
    pub nrt: CpuSet,
    /// The shielded sets' directories (another tool's prefixed `TOOL: `).
    pub rt_dirs: Vec<String>,
    /// The housekeeping sets' directories.
    pub nrt_dirs: Vec<String>,
    /// The threads inside a shielded set (the real-time work itself).
    pub rt_tids: BTreeSet<u32>,
    /// IRQ number → why the kernel refused to move it (from the state).
    pub refused_irqs: BTreeMap<String, String>,
    /// A cset shield or partrt partition (counted as the rt/nrt sets).
    pub foreign: Option<ForeignPartition>,
    /// The cpuset hierarchy, when there is one.
    pub hierarchy: Option<Hierarchy>,
}

impl Shield {
    /// Read every partition under `root`.
    pub(super) fn read(root: &Root) -> Shield {
        let found = Partitions::discover(root);
        let h = found.hierarchy().cloned();
        let mut p = Shield {
            rt: CpuSet::new(),
            nrt: CpuSet::new(),
            rt_dirs: vec![],
            nrt_dirs: vec![],
            rt_tids: BTreeSet::new(),
            refused_irqs: BTreeMap::new(),
            foreign: found.foreign_partition(),
            hierarchy: h.clone(),
        };
        for f in found.state_files() {
            let Ok(Some(s)) = State::load(root, &format!("{STATE_DIR}/{f}")) else {
                continue;
            };
            p.rt =
                p.rt.union(&CpuSet::parse_list(&s.rt_cpus).unwrap_or_default());
            p.nrt = p
                .nrt
                .union(&CpuSet::parse_list(&s.nrt_cpus).unwrap_or_default());
            if let Some(h) = &h {
                let t = root.read_opt(h.tasks_file(&s.rt_dir)).unwrap_or_default();
                p.rt_tids.extend(parse_task_ids(&t));
            }
            for (path, why) in &s.refused {
                if let Some(n) = kpath::irq_of_path(path) {
                    p.refused_irqs.insert(n.to_string(), why.clone());
                }
            }
            p.rt_dirs.push(s.rt_dir);
            p.nrt_dirs.push(s.nrt_dir);
        }
        // Another tool's shield is a partition too: its shielded set is the rt
        // one (cset's `user`, partrt's `rt`).
        if let Some(f) = p.foreign.clone() {
            p.rt = p.rt.union(&f.rt_cpus);
            p.nrt = p.nrt.union(&f.nrt_cpus);
            if let Some(h) = &h {
                let t = root.read_opt(h.tasks_file(&f.rt_dir)).unwrap_or_default();
                p.rt_tids.extend(parse_task_ids(&t));
            }
            p.rt_dirs.push(format!("{}: {}", f.tool, f.rt_dir));
            p.nrt_dirs.push(format!("{}: {}", f.tool, f.nrt_dir));
        }
        p
    }

    /// `rt (DIRS)`, `nrt (DIRS)` or `none`: where `cpu` is.
    pub(super) fn place(&self, cpu: u32) -> String {
        if self.rt.contains(cpu) {
            format!("rt ({})", self.rt_dirs.join(", "))
        } else if self.nrt.contains(cpu) {
            format!("nrt ({})", self.nrt_dirs.join(", "))
        } else {
            "none".into()
        }
    }
}
