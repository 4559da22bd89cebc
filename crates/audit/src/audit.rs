//! `rtshield audit`: what can still disturb a CPU, a score, and fixes.

use crate::procfs::{self, family, Family, Table};
use rtshield_sys::advice::{boot_advice, cmd_cpus, warnings};
use rtshield_sys::cgroup::Hierarchy;
use rtshield_sys::interrupts::{default_affinity, irq_affinity, irq_effective_affinity, IrqClass};
use rtshield_sys::kpath;
use rtshield_sys::partstate::{State, STATE_DIR};
use rtshield_sys::task::{parse_ids, TaskInfo};
use rtshield_sys::{cpus as syscpus, workqueue};
use rtshield_sys::{CpuSet, Root, SysInfo};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct AuditOptions {
    pub cpus: Option<CpuSet>,
    /// Window over which counters are compared; zero = counts since boot.
    pub watch: Duration,
}

#[derive(Debug, Clone, Serialize)]
pub struct IrqOnCpu {
    pub irq: String,
    pub name: String,
    pub affinity: String,
    pub effective: Option<String>,
    /// Count on this CPU since boot.
    pub total: u64,
    /// Count on this CPU during the window (None without a window).
    pub during_watch: Option<u64>,
    /// Why the kernel refused to move it when the partition was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Counts {
    pub user: usize,
    pub movable_kernel: usize,
    pub bound_kernel: usize,
}

