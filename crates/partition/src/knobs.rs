//! Machine-wide knobs `create` tunes for the rt side: IRQ affinities,
//! workqueue masks, a few sysctls, RT throttling. Each change is planned
//! from the current value (kept for `undo`).

use crate::kernel::Kernel;
use rtshield_isolation::{FileChange, Knob};
use rtshield_sys::kpath;
use rtshield_vocab::{CpuSet, InputError};
use serde::Serialize;

/// Whose values the `sysctl` family writes (docs/manual/partition.md has
/// the comparison table, and the reason for each default value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// rtshield's: `timer_migration 0`, `stat_interval 10`, the watchdog
    /// kept off the rt CPUs (`watchdog_cpumask`), RT throttling kept.
    #[default]
    Default,
    /// partrt's (OpenEneaLinux rt-tools): `stat_interval 1000`, watchdog
    /// off, RT throttling off, writeback `numa 0`, machine-check polling off
    /// (`check_interval 0`), and a hotplug cycle of the rt CPUs.
    Partrt,
    /// tuned's `cpu-partitioning` (with `network-latency`):
    /// `hung_task_timeout_secs 600`, `nmi_watchdog 0`, `stat_interval 10`,
    /// `timer_migration 0`, `numa_balancing 0`, machine-check `ignore_ce 1`.
    Tuned,
}

pub(crate) const PROFILE_NAMES: &[&str] = &["default", "partrt", "tuned"];

impl Profile {
    /// A profile by its `--profile` name (`default` or `rtshield`, `partrt`,
    /// `tuned` or `cpu-partitioning`); the error names the option and the choices.
    pub fn parse(s: &str) -> Result<Profile, InputError> {
        match s {
            "default" | "rtshield" => Ok(Profile::Default),
            "partrt" => Ok(Profile::Partrt),
            "tuned" | "cpu-partitioning" => Ok(Profile::Tuned),
            o => Err(InputError::new(format!(
                "--profile: unknown profile '{o}' (expected one of: {})",
                PROFILE_NAMES.join(", ")
            ))),
        }
    }
}

/// Single files of the `partrt` profile that `create` leaves as they are:
/// partrt's per-knob `create` letters (`-a -b -c -m -r -u -w`; `-t` is
/// [`Knobs::rt_throttle_off`], `-d` names a file mainline kernels lack).
/// rtshield's own `--skip` works on whole families instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
pub struct Keep {
    /// `-a`: the writeback workqueue's `numa` stays.
    pub writeback_numa: bool,
    /// `-b`: the writeback (block) workqueue's `cpumask` stays.
    pub writeback_cpumask: bool,
    /// `-c`: machine-check polling (`check_interval`) stays.
    pub machine_check: bool,
    /// `-m`: `vm.stat_interval` stays.
    pub stat_interval: bool,
    /// `-r`: no hotplug cycle of the rt CPUs.
    pub hotplug: bool,
    /// `-u`: the other unbound workqueues' masks (the global one included) stay.
    pub unbound_workqueues: bool,
    /// `-w`: `kernel.watchdog` stays.
    pub watchdog: bool,
}

/// Which knob families `create` touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Knobs {
    /// Move every movable IRQ (and the default affinity) to the nrt CPUs.
    pub irq: bool,
    /// Restrict the unbound workqueues to the nrt CPUs.
    pub workqueue: bool,
    /// Write the profile's sysctls (timer migration, vmstat interval, watchdogs).
    pub sysctl: bool,
    /// `sched_rt_runtime_us = -1` (only when asked: `--rt-throttle off`, or
    /// `--profile partrt`).
    pub rt_throttle_off: bool,
    /// The values of the `sysctl` family.
    pub profile: Profile,
    /// Move PID 1 (init) into nrt too, as partrt does; by default it stays
    /// in the root cgroup, as in the partitioning article.
    pub move_init: bool,
    /// Single files left alone (partrt's `create` letters).
    pub keep: Keep,
}

pub(crate) const KNOB_NAMES: &[&str] = &["irq", "workqueue", "sysctl", "rt-throttle"];

