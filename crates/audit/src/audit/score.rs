//! The score of one CPU: the sum of its penalties, capped at 100.

use super::{CpuAudit, IrqOnCpu, Penalty, CLEAN_MAX, IO_SOFTIRQS};

/// The score: the sum of the penalties below, capped at 100. Documented in
/// the README (section `rtshield audit`); keep the two in step.
pub(super) fn score(a: &mut CpuAudit, windowed: bool) {
    let mut p = vec![];
    let when = if windowed {
        "during the watch"
    } else {
        "since boot"
    };
    let fired: Vec<&IrqOnCpu> = a
        .irqs
        .iter()
        .filter(|i| i.during_watch.unwrap_or(i.total) > 0)
        .collect();
    if !fired.is_empty() {
        p.push(Penalty {
            points: (10 * fired.len() as u32).min(40),
            what: format!(
                "{} device IRQ(s) handled here {when}: {}",
                fired.len(),
                fired
                    .iter()
                    .map(|i| format!(
                        "irq {} {} ({})",
                        i.irq,
                        i.name,
                        i.during_watch.unwrap_or(i.total)
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    let allowed_only = a.irqs.len() - fired.len();
    if allowed_only > 0 {
        p.push(Penalty {
            points: (allowed_only as u32).min(5),
            what: format!("{allowed_only} more device IRQ(s) allowed here by their affinity"),
        });
    }
    if a.allowed.user > 0 {
        p.push(Penalty {
            points: (a.allowed.user as u32).div_ceil(5).min(15),
            what: format!("{} user thread(s) outside rt may run here", a.allowed.user),
        });
    }
    if a.allowed.movable_kernel > 0 {
        p.push(Penalty {
            points: (a.allowed.movable_kernel as u32).div_ceil(5).min(5),
            what: format!(
                "{} movable kernel thread(s) may run here",
                a.allowed.movable_kernel
            ),
        });
    }
    let ran = a.running.user + a.running.movable_kernel;
    if ran > 0 {
        p.push(Penalty {
            points: (2 * ran as u32).min(20),
            what: format!(
                "{ran} thread(s) outside rt ran here {}: {}",
                if windowed {
                    "during the watch"
                } else {
                    "right now"
                },
                a.running_names
                    .iter()
                    .take(8)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    if a.workqueue_mask == Some(true) {
        p.push(Penalty {
            points: 5,
            what: "unbound workqueues may run here (workqueue cpumask)".into(),
        });
    }
    if a.default_irq_affinity == Some(true) {
        p.push(Penalty {
            points: 3,
            what: "new IRQs land here (default_smp_affinity)".into(),
        });
    }
    if a.partition.starts_with("none") && !a.isolated {
        p.push(Penalty {
            points: 10,
            what: "not shielded: in no rt partition and not isolated at boot".into(),
        });
    }
    let io: u64 = IO_SOFTIRQS.iter().filter_map(|s| a.softirqs.get(*s)).sum();
    if windowed && io > 0 {
        p.push(Penalty {
            points: 5,
            what: format!("{io} I/O softirq(s) (NET/BLOCK/TASKLET) ran here during the watch"),
        });
    }
    a.score = p.iter().map(|x| x.points).sum::<u32>().min(100);
    a.verdict = if a.score <= CLEAN_MAX {
        "clean"
    } else {
        "disturbed"
    }
    .into();
    a.penalties = p;
}
