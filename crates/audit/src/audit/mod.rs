//! `rtshield audit`: what can still disturb a CPU, a score, and fixes.
//!
//! By phase: which CPUs to audit (the asked ones, the shielded set, the
//! boot-isolated set, or every online CPU); the counters around the watch
//! window and the machine's settings (`cpu`); each CPU's audit and score
//! (`cpu`, `score`); the whole-machine findings (`findings`); the fixes
//! (`fixes`). What counts as shielded comes from `rtshield_isolation`
//! (`shield`); the text report is `render`.

mod cpu;
mod findings;
mod fixes;
mod render;
mod score;
mod shield;

pub use render::render;

use crate::procfs::Family;
use rtshield_sys::{cpus as syscpus, tracefs, CpuSet, Root, SysInfo};
use serde::Serialize;
use shield::Shield;
use std::collections::BTreeMap;
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
    /// Trace instances and private tracefs mounts of other rtshield
    /// processes: in use (owner alive) or left behind by a killed one.
    pub tracing_leftovers: Vec<tracefs::Leftover>,
}

/// Score at or below which a CPU is called clean.
pub const CLEAN_MAX: u32 = 5;

const IO_SOFTIRQS: &[&str] = &["NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET"];

/// Audit the CPUs `opts` selects under `root`.
pub fn audit(root: &Root, opts: &AuditOptions) -> anyhow::Result<Audit> {
    let online = syscpus::online(root).unwrap_or_default();
    let parts = Shield::read(root);
    let isolated = syscpus::isolated(root);
    let (sel, selection) = select(opts, &online, &parts, &isolated)?;
    let window = cpu::Window::watch(root, opts.watch);
    let machine = cpu::Machine::read(root, isolated);
    let cpus: Vec<CpuAudit> = sel
        .iter()
        .map(|c| cpu::audit_cpu(root, c, &window, &machine, &parts))
        .collect();
    let si = SysInfo::collect(root, root.is_host());
    let mut findings = findings::findings(
        &window.irqs,
        &window.irqs_during,
        window.windowed,
        &online,
        &sel,
        &cpus,
    );
    if let Some(f) = &parts.foreign {
        findings.push(format!(
            "A {} (audited as the rt/nrt partition; `rtshield partition create` refuses to work next to it).",
            f.describe()
        ));
    }
    // A killed traced run may still be recording on these CPUs.
    let tracing_leftovers = tracefs::leftovers(root);
    findings.extend(
        tracing_leftovers
            .iter()
            .map(|l| format!("A {}.", l.describe())),
    );
    let fixes = fixes::proposed(root, &online, &sel, &cpus, &parts, &si);
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
        tracing_leftovers,
    })
}

/// The CPUs to audit and how the report names them: the asked ones (all
/// online, else an input error), the shielded set, the boot-isolated
/// set, or every online CPU.
fn select(
    opts: &AuditOptions,
    online: &CpuSet,
    parts: &Shield,
    isolated: &CpuSet,
) -> anyhow::Result<(CpuSet, String)> {
    Ok(match &opts.cpus {
        Some(c) => {
            let bad = c.difference(online);
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
    })
}
