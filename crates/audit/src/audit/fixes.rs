//! The fixes an audit proposes: commands that would remove what it found,
//! numbered in the order they are worth doing.

use super::shield::Shield;
use super::{CpuAudit, Fix};
use rtshield_isolation::{boot_advice, manager_warnings};
use rtshield_sys::{kpath, Root, SysInfo};
use rtshield_vocab::CpuSet;
use std::collections::BTreeSet;

/// The numbered fixes for the audited CPUs `sel` (`cpus`) of a machine
/// whose CPUs `online` are up; the rest stays for housekeeping.
pub(super) fn proposed(
    root: &Root,
    online: &CpuSet,
    sel: &CpuSet,
    cpus: &[CpuAudit],
    parts: &Shield,
    si: &SysInfo,
) -> Vec<Fix> {
    let ncpus = online.last().map_or(1, |c| c + 1);
    let nrt = online.difference(sel);
    if !(nrt.is_empty() && online.len() > 1) {
        return number(fixes(root, sel, &nrt, ncpus, cpus, parts, si));
    }
    // Every CPU audited (nothing shielded yet): advise on the least
    // disturbed one, preferring high numbers. CPU 0 is never offered
    // while another CPU exists: every source document keeps it for
    // housekeeping (legacy and boot-time IRQs, timers and kernel work
    // started at boot land there), however quiet it looks now.
    let best = cpus
        .iter()
        .filter(|c| c.cpu != 0)
        .min_by_key(|c| (c.score, std::cmp::Reverse(c.cpu)))
        .or_else(|| cpus.first())
        .expect("at least one CPU");
    let quieter0 = cpus
        .iter()
        .find(|c| c.cpu == 0 && c.score < best.score && best.cpu != 0)
        .map(|c| {
            format!(
                " (CPU 0 scores less, {}, but is kept for housekeeping: boot-time and legacy IRQs and kernel work land there)",
                c.score
            )
        })
        .unwrap_or_default();
    let one = CpuSet::single(best.cpu);
    let mut f = vec![(
        format!(
            "no CPU is kept for real-time work; the least disturbed CPU other than CPU 0 is CPU {} (score {}): shield it{quieter0}",
            best.cpu, best.score
        ),
        format!("rtshield partition create {}", best.cpu),
    )];
    f.extend(fixes(
        root,
        &one,
        &online.difference(&one),
        ncpus,
        std::slice::from_ref(best),
        parts,
        si,
    ));
    f.retain(|(t, _)| !t.starts_with("shield CPU"));
    number(f)
}

