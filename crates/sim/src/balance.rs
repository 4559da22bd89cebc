//! The balancers: Linux 2.6's O(1) pull balancer, ULE's idle pull plus
//! periodic push, and ARTiS (thesis model and 2005 patch).

use crate::engine::{Class, Engine, MigKind, State};
use crate::stats;
use crate::BalancerKind;

/// Called once per tick, after the per-CPU tick work. All CPUs balance on
/// the same tick, in CPU order.
pub(crate) fn on_tick(e: &mut Engine) {
    let k = e.tick_no;
    let n = e.cpus.len();
    match e.cfg.balancer {
        BalancerKind::Linux26 => {
            for c in 0..n {
                let idle = e.cpus[c].current.is_none();
                if idle || k % e.busy_ticks == 0 {
                    let moved = linux_load_balance(e, c, idle, false);
                    if moved > 0 {
                        after_pull(e, c);
                    }
                }
            }
        }
        BalancerKind::Ule => {
            for c in 0..n {
                if e.cpus[c].current.is_none() && ule_idle_pull(e, c) {
                    after_pull(e, c);
                }
            }
            if k % e.ule_ticks == 0 {
                ule_push(e);
            }
        }
        BalancerKind::Artis | BalancerKind::Artis2005 => {
            // CPUs an RT1+ task belongs to (queued or asleep there): the
            // return pass has nothing to do elsewhere. Computed once per
            // tick, not per CPU: artis-2005 returns on every tick.
            let return_tick = k % e.return_ticks == 0;
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
                    if !idle && k % e.busy_ticks == 0 {
                        artis_push_from_rt(e, c);
                    }
                    continue;
                }
                if (idle || k % e.busy_ticks == 0) && linux_load_balance(e, c, idle, true) > 0 {
                    after_pull(e, c);
                }
                let mut returned = 0;
                if return_tick && rt1_home.get(c).copied().unwrap_or(false) {
                    returned = artis_return_rt(e, c);
                }
                if k % e.busy_ticks == 0 && returned == 0 {
                    artis_push_to_rt(e, c);
                }
            }
        }
    }
}

/// CPU `c` found its run-queue empty in schedule().
pub(crate) fn on_idle(e: &mut Engine, c: usize) {
    match e.cfg.balancer {
        BalancerKind::Linux26 => {
            linux_load_balance(e, c, true, false);
        }
        BalancerKind::Ule => {
            ule_idle_pull(e, c);
        }
        BalancerKind::Artis | BalancerKind::Artis2005 => {
            if !e.cpus[c].is_rt {
                linux_load_balance(e, c, true, true);
            }
        }
    }
}

