//! The audit's advice for one cause of OS noise found by `rtshield noise
//! --trace`: what to change so that it leaves the measured CPU alone, as a
//! command where one exists. The same fixes `rtshield audit` proposes,
//! keyed by what the trace names (an IRQ, the tick, a softirq, an NMI
//! handler, a thread), so the noise report and the audit never disagree.

use rtshield_sys::kpath;
use rtshield_vocab::CpuSet;

/// What kind of cause (the trace's kinds, without depending on the
/// trace crate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoiseCause {
    /// A device IRQ, an x86 vector or an IPI.
    Irq,
    /// The local timer interrupt running the scheduler tick.
    Tick,
    /// A softirq.
    Softirq,
    /// An NMI.
    Nmi,
    /// Another thread.
    Thread,
    /// No kernel event: hardware, firmware or the hypervisor.
    Unexplained,
}

/// The fix for a cause on `cpu`, keeping `housekeeping` for the rest;
/// `name` and `number` as traced (IRQ name and number, softirq action,
/// NMI handler, thread command), `pid` for a thread. None when nothing
/// rtshield knows of can move it (an IPI a kernel path sends, a per-CPU
/// kernel thread with no knob).
pub fn noise_fix(
    kind: NoiseCause,
    name: &str,
    number: Option<u32>,
    pid: Option<u32>,
    cpu: u32,
    housekeeping: &CpuSet,
) -> Option<String> {
    let hk = if housekeeping.is_empty() {
        "HOUSEKEEPING".to_string()
    } else {
        housekeeping.to_list()
    };
    match kind {
        // A device IRQ has a number in /proc/irq; a vector (local_timer,
        // call_function ...) is raised by the kernel itself.
        NoiseCause::Irq => match number.filter(|n| *n < 256 && !is_vector(name)) {
            Some(n) => Some(format!(
                "move IRQ {n} off CPU {cpu}: echo {hk} > {} (or rtshield partition create {cpu})",
                kpath::irq_affinity_list(&n.to_string())
            )),
            None if name.contains("call_function") || name.contains("reschedule") => Some(format!(
                "IPIs follow the work other CPUs queue for CPU {cpu}: shield it (rtshield partition create {cpu}) so no task or unbound work of theirs lands there"
            )),
            None => None,
        },
        NoiseCause::Tick => Some(format!(
            "the scheduler tick: boot with nohz_full={cpu} rcu_nocbs={cpu} so a CPU running one task stops its tick"
        )),
        NoiseCause::Softirq => Some(match name {
            "RCU" => format!("RCU callbacks: boot with rcu_nocbs={cpu} (offloads them to housekeeping)"),
            "TIMER" | "HRTIMER" => format!(
                "timers queued on CPU {cpu}: echo 0 > {} and boot with nohz_full={cpu}",
                kpath::TIMER_MIGRATION
            ),
            _ => format!(
                "softirqs run where their IRQ ran: move the IRQs off CPU {cpu} (rtshield partition create {cpu})"
            ),
        }),
        NoiseCause::Nmi => Some(format!(
            "NMIs ({name}): the NMI watchdog is off with echo 0 > {}; a perf session sampling CPU {cpu} raises them too",
            kpath::NMI_WATCHDOG
        )),
        NoiseCause::Thread => thread_fix(name, pid, cpu, &hk),
        NoiseCause::Unexplained => Some(format!(
            "no kernel event: hardware, firmware (SMI) or the hypervisor; on a VM give vCPU {cpu} a dedicated host core (pinned, host isolcpus), on bare metal check the firmware's power and management settings"
        )),
    }
}

/// Vector and IPI names the kernel raises itself (no /proc/irq entry).
fn is_vector(name: &str) -> bool {
    name.starts_with("local_timer")
        || name.starts_with("call_function")
        || name.starts_with("reschedule")
        || name.starts_with("irq_work")
        || name.starts_with("ipi")
        || name.starts_with("thermal")
}

fn thread_fix(name: &str, pid: Option<u32>, cpu: u32, hk: &str) -> Option<String> {
    let base = name.split('/').next().unwrap_or(name);
    match base {
        "kworker" => Some(format!(
            "kernel work queued on CPU {cpu}: keep unbound workqueues on {hk} (echo MASK > {}); per-CPU work follows what runs there",
            kpath::WORKQUEUE_CPUMASK
        )),
        "ksoftirqd" => Some(format!(
            "softirqs deferred to a thread: move the IRQs that raise them off CPU {cpu}"
        )),
        "rcuc" | "rcuog" | "rcuop" | "rcu_preempt" | "rcu_sched" => {
            Some(format!("RCU work: boot with rcu_nocbs={cpu} nohz_full={cpu}"))
        }
        // Per-CPU kernel threads with no knob.
        "migration" | "cpuhp" | "idle_inject" | "watchdog" => None,
        _ => pid.map(|p| {
            format!("move thread {p} off CPU {cpu}: rtshield partition move nrt {p} (or taskset -pc {hk} {p})")
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hk() -> CpuSet {
        CpuSet::parse("0").unwrap()
    }

    #[test]
    fn each_class_has_its_fix_where_one_exists() {
        let f = |k, name, num, pid| noise_fix(k, name, num, pid, 1, &hk());
        assert_eq!(
            f(NoiseCause::Irq, "eth0-rx", Some(24), None).unwrap(),
            "move IRQ 24 off CPU 1: echo 0 > /proc/irq/24/smp_affinity_list (or rtshield partition create 1)"
        );
        assert!(f(NoiseCause::Irq, "local_timer", Some(236), None).is_none());
        assert!(f(NoiseCause::Tick, "local_timer", Some(236), None)
            .unwrap()
            .contains("nohz_full=1"));
        assert!(f(NoiseCause::Softirq, "RCU", Some(9), None)
            .unwrap()
            .contains("rcu_nocbs=1"));
        assert!(f(NoiseCause::Nmi, "perf_event_nmi_handler", None, None)
            .unwrap()
            .contains("nmi_watchdog"));
        assert!(f(NoiseCause::Thread, "busy", None, Some(77))
            .unwrap()
            .contains("partition move nrt 77"));
        assert!(f(NoiseCause::Thread, "kworker/1:1", None, Some(5))
            .unwrap()
            .contains("workqueue/cpumask"));
        assert!(f(NoiseCause::Thread, "migration/1", None, Some(20)).is_none());
        assert!(f(NoiseCause::Unexplained, "", None, None)
            .unwrap()
            .contains("hypervisor"));
    }
}
