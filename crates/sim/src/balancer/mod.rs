//! The load balancers, one file each, behind one trait: Linux 2.6's O(1)
//! pull balancer ([`linux26`]), ULE's idle pull plus periodic push
//! ([`ule`]), and ARTiS as the thesis specifies it ([`artis`]) and as the
//! 2005 patch implements it ([`artis_2005`]).
//!
//! The engine owns the machine (run-queues, tasks, FIFOs, clocks) and calls
//! a [`Balancer`] at the points where a kernel's balancer runs: every tick,
//! when a CPU goes idle, when a task tries to mask interrupts, when a FIFO
//! is drained. Nothing in the engine asks which balancer it is running.
//!
//! Adding a balancer: write `NAME.rs` with a type implementing [`Balancer`],
//! add a variant to [`BalancerKind`] (its name for `--balancer`), and one
//! line to [`build`]. docs/architecture-sim.md walks through it.

pub(crate) mod artis;
pub(crate) mod artis_2005;
pub(crate) mod linux26;
pub(crate) mod ule;

use crate::config::{BalancerKind, SimConfig};
use crate::engine::Engine;
use rtshield_scenario::TaskSpec;

/// A load balancer: what runs, on the simulated machine, where a kernel's
/// balancer would. The methods take `&self` (a balancer's settings are
/// fixed for the run) and the engine (the machine's state is there).
pub(crate) trait Balancer {
    /// Which one this is (its name in reports and on the command line).
    fn kind(&self) -> BalancerKind;

    /// Refuse a machine this balancer cannot run on (a sentence, no
    /// position: it is about the command line).
    fn check_config(&self, _cfg: &SimConfig) -> Result<(), String> {
        Ok(())
    }

    /// Refuse a task this balancer cannot handle; `allowed` are the CPUs
    /// of its mask on this machine (never empty).
    fn check_task(
        &self,
        _cfg: &SimConfig,
        _spec: &TaskSpec,
        _allowed: &[usize],
    ) -> Result<(), String> {
        Ok(())
    }

    /// Once per tick, after the per-CPU tick work (slices, RT statistics).
    fn on_tick(&self, e: &mut Engine);

    /// CPU `c` found its run-queue empty in `schedule()`.
    fn on_idle(&self, e: &mut Engine, c: usize);

    /// The task `t` running on CPU `c` reached an interrupt-masking call.
    /// By default it masks interrupts where it is.
    fn on_mask_attempt(&self, e: &mut Engine, c: usize, t: usize) {
        e.enter_section(c, t);
        e.milestone(c);
    }

    /// Tasks drained from a migration FIFO, in FIFO order: reorder them if
    /// the balancer hands them over differently.
    fn drained(&self, _batch: &mut [usize]) {}
}

/// The balancer `cfg` names, with its settings.
pub(crate) fn build(cfg: &SimConfig) -> Box<dyn Balancer> {
    match cfg.balancer {
        BalancerKind::Linux26 => Box::new(linux26::Linux26::new(cfg)),
        BalancerKind::Ule => Box::new(ule::Ule::new(cfg)),
        BalancerKind::Artis => Box::new(artis::Artis::new(cfg, artis::Thesis)),
        BalancerKind::Artis2005 => Box::new(artis::Artis::new(cfg, artis_2005::Patch2005)),
    }
}

// ------------------------------------------------------ shared by balancers

/// Tasks were pulled to `c`: run them if `c` is idle, or preempt if they outrank.
pub(crate) fn after_pull(e: &mut Engine, c: usize) {
    if e.cpus[c].current.is_none() {
        e.schedule(c);
    } else {
        let best = e.cpus[c]
            .queue
            .iter()
            .copied()
            .min_by_key(|&t| e.tasks[t].rank());
        if let Some(t) = best {
            e.check_preempt(c, t);
        }
    }
}

/// Order in which a balancer looks at the queued tasks of `src`: expired
/// array first, then highest priority, then most recently queued (the O(1)
/// balancer walks each priority list from its tail). `normal_first` puts
/// normal tasks before RT ones (ARTiS RT→NRT).
pub(crate) fn candidates(e: &Engine, src: usize, normal_first: bool) -> Vec<usize> {
    candidates_where(e, src, normal_first, |_| true)
}

/// [`candidates`] restricted to the tasks `keep` accepts, filtered before
/// sorting: the caller's test must not depend on the moves it makes (a
/// balancer's per-task conditions do not), and at 128 CPUs sorting whole
/// queues to skip most of their tasks was most of a simulation's time.
pub(crate) fn candidates_where(
    e: &Engine,
    src: usize,
    normal_first: bool,
    keep: impl Fn(usize) -> bool,
) -> Vec<usize> {
    let mut v: Vec<usize> = e.cpus[src]
        .queue
        .iter()
        .copied()
        .filter(|&t| keep(t))
        .collect();
    v.sort_by_key(|&t| {
        let task = &e.tasks[t];
        (
            normal_first && !task.is_normal(),
            !e.is_expired(src, t),
            task.rank(),
            std::cmp::Reverse(task.seq),
        )
    });
    v
}

/// A task that ran less than `cache_decay` ago: a busy CPU's balancer leaves it.
pub(crate) fn cache_hot(e: &Engine, t: usize) -> bool {
    e.now.saturating_sub(e.tasks[t].last_ran) < e.cfg.cache_decay_ns
}