/// Tasks were pulled to `c`: run them if `c` is idle, or preempt if they outrank.
fn after_pull(e: &mut Engine, c: usize) {
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
fn candidates(e: &Engine, src: usize, normal_first: bool) -> Vec<usize> {
    let mut v: Vec<usize> = e.cpus[src].queue.clone();
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

fn cache_hot(e: &Engine, t: usize) -> bool {
    e.now.saturating_sub(e.tasks[t].last_ran) < e.cache_decay_ns
}

/// Linux 2.6.4 `load_balance()` pulling to `c`. With `nrt_only` (ARTiS NRT
/// CPUs) only NRT CPUs are looked at: the RT run-queues are never locked.
/// Returns the number of tasks moved.
fn linux_load_balance(e: &mut Engine, c: usize, idle: bool, nrt_only: bool) -> usize {
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
    let artis = e.cfg.balancer.is_artis();
    let mut moved = 0;
    for t in candidates(e, b, false) {
        if moved >= want {
            break;
        }
        let task = &e.tasks[t];
        if !task.mask[c] || task.mask_pending || (artis && task.class == Class::Rt0) {
            continue;
        }
        if !idle && cache_hot(e, t) {
            continue;
        }
        let kind = e.kind_between(b, c);
        e.move_queued(t, b, c, kind);
        moved += 1;
    }
    moved
}

/// ULE: an idle CPU steals one task from the longest queue.
fn ule_idle_pull(e: &mut Engine, c: usize) -> bool {
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

/// ULE, twice a second: push from the longest queue to the shortest until
/// they are equal.
fn ule_push(e: &mut Engine) {
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

// -------------------------------------------------------------------- ARTiS

/// Annex A `artis_migration_stat()`: record an interrupt-masking attempt
/// and update the mean period (weight 2028/2048, about the last 100 attempts).
pub(crate) fn artis_migration_stat(e: &mut Engine, t: usize) {
    let now = e.now;
    let task = &mut e.tasks[t];
    let old = task.last_attempt;
    task.last_attempt = now;
    task.attempts += 1;
    // The 2005 patch only initialises the timestamp on the first attempt;
    // annex A measures the first period from time 0.
    if e.cfg.balancer == BalancerKind::Artis2005 && task.attempts == 1 {
        return;
    }
    let current_period = u128::from(now - old) * stats::FIXED_P_1;
    task.attempt_period_fp = stats::calc_period(task.attempt_period_fp, current_period);
}

/// May task `t` go to an RT CPU now? (thesis §3.2.3 / the 2005 patch)
pub(crate) fn artis_may_go_rt(e: &Engine, t: usize) -> bool {
    let task = &e.tasks[t];
    let td = task.last_attempt;
    let pm = (task.attempt_period_fp >> stats::FSHIFT_P) as u64;
    match e.cfg.balancer {
        BalancerKind::Artis2005 => patch2005_allows(pm, td, e.now, e.cfg.artis_c_ns),
        _ => thesis_allows(pm, td, e.now, e.cfg.artis_c_ns, e.cfg.artis_k),
    }
}

/// The thesis's two conditions, exactly as written (§3.2.3): a move to an
/// RT CPU is allowed when `(Pm + td) − t > C` or `K·td < t − Pm`, with Pm
/// the mean period between masking attempts, td the instant of the last
/// one and t now (all ns since the scenario start).
pub fn thesis_allows(pm: u64, td: u64, t: u64, c: u64, k: u64) -> bool {
    let (pm, td, t, c, k) = (
        i128::from(pm),
        i128::from(td),
        i128::from(t),
        i128::from(c),
        i128::from(k),
    );
    (pm + td) - t > c || k * td < t - pm
}

/// The 2005 patch's `can_migrate_task()` test, as published: refuse when
/// `now > next − C && now > next + 2·Pm` with `next = td + Pm`, in unsigned
/// arithmetic (when `next < C` the subtraction wraps and the first test
/// fails, so a task that never masked is allowed).
pub fn patch2005_allows(pm: u64, td: u64, now: u64, c: u64) -> bool {
    let next = td + pm;
    let first = next.checked_sub(c).is_some_and(|x| now > x);
    let second = now > next + pm * 2;
    !(first && second)
}

/// Weighted load of a CPU: L·M with L the runnable non-RT tasks and M the
/// RT-share multiplier.
pub(crate) fn artis_load(e: &Engine, c: usize) -> f64 {
    normal_count(e, c) * artis_multiplier(e, c)
}

pub(crate) fn artis_multiplier(e: &Engine, c: usize) -> f64 {
    let rt = e.cpus[c].rt_stat;
    match e.cfg.balancer {
        BalancerKind::Artis2005 => stats::rt_ratio_2005(rt) as f64,
        _ => stats::rt_multiplier(rt),
    }
}

/// L: runnable normal tasks, the running one included.
fn normal_count(e: &Engine, c: usize) -> f64 {
    let cpu = &e.cpus[c];
    let running = cpu.current.is_some_and(|t| e.tasks[t].is_normal());
    (cpu.queued_normal() + usize::from(running)) as f64
}

/// The CPU with the lowest weighted load among those `ok` accepts (ties:
/// the lowest number).
fn least_loaded(e: &Engine, mut ok: impl FnMut(usize) -> bool) -> Option<usize> {
    (0..e.cpus.len()).filter(|&i| ok(i)).min_by(|&a, &b| {
        artis_load(e, a)
            .total_cmp(&artis_load(e, b))
            .then(a.cmp(&b))
    })
}

/// n = (Le·Me − Lr·Mr) / (Me + Mr), rounded to the nearest integer with
/// ties down. Moving one task when n = 0.9 leaves the pair nearer to equal
/// than not moving (after the move the imbalance is 1 − n); a tie (n = 0.5,
/// e.g. 2 tasks against 1 at equal weights) would only swap the imbalance
/// and ping-pong, so it stays.
pub(crate) fn artis_tasks_to_move(e: &Engine, from: usize, to: usize) -> usize {
    let (le, me) = (normal_count(e, from), artis_multiplier(e, from));
    let (lr, mr) = (normal_count(e, to), artis_multiplier(e, to));
    tasks_to_move(le, me, lr, mr)
}

pub fn tasks_to_move(le: f64, me: f64, lr: f64, mr: f64) -> usize {
    let n = (le * me - lr * mr) / (me + mr);
    let r = (n - 0.5).ceil();
    if r >= 1.0 {
        r as usize
    } else {
        0
    }
}

/// A non-RT0 task attempted to mask interrupts on RT CPU `c`: it leaves
/// through the (c, NRT) FIFO and does its masking section over there.
pub(crate) fn forced_migration(e: &mut Engine, c: usize, t: usize) {
    let nrt_in_mask = |i: usize| !e.cpus[i].is_rt && e.tasks[t].mask[i];
    // The scenario check guarantees a masking task an NRT CPU in its mask.
    let dest = match e.cfg.balancer {
        // complete_migration(): "for the time being we choose the first one
        // which respects the affinity".
        BalancerKind::Artis2005 => (0..e.cpus.len()).find(|&i| nrt_in_mask(i)),
        _ => least_loaded(e, nrt_in_mask),
    }
    .expect("a masking task has an NRT CPU in its mask");
    e.settle(c);
    // The running task is switched out, then pushed by the next task.
    e.stop_current(c);
    e.tasks[t].mask_pending = true;
    e.send_fifo(t, c, dest, MigKind::RtNrtForced);
    e.schedule(c);
}

/// The RT CPU `e` pushes load to the least loaded CPU (weighted loads).
fn artis_push_from_rt(e: &mut Engine, src: usize) {
    let Some(dst) = least_loaded(e, |i| i != src) else {
        return;
    };
    let want = artis_tasks_to_move(e, src, dst);
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
        // Thesis §3.2.4: RT→RT keeps the original designation, the
        // prediction test is for tasks arriving from an NRT CPU. The 2005
        // patch's can_migrate_task() tests every move to an RT CPU.
        if to_rt && e.cfg.balancer == BalancerKind::Artis2005 && !artis_may_go_rt(e, t) {
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
fn artis_return_rt(e: &mut Engine, src: usize) -> usize {
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
        if task.mask_pending || !artis_may_go_rt(e, t) {
            continue;
        }
        // The destination is chosen once the task is designated.
        let Some(dst) = (0..n)
            .filter(|&i| e.cpus[i].is_rt && e.tasks[t].mask[i])
            .min_by(|&a, &b| {
                artis_load(e, a)
                    .total_cmp(&artis_load(e, b))
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
fn artis_push_to_rt(e: &mut Engine, src: usize) {
    let Some(dst) = least_loaded(e, |i| e.cpus[i].is_rt) else {
        return;
    };
    let want = artis_tasks_to_move(e, src, dst);
    let mut moved = 0;
    for t in candidates(e, src, true) {
        if moved >= want {
            break;
        }
        let task = &e.tasks[t];
        if !task.is_normal() || task.mask_pending || !task.mask[dst] || cache_hot(e, t) {
            continue;
        }
        if !artis_may_go_rt(e, t) {
            continue;
        }
        e.push_fifo(t, src, dst, MigKind::NrtRtBalance);
        moved += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::{patch2005_allows, tasks_to_move, thesis_allows};

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
    fn patch_2005_condition_as_published() {
        let c = 2 * MS;
        // Never masked: next = 0 < C, the subtraction wraps: allowed.
        assert!(patch2005_allows(0, 0, 10_000 * MS, c));
        // Masks every 100 ms, last at 1000 ms: allowed up to next + 2·Pm = 1300 ms…
        assert!(patch2005_allows(100 * MS, 1000 * MS, 1099 * MS, c));
        assert!(patch2005_allows(100 * MS, 1000 * MS, 1300 * MS, c));
        // …and refused once the attempt is overdue by more than two periods.
        assert!(!patch2005_allows(100 * MS, 1000 * MS, 1301 * MS, c));
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
