//! [`Watch`]: the last values of what shields the measured CPUs, and the
//! events a new reading makes of them.

use crate::snapshot::{measured_in, Key, Sets, Snapshot};
use rtshield_isolation::Partitions;
use rtshield_results::{drift_kind as kind, DriftEffect as Effect, DriftEvent, DriftWatch};
use rtshield_sys as sys;
use rtshield_sys::Root;
use rtshield_vocab::CpuSet;
use std::collections::{BTreeMap, BTreeSet};

/// Task status files read per tick at most (new tasks first, then the
/// known ones in turn): a machine with thousands of threads costs the
/// same per tick as one with a hundred; a known task's change is seen
/// within `ceil(tasks / TASK_BUDGET)` ticks.
pub const TASK_BUDGET: usize = 256;

/// What to watch.
#[derive(Debug, Clone)]
pub struct WatchSpec {
    /// Where the kernel files are (a fake tree in tests).
    pub root: Root,
    /// The measured CPUs.
    pub cpus: CpuSet,
    /// The `--parent` of the partition shielding them, when the run named
    /// one; else the partition covering them is looked for
    /// ([`Partitions::covering`]).
    pub parent: Option<String>,
    /// Tasks of this process and its descendants are the run's own (its
    /// measuring threads, its programs): never reported.
    pub own_pid: u32,
}

/// The drift watch's state: the last values, the clock, the counters.
pub struct Watch {
    spec: WatchSpec,
    sets: Sets,
    /// Watch every task's affinity: the measured CPUs are shielded from
    /// the whole machine (isolcpus, or a partition at the hierarchy's
    /// root), so a task newly allowed there is a change. Otherwise every
    /// task outside the partition may run there by design.
    all_tasks: bool,
    last: Snapshot,
    /// Members of the rt set seen (ours included, so they are checked once).
    rt_members: BTreeSet<u32>,
    /// Each task's measured CPUs in its affinity (when `all_tasks`).
    tasks: BTreeMap<u32, CpuSet>,
    /// Round-robin position in `tasks`.
    cursor: u32,
    /// Time of the last tick (the run's clock).
    last_ns: u64,
    info: DriftWatch,
    tick_total_ns: u64,
}

impl Watch {
    /// Find the partition, read the baseline at time `now_ns` (the run's
    /// clock); no event comes from the baseline.
    pub fn new(spec: WatchSpec, now_ns: u64) -> Watch {
        let found = Partitions::discover(&spec.root);
        let partition = match &spec.parent {
            Some(p) => found
                .all()
                .iter()
                .find(|q| q.parent.as_deref() == Some(p.as_str()))
                .cloned()
                .or_else(|| {
                    let (rt, nrt) = found.under(&spec.root, p);
                    Some(rtshield_isolation::Partition {
                        owner: rtshield_isolation::Owner::Rtshield,
                        parent: Some(p.clone()),
                        rt: rt.map(|dir| rtshield_isolation::Set { dir, cpus: None }),
                        nrt: nrt.map(|dir| rtshield_isolation::Set { dir, cpus: None }),
                    })
                }),
            None => spec.cpus.iter().find_map(|c| found.covering(c).cloned()),
        };
        let sets = Sets {
            hierarchy: found.hierarchy().cloned(),
            rt: partition
                .as_ref()
                .and_then(|p| p.rt.as_ref().map(|s| s.dir.clone())),
            nrt: partition
                .as_ref()
                .and_then(|p| p.nrt.as_ref().map(|s| s.dir.clone())),
        };
        let isolated = sys::isolated_cpus(&spec.root);
        let all_tasks = !spec.cpus.is_empty()
            && (spec.cpus.is_subset(&isolated)
                || partition.as_ref().is_some_and(|p| p.parent.is_none()));
        let mut unwatched = Vec::new();
        if sets.rt.is_none() {
            unwatched.push("rt tasks, cpusets: no partition shields the measured CPUs".into());
        }
        if !all_tasks {
            unwatched.push(
                "task affinities outside the rt set: the measured CPUs are not shielded from the \
                 whole machine (no isolcpus=, no partition at the hierarchy's root)"
                    .into(),
            );
        }
        let mut w = Watch {
            info: DriftWatch {
                cpus: spec.cpus.to_list(),
                task_budget: TASK_BUDGET as u64,
                unwatched,
                ..DriftWatch::default()
            },
            sets,
            all_tasks,
            last: Snapshot::default(),
            rt_members: BTreeSet::new(),
            tasks: BTreeMap::new(),
            cursor: 0,
            last_ns: now_ns,
            tick_total_ns: 0,
            spec,
        };
        w.last = Snapshot::read(&w.spec.root, &w.spec.cpus, &w.sets);
        let mut ignored = Vec::new();
        w.rt_tasks(now_ns, &mut ignored);
        w.task_affinities(now_ns, &mut ignored);
        w.info.ticks = 1;
        w
    }

