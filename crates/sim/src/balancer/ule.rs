//! FreeBSD ULE as summarised in the ARTiS thesis §2.2.6: an idle CPU steals
//! one task from the longest queue; twice a second the longest queue pushes
//! to the shortest.

use super::{after_pull, candidates, Balancer};
use crate::config::{BalancerKind, SimConfig};
use crate::engine::Engine;

pub(crate) struct Ule {
    /// Push period, in ticks.
    push_ticks: u64,
}

impl Ule {
    pub(crate) fn new(cfg: &SimConfig) -> Self {
        Ule {
            push_ticks: cfg.ticks(cfg.ule_push_ns),
        }
    }
}

impl Balancer for Ule {
    fn kind(&self) -> BalancerKind {
        BalancerKind::Ule
    }

    fn on_tick(&self, e: &mut Engine) {
        for c in 0..e.cpus.len() {
            if e.cpus[c].current.is_none() && idle_pull(e, c) {
                after_pull(e, c);
            }
        }
        if e.tick_no % self.push_ticks == 0 {
            push(e);
        }
    }

    fn on_idle(&self, e: &mut Engine, c: usize) {
        idle_pull(e, c);
    }
}

/// An idle CPU steals one task from the longest queue.
fn idle_pull(e: &mut Engine, c: usize) -> bool {
    let n = e.cpus.len();
    let mut order: Vec<usize> = (0..n)
        .filter(|&i| i != c && e.cpus[i].nr_running() >= 2)
        .collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(e.cpus[i].nr_running()), i));
    for b in order {
        if let Some(t) = candidates(e, b, false)
            .into_iter()
            .find(|&t| e.tasks[t].mask[c])
        {
            e.lock_pair(c, b);
            let kind = e.kind_between(b, c);
            e.move_queued(t, b, c, kind);
            return true;
        }
    }
    false
}

/// Push from the longest queue to the shortest until they are equal.
fn push(e: &mut Engine) {
    let n = e.cpus.len();
    if n < 2 {
        return;
    }
    let longest = (0..n)
        .max_by_key(|&i| (e.cpus[i].nr_running(), std::cmp::Reverse(i)))
        .unwrap();
    let shortest = (0..n).min_by_key(|&i| (e.cpus[i].nr_running(), i)).unwrap();
    let (nl, ns) = (e.cpus[longest].nr_running(), e.cpus[shortest].nr_running());
    if longest == shortest || nl <= ns + 1 {
        return;
    }
    let want = (nl - ns) / 2;
    let mut moved = 0;
    for t in candidates(e, longest, false) {
        if moved >= want {
            break;
        }
        if !e.tasks[t].mask[shortest] {
            continue;
        }
        if moved == 0 {
            e.lock_pair(longest, shortest);
        }
        let kind = e.kind_between(longest, shortest);
        e.move_queued(t, longest, shortest, kind);
        moved += 1;
    }
    if moved > 0 {
        after_pull(e, shortest);
    }
}