/// What to do about `cpus` (the audited CPUs `sel`), keeping `nrt` for
/// housekeeping; `(title, command)` pairs, in order.
#[allow(clippy::too_many_arguments)]
fn fixes(
    root: &Root,
    sel: &CpuSet,
    nrt: &CpuSet,
    ncpus: u32,
    cpus: &[CpuAudit],
    parts: &Shield,
    si: &SysInfo,
) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = vec![];
    let s = sel.to_list();
    if nrt.is_empty() {
        return v;
    }
    let n = nrt.to_list();
    let unshielded = cpus.iter().any(|a| a.partition == "none" && !a.isolated);
    if unshielded {
        v.push((
            format!("shield CPU {s}: rt/nrt cpusets, move tasks, IRQs, workqueues away"),
            format!("rtshield partition create {s}"),
        ));
    }
    v.extend(irq_fixes(cpus, &s, &n));
    if cpus.iter().any(|a| a.default_irq_affinity == Some(true)) {
        v.push((
            format!("make new IRQs start on CPU {n}"),
            format!(
                "echo {} > {}",
                nrt.to_mask(ncpus),
                kpath::IRQ_DEFAULT_AFFINITY
            ),
        ));
    }
    let wqs: BTreeSet<&str> = cpus
        .iter()
        .flat_map(|a| a.workqueues.iter().map(String::as_str))
        .collect();
    if cpus.iter().any(|a| a.workqueue_mask == Some(true)) || !wqs.is_empty() {
        let m = nrt.to_mask(ncpus);
        let mut cmd = format!("echo {m} > {}", kpath::WORKQUEUE_CPUMASK);
        if !wqs.is_empty() {
            cmd.push_str(&format!(
                "; for w in {}; do echo {m} > {}; done",
                wqs.into_iter().collect::<Vec<_>>().join(" "),
                kpath::workqueue_cpumask("$w")
            ));
        }
        v.push((format!("keep unbound workqueues on CPU {n}"), cmd));
    }
    if let Some(h) = &parts.hierarchy {
        for w in manager_warnings(root, h, true) {
            if w.starts_with("irqbalance") {
                v.push((
                    "stop irqbalance, which moves IRQs back".into(),
                    "systemctl stop irqbalance".into(),
                ));
            }
        }
    }
    if !parts.rt.is_empty() && cpus.iter().any(|a| a.allowed.user > 0) {
        v.push((
            "user threads outside rt may still run on the rt CPUs (partition made with --parent?)"
                .into(),
            "rtshield partition move nrt PID…".into(),
        ));
    }
    let (bp, _) = boot_advice(root, sel, nrt);
    let missing: Vec<String> = bp
        .iter()
        .filter(|b| b.available && !b.present)
        .map(|b| b.param.clone())
        .collect();
    if !missing.is_empty() {
        v.push((
            "boot parameters for what cannot be changed at run time (tick, RCU callbacks, managed IRQs, later kthreads)".into(),
            format!("add to the kernel command line: {}", missing.join(" ")),
        ));
    }
    if si.fifo_permitted == Some(false) {
        v.push((
            "SCHED_FIFO is refused to this caller".into(),
            si.fifo_refusal.clone().unwrap_or_default(),
        ));
    }
    v.extend(crate::power::fixes(si, sel));
    v
}

/// Moving the device IRQs that may still run on the audited CPUs `s` to
/// the housekeeping CPUs `n` (both in list syntax), and keeping at boot
/// the ones the kernel refused to move.
fn irq_fixes(cpus: &[CpuAudit], s: &str, n: &str) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = vec![];
    // IRQs whose affinity still allows the CPU (or that fired there), split
    // into those a write can move and those the kernel refused before.
    let mut movable: BTreeSet<u32> = BTreeSet::new();
    let mut refused: BTreeSet<u32> = BTreeSet::new();
    for a in cpus {
        for i in &a.irqs {
            let allows = CpuSet::parse_list(&i.affinity).is_ok_and(|c| c.contains(a.cpu));
            let fired = i.during_watch.unwrap_or(i.total) > 0;
            let Ok(n) = i.irq.parse() else { continue };
            if i.refused.is_some() {
                refused.insert(n);
            } else if allows || fired {
                movable.insert(n);
            }
        }
    }
    let join = |s: &BTreeSet<u32>| {
        s.iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    if !movable.is_empty() {
        v.push((
            format!(
                "route IRQ(s) {} to CPU {n} (an IRQ answering EPERM/EIO is managed by the kernel: see the boot parameters)",
                join(&movable)
            ),
            format!(
                "for i in {}; do echo {n} > {}; done",
                join(&movable),
                kpath::irq_affinity_list("$i")
            ),
        ));
    }
    if !refused.is_empty() {
        v.push((
            format!(
                "IRQ(s) {} refuse run-time affinity changes (managed by the kernel): keep them off CPU {s} at boot",
                join(&refused)
            ),
            format!("add to the kernel command line: isolcpus=managed_irq,{s}"),
        ));
    }
    v
}

/// Number the fixes from 1.
fn number(v: Vec<(String, String)>) -> Vec<Fix> {
    v.into_iter()
        .enumerate()
        .map(|(i, (title, command))| Fix {
            n: i + 1,
            title,
            command,
        })
        .collect()
}