impl Knobs {
    /// The full mode tunes everything; with `--parent` the machine-wide
    /// knobs stay alone unless listed in `--with`. `--skip` removes.
    pub fn resolve(
        with_parent: bool,
        skip: &[String],
        with: &[String],
        rt_throttle_off: bool,
    ) -> Result<Knobs, InputError> {
        for n in skip.iter().chain(with) {
            if !KNOB_NAMES.contains(&n.as_str()) {
                return Err(InputError::new(format!(
                    "unknown knob '{n}' (expected one of: {})",
                    KNOB_NAMES.join(", ")
                )));
            }
        }
        let on = |name: &str| {
            let listed = with.iter().any(|w| w == name);
            let skipped = skip.iter().any(|s| s == name);
            (!with_parent || listed) && !skipped
        };
        Ok(Knobs {
            irq: on("irq"),
            workqueue: on("workqueue"),
            sysctl: on("sysctl"),
            rt_throttle_off: rt_throttle_off && !skip.iter().any(|s| s == "rt-throttle"),
            profile: Profile::Default,
            move_init: false,
            keep: Keep::default(),
        })
    }

    /// Apply `--profile`: partrt turns RT throttling off (unless skipped).
    pub fn with_profile(mut self, p: Profile, skip: &[String]) -> Knobs {
        self.profile = p;
        if p == Profile::Partrt && !skip.iter().any(|s| s == "rt-throttle") {
            self.rt_throttle_off = true;
        }
        self
    }
}

/// `old ∖ rt`, or all of `nrt` when nothing would remain.
fn away_from(cur: &CpuSet, rt: &CpuSet, nrt: &CpuSet) -> CpuSet {
    let rest = cur.difference(rt);
    if rest.is_empty() {
        nrt.clone()
    } else {
        rest
    }
}

/// Width of kernel masks: the highest possible CPU + 1.
pub(crate) fn ncpus(k: &Kernel) -> u32 {
    rtshield_sys::possible_cpus(&k.root)
        .ok()
        .and_then(|c| c.last())
        .map_or(1, |c| c + 1)
}

/// `kernel.watchdog_cpumask` without the rt CPUs.
fn watchdog_mask(
    k: &Kernel,
    rt: &CpuSet,
    nrt: &CpuSet,
    change: &mut impl FnMut(Knob, String, String, String),
) {
    let p = kpath::WATCHDOG_CPUMASK.to_string();
    if let Some(old) = k.read_opt(&p) {
        if let Ok(cur) = CpuSet::parse_list(old.trim()) {
            if !cur.intersection(rt).is_empty() {
                let new = format!("{}\n", away_from(&cur, rt, nrt).to_list());
                change(Knob::Sysctl, p, old, new);
            }
        }
    }
}

