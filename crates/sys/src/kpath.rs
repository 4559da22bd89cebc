//! The kernel's file names, in one place. Callers that write a knob (through
//! `partition::Kernel`, which logs and records the path in the state file)
//! need the path itself; everything that only reads uses a typed reader of
//! this crate instead.

/// `/sys/devices/system/cpu/online`: CPUs up now (list syntax).
pub const CPU_ONLINE: &str = "/sys/devices/system/cpu/online";
/// CPUs that may ever come online.
pub const CPU_POSSIBLE: &str = "/sys/devices/system/cpu/possible";
/// CPUs isolated at boot (`isolcpus=`).
pub const CPU_ISOLATED: &str = "/sys/devices/system/cpu/isolated";
/// CPUs without the tick (`nohz_full=`).
pub const CPU_NOHZ_FULL: &str = "/sys/devices/system/cpu/nohz_full";

/// `/sys/devices/system/cpu/cpuN/online`: writing 1 brings CPU N up.
pub fn cpu_online(cpu: u32) -> String {
    format!("/sys/devices/system/cpu/cpu{cpu}/online")
}

/// `/sys/devices/system/cpu/cpuN/cpufreq/scaling_governor` (N may be a shell variable).
pub fn cpufreq_governor(cpu: &str) -> String {
    format!("/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor")
}

/// `/sys/devices/system/cpu/cpuN/cpuidle/stateK/disable`.
pub fn cpuidle_disable(cpu: &str, state: &str) -> String {
    format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle/state{state}/disable")
}

/// Held open with a 0 written: no idle state deeper than 0 µs exit latency.
pub const CPU_DMA_LATENCY: &str = "/dev/cpu_dma_latency";

/// The kernel command line (boot parameters such as `isolcpus=`).
pub const CMDLINE: &str = "/proc/cmdline";
/// The running kernel's release (`6.8.0-rt8`), which names `/boot/config-RELEASE`.
pub const OSRELEASE: &str = "/proc/sys/kernel/osrelease";
/// The mounts seen by the calling process (cgroup and tracefs mounts are found here).
pub const MOUNTINFO: &str = "/proc/self/mountinfo";
/// This process's open descriptors (`/proc/self/fd/N` names the file of
/// descriptor N: the store opens its checked directory through it).
pub const SELF_FD: &str = "/proc/self/fd";
/// The cgroups of the calling process (`ID:CONTROLLERS:PATH` lines).
pub const SELF_CGROUP: &str = "/proc/self/cgroup";
/// One directory per process (and hidden ones per thread id).
pub const PROC: &str = "/proc";
/// Memory totals and usage, kB (`MemTotal`, `MemAvailable`…), one of the
/// files the `syscall` load reads as `top` does.
pub const MEMINFO: &str = "/proc/meminfo";
/// Per-CPU times and counters (parsed by [`crate::procstat`]).
pub const STAT: &str = "/proc/stat";

/// 1: timers may migrate to busy CPUs; a partition writes 0 to keep them
/// where they were armed.
pub const TIMER_MIGRATION: &str = "/proc/sys/kernel/timer_migration";
/// Seconds between vmstat updates on every CPU; a partition raises it to
/// quiet the shielded CPUs.
pub const STAT_INTERVAL: &str = "/proc/sys/vm/stat_interval";
/// The CPUs the soft-lockup watchdog threads run on (list syntax).
pub const WATCHDOG_CPUMASK: &str = "/proc/sys/kernel/watchdog_cpumask";
/// RT throttling budget per period, µs (-1: off), the `rt-throttle` knob.
pub const SCHED_RT_RUNTIME_US: &str = "/proc/sys/kernel/sched_rt_runtime_us";
/// RT throttling period, µs.
pub const SCHED_RT_PERIOD_US: &str = "/proc/sys/kernel/sched_rt_period_us";
/// The soft and hard lockup detectors (partrt writes 0).
pub const WATCHDOG: &str = "/proc/sys/kernel/watchdog";
/// The NMI (hard lockup) watchdog (tuned's cpu-partitioning writes 0).
pub const NMI_WATCHDOG: &str = "/proc/sys/kernel/nmi_watchdog";
/// Seconds before a task blocked in D state is reported (0: never);
/// tuned's profile sets 600.
pub const HUNG_TASK_TIMEOUT_SECS: &str = "/proc/sys/kernel/hung_task_timeout_secs";
/// 1: the kernel migrates pages and tasks between NUMA nodes, a source of
/// jitter tuned's profile turns off.
pub const NUMA_BALANCING: &str = "/proc/sys/kernel/numa_balancing";
/// x86 machine-check devices (`machinecheck0`, ...): `check_interval`
/// (seconds between polls; 0 on `machinecheck0` stops them everywhere) and
/// `ignore_ce` (1: corrected errors are not polled).
pub const MACHINECHECK_DIR: &str = "/sys/devices/system/machinecheck";

