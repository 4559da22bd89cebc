//! One CPU's audit: what the counters taken around the watch window and
//! the machine's settings say about it (threads, IRQs, IPIs, softirqs,
//! workqueues), then its score.

use super::score::score;
use super::shield::Shield;
use super::{Counts, CpuAudit, IrqOnCpu};
use crate::procfs::{family, Family};
use rtshield_sys::Root;
use rtshield_sys::TaskInfo;
use rtshield_sys::{all_threads, read_interrupts, read_softirqs, IrqTable};
use rtshield_sys::{cmd_cpus, isolation_params};
use rtshield_sys::{irq_affinity, irq_default_affinity, irq_effective_affinity, IrqClass};
use rtshield_sys::{kpath, nohz_full_cpus, workqueue_global_mask, workqueue_masks};
use rtshield_vocab::CpuSet;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// The counters read before and after the watch window.
pub(super) struct Window {
    /// `/proc/interrupts` at the end.
    pub irqs: IrqTable,
    /// Its counts during the window (since boot without one).
    pub irqs_during: IrqTable,
    /// `/proc/softirqs` during the window (since boot without one).
    pub softirqs_during: IrqTable,
    /// Every thread at the end, rtshield's own left out.
    threads: Vec<TaskInfo>,
    /// Context switches of each thread at the start.
    switches0: BTreeMap<u32, u64>,
    /// Whether there was a window (else: counts since boot, state now).
    pub windowed: bool,
}

impl Window {
    /// Read the counters, wait `watch`, read them again.
    pub(super) fn watch(root: &Root, watch: Duration) -> Window {
        let i0 = read_interrupts(root);
        let s0 = read_softirqs(root);
        let t0 = all_threads(root);
        if !watch.is_zero() {
            std::thread::sleep(watch);
        }
        let i1 = read_interrupts(root);
        let s1 = read_softirqs(root);
        // rtshield's own threads are the observer, not a disturbance.
        let own: BTreeSet<u32> = if root.is_host() {
            rtshield_sys::own_tids(root).into_iter().collect()
        } else {
            BTreeSet::new()
        };
        let t1: Vec<TaskInfo> = all_threads(root)
            .into_iter()
            .filter(|t| !own.contains(&t.tid))
            .collect();
        let windowed = !watch.is_zero();
        let (iw, sw) = if windowed {
            (i1.delta(&i0), s1.delta(&s0))
        } else {
            (i1.clone(), s1.clone())
        };
        Window {
            irqs: i1,
            irqs_during: iw,
            softirqs_during: sw,
            threads: t1,
            switches0: t0.iter().map(|t| (t.tid, switches(t))).collect(),
            windowed,
        }
    }
}

/// The machine's settings that concern each CPU.
pub(super) struct Machine {
    isolated: CpuSet,
    nohz: CpuSet,
    nocbs: CpuSet,
    wq: Option<CpuSet>,
    per_wq: Vec<(String, CpuSet)>,
    dflt: Option<CpuSet>,
}

impl Machine {
    /// Read them under `root`; `isolated` is the boot-isolated set.
    pub(super) fn read(root: &Root, isolated: CpuSet) -> Machine {
        let cmdline = root.read_opt(kpath::CMDLINE).unwrap_or_default();
        Machine {
            isolated,
            nohz: nohz_full_cpus(root),
            nocbs: param_cpus(&cmdline, "rcu_nocbs"),
            wq: workqueue_global_mask(root),
            per_wq: workqueue_masks(root),
            dflt: irq_default_affinity(root),
        }
    }
}

fn param_cpus(cmdline: &str, key: &str) -> CpuSet {
    isolation_params(cmdline)
        .get(key)
        .and_then(|v| cmd_cpus(v))
        .unwrap_or_default()
}

fn switches(t: &TaskInfo) -> u64 {
    let (v, n) = t.switches();
    v + n
}