impl Counts {
    fn add(&mut self, f: Family) {
        match f {
            Family::User => self.user += 1,
            Family::MovableKernel => self.movable_kernel += 1,
            Family::BoundKernel => self.bound_kernel += 1,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Penalty {
    pub points: u32,
    pub what: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct CpuAudit {
    pub cpu: u32,
    /// `rt (…/rt)`, `nrt (…/nrt)` or `none`.
    pub partition: String,
    pub isolated: bool,
    pub nohz_full: bool,
    pub rcu_nocbs: bool,
    /// Threads whose affinity allows this CPU (outside the rt partition).
    pub allowed: Counts,
    /// Threads that ran here (during the window, else right now), outside rt.
    pub running: Counts,
    /// Names of the user and movable kernel threads that ran here.
    pub running_names: Vec<String>,
    /// Threads inside the rt partition (the real-time work itself).
    pub rt_threads: usize,
    pub irqs: Vec<IrqOnCpu>,
    /// IPI and other named lines of /proc/interrupts (window or since boot).
    pub ipis: BTreeMap<String, u64>,
    pub softirqs: BTreeMap<String, u64>,
    pub workqueue_mask: Option<bool>,
    /// Workqueues whose own `cpumask` includes this CPU.
    pub workqueues: Vec<String>,
    pub default_irq_affinity: Option<bool>,
    pub score: u32,
    /// `clean` (score ≤ 5) or `disturbed`.
    pub verdict: String,
    pub penalties: Vec<Penalty>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Fix {
    pub n: usize,
    pub title: String,
    pub command: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Audit {
    pub selection: String,
    pub watch_s: f64,
    /// Whole-machine observations, most important first.
    pub findings: Vec<String>,
    pub cpus: Vec<CpuAudit>,
    pub rt_throttling: String,
    pub sched_fifo: String,
    pub fixes: Vec<Fix>,
}

/// Score at or below which a CPU is called clean.
pub const CLEAN_MAX: u32 = 5;

const IO_SOFTIRQS: &[&str] = &["NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET"];

struct Partitions {
    rt: CpuSet,
    nrt: CpuSet,
    rt_dirs: Vec<String>,
    nrt_dirs: Vec<String>,
    rt_tids: BTreeSet<u32>,
    /// IRQ number → why the kernel refused to move it (from the state).
    refused_irqs: BTreeMap<String, String>,
    /// A cset shield or partrt partition (counted as the rt/nrt sets).
    foreign: Option<rtshield_sys::isolation::ForeignPartition>,
}

fn partitions(root: &Root) -> Partitions {
    let mut p = Partitions {
        rt: CpuSet::new(),
        nrt: CpuSet::new(),
        rt_dirs: vec![],
        nrt_dirs: vec![],
        rt_tids: BTreeSet::new(),
        refused_irqs: BTreeMap::new(),
        foreign: rtshield_sys::isolation::foreign_partition(root),
    };
    let h = Hierarchy::detect(root).ok();
    for f in root.read_dir_names(STATE_DIR).unwrap_or_default() {
        if !(f.starts_with("partition") && f.ends_with(".json")) {
            continue;
        }
        let Ok(Some(s)) = State::load(root, &format!("{STATE_DIR}/{f}")) else {
            continue;
        };
        p.rt =
            p.rt.union(&CpuSet::parse_list(&s.rt_cpus).unwrap_or_default());
        p.nrt = p
            .nrt
            .union(&CpuSet::parse_list(&s.nrt_cpus).unwrap_or_default());
        if let Some(h) = &h {
            let t = root.read_opt(h.tasks_file(&s.rt_dir)).unwrap_or_default();
            p.rt_tids.extend(parse_ids(&t));
        }
        for (path, why) in &s.refused {
            if let Some(n) = kpath::irq_of_path(path) {
                p.refused_irqs.insert(n.to_string(), why.clone());
            }
        }
        p.rt_dirs.push(s.rt_dir);
        p.nrt_dirs.push(s.nrt_dir);
    }
    // Another tool's shield is a partition too: its shielded set is the rt
    // one (cset's `user`, partrt's `rt`).
    if let Some(f) = p.foreign.clone() {
        p.rt = p.rt.union(&f.rt_cpus);
        p.nrt = p.nrt.union(&f.nrt_cpus);
        if let Some(h) = &h {
            let t = root.read_opt(h.tasks_file(&f.rt_dir)).unwrap_or_default();
            p.rt_tids.extend(parse_ids(&t));
        }
        p.rt_dirs.push(format!("{}: {}", f.tool, f.rt_dir));
        p.nrt_dirs.push(format!("{}: {}", f.tool, f.nrt_dir));
    }
    p
}

fn param_cpus(cmdline: &str, key: &str) -> CpuSet {
    rtshield_sys::sysinfo::isolation_params(cmdline)
        .get(key)
        .and_then(|v| cmd_cpus(v))
        .unwrap_or_default()
}

pub fn audit(root: &Root, opts: &AuditOptions) -> anyhow::Result<Audit> {
    let online = syscpus::online(root).unwrap_or_default();
    let parts = partitions(root);
    let isolated = syscpus::isolated(root);
    let (sel, selection) = match &opts.cpus {
        Some(c) => {
            let bad = c.difference(&online);
            if !bad.is_empty() {
                return Err(rtshield_sys::InputError::new(format!(
                    "CPU {} is not online (online: {})",
                    bad.to_list(),
                    online.to_list()
                ))
                .into());
            }
            (c.clone(), format!("CPUs {} (as asked)", c.to_list()))
        }
        None if !parts.rt.is_empty() => (
            parts.rt.clone(),
            format!("CPUs {} (the rt partition)", parts.rt.to_list()),
        ),
        None if !isolated.is_empty() => (
            isolated.clone(),
            format!("CPUs {} (isolated at boot)", isolated.to_list()),
        ),
        None => (
            online.clone(),
            format!(
                "CPUs {} (all online; no rt partition, nothing isolated)",
                online.to_list()
            ),
        ),
    };

    // Counters before and after the window.
    let i0 = procfs::interrupts(root);
    let s0 = procfs::softirqs(root);
    let t0 = procfs::threads(root);
    if !opts.watch.is_zero() {
        std::thread::sleep(opts.watch);
    }
    let i1 = procfs::interrupts(root);
    let s1 = procfs::softirqs(root);
    // rtshield's own threads are the observer, not a disturbance.
    let own: BTreeSet<u32> = if root.is_host() {
        rtshield_sys::task::own_tids(root).into_iter().collect()
    } else {
        BTreeSet::new()
    };
    let t1: Vec<TaskInfo> = procfs::threads(root)
        .into_iter()
        .filter(|t| !own.contains(&t.tid))
        .collect();
    let windowed = !opts.watch.is_zero();
    let (iw, sw) = if windowed {
        (i1.delta(&i0), s1.delta(&s0))
    } else {
        (i1.clone(), s1.clone())
    };
    let switches0: BTreeMap<u32, u64> = t0.iter().map(|t| (t.tid, switches(t))).collect();

    let cmdline = root.read_opt(kpath::CMDLINE).unwrap_or_default();
    let nohz = syscpus::nohz_full(root);
    let nocbs = param_cpus(&cmdline, "rcu_nocbs");
    let ncpus = online.last().map_or(1, |c| c + 1);
    let wq = workqueue::global_mask(root);
    let per_wq = workqueue::masks(root);
    let dflt = default_affinity(root);

    let mut cpus = vec![];
    for cpu in sel.iter() {
        let mut a = CpuAudit {
            cpu,
            partition: if parts.rt.contains(cpu) {
                format!("rt ({})", parts.rt_dirs.join(", "))
            } else if parts.nrt.contains(cpu) {
                format!("nrt ({})", parts.nrt_dirs.join(", "))
            } else {
                "none".into()
            },
            isolated: isolated.contains(cpu),
            nohz_full: nohz.contains(cpu),
            rcu_nocbs: nocbs.contains(cpu),
            allowed: Counts::default(),
            running: Counts::default(),
            running_names: vec![],
            rt_threads: 0,
            irqs: vec![],
            ipis: BTreeMap::new(),
            softirqs: BTreeMap::new(),
            workqueue_mask: wq.as_ref().map(|m| m.contains(cpu)),
            workqueues: per_wq
                .iter()
                .filter(|(_, m)| m.contains(cpu))
                .map(|(n, _)| n.clone())
                .collect(),
            default_irq_affinity: dflt.as_ref().map(|m| m.contains(cpu)),
            score: 0,
            verdict: String::new(),
            penalties: vec![],
        };
        for t in &t1 {
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
                && if windowed {
                    !matches!(switches0.get(&t.tid), Some(&b) if b == switches(t))
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
        for l in i1.lines.iter() {
            let total = i1.count(l, cpu);
            let during = windowed.then(|| {
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
        for l in sw.lines.iter() {
            a.softirqs.insert(l.id.clone(), sw.count(l, cpu));
        }
        score(&mut a, windowed);
        cpus.push(a);
    }

    let si = SysInfo::collect(root, root.is_host());
    let mut findings = findings(&i1, &iw, windowed, &online, &sel, &cpus);
    if let Some(f) = &parts.foreign {
        findings.push(format!(
            "A {} (audited as the rt/nrt partition; `rtshield partition create` refuses to work next to it).",
            f.describe()
        ));
    }
    let nrt = online.difference(&sel);
    let fixes = if nrt.is_empty() && online.len() > 1 {
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
            &parts,
            &si,
        ));
        f.retain(|(t, _)| !t.starts_with("shield CPU"));
        number(f)
    } else {
        number(fixes(root, &sel, &nrt, ncpus, &cpus, &parts, &si))
    };
    Ok(Audit {
        selection,
        watch_s: opts.watch.as_secs_f64(),
        findings,
        cpus,
        rt_throttling: match (si.sched_rt_runtime_us, si.sched_rt_period_us) {
            (Some(-1), _) => "off (sched_rt_runtime_us = -1)".into(),
            (Some(r), Some(p)) => format!(
                "on: RT tasks get {r} us every {p} us, then yield for {} us",
                p - r
            ),
            _ => "unknown".into(),
        },
        sched_fifo: match (si.fifo_permitted, &si.fifo_refusal) {
            (Some(true), _) => "permitted for this caller".into(),
            (Some(false), Some(r)) => format!("refused: {r}"),
            (Some(false), None) => "refused".into(),
            (None, _) => "not probed (fake tree)".into(),
        },
        fixes,
    })
}

fn switches(t: &TaskInfo) -> u64 {
    let (v, n) = t.switches();
    v + n
}

/// The score: the sum of the penalties below, capped at 100. Documented in
/// the README (section `rtshield audit`); keep the two in step.
fn score(a: &mut CpuAudit, windowed: bool) {
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

/// Whole-machine observations: above all the torture article's discovery, every device
/// IRQ served by one CPU.
fn findings(
    total: &Table,
    window: &Table,
    windowed: bool,
    online: &CpuSet,
    sel: &CpuSet,
    cpus: &[CpuAudit],
) -> Vec<String> {
    let mut out = vec![];
    let per_cpu = |t: &Table| -> BTreeMap<u32, u64> {
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

#[allow(clippy::too_many_arguments)]
fn fixes(
    root: &Root,
    sel: &CpuSet,
    nrt: &CpuSet,
    ncpus: u32,
    cpus: &[CpuAudit],
    parts: &Partitions,
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
    if let Ok(h) = Hierarchy::detect(root) {
        for w in warnings(root, &h, true) {
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
                rtshield_sys::units::format_duration_ns((a.watch_s * 1e9) as u64)
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
                if a.watch_s > 0.0 { "during watch" } else { "" }
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
