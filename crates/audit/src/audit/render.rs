//! The text report of an audit.

use super::{Audit, CpuAudit, IrqOnCpu};
use rtshield_vocab::CpuSet;

/// The text report.
pub fn render(a: &Audit) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "Audit of {}{}",
        a.selection,
        if a.watch_s > 0.0 {
            format!(
                ", watched for {}",
                rtshield_vocab::format_duration_ns((a.watch_s * 1e9) as u64)
            )
        } else {
            ", counts since boot".into()
        }
    );
    if !a.findings.is_empty() {
        let _ = writeln!(o, "\nFindings:");
        for f in &a.findings {
            let _ = writeln!(o, "  * {f}");
        }
    }
    for c in &a.cpus {
        render_cpu(&mut o, c, a.watch_s > 0.0);
    }
    let _ = writeln!(o, "\nRT throttling: {}", a.rt_throttling);
    let _ = writeln!(o, "SCHED_FIFO: {}", a.sched_fifo);
    if a.fixes.is_empty() {
        let _ = writeln!(o, "\nNothing to fix.");
    } else {
        let _ = writeln!(o, "\nFixes:");
        for f in &a.fixes {
            let _ = writeln!(o, "  {}. {}\n       {}", f.n, f.title, f.command);
        }
    }
    o
}

/// One CPU's section of the report (`watched`: the audit had a window).
fn render_cpu(o: &mut String, c: &CpuAudit, watched: bool) {
    use std::fmt::Write;
    let _ = writeln!(
        o,
        "\nCPU {}: {} (score {})",
        c.cpu,
        c.verdict.to_uppercase(),
        c.score
    );
    let _ = writeln!(
        o,
        "  partition {}; isolated {}; nohz_full {}; rcu_nocbs {}",
        c.partition,
        yes(c.isolated),
        yes(c.nohz_full),
        yes(c.rcu_nocbs)
    );
    let _ = writeln!(
        o,
        "  threads allowed here: {} user, {} movable kernel, {} bound kernel{}",
        c.allowed.user,
        c.allowed.movable_kernel,
        c.allowed.bound_kernel,
        if c.rt_threads > 0 {
            format!("; {} in rt", c.rt_threads)
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        o,
        "  threads that ran here: {} user, {} movable kernel, {} bound kernel",
        c.running.user, c.running.movable_kernel, c.running.bound_kernel
    );
    let cpu_s = c.cpu.to_string();
    let here = |i: &IrqOnCpu| {
        i.during_watch.unwrap_or(i.total) > 0
            || i.effective.as_deref().is_some_and(|e| {
                CpuSet::parse_list(e).is_ok_and(|s| s.contains(c.cpu)) || e == cpu_s
            })
    };
    let shown: Vec<&IrqOnCpu> = c.irqs.iter().filter(|i| here(i)).collect();
    if !shown.is_empty() {
        let _ = writeln!(
            o,
            "  device IRQs routed or fired here:\n    {:>5} {:<22} {:>9} {:>9} {:>12} {:>12}",
            "irq",
            "name",
            "affinity",
            "effective",
            "since boot",
            if watched { "during watch" } else { "" }
        );
        for i in &shown {
            let _ = writeln!(
                o,
                "    {:>5} {:<22} {:>9} {:>9} {:>12} {:>12}",
                i.irq,
                i.name,
                i.affinity,
                i.effective.as_deref().unwrap_or("?"),
                i.total,
                i.during_watch.map(|d| d.to_string()).unwrap_or_default()
            );
        }
    }
    let other: Vec<&str> = c
        .irqs
        .iter()
        .filter(|i| !here(i))
        .map(|i| i.irq.as_str())
        .collect();
    if !other.is_empty() {
        let _ = writeln!(
            o,
            "  device IRQs also allowed here by smp_affinity: {}",
            other.join(" ")
        );
    }
    let ipis: Vec<String> = c
        .ipis
        .iter()
        .filter(|(_, v)| **v > 0)
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    if !ipis.is_empty() {
        let _ = writeln!(o, "  IPIs/timer: {}", ipis.join(", "));
    }
    let soft: Vec<String> = c
        .softirqs
        .iter()
        .filter(|(_, v)| **v > 0)
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    if !soft.is_empty() {
        let _ = writeln!(o, "  softirqs: {}", soft.join(", "));
    }
    let _ = writeln!(
        o,
        "  workqueue cpumask includes it: {}; default_smp_affinity includes it: {}",
        opt(c.workqueue_mask),
        opt(c.default_irq_affinity)
    );
    if !c.workqueues.is_empty() {
        let _ = writeln!(o, "  workqueues allowed here: {}", c.workqueues.join(", "));
    }
    for p in &c.penalties {
        let _ = writeln!(o, "  +{:<3} {}", p.points, p.what);
    }
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn opt(b: Option<bool>) -> &'static str {
    match b {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    }
}