/// The audit of `cpu`, scored.
pub(super) fn audit_cpu(
    root: &Root,
    cpu: u32,
    w: &Window,
    m: &Machine,
    parts: &Shield,
) -> CpuAudit {
    let mut a = CpuAudit {
        cpu,
        partition: parts.place(cpu),
        isolated: m.isolated.contains(cpu),
        nohz_full: m.nohz.contains(cpu),
        rcu_nocbs: m.nocbs.contains(cpu),
        allowed: Counts::default(),
        running: Counts::default(),
        running_names: vec![],
        rt_threads: 0,
        irqs: vec![],
        ipis: BTreeMap::new(),
        softirqs: BTreeMap::new(),
        workqueue_mask: m.wq.as_ref().map(|s| s.contains(cpu)),
        workqueues: m
            .per_wq
            .iter()
            .filter(|(_, s)| s.contains(cpu))
            .map(|(n, _)| n.clone())
            .collect(),
        default_irq_affinity: m.dflt.as_ref().map(|s| s.contains(cpu)),
        score: 0,
        verdict: String::new(),
        penalties: vec![],
    };
    threads(&mut a, w, parts);
    interrupts(root, &mut a, w, parts);
    for l in w.softirqs_during.lines.iter() {
        a.softirqs
            .insert(l.id.clone(), w.softirqs_during.count(l, a.cpu));
    }
    score(&mut a, w.windowed);
    a
}

/// Which threads may run on the CPU, and which ran there.
fn threads(a: &mut CpuAudit, w: &Window, parts: &Shield) {
    let cpu = a.cpu;
    for t in &w.threads {
        if parts.rt_tids.contains(&t.tid) {
            if t.processor == Some(cpu) {
                a.rt_threads += 1;
            }
            continue;
        }
        let f = family(t);
        let allowed = t
            .cpus_allowed
            .as_deref()
            .and_then(|s| CpuSet::parse_list(s).ok())
            .is_some_and(|c| c.contains(cpu));
        if allowed {
            a.allowed.add(f);
        }
        let ran = t.processor == Some(cpu)
            && if w.windowed {
                !matches!(w.switches0.get(&t.tid), Some(&b) if b == switches(t))
            } else {
                t.state == Some('R')
            };
        if ran {
            a.running.add(f);
            if f != Family::BoundKernel {
                a.running_names.push(format!("{} ({})", t.name, t.tid));
            }
        }
    }
}

/// The device IRQs routed, allowed or fired on the CPU, and its IPIs.
fn interrupts(root: &Root, a: &mut CpuAudit, w: &Window, parts: &Shield) {
    let (cpu, i1, iw) = (a.cpu, &w.irqs, &w.irqs_during);
    for l in i1.lines.iter() {
        let total = i1.count(l, cpu);
        let during = w.windowed.then(|| {
            iw.lines
                .iter()
                .find(|x| x.id == l.id)
                .map_or(0, |x| iw.count(x, cpu))
        });
        if l.is_device() {
            let aff = irq_affinity(root, &l.id).unwrap_or_default();
            let eff = irq_effective_affinity(root, &l.id);
            let allows = |s: &str| CpuSet::parse_list(s.trim()).is_ok_and(|c| c.contains(cpu));
            let fired = during.unwrap_or(total) > 0;
            if fired || allows(&aff) || eff.as_deref().is_some_and(allows) {
                a.irqs.push(IrqOnCpu {
                    irq: l.id.clone(),
                    name: l.name().to_string(),
                    affinity: aff.trim().to_string(),
                    effective: eff.map(|e| e.trim().to_string()),
                    total,
                    during_watch: during,
                    refused: parts.refused_irqs.get(&l.id).cloned(),
                });
            }
        } else if l.class == IrqClass::PerCpu && l.id.parse::<u32>().is_ok() {
            // A numbered per-CPU interrupt (ARM `twd`, `arch_timer`):
            // it fires on every CPU and cannot be moved.
            let key = format!("{} ({})", l.id, l.name());
            a.ipis.insert(key, during.unwrap_or(total));
        } else if !l.counts.is_empty() {
            a.ipis.insert(l.id.clone(), during.unwrap_or(total));
        }
    }
}
