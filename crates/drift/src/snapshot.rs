//! What shields the measured CPUs, read once: one value per (kind,
//! object), compared tick to tick by [`crate::Watch`]. Every read goes
//! through `rtshield_sys`; a value that cannot be read is absent (and its
//! disappearance is a change only where that means something).

use rtshield_results::drift_kind as kind;
use rtshield_sys as sys;
use rtshield_sys::Hierarchy;
use rtshield_sys::Root;
use rtshield_vocab::CpuSet;
use std::collections::BTreeMap;

/// The key of a value: its kind and the object it belongs to.
pub(crate) type Key = (&'static str, String);

/// The values read at one tick.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Snapshot {
    pub(crate) values: BTreeMap<Key, String>,
}

/// Where the partition watched is, found once at the start.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sets {
    pub(crate) hierarchy: Option<Hierarchy>,
    /// The shielded set's directory.
    pub(crate) rt: Option<String>,
    /// The housekeeping set's directory.
    pub(crate) nrt: Option<String>,
}

impl Snapshot {
    fn put(&mut self, k: &'static str, object: impl Into<String>, v: Option<String>) {
        if let Some(v) = v {
            self.values.insert((k, object.into()), v);
        }
    }

    /// Read the machine-wide and per-CPU values (everything but the tasks,
    /// which [`crate::Watch`] tracks itself): IRQs (effective affinity,
    /// else `smp_affinity_list`), the default IRQ affinity, online CPUs,
    /// the partition's cpusets, workqueue masks, two sysctls, each measured
    /// CPU's governor and idle-state `disable` flags.
    pub(crate) fn read(root: &Root, measured: &CpuSet, sets: &Sets) -> Snapshot {
        let mut s = Snapshot::default();
        s.put(
            kind::CPU_ONLINE,
            "online",
            sys::online_cpus(root).ok().map(|c| c.to_list()),
        );
        s.put(
            kind::IRQ_DEFAULT_AFFINITY,
            "default_smp_affinity",
            sys::irq_default_affinity(root).map(|c| c.to_list()),
        );
        for n in sys::irq_numbers(root) {
            let v = sys::irq_effective_affinity(root, &n)
                .filter(|v| !v.is_empty())
                .or_else(|| sys::irq_affinity(root, &n));
            s.put(kind::IRQ_AFFINITY, format!("irq {n}"), v);
        }
        if let Some(h) = &sets.hierarchy {
            for dir in sets.rt.iter().chain(sets.nrt.iter()) {
                s.put(
                    kind::CPUSET_CPUS,
                    dir.clone(),
                    h.cpus(root, dir).map(|c| c.to_list()),
                );
            }
            if let Some(rt) = &sets.rt {
                s.put(
                    kind::CPUSET_PARTITION,
                    rt.clone(),
                    sys::cpuset_partition_state(root, h, rt),
                );
            }
        }
        s.put(
            kind::WORKQUEUE_CPUMASK,
            "global",
            sys::workqueue_global_mask(root).map(|c| c.to_list()),
        );
        for (name, mask) in sys::workqueue_masks(root) {
            s.put(kind::WORKQUEUE_CPUMASK, name, Some(mask.to_list()));
        }
        s.put(
            kind::TIMER_MIGRATION,
            "kernel.timer_migration",
            sys::timer_migration(root),
        );
        s.put(
            kind::RT_THROTTLING,
            "kernel.sched_rt_runtime_us/period_us",
            sys::rt_throttling(root),
        );
        for cpu in measured.iter() {
            s.put(
                kind::CPUFREQ_GOVERNOR,
                format!("cpu{cpu}"),
                sys::cpufreq_governor_of(root, cpu),
            );
            for (state, v) in sys::cpuidle_disable_flags(root, cpu) {
                s.put(kind::CPUIDLE_STATE, format!("cpu{cpu} {state}"), Some(v));
            }
        }
        s
    }
}

/// The measured CPUs in a CPU list value; `None` when it is not one.
pub(crate) fn measured_in(v: &str, measured: &CpuSet) -> Option<CpuSet> {
    CpuSet::parse_list(v.trim())
        .ok()
        .map(|c| c.intersection(measured))
}
