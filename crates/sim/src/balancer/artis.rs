//! ARTiS, the asymmetric real-time scheduler of the ARTiS thesis (ch. 3):
//! RT CPUs where only RT0 tasks may mask interrupts (any other task that
//! tries is migrated away through a lock-free FIFO), NRT CPUs that balance
//! among themselves with the standard mechanism, and weighted loads that
//! account for the RT share of each CPU.
//!
//! The mechanism is shared by the thesis model ([`Thesis`], here) and the
//! 2005 patch ([`super::artis_2005::Patch2005`]); what differs between the
//! two is a set of [`Rules`].

use super::linux26::{load_balance, Scope};
use super::{after_pull, cache_hot, candidates, Balancer};
use crate::config::{BalancerKind, SimConfig};
use crate::engine::{Class, Engine, MigKind, State};
use crate::stats;
use rtshield_scenario::TaskSpec;

/// Where a task forced off an RT CPU goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ForcedTo {
    /// The NRT CPU of its mask with the lowest weighted load.
    LeastLoaded,
    /// The first NRT CPU of its mask.
    FirstAllowed,
}

/// What an ARTiS variant decides; the mechanism in [`Artis`] does the rest.
pub(crate) trait Rules {
    fn kind(&self) -> BalancerKind;
    /// How often NRT CPUs send RT1+ tasks back to RT CPUs, in ticks.
    fn return_ticks(&self, cfg: &SimConfig) -> u64;
    /// Whether the first masking attempt yields a period (measured from
    /// time 0), or only sets the timestamp.
    fn first_attempt_has_period(&self) -> bool;
    /// May a task whose mean masking period is `pm` and last attempt `td`
    /// go to an RT CPU at `now`?
    fn may_go_rt(&self, pm: u64, td: u64, now: u64, cfg: &SimConfig) -> bool;
    /// The load multiplier M of a CPU whose decayed RT share is `rt_stat`.
    fn multiplier(&self, rt_stat: u64) -> f64;
    fn forced_to(&self) -> ForcedTo;
    /// Whether an RT→RT move is tested like a move from an NRT CPU.
    fn tests_rt_to_rt(&self) -> bool;
    /// Whether a drained FIFO hands its tasks over last-in first.
    fn lifo_drain(&self) -> bool;
}

/// The thesis model as written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Thesis;

impl Rules for Thesis {
    fn kind(&self) -> BalancerKind {
        BalancerKind::Artis
    }
    fn return_ticks(&self, cfg: &SimConfig) -> u64 {
        cfg.ticks(cfg.artis_return_ns)
    }
    fn first_attempt_has_period(&self) -> bool {
        // Annex A measures the first period from time 0.
        true
    }
    fn may_go_rt(&self, pm: u64, td: u64, now: u64, cfg: &SimConfig) -> bool {
        thesis_allows(pm, td, now, cfg.artis_c_ns, cfg.artis_k)
    }
    fn multiplier(&self, rt_stat: u64) -> f64 {
        stats::rt_multiplier(rt_stat)
    }
    fn forced_to(&self) -> ForcedTo {
        ForcedTo::LeastLoaded
    }
    fn tests_rt_to_rt(&self) -> bool {
        // §3.2.4: RT→RT keeps the original designation; the prediction
        // test is for tasks arriving from an NRT CPU.
        false
    }
    fn lifo_drain(&self) -> bool {
        false
    }
}

/// The thesis's two conditions, exactly as written (§3.2.3): a move to an
/// RT CPU is allowed when `(Pm + td) − t > C` or `K·td < t − Pm`, with Pm
/// the mean period between masking attempts, td the instant of the last
/// one and t now (all ns since the scenario start).
pub(crate) fn thesis_allows(pm: u64, td: u64, t: u64, c: u64, k: u64) -> bool {
    let (pm, td, t, c, k) = (
        i128::from(pm),
        i128::from(td),
        i128::from(t),
        i128::from(c),
        i128::from(k),
    );
    (pm + td) - t > c || k * td < t - pm
}

/// n = (Le·Me − Lr·Mr) / (Me + Mr), rounded to the nearest integer with
/// ties down. Moving one task when n = 0.9 leaves the pair nearer to equal
/// than not moving (after the move the imbalance is 1 − n); a tie (n = 0.5,
/// e.g. 2 tasks against 1 at equal weights) would only swap the imbalance
/// and ping-pong, so it stays.
pub(crate) fn tasks_to_move(le: f64, me: f64, lr: f64, mr: f64) -> usize {
    let n = (le * me - lr * mr) / (me + mr);
    let r = (n - 0.5).ceil();
    if r >= 1.0 {
        r as usize
    } else {
        0
    }
}