/// `/sys/devices/system/machinecheck/<dev>/<name>`.
pub fn machinecheck_file(dev: &str, name: &str) -> String {
    format!("{MACHINECHECK_DIR}/{dev}/{name}")
}

/// One directory per IRQ number, plus `default_smp_affinity`.
pub const IRQ_DIR: &str = "/proc/irq";
/// Affinity (mask syntax) given to IRQs registered from now on.
pub const IRQ_DEFAULT_AFFINITY: &str = "/proc/irq/default_smp_affinity";

/// `/proc/irq/N`.
pub fn irq_dir(irq: &str) -> String {
    format!("{IRQ_DIR}/{irq}")
}

/// `/proc/irq/N/smp_affinity_list`: where IRQ `N` may fire (list syntax).
pub fn irq_affinity_list(irq: &str) -> String {
    format!("{IRQ_DIR}/{irq}/smp_affinity_list")
}

/// `/proc/irq/N/effective_affinity_list`: where it does fire.
pub fn irq_effective_affinity_list(irq: &str) -> String {
    format!("{IRQ_DIR}/{irq}/effective_affinity_list")
}

/// The IRQ number of a path below `/proc/irq/N/...`, if it is one.
pub fn irq_of_path(path: &str) -> Option<&str> {
    let rest = path.strip_prefix(IRQ_DIR)?.strip_prefix('/')?;
    let n = rest.split('/').next()?;
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some(n)
}

/// Unbound workqueues: a global `cpumask` and one directory per workqueue.
pub const WORKQUEUE_DIR: &str = "/sys/devices/virtual/workqueue";
/// The global unbound-workqueue mask (mask syntax).
pub const WORKQUEUE_CPUMASK: &str = "/sys/devices/virtual/workqueue/cpumask";

/// `cpumask` of workqueue `name` (mask syntax).
pub fn workqueue_cpumask(name: &str) -> String {
    format!("{WORKQUEUE_DIR}/{name}/cpumask")
}

/// `numa` of workqueue `name` (`writeback`: 0 lets its workers run on any
/// NUMA node's CPUs of its mask).
pub fn workqueue_numa(name: &str) -> String {
    format!("{WORKQUEUE_DIR}/{name}/numa")
}

/// `/proc/PID/task`: one directory per thread of process PID.
pub fn task_dir(pid: u32) -> String {
    format!("{PROC}/{pid}/task")
}

/// `/proc/PID` (also resolves a TID not listed in `/proc`).
pub fn proc_dir(pid: u32) -> String {
    format!("{PROC}/{pid}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn irq_paths_round_trip() {
        assert_eq!(irq_affinity_list("30"), "/proc/irq/30/smp_affinity_list");
        assert_eq!(irq_of_path(&irq_affinity_list("30")), Some("30"));
        assert_eq!(irq_of_path("/proc/irq/default_smp_affinity"), None);
        assert_eq!(irq_of_path("/proc/irqx/3/a"), None);
        assert_eq!(irq_of_path(WORKQUEUE_CPUMASK), None);
        assert_eq!(
            workqueue_cpumask("writeback"),
            "/sys/devices/virtual/workqueue/writeback/cpumask"
        );
    }
}
