//! Linux 2.6.4's O(1) balancer (the ARTiS thesis §2.2): every CPU pulls
//! from the busiest one, at once when idle, every 200 ms when busy.

use super::{after_pull, cache_hot, candidates_where, Balancer};
use crate::config::{BalancerKind, SimConfig};
use crate::engine::{Class, Engine};

pub(crate) struct Linux26 {
    /// Busy-CPU balance period, in ticks.
    busy_ticks: u64,
}

impl Linux26 {
    pub(crate) fn new(cfg: &SimConfig) -> Self {
        Linux26 {
            busy_ticks: cfg.ticks(cfg.busy_balance_ns),
        }
    }
}

impl Balancer for Linux26 {
    fn kind(&self) -> BalancerKind {
        BalancerKind::Linux26
    }

    /// All CPUs balance on the same tick, in CPU order.
    fn on_tick(&self, e: &mut Engine) {
        let k = e.tick_no;
        for c in 0..e.cpus.len() {
            let idle = e.cpus[c].current.is_none();
            if idle || k % self.busy_ticks == 0 {
                let moved = load_balance(e, c, idle, Scope::All);
                if moved > 0 {
                    after_pull(e, c);
                }
            }
        }
    }

    fn on_idle(&self, e: &mut Engine, c: usize) {
        load_balance(e, c, true, Scope::All);
    }
}

/// Which CPUs `load_balance` looks at and which tasks it may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Every CPU, every task its mask allows (plain Linux).
    All,
    /// ARTiS NRT CPUs: only NRT CPUs are looked at, so the RT run-queues
    /// are never locked, and an RT0 task is never taken.
    ArtisNrt,
}

/// Linux 2.6.4 `load_balance()` pulling to `c`. Returns the number of tasks
/// moved.
pub(crate) fn load_balance(e: &mut Engine, c: usize, idle: bool, scope: Scope) -> usize {
    let nrt_only = scope == Scope::ArtisNrt;
    let n = e.cpus.len();
    let nr = e.cpus[c].nr_running();
    // Local load: the max of now and last time, unless idle.
    let prev_local = e.cpus[c].prev_load[c];
    let this_load = if idle || nr > prev_local {
        nr
    } else {
        prev_local
    };
    e.cpus[c].prev_load[c] = nr;
    let mut busiest = None;
    let mut max_load = 1;
    for i in 0..n {
        if i == c || (nrt_only && e.cpus[i].is_rt) {
            continue;
        }
        let nri = e.cpus[i].nr_running();
        // Remote load: the min of now and last time (filters bursts).
        let load = nri.min(e.cpus[c].prev_load[i]);
        e.cpus[c].prev_load[i] = nri;
        if load > max_load {
            max_load = load;
            busiest = Some(i);
        }
    }
    let Some(b) = busiest else { return 0 };
    if max_load <= this_load {
        return 0;
    }
    let imbalance = max_load - this_load;
    // A busy CPU needs the busiest queue to be ~25 % longer than its own.
    if !idle && imbalance * 4 < max_load {
        return 0;
    }
    let want = if idle { 1 } else { imbalance / 2 };
    if want == 0 {
        return 0;
    }
    e.lock_pair(c, b);
    let mut moved = 0;
    // A task's eligibility does not change with the moves below.
    let eligible = |t: usize| {
        let task = &e.tasks[t];
        task.mask[c]
            && !task.mask_pending
            && !(nrt_only && task.class == Class::Rt0)
            && (idle || !cache_hot(e, t))
    };
    for t in candidates_where(e, b, false, eligible) {
        if moved >= want {
            break;
        }
        let kind = e.kind_between(b, c);
        e.move_queued(t, b, c, kind);
        moved += 1;
    }
    moved
}