/// The ARTiS mechanism under a variant's rules.
pub(crate) struct Artis<R> {
    rules: R,
    /// Busy-CPU balance period, in ticks (as Linux's).
    busy_ticks: u64,
    return_ticks: u64,
}

impl<R: Rules> Artis<R> {
    pub(crate) fn new(cfg: &SimConfig, rules: R) -> Self {
        Artis {
            busy_ticks: cfg.ticks(cfg.busy_balance_ns),
            return_ticks: rules.return_ticks(cfg),
            rules,
        }
    }
}

impl<R: Rules> Balancer for Artis<R> {
    fn kind(&self) -> BalancerKind {
        self.rules.kind()
    }

    fn check_config(&self, cfg: &SimConfig) -> Result<(), String> {
        if cfg.rt_cpus.len() == cfg.ncpus {
            return Err(format!(
                "{} needs at least one NRT CPU: --rt-cpus {} covers the whole machine",
                self.kind(),
                cfg.rt_cpus.to_list()
            ));
        }
        Ok(())
    }

    fn check_task(
        &self,
        cfg: &SimConfig,
        spec: &TaskSpec,
        allowed: &[usize],
    ) -> Result<(), String> {
        if !spec.is_rt0()
            && spec.irq_period.is_some()
            && !allowed.iter().any(|&c| !cfg.is_rt_cpu(c))
        {
            return Err(format!(
                "task '{}' masks interrupts (irq_period) but its cpu_mask allows only RT CPUs ({}): ARTiS would have no NRT CPU to migrate it to",
                spec.name,
                spec.cpu_mask.as_ref().map(|m| m.to_list()).unwrap_or_default()
            ));
        }
        Ok(())
    }

    /// All CPUs balance on the same tick, in CPU order.
    fn on_tick(&self, e: &mut Engine) {
        let k = e.tick_no;
        let n = e.cpus.len();
        // CPUs an RT1+ task belongs to (queued or asleep there): the
        // return pass has nothing to do elsewhere. Computed once per
        // tick, not per CPU: artis-2005 returns on every tick.
        let return_tick = k % self.return_ticks == 0;
        let mut rt1_home = vec![false; if return_tick { n } else { 0 }];
        if return_tick {
            for &t in &e.rt1_tasks {
                if matches!(e.tasks[t].state, State::Runnable | State::Sleeping) {
                    rt1_home[e.tasks[t].cpu] = true;
                }
            }
        }
        for c in 0..n {
            let idle = e.cpus[c].current.is_none();
            if e.cpus[c].is_rt {
                // Push only: an idle RT CPU has nothing to give and may
                // not pull (that would lock a remote run-queue).
                if !idle && k % self.busy_ticks == 0 {
                    self.push_from_rt(e, c);
                }
                continue;
            }
            if (idle || k % self.busy_ticks == 0) && load_balance(e, c, idle, Scope::ArtisNrt) > 0 {
                after_pull(e, c);
            }
            let mut returned = 0;
            if return_tick && rt1_home.get(c).copied().unwrap_or(false) {
                returned = self.return_rt(e, c);
            }
            if k % self.busy_ticks == 0 && returned == 0 {
                self.push_to_rt(e, c);
            }
        }
    }

    fn on_idle(&self, e: &mut Engine, c: usize) {
        if !e.cpus[c].is_rt {
            load_balance(e, c, true, Scope::ArtisNrt);
        }
    }

    fn on_mask_attempt(&self, e: &mut Engine, c: usize, t: usize) {
        self.migration_stat(e, t);
        if e.cpus[c].is_rt && e.tasks[t].class != Class::Rt0 {
            self.forced_migration(e, c, t);
        } else {
            e.enter_section(c, t);
            e.milestone(c);
        }
    }

    fn drained(&self, batch: &mut [usize]) {
        if self.rules.lifo_drain() {
            batch.reverse();
        }
    }
}

impl<R: Rules> Artis<R> {
    /// Annex A `artis_migration_stat()`: record an interrupt-masking attempt
    /// and update the mean period (weight 2028/2048, about the last 100 attempts).
    fn migration_stat(&self, e: &mut Engine, t: usize) {
        let now = e.now;
        let task = &mut e.tasks[t];
        let old = task.last_attempt;
        task.last_attempt = now;
        task.attempts += 1;
        if !self.rules.first_attempt_has_period() && task.attempts == 1 {
            return;
        }
        let current_period = u128::from(now - old) * stats::FIXED_P_1;
        task.attempt_period_fp = stats::calc_period(task.attempt_period_fp, current_period);
    }