    /// Read again at `now_ns` (the run's clock, after the last tick's):
    /// one event per value changed since the last tick.
    pub fn tick(&mut self, now_ns: u64) -> Vec<DriftEvent> {
        let t0 = std::time::Instant::now();
        let cur = Snapshot::read(&self.spec.root, &self.spec.cpus, &self.sets);
        let mut events = self.diff(&cur, now_ns);
        self.last = cur;
        self.rt_tasks(now_ns, &mut events);
        self.task_affinities(now_ns, &mut events);
        self.last_ns = now_ns;
        self.info.ticks += 1;
        let took = t0.elapsed().as_nanos() as u64;
        self.tick_total_ns += took;
        let max = self.info.tick_max_us.unwrap_or(0.0).max(took as f64 / 1e3);
        self.info.tick_max_us = Some(max);
        self.info.tick_mean_us =
            Some(self.tick_total_ns as f64 / 1e3 / (self.info.ticks - 1) as f64);
        events
    }

    /// How the watch ran so far.
    pub fn info(&self) -> DriftWatch {
        let mut i = self.info.clone();
        i.tasks = self.tasks.len().max(self.rt_members.len()) as u64;
        i.irqs = self
            .last
            .values
            .keys()
            .filter(|(k, _)| *k == kind::IRQ_AFFINITY)
            .count() as u64;
        i
    }

    fn event(&self, now_ns: u64, k: &'static str, object: String) -> DriftEvent {
        DriftEvent {
            at_ns: now_ns,
            since_ns: self.last_ns,
            kind: k.to_string(),
            object,
            before: None,
            after: None,
            effect: Effect::Changes,
            cpus: String::new(),
        }
    }

    /// The values that differ between the last snapshot and `cur`.
    fn diff(&self, cur: &Snapshot, now_ns: u64) -> Vec<DriftEvent> {
        let keys: BTreeSet<&Key> = self.last.values.keys().chain(cur.values.keys()).collect();
        let mut out = Vec::new();
        for key in keys {
            let before = self.last.values.get(key);
            let after = cur.values.get(key);
            if before == after {
                continue;
            }
            let (k, object) = key;
            let mut e = self.event(now_ns, k, object.clone());
            e.before = before.cloned();
            e.after = after.cloned();
            (e.effect, e.cpus) = self.effect(k, object, before, after);
            if *k == kind::IRQ_AFFINITY {
                let n = object.trim_start_matches("irq ");
                if let Some(a) = sys::irq_actions(&self.spec.root, n) {
                    e.object = format!("{object} ({a})");
                }
            }
            out.push(e);
        }
        out
    }

    /// What a change of `key` from `before` to `after` does, and to which
    /// measured CPUs.
    fn effect(
        &self,
        k: &str,
        object: &str,
        before: Option<&String>,
        after: Option<&String>,
    ) -> (Effect, String) {
        let m = &self.spec.cpus;
        let list = |v: Option<&String>| v.and_then(|v| measured_in(v, m)).unwrap_or_default();
        let (b, a) = (list(before), list(after));
        let by_lists = |rt: bool| {
            let (gained, lost) = (a.difference(&b), b.difference(&a));
            let cpus = gained.union(&lost).to_list();
            match (gained.is_empty(), lost.is_empty(), rt) {
                (false, _, false) | (_, false, true) => (Effect::Exposes, cpus),
                (_, false, false) | (false, _, true) => (Effect::Shields, cpus),
                _ => (Effect::Changes, cpus),
            }
        };
        let flag = |v: Option<&String>| v.map(|s| s.trim() == "1");
        match k {
            kind::IRQ_AFFINITY | kind::IRQ_DEFAULT_AFFINITY | kind::WORKQUEUE_CPUMASK => {
                by_lists(false)
            }
            kind::CPUSET_CPUS => by_lists(self.sets.rt.as_deref() == Some(object)),
            kind::CPUSET_PARTITION => {
                let invalid = |v: Option<&String>| v.is_some_and(|s| s.contains("invalid"));
                let e = match (invalid(before), invalid(after)) {
                    (false, true) => Effect::Exposes,
                    (true, false) => Effect::Shields,
                    _ => Effect::Changes,
                };
                (e, m.to_list())
            }
            kind::CPUIDLE_STATE => {
                let cpu = object
                    .split(' ')
                    .next()
                    .unwrap_or("")
                    .trim_start_matches("cpu");
                // Enabling a deep state lets wake-ups pay its exit latency.
                let e = match (flag(before), flag(after)) {
                    (Some(true), Some(false)) => Effect::Exposes,
                    (Some(false), Some(true)) => Effect::Shields,
                    _ => Effect::Changes,
                };
                (e, cpu.to_string())
            }
            kind::CPUFREQ_GOVERNOR => (
                Effect::Changes,
                object.trim_start_matches("cpu").to_string(),
            ),
            kind::CPU_ONLINE => {
                let (gained, lost) = (a.difference(&b), b.difference(&a));
                (Effect::Changes, gained.union(&lost).to_list())
            }
            _ => (Effect::Changes, String::new()),
        }
    }

