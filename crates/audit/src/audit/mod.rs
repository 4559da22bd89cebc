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
use rtshield_sys::{isolated_cpus, online_cpus, tracing_leftovers, Root, SysInfo, TracingLeftover};
use rtshield_vocab::CpuSet;
use serde::Serialize;
use shield::Shield;
use std::collections::BTreeMap;
use std::time::Duration;

/// What `rtshield audit` is asked.
#[derive(Debug, Clone)]
pub struct AuditOptions {
    /// The CPUs to audit; `None`: the rt partition, else the CPUs isolated at boot,
    /// else every online CPU.
    pub cpus: Option<CpuSet>,
    /// Window over which counters are compared; zero = counts since boot.
    pub watch: Duration,
}

/// One device IRQ that can fire on an audited CPU.
#[derive(Debug, Clone, Serialize)]
pub struct IrqOnCpu {
    /// Its number (`36`).
    pub irq: String,
    /// Its handler name(s) (`virtio1-req.0`).
    pub name: String,
    /// Where it may fire (`smp_affinity_list`, list syntax).
    pub affinity: String,
    /// Where it does fire (`effective_affinity_list`), when the kernel says.
    pub effective: Option<String>,
    /// Count on this CPU since boot.
    pub total: u64,
    /// Count on this CPU during the window (None without a window).
    pub during_watch: Option<u64>,
    /// Why the kernel refused to move it when the partition was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// Threads by family: what may (or did) run on a CPU besides the real-time work.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Counts {
    /// User threads (movable: a partition takes them off).
    pub user: usize,
    /// Kernel threads that may be moved (kworker/u*, kthreadd…).
    pub movable_kernel: usize,
    /// Per-CPU kernel threads, bound by the kernel (ksoftirqd, migration, kworker/N).
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

/// One reason a CPU's score went up.
#[derive(Debug, Clone, Serialize)]
pub struct Penalty {
    /// How much it weighs (a CPU is clean at 5 points or fewer).
    pub points: u32,
    /// What was found, in words.
    pub what: String,
}

/// What can disturb one CPU, and its score.
#[derive(Debug, Clone, Serialize)]
pub struct CpuAudit {
    /// The CPU number.
    pub cpu: u32,
    /// `rt (…/rt)`, `nrt (…/nrt)` or `none`.
    pub partition: String,
    /// In `isolcpus=`.
    pub isolated: bool,
    /// In `nohz_full=` (no tick while one task runs).
    pub nohz_full: bool,
    /// In `rcu_nocbs=` (RCU callbacks run elsewhere).
    pub rcu_nocbs: bool,
    /// Threads whose affinity allows this CPU (outside the rt partition).
    pub allowed: Counts,
    /// Threads that ran here (during the window, else right now), outside rt.
    pub running: Counts,
    /// Names of the user and movable kernel threads that ran here.
    pub running_names: Vec<String>,
    /// Threads inside the rt partition (the real-time work itself).
    pub rt_threads: usize,
    /// Device IRQs allowed on this CPU.
    pub irqs: Vec<IrqOnCpu>,
    /// IPI and other named lines of /proc/interrupts (window or since boot).
    pub ipis: BTreeMap<String, u64>,
    /// Softirq counts by kind (`TIMER`, `NET_RX`…; window or since boot).
    pub softirqs: BTreeMap<String, u64>,
    /// Whether the global unbound-workqueue mask includes this CPU; `None` when unreadable.
    pub workqueue_mask: Option<bool>,
    /// Workqueues whose own `cpumask` includes this CPU.
    pub workqueues: Vec<String>,
    /// Whether new IRQs may be given this CPU (`default_smp_affinity`); `None` when unreadable.
    pub default_irq_affinity: Option<bool>,
    /// The sum of the penalties: 0 is undisturbed.
    pub score: u32,
    /// `clean` (score ≤ 5) or `disturbed`.
    pub verdict: String,
    /// Why the score is what it is, heaviest first.
    pub penalties: Vec<Penalty>,
}

/// One fix the report proposes: a command line for the user, never run by rtshield.
#[derive(Debug, Clone, Serialize)]
pub struct Fix {
    /// Its number in the report (1-based).
    pub n: usize,
    /// What it does, in words.
    pub title: String,
    /// The shell command that does it.
    pub command: String,
}

/// The whole audit, as `rtshield audit` prints it (text or `--json`).
#[derive(Debug, Clone, Serialize)]
pub struct Audit {
    /// Which CPUs were audited and why (`CPUs 2-3 (the rt partition)`).
    pub selection: String,
    /// The watch window, seconds (0: counts since boot).
    pub watch_s: f64,
    /// Whole-machine observations, most important first.
    pub findings: Vec<String>,
    /// Each audited CPU, in CPU order.
    pub cpus: Vec<CpuAudit>,
    /// RT throttling in words (`off`, or the budget per period).
    pub rt_throttling: String,
    /// Whether this caller may use SCHED_FIFO, in words.
    pub sched_fifo: String,
    /// The fixes, in the order they should be applied.
    pub fixes: Vec<Fix>,
    /// Trace instances and private tracefs mounts of other rtshield
    /// processes: in use (owner alive) or left behind by a killed one.
    pub tracing_leftovers: Vec<TracingLeftover>,
}

/// Score at or below which a CPU is called clean.
pub(crate) const CLEAN_MAX: u32 = 5;

const IO_SOFTIRQS: &[&str] = &["NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET"];

/// Audit the CPUs `opts` selects under `root`.
pub fn audit(root: &Root, opts: &AuditOptions) -> anyhow::Result<Audit> {
    let online = online_cpus(root).unwrap_or_default();
    let parts = Shield::read(root);
    let isolated = isolated_cpus(root);
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
    let tracing_leftovers = tracing_leftovers(root);
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
                return Err(rtshield_vocab::InputError::new(format!(
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