    /// May task `t` go to an RT CPU now? (thesis §3.2.3 / the 2005 patch)
    fn may_go_rt(&self, e: &Engine, t: usize) -> bool {
        let task = &e.tasks[t];
        let td = task.last_attempt;
        let pm = (task.attempt_period_fp >> stats::FSHIFT_P) as u64;
        self.rules.may_go_rt(pm, td, e.now, e.cfg)
    }

    /// Weighted load of a CPU: L·M with L the runnable non-RT tasks and M the
    /// RT-share multiplier.
    fn load(&self, e: &Engine, c: usize) -> f64 {
        normal_count(e, c) * self.multiplier(e, c)
    }

    fn multiplier(&self, e: &Engine, c: usize) -> f64 {
        self.rules.multiplier(e.cpus[c].rt_stat)
    }

    /// The CPU with the lowest weighted load among those `ok` accepts (ties:
    /// the lowest number).
    fn least_loaded(&self, e: &Engine, mut ok: impl FnMut(usize) -> bool) -> Option<usize> {
        (0..e.cpus.len())
            .filter(|&i| ok(i))
            .min_by(|&a, &b| self.load(e, a).total_cmp(&self.load(e, b)).then(a.cmp(&b)))
    }

    fn tasks_to_move(&self, e: &Engine, from: usize, to: usize) -> usize {
        let (le, me) = (normal_count(e, from), self.multiplier(e, from));
        let (lr, mr) = (normal_count(e, to), self.multiplier(e, to));
        tasks_to_move(le, me, lr, mr)
    }

    /// A non-RT0 task attempted to mask interrupts on RT CPU `c`: it leaves
    /// through the (c, NRT) FIFO and does its masking section over there.
    fn forced_migration(&self, e: &mut Engine, c: usize, t: usize) {
        let nrt_in_mask = |i: usize| !e.cpus[i].is_rt && e.tasks[t].mask[i];
        // check_task guarantees a masking task an NRT CPU in its mask.
        let dest = match self.rules.forced_to() {
            ForcedTo::FirstAllowed => (0..e.cpus.len()).find(|&i| nrt_in_mask(i)),
            ForcedTo::LeastLoaded => self.least_loaded(e, nrt_in_mask),
        }
        .expect("a masking task has an NRT CPU in its mask");
        e.settle(c);
        // The running task is switched out, then pushed by the next task.
        e.stop_current(c);
        e.tasks[t].mask_pending = true;
        e.send_fifo(t, c, dest, MigKind::RtNrtForced);
        e.schedule(c);
    }

    /// The RT CPU `src` pushes load to the least loaded CPU (weighted loads).
    fn push_from_rt(&self, e: &mut Engine, src: usize) {
        let Some(dst) = self.least_loaded(e, |i| i != src) else {
            return;
        };
        let want = self.tasks_to_move(e, src, dst);
        if want == 0 {
            return;
        }
        let to_rt = e.cpus[dst].is_rt;
        let kind = if to_rt {
            MigKind::RtRt
        } else {
            MigKind::RtNrtBalance
        };
        let mut moved = 0;
        // RT→NRT prefers normal tasks: RT1+ tasks get better latencies here.
        for t in candidates(e, src, !to_rt) {
            if moved >= want {
                break;
            }
            let task = &e.tasks[t];
            if task.class == Class::Rt0 || task.mask_pending || !task.mask[dst] || cache_hot(e, t) {
                continue;
            }
            if to_rt && self.rules.tests_rt_to_rt() && !self.may_go_rt(e, t) {
                continue;
            }
            e.push_fifo(t, src, dst, kind);
            moved += 1;
        }
    }