    /// Whether task `tid` is this process's or a descendant's (looked up
    /// through at most 16 parents).
    fn ours(&self, tid: u32) -> bool {
        let root = &self.spec.root;
        let mut pid = sys::task_tgid(root, tid).unwrap_or(tid);
        for _ in 0..16 {
            if pid == self.spec.own_pid {
                return true;
            }
            match sys::task_status(root, pid).and_then(|s| s.ppid) {
                Some(p) if p > 1 => pid = p,
                _ => return false,
            }
        }
        false
    }

    /// Tasks that joined the rt set since the last tick (not ours): one
    /// event each. Tasks leaving it (most often: exiting) are not events.
    fn rt_tasks(&mut self, now_ns: u64, out: &mut Vec<DriftEvent>) {
        let (Some(h), Some(rt)) = (&self.sets.hierarchy, &self.sets.rt) else {
            return;
        };
        let Some(now) = sys::cgroup_members(&self.spec.root, h, rt) else {
            return;
        };
        let now: BTreeSet<u32> = now.into_iter().collect();
        let first = self.info.ticks == 0;
        for &tid in now.difference(&self.rt_members) {
            if first || self.ours(tid) {
                continue;
            }
            let comm = sys::task_comm(&self.spec.root, tid).unwrap_or_default();
            let mut e = self.event(now_ns, kind::RT_TASK, format!("task {tid} ({comm})"));
            e.after = Some(rt.clone());
            e.effect = Effect::Exposes;
            e.cpus = self.spec.cpus.to_list();
            out.push(e);
        }
        self.rt_members = now;
    }

    /// With `all_tasks`: new tasks allowed on a measured CPU, and known
    /// tasks whose affinity gains or loses one, at most [`TASK_BUDGET`]
    /// status files per tick. Kernel threads are not followed (per-CPU
    /// kworkers come and go on every CPU; `audit` lists them).
    fn task_affinities(&mut self, now_ns: u64, out: &mut Vec<DriftEvent>) {
        if !self.all_tasks {
            return;
        }
        let root = self.spec.root.clone();
        let first = self.info.ticks == 0;
        let mut live = BTreeSet::new();
        for pid in sys::pids(&root) {
            live.extend(sys::tids(&root, pid).unwrap_or_default());
        }
        self.tasks.retain(|t, _| live.contains(t));
        let new: Vec<u32> = live
            .iter()
            .copied()
            .filter(|t| !self.tasks.contains_key(t))
            .collect();
        let mut budget = TASK_BUDGET;
        for tid in new
            .into_iter()
            .take(if first { usize::MAX } else { TASK_BUDGET })
        {
            budget = budget.saturating_sub(1);
            let Some(st) = sys::task_status(&root, tid) else {
                continue;
            };
            let kthread = st.kthread == Some(true) || st.ppid == Some(2) || tid == 2;
            let allowed = st
                .cpus_allowed_list
                .as_deref()
                .and_then(|v| measured_in(v, &self.spec.cpus))
                .unwrap_or_default();
            if !first && !kthread && !allowed.is_empty() && !self.ours(tid) {
                let mut e = self.event(
                    now_ns,
                    kind::TASK_AFFINITY,
                    format!("task {tid} ({})", st.name),
                );
                e.after = st.cpus_allowed_list.clone();
                e.effect = Effect::Exposes;
                e.cpus = allowed.to_list();
                out.push(e);
            }
            // Kernel threads and ours are remembered as allowed nowhere
            // that matters: their changes are not followed.
            let keep = if kthread {
                self.spec.cpus.clone()
            } else {
                allowed
            };
            self.tasks.insert(tid, keep);
        }
        self.known_tasks(now_ns, budget, out);
    }

    /// Re-read up to `budget` known tasks, in turn from the cursor.
    fn known_tasks(&mut self, now_ns: u64, budget: usize, out: &mut Vec<DriftEvent>) {
        let root = self.spec.root.clone();
        let ids: Vec<u32> = self
            .tasks
            .range(self.cursor..)
            .chain(self.tasks.range(..self.cursor))
            .map(|(t, _)| *t)
            .take(budget)
            .collect();
        for tid in ids {
            self.cursor = tid + 1;
            let Some(st) = sys::task_status(&root, tid) else {
                continue;
            };
            if st.kthread == Some(true) || st.ppid == Some(2) {
                continue;
            }
            let Some(now) = st
                .cpus_allowed_list
                .as_deref()
                .and_then(|v| measured_in(v, &self.spec.cpus))
            else {
                continue;
            };
            let before = self.tasks.insert(tid, now.clone()).unwrap_or_default();
            if before == now || self.ours(tid) {
                continue;
            }
            let mut e = self.event(
                now_ns,
                kind::TASK_AFFINITY,
                format!("task {tid} ({})", st.name),
            );
            e.before = Some(if before.is_empty() {
                "-".into()
            } else {
                before.to_list()
            });
            e.after = st.cpus_allowed_list.clone();
            let gained = now.difference(&before);
            e.effect = if gained.is_empty() {
                Effect::Shields
            } else {
                Effect::Exposes
            };
            e.cpus = gained.union(&before.difference(&now)).to_list();
            out.push(e);
        }
    }
}