pub(crate) fn plan(k: &Kernel, knobs: &Knobs, rt: &CpuSet, nrt: &CpuSet) -> Vec<FileChange> {
    let mut out = vec![];
    let n = ncpus(k);
    let mut change = |knob, path: String, old: String, new: String| {
        if old.trim() != new.trim() {
            out.push(FileChange {
                knob,
                path,
                old: Some(old),
                new,
                restore: None,
            });
        }
    };
    if knobs.irq {
        for irq in rtshield_sys::irq_numbers(&k.root) {
            let p = kpath::irq_affinity_list(&irq);
            let Some(old) = k.read_opt(&p) else { continue };
            let Ok(cur) = CpuSet::parse_list(old.trim()) else {
                continue;
            };
            if cur.intersection(rt).is_empty() {
                continue;
            }
            change(
                Knob::Irq,
                p,
                old,
                format!("{}\n", away_from(&cur, rt, nrt).to_list()),
            );
        }
        let p = kpath::IRQ_DEFAULT_AFFINITY.to_string();
        if let Some(old) = k.read_opt(&p) {
            if let Ok(cur) = CpuSet::parse_mask(old.trim()) {
                if !cur.intersection(rt).is_empty() {
                    let new = away_from(&cur, rt, nrt).to_mask(n);
                    change(Knob::Irq, p, old, format!("{new}\n"));
                }
            }
        }
    }
    if knobs.workqueue {
        let writeback = kpath::workqueue_cpumask("writeback");
        for p in rtshield_sys::workqueue_cpumask_files(&k.root) {
            let kept = if p == writeback {
                knobs.keep.writeback_cpumask
            } else {
                knobs.keep.unbound_workqueues
            };
            if kept {
                continue;
            }
            let Some(old) = k.read_opt(&p) else { continue };
            let Ok(cur) = CpuSet::parse_mask(old.trim()) else {
                continue;
            };
            if cur.intersection(rt).is_empty() {
                continue;
            }
            let new = away_from(&cur, rt, nrt).to_mask(n);
            change(Knob::Workqueue, p, old, format!("{new}\n"));
        }
    }
    if knobs.sysctl {
        let mut set = |path: &str, new: &str| {
            if let Some(old) = k.read_opt(path) {
                change(Knob::Sysctl, path.to_string(), old, format!("{new}\n"));
            }
        };
        match knobs.profile {
            Profile::Default => {
                // Timers armed on rt CPUs stay there instead of migrating
                // onto them from busy ones.
                set(kpath::TIMER_MIGRATION, "0");
                // vmstat refreshes every 10 s instead of every second (a
                // per-CPU deferred work that lands on rt CPUs); 10 keeps
                // /proc/meminfo fresh enough for monitoring, unlike 1000.
                if k.read_opt(kpath::STAT_INTERVAL)
                    .is_some_and(|v| v.trim().parse::<u64>().is_ok_and(|v| v < 10))
                {
                    set(kpath::STAT_INTERVAL, "10");
                }
                // The lockup watchdog stays on, off the rt CPUs only.
                watchdog_mask(k, rt, nrt, &mut change);
            }
            Profile::Partrt => {
                let keep = knobs.keep;
                if !keep.stat_interval {
                    set(kpath::STAT_INTERVAL, "1000");
                }
                if !keep.watchdog {
                    set(kpath::WATCHDOG, "0");
                }
                if !keep.writeback_numa {
                    set(&kpath::workqueue_numa("writeback"), "0");
                }
                if !keep.machine_check {
                    set(
                        &kpath::machinecheck_file("machinecheck0", "check_interval"),
                        "0",
                    );
                }
            }
            Profile::Tuned => {
                set(kpath::HUNG_TASK_TIMEOUT_SECS, "600");
                set(kpath::NMI_WATCHDOG, "0");
                set(kpath::STAT_INTERVAL, "10");
                set(kpath::TIMER_MIGRATION, "0");
                set(kpath::NUMA_BALANCING, "0");
                for dev in k
                    .root
                    .read_dir_names(kpath::MACHINECHECK_DIR)
                    .unwrap_or_default()
                {
                    set(&kpath::machinecheck_file(&dev, "ignore_ce"), "1");
                }
            }
        }
    }
    if knobs.rt_throttle_off {
        let p = kpath::SCHED_RT_RUNTIME_US.to_string();
        if let Some(old) = k.read_opt(&p) {
            change(Knob::RtThrottle, p, old, "-1\n".into());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn parent_mode_leaves_machine_knobs_unless_asked() {
        let k = Knobs::resolve(true, &[], &[], false).unwrap();
        assert!(!k.irq && !k.workqueue && !k.sysctl && !k.rt_throttle_off);
        let k = Knobs::resolve(true, &[], &s(&["irq"]), false).unwrap();
        assert!(k.irq && !k.workqueue && !k.sysctl);
        let k = Knobs::resolve(false, &s(&["sysctl"]), &[], true).unwrap();
        assert!(k.irq && k.workqueue && !k.sysctl && k.rt_throttle_off);
        let e = Knobs::resolve(false, &s(&["irqs"]), &[], false).unwrap_err();
        assert!(e.to_string().contains("unknown knob 'irqs'"), "{e}");
    }

    #[test]
    fn away_from_rt_keeps_what_it_can() {
        let p = |x: &str| CpuSet::parse_list(x).unwrap();
        assert_eq!(away_from(&p("0-3"), &p("3"), &p("0-2")), p("0-2"));
        assert_eq!(away_from(&p("3"), &p("3"), &p("0-2")), p("0-2"));
        assert_eq!(away_from(&p("1,3"), &p("3"), &p("0-2")), p("1"));
    }
}
