//! Whole-machine observations: what stands out across the audited CPUs.

use super::{CpuAudit, IrqOnCpu};
use rtshield_sys::IrqTable;
use rtshield_vocab::CpuSet;
use std::collections::BTreeMap;

/// Whole-machine observations: above all the torture article's discovery, every device
/// IRQ served by one CPU.
pub(super) fn findings(
    total: &IrqTable,
    window: &IrqTable,
    windowed: bool,
    online: &CpuSet,
    sel: &CpuSet,
    cpus: &[CpuAudit],
) -> Vec<String> {
    let mut out = vec![];
    let per_cpu = |t: &IrqTable| -> BTreeMap<u32, u64> {
        let mut m = BTreeMap::new();
        for l in t.lines.iter().filter(|l| l.is_device()) {
            for c in &t.cpus {
                let v = t.count(l, *c);
                if v > 0 {
                    *m.entry(*c).or_insert(0) += v;
                }
            }
        }
        m
    };
    let tot = per_cpu(total);
    if online.len() > 1 && tot.len() == 1 {
        let (c, n) = tot.iter().next().unwrap();
        out.push(format!(
            "Every device IRQ since boot ({n} interrupts) was handled on CPU {c}: a real-time task \
             on CPU {c} shares it with every interrupt handler of the machine{}.",
            if sel.contains(*c) {
                format!(" — and CPU {c} is one of the CPUs audited")
            } else {
                String::new()
            }
        ));
    }
    if windowed {
        let w = per_cpu(window);
        if online.len() > 1 && w.len() == 1 && tot.len() != 1 {
            let (c, n) = w.iter().next().unwrap();
            out.push(format!(
                "During the watch every device IRQ ({n} interrupts) was handled on CPU {c}."
            ));
        }
        if w.is_empty() {
            out.push("No device IRQ fired during the watch.".into());
        }
    }
    for a in cpus {
        let mut top: Vec<&IrqOnCpu> = a
            .irqs
            .iter()
            .filter(|i| i.during_watch.unwrap_or(i.total) > 0)
            .collect();
        top.sort_by_key(|i| std::cmp::Reverse(i.during_watch.unwrap_or(i.total)));
        if let Some(i) = top.first() {
            out.push(format!(
                "CPU {}: the main disturbance is irq {} ({}), {} interrupts {} (affinity {}, effective {}).",
                a.cpu,
                i.irq,
                i.name,
                i.during_watch.unwrap_or(i.total),
                if windowed { "during the watch" } else { "since boot" },
                i.affinity,
                i.effective.as_deref().unwrap_or("?")
            ));
            if let Some(why) = &i.refused {
                out.push(format!(
                    "irq {} could not be moved off CPU {} when the partition was created: {why}.",
                    i.irq, a.cpu
                ));
            }
        }
    }
    out
}
