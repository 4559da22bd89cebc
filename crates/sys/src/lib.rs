//! rtshield-sys: the kernel's files and calls, and only them.
//!
//! Its one job: know kernel file names and formats and the system calls
//! that go with them. Every `/proc` and `/sys` access goes through
//! [`Root`], so the whole tool can be pointed at a fake tree in tests.
//! Typed readers: tasks ([`TaskInfo`], [`task_stat`]), interrupts
//! ([`IrqTable`]), `/proc/stat` ([`StatSnapshot`]), the load average
//! ([`LoadAvg`]), CPU sets ([`online_cpus`]), cgroups ([`Hierarchy`]), power
//! ([`ThermalZone`]), the [`SysInfo`] block embedded in every result file;
//! the calls: scheduling ([`set_scheduler`], [`set_affinity`]) and tracefs
//! instances ([`TraceInstance`]). Knob paths are named in [`kpath`], the
//! one public module: a table of kernel file names, not an implementation.
//! See docs/architecture-sys.md.
//!
//! What it may not do: decide anything. It reads, parses and writes what
//! it is asked; partitions and their state are `rtshield-isolation`, the
//! safe-file layer (files a user names) `rtshield-safefs`, the vocabulary
//! (CPU sets, policies, units) `rtshield-vocab`, test helpers
//! `rtshield-testkit`.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod beneath;
mod cgroup;
mod confine;
mod cpus;
mod interrupts;
pub mod kpath;
mod loadavg;
mod owner;
mod power;
mod procstat;
mod root;
mod sched;
mod shield;
mod sysinfo;
mod task;
mod tracefs;
mod workqueue;

pub use cgroup::{
    mounts as cgroup_mounts, Hierarchy, HierarchyError, Kind as CgroupKind, Mount as CgroupMount,
};
pub use confine::{
    is_strictly_under as path_is_strictly_under, is_under as path_is_under,
    normalise as normalise_kernel_path, resolves_inside as resolves_inside_root, KNOB_ROOTS,
};
pub use cpus::{
    allowed as allowed_cpus, isolated as isolated_cpus, nohz_full as nohz_full_cpus,
    online as online_cpus, possible as possible_cpus, usable as usable_cpus,
};
pub use interrupts::{
    default_affinity as irq_default_affinity, interrupts as read_interrupts, irq_actions,
    irq_affinity, irq_effective_affinity, irq_numbers, softirqs as read_softirqs, IrqClass,
    Line as IrqLine, Table as IrqTable,
};
pub use loadavg::LoadAvg;
pub use power::{
    max_temp_c, thermal as thermal_zones, uptime_s, CpuFreq, CpuIdle, IdleState, ThermalZone,
};
pub use procstat::{
    steal_ns_between, user_hz, Breakdown as StatBreakdown, StatSnapshot, Ticks as CpuTicks,
    TimesSnapshot,
};
pub use root::{os_code, OsErrorAt, Root};
pub use sched::{current_cpu, get_affinity, gettid, is_root, set_affinity, set_scheduler};
// The drift watch's per-tick readers.
pub use shield::{
    governor as cpufreq_governor_of, idle_disable as cpuidle_disable_flags,
    members as cgroup_members, partition_state as cpuset_partition_state, rt_throttling,
    tgid as task_tgid, timer_migration,
};
pub use sysinfo::{
    caller_rt_runtime_us, cmd_cpus, fifo_refusal_reason, isolation_params, mem_total_kb,
    KernelConfig, SysInfo,
};
pub use task::{
    comm as task_comm, exists as task_exists, own_tids, parse_ids as parse_task_ids, pids,
    stat as task_stat, status as task_status, threads as all_threads, threads_of, tids, ProcStat,
    ProcStatus, TaskInfo, ThreadSched,
};
pub use tracefs::{
    find as find_tracefs, instance_dir as trace_instance_dir, instance_pid as trace_instance_pid,
    leftovers as tracing_leftovers, private_dir as tracefs_private_dir,
    private_mount as tracefs_private_mount, remove_leftovers as remove_tracing_leftovers,
    unavailable as tracing_unavailable, Config as TraceConfig, Drops as TraceDrops,
    Instance as TraceInstance, Leftover as TracingLeftover, LeftoverKind as TracingLeftoverKind,
    PipeReader as TracePipe, TopState as TracingTopState, BUFFER_KB_RANGE as TRACE_BUFFER_KB_RANGE,
    INSTANCE_PREFIX as TRACE_INSTANCE_PREFIX,
};
pub use workqueue::{
    cpumask_files as workqueue_cpumask_files, global_mask as workqueue_global_mask,
    masks as workqueue_masks,
};