    /// NRT CPU `src` sends its RT1+ tasks back to RT CPUs, regardless of load,
    /// unless they are predicted to mask interrupts again soon. Queued tasks
    /// go through the FIFO; a sleeping one is re-homed (it will wake up on the
    /// RT CPU) — an RT task is mostly running or asleep, never queued behind
    /// normal tasks, so looking at the queue alone would hardly ever find one.
    fn return_rt(&self, e: &mut Engine, src: usize) -> usize {
        let n = e.cpus.len();
        let mut moved = 0;
        // Queued RT1+ tasks, highest priority first (filtered before sorting:
        // with artis-2005 this runs on every tick).
        let mut cands: Vec<usize> = e.cpus[src]
            .queue
            .iter()
            .copied()
            .filter(|&t| e.tasks[t].class == Class::Rt)
            .collect();
        cands.sort_by_key(|&t| (e.tasks[t].rank(), std::cmp::Reverse(e.tasks[t].seq)));
        cands.extend(
            e.rt1_tasks
                .iter()
                .copied()
                .filter(|&t| e.tasks[t].cpu == src && e.tasks[t].state == State::Sleeping),
        );
        for t in cands {
            let task = &e.tasks[t];
            if task.mask_pending || !self.may_go_rt(e, t) {
                continue;
            }
            // The destination is chosen once the task is designated.
            let Some(dst) = (0..n)
                .filter(|&i| e.cpus[i].is_rt && e.tasks[t].mask[i])
                .min_by(|&a, &b| {
                    self.load(e, a)
                        .total_cmp(&self.load(e, b))
                        .then(e.cpus[a].rt_stat.cmp(&e.cpus[b].rt_stat))
                        .then(a.cmp(&b))
                })
            else {
                continue;
            };
            if e.tasks[t].state == State::Sleeping {
                e.rehome_sleeping(t, src, dst, MigKind::NrtRtReturn);
            } else {
                e.push_fifo(t, src, dst, MigKind::NrtRtReturn);
            }
            moved += 1;
        }
        moved
    }

    /// NRT CPU `src` pushes normal tasks to the least loaded RT CPU.
    fn push_to_rt(&self, e: &mut Engine, src: usize) {
        let Some(dst) = self.least_loaded(e, |i| e.cpus[i].is_rt) else {
            return;
        };
        let want = self.tasks_to_move(e, src, dst);
        if want == 0 {
            // Nothing to move: skip sorting the queue (artis-2005 calls
            // this on every tick of every NRT CPU).
            return;
        }
        let mut moved = 0;
        for t in candidates(e, src, true) {
            if moved >= want {
                break;
            }
            let task = &e.tasks[t];
            if !task.is_normal() || task.mask_pending || !task.mask[dst] || cache_hot(e, t) {
                continue;
            }
            if !self.may_go_rt(e, t) {
                continue;
            }
            e.push_fifo(t, src, dst, MigKind::NrtRtBalance);
            moved += 1;
        }
    }
}

/// L: runnable normal tasks, the running one included.
fn normal_count(e: &Engine, c: usize) -> f64 {
    let cpu = &e.cpus[c];
    let running = cpu.current.is_some_and(|t| e.tasks[t].is_normal());
    (cpu.queued_normal() + usize::from(running)) as f64
}

#[cfg(test)]
mod tests {
    use super::{tasks_to_move, thesis_allows};

    const MS: u64 = 1_000_000;

    #[test]
    fn thesis_conditions_as_written() {
        let (c, k) = (2 * MS, 100);
        // A task that never masked (Pm = td = 0) may go once t > 0.
        assert!(thesis_allows(0, 0, 5 * MS, c, k));
        // Masks every 100 ms, last at 1000 ms: 10 ms later the next attempt
        // is 90 ms away (> C): allowed; 1 ms before it: refused.
        assert!(thesis_allows(100 * MS, 1000 * MS, 1010 * MS, c, k));
        assert!(!thesis_allows(100 * MS, 1000 * MS, 1099 * MS, c, k));
        // Overdue: the second condition needs K·td < t − Pm, i.e. the last
        // attempt in the first 1/K of the elapsed time.
        assert!(!thesis_allows(100 * MS, 1000 * MS, 50_000 * MS, c, k));
        assert!(thesis_allows(100 * MS, 1000 * MS, 100_101 * MS, c, k));
    }

    #[test]
    fn thesis_move_count() {
        // Equal weights: half the difference, as in the original kernel.
        assert_eq!(tasks_to_move(6.0, 1.0, 2.0, 1.0), 2);
        assert_eq!(tasks_to_move(2.0, 1.0, 1.0, 1.0), 0);
        assert_eq!(tasks_to_move(3.0, 1.0, 1.0, 1.0), 1);
        // Thesis example: RT uses 3/4 (M = 4), 5 tasks: (5·4 − 0)/(4+1) = 4 leave.
        assert_eq!(tasks_to_move(5.0, 4.0, 0.0, 1.0), 4);
        // One normal task on an RT CPU with M = 11 and an idle NRT CPU: 0.92 → 1.
        assert_eq!(tasks_to_move(1.0, 11.0, 0.0, 1.0), 1);
        assert_eq!(tasks_to_move(0.0, 1.0, 3.0, 1.0), 0);
    }
}
