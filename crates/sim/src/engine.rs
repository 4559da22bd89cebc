//! The discrete-event core: CPUs with O(1)-style run-queues, tasks that
//! compute, sleep and mask interrupts, a global tick, and an event queue.
//!
//! Time is integer nanoseconds from the scenario start. Events at the same
//! instant run in the order they were scheduled (a sequence number breaks
//! ties), and the tick at time T runs after every event before T and before
//! every event at T, so a run is a pure function of its inputs.

use crate::balancer::{self, Balancer};
use crate::config::{Placement, SimConfig, SimError};
use crate::stats::{self, LatencyAcc, SimExtra};
use crate::trace::{Segment, SegmentKind, TraceRow};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtshield_scenario::BalanceReport;
use rtshield_scenario::{Scenario, TaskSpec};
use rtshield_vocab::Policy;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// The result of one run.
#[derive(Debug, Clone)]
pub struct SimOutcome {
    /// The balance report, in the shape the real-kernel runner also writes.
    pub report: BalanceReport,
    /// The simulator's own figures (events, parameters, placement, RT shares).
    pub extra: SimExtra,
    /// The event trace, when [`SimConfig::record_trace`] was set.
    pub trace: Option<Vec<TraceRow>>,
    /// Every CPU's run segments, when [`SimConfig::record_segments`] was set.
    pub segments: Option<Vec<Segment>>,
}

impl SimOutcome {
    /// The JSON document `--json` writes: the shared balance report
    /// (`rtshield.balance/1`) with the simulator's extras under `sim`.
    pub fn to_json_value(&self) -> serde_json::Value {
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            #[serde(flatten)]
            report: &'a BalanceReport,
            sim: &'a SimExtra,
        }
        serde_json::to_value(Doc {
            report: &self.report,
            sim: &self.extra,
        })
        .expect("reports serialise")
    }

    /// [`SimOutcome::to_json_value`] as pretty-printed JSON text ending with a newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(&self.to_json_value()).expect("reports serialise");
        s.push('\n');
        s
    }
}

/// Run `scenario` on the machine described by `cfg`.
pub fn simulate(scenario: &Scenario, cfg: &SimConfig) -> Result<SimOutcome, SimError> {
    cfg.validate()?;
    let bal = balancer::build(cfg);
    let mut e = Engine::new(scenario, cfg, &*bal)?;
    e.run()?;
    Ok(e.finish())
}

/// Task classes as ARTiS sees them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// SCHED_FIFO priority 99: ARTiS's RT0, never migrated by ARTiS.
    Rt0,
    /// Other SCHED_FIFO / SCHED_RR tasks (ARTiS's RT1+).
    Rt,
    Normal,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    NotStarted,
    Runnable,
    Running,
    Sleeping,
    /// In an ARTiS FIFO between two CPUs.
    Migrating,
    Finished,
}

/// Migration kinds, indexes into `Engine::mig_kinds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MigKind {
    NrtNrt = 0,
    RtNrtForced = 1,
    RtNrtBalance = 2,
    NrtRtReturn = 3,
    NrtRtBalance = 4,
    RtRt = 5,
}

pub(crate) const MIG_KIND_NAMES: [&str; 6] = [
    "nrt->nrt",
    "rt->nrt forced",
    "rt->nrt balance",
    "nrt->rt return",
    "nrt->rt balance",
    "rt->rt",
];

/// Where a task goes in a run-queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Enq {
    /// Front of its priority level (a preempted task resumes first).
    Head,
    /// Back of its priority level, active array.
    Tail,
    /// O(1)'s expired array (a normal task that used up its slice).
    Expired,
}

pub(crate) struct Task {
    pub class: Class,
    pub policy: Policy,
    pub rt_prio: i32,
    pub nice: i32,
    /// Allowed CPUs, indexed by CPU.
    pub mask: Vec<bool>,
    pub work_ns: u64,
    pub sloop_ns: Option<u64>,
    pub sleep_ns: u64,
    pub irq_ns: Option<u64>,
    pub done_ns: u64,
    pub next_sleep_at: Option<u64>,
    pub next_mask_at: Option<u64>,
    pub state: State,
    pub cpu: usize,
    pub slice_left: u64,
    pub slice_expired: bool,
    /// Which O(1) array: active when equal to the CPU's epoch, expired when one more.
    pub epoch: u64,
    pub seq: i64,
    pub in_mask_until: Option<u64>,
    /// Forced off an RT CPU by ARTiS: the masking section it attempted is
    /// still to be done, on the NRT CPU.
    pub mask_pending: bool,
    pub last_ran: u64,
    /// ARTiS statistics (annex A): last attempt and mean period (fixed point, 11 bits).
    pub last_attempt: u64,
    pub attempt_period_fp: u128,
    pub attempts: u64,
    /// When the pending wake-up happened (for the RT0 latency).
    pub wake_time: Option<u64>,
    pub start_ns: u64,
    pub finish_ns: Option<u64>,
    pub cpu_ns: u64,
    pub cpu_ns_on: Vec<u64>,
    pub migrations: u64,
    pub sections: u64,
}

impl Task {
    /// Lower runs first: RT priorities 99..1 map to 0..98, normal tasks
    /// to 100 + nice + 20 (O(1)'s static priority).
    pub(crate) fn rank(&self) -> i32 {
        match self.class {
            Class::Normal => 120 + self.nice,
            _ => 99 - self.rt_prio,
        }
    }

    pub(crate) fn is_normal(&self) -> bool {
        self.class == Class::Normal
    }

    /// Normal and SCHED_RR tasks have time slices; FIFO tasks do not.
    fn has_slice(&self) -> bool {
        self.class == Class::Normal || self.policy == Policy::Rr
    }
}

pub(crate) struct Cpu {
    pub is_rt: bool,
    pub current: Option<usize>,
    /// Runnable tasks other than the current one.
    pub queue: Vec<usize>,
    /// Parallel to `queue`: what picking the next task needs, so it does
    /// not chase every queued task's struct.
    pub qmeta: Vec<QMeta>,
    pub epoch: u64,
    /// Start of the current accounting phase of the running task.
    pub phase_start: u64,
    /// Generation of the pending milestone event (stale ones are ignored).
    pub gen: u64,
    /// A milestone beyond the next tick, kept out of the event queue until
    /// that tick (a compute-bound task's "end of work" is hours away and
    /// would otherwise pile up in the heap at every preemption).
    pub deferred: Option<(u64, u64)>,
    /// A reschedule is due as soon as the current masking section ends.
    pub need_resched: bool,
    /// Run-queue locked / preemption off until then (balancer, FIFO work):
    /// wake-ups on this CPU wait for it.
    pub lock_until: u64,
    /// Annex A's decayed RT share, fixed point with 15 bits.
    pub rt_stat: u64,
    /// Linux 2.6 `prev_cpu_load[]`, as seen from this CPU.
    pub prev_load: Vec<usize>,
    pub busy_ns: u64,
    pub rt_ns: u64,
    pub seg_start: u64,
    /// Normal tasks currently belonging to this CPU (queued, running or
    /// sleeping here) and the time integral of that count.
    pub normal_here: usize,
    pub normal_area: u128,
    pub normal_since: u64,
}

impl Cpu {
    pub(crate) fn nr_running(&self) -> usize {
        self.queue.len() + usize::from(self.current.is_some())
    }

    /// Queued normal tasks (the running one not included).
    pub(crate) fn queued_normal(&self) -> usize {
        self.qmeta.iter().filter(|m| m.normal).count()
    }
}

/// A queued task as `pick` sees it (kept parallel to `Cpu::queue`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct QMeta {
    /// [`Task::rank`]: lower runs first.
    pub rank: i32,
    /// Queue order within a rank (head insertions are negative).
    pub seq: i64,
    /// O(1) array: active when equal to the CPU's epoch, expired when one more.
    pub epoch: u64,
    /// A normal (non-RT) task: it lives in the active/expired arrays.
    pub normal: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
// u32 indices keep a heap entry at 32 bytes instead of 40: the heap is a
// quarter of the run time.
enum Ev {
    Start { task: u32 },
    Milestone { cpu: u32, gen: u64 },
    Wake { task: u32 },
    Drain { src: u32, dst: u32 },
}

pub(crate) struct Engine<'a> {
    pub cfg: &'a SimConfig,
    /// Called where a kernel's balancer runs; the engine never asks which
    /// one it is.
    pub bal: &'a dyn Balancer,
    pub scenario: &'a Scenario,
    pub specs: &'a [TaskSpec],
    pub now: u64,
    pub tasks: Vec<Task>,
    pub cpus: Vec<Cpu>,
    heap: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    ev_seq: u64,
    seq_tail: i64,
    seq_head: i64,
    /// ARTiS lock-free FIFOs, one per ordered CPU pair: `src * ncpus + dst`.
    pub fifos: Vec<VecDeque<usize>>,
    pub rng: ChaCha8Rng,
    pub mig_kinds: [u64; 6],
    pub latency: Vec<LatencyAcc>,
    pub trace: Option<Vec<TraceRow>>,
    pub segments: Option<Vec<Segment>>,
    pub events: u64,
    pub alive: usize,
    pub idle_while_waiting_ns: u64,
    /// The placement window closes when the first normal task finishes.
    pub placement_end: Option<u64>,
    pub start_skew_ns: u64,
    pub warnings: Vec<String>,
    pub trimmed_masks: usize,
    pub sections_on_rt_by_non_rt0: u64,
    pub tick_no: u64,
    /// ARTiS RT1+ tasks (the return pass looks at the sleeping ones).
    pub rt1_tasks: Vec<usize>,
}

/// Turn busy-loop iterations into nanoseconds of work.
pub(crate) fn loops_to_ns(loops: u64, loops_per_us: f64) -> u64 {
    ((loops as f64) * 1000.0 / loops_per_us).round() as u64
}

/// O(1)'s time slice for a nice level (2.6.4 `task_timeslice`): 10 ms for
/// nice 19, ~100 ms for nice 0, 200 ms for nice -20, in ticks of 1 ms.
pub fn slice_ms(nice: i32) -> u64 {
    let nice = nice.clamp(-20, 19);
    (10 + 190 * (19 - nice) / 39) as u64
}

impl<'a> Engine<'a> {
    fn new(
        scenario: &'a Scenario,
        cfg: &'a SimConfig,
        bal: &'a dyn Balancer,
    ) -> Result<Self, SimError> {
        let n = cfg.ncpus;
        let cpus = (0..n)
            .map(|c| Cpu {
                is_rt: cfg.is_rt_cpu(c),
                current: None,
                queue: Vec::new(),
                qmeta: Vec::new(),
                epoch: 0,
                phase_start: 0,
                gen: 0,
                deferred: None,
                need_resched: false,
                lock_until: 0,
                rt_stat: 0,
                prev_load: vec![0; n],
                busy_ns: 0,
                rt_ns: 0,
                seg_start: 0,
                normal_here: 0,
                normal_area: 0,
                normal_since: 0,
            })
            .collect();
        let mut e = Engine {
            cfg,
            bal,
            scenario,
            specs: &scenario.tasks,
            now: 0,
            tasks: Vec::with_capacity(scenario.tasks.len()),
            cpus,
            heap: BinaryHeap::new(),
            ev_seq: 0,
            seq_tail: 1,
            seq_head: 0,
            fifos: vec![VecDeque::new(); n * n],
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            mig_kinds: [0; 6],
            latency: (0..n).map(|_| LatencyAcc::new()).collect(),
            trace: cfg.record_trace.then(Vec::new),
            segments: cfg.record_segments.then(Vec::new),
            events: 0,
            alive: 0,
            idle_while_waiting_ns: 0,
            placement_end: None,
            start_skew_ns: 0,
            warnings: Vec::new(),
            trimmed_masks: 0,
            sections_on_rt_by_non_rt0: 0,
            tick_no: 0,
            rt1_tasks: Vec::new(),
        };
        let lpus = scenario.globals.loops_per_us.unwrap_or(cfg.loops_per_us);
        let mut placed = vec![0usize; n];
        for spec in &scenario.tasks {
            let task = e.make_task(spec, lpus, &mut placed)?;
            e.tasks.push(task);
        }
        e.alive = e.tasks.len();
        e.rt1_tasks = (0..e.tasks.len())
            .filter(|&t| e.tasks[t].class == Class::Rt)
            .collect();
        if e.trimmed_masks > 0 {
            e.warnings.push(format!(
                "the cpu_mask of {} task(s) names CPUs beyond CPU {} (e.g. 0xffff): trimmed to CPUs 0-{}",
                e.trimmed_masks,
                n - 1,
                n - 1
            ));
        }
        for t in 0..e.tasks.len() {
            let jitter = if cfg.start_jitter_ns > 0 {
                e.rng.random_range(0..cfg.start_jitter_ns)
            } else {
                0
            };
            e.start_skew_ns = e.start_skew_ns.max(jitter);
            e.tasks[t].start_ns = jitter;
            e.tasks[t].last_ran = jitter;
            e.push_ev(jitter, Ev::Start { task: t as u32 });
        }
        Ok(e)
    }

    fn make_task(
        &mut self,
        spec: &TaskSpec,
        lpus: f64,
        placed: &mut [usize],
    ) -> Result<Task, SimError> {
        let cfg = self.cfg;
        let n = cfg.ncpus;
        let task_err = |msg: String| SimError::Task {
            source_name: self.scenario.source.clone(),
            line: spec.line,
            msg,
        };
        let mut mask = vec![false; n];
        let mut trimmed = false;
        match &spec.cpu_mask {
            None => mask.iter_mut().for_each(|m| *m = true),
            Some(set) => {
                for c in set.iter() {
                    if (c as usize) < n {
                        mask[c as usize] = true;
                    } else {
                        trimmed = true;
                    }
                }
            }
        }
        let allowed: Vec<usize> = (0..n).filter(|&c| mask[c]).collect();
        if allowed.is_empty() {
            return Err(task_err(format!(
                "task '{}': cpu_mask {} has no CPU on this {n}-CPU machine (CPUs 0-{})",
                spec.name,
                spec.cpu_mask
                    .as_ref()
                    .map(|m| m.to_list())
                    .unwrap_or_default(),
                n - 1
            )));
        }
        if trimmed {
            self.trimmed_masks += 1;
        }
        let class = if spec.is_rt0() {
            Class::Rt0
        } else if spec.is_rt() {
            Class::Rt
        } else {
            Class::Normal
        };
        self.bal.check_task(cfg, spec, &allowed).map_err(task_err)?;
        check_work(spec, lpus).map_err(task_err)?;
        let to_ns = |loops: u64| loops_to_ns(loops, lpus).max(1);
        let cpu = self.initial_cpu(class, &allowed, placed);
        placed[cpu] += 1;
        let sloop_ns = spec.sloop.filter(|&s| s > 0).map(to_ns);
        let irq_ns = spec.irq_period.filter(|&s| s > 0).map(to_ns);
        let mut t = Task {
            class,
            policy: spec.policy,
            rt_prio: if spec.is_rt() { spec.priority } else { 0 },
            nice: spec.nice,
            mask,
            work_ns: if spec.loops == 0 {
                0
            } else {
                to_ns(spec.loops)
            },
            sloop_ns,
            sleep_ns: spec.sleep_ns,
            irq_ns,
            done_ns: 0,
            next_sleep_at: sloop_ns,
            next_mask_at: irq_ns,
            state: State::NotStarted,
            cpu,
            slice_left: 0,
            slice_expired: false,
            epoch: 0,
            seq: 0,
            in_mask_until: None,
            mask_pending: false,
            last_ran: 0,
            last_attempt: 0,
            attempt_period_fp: 0,
            attempts: 0,
            wake_time: None,
            start_ns: 0,
            finish_ns: None,
            cpu_ns: 0,
            cpu_ns_on: vec![0; n],
            migrations: 0,
            sections: 0,
        };
        t.slice_left = self.slice_ticks(&t);
        Ok(t)
    }

    /// Where a task of `class` allowed on `allowed` starts, by the
    /// configured placement; `placed` counts the tasks placed per CPU.
    fn initial_cpu(&mut self, class: Class, allowed: &[usize], placed: &[usize]) -> usize {
        let cfg = self.cfg;
        match cfg.placement {
            Placement::First => allowed[0],
            Placement::Random => allowed[self.rng.random_range(0..allowed.len())],
            Placement::Spread => {
                // RT0 tasks prefer an RT CPU when their mask offers one.
                let pool: Vec<usize> =
                    if class == Class::Rt0 && allowed.iter().any(|&c| cfg.is_rt_cpu(c)) {
                        allowed
                            .iter()
                            .copied()
                            .filter(|&c| cfg.is_rt_cpu(c))
                            .collect()
                    } else {
                        allowed.to_vec()
                    };
                *pool.iter().min_by_key(|&&c| (placed[c], c)).unwrap()
            }
        }
    }

    pub(crate) fn slice_ticks(&self, t: &Task) -> u64 {
        let nice = if t.class == Class::Normal { t.nice } else { 0 };
        self.cfg.ticks(slice_ms(nice) * 1_000_000)
    }

    fn push_ev(&mut self, at: u64, ev: Ev) {
        self.ev_seq += 1;
        self.heap.push(Reverse((at, self.ev_seq, ev)));
    }

    pub(crate) fn log(
        &mut self,
        cpu: Option<usize>,
        task: Option<usize>,
        event: &'static str,
        detail: impl FnOnce() -> String,
    ) {
        if let Some(tr) = self.trace.as_mut() {
            tr.push(TraceRow {
                time_ns: self.now,
                cpu,
                task,
                event,
                detail: detail(),
            });
        }
    }

    // ---------------------------------------------------------------- main loop

    fn run(&mut self) -> Result<(), SimError> {
        let end = self
            .cfg
            .duration_ns
            .unwrap_or(crate::config::MAX_SIM_NS)
            .min(crate::config::MAX_SIM_NS);
        let tick = self.cfg.tick_ns;
        // Kept events (the trace's rows, the Gantt chart's segments) are
        // bounded on their own: memory, not time (F16).
        let keeps = self.cfg.record_trace || self.cfg.record_segments;
        let kept_max = self.cfg.kept_events_max;
        loop {
            if keeps && self.events > kept_max && kept_max < self.cfg.max_events {
                return Err(SimError::Config(format!(
                    "the simulation needs more than {kept_max} events (at {} simulated), the most \
                     --trace and --gantt keep in memory (docs/ranges.md): shorten --duration or \
                     the scenario, or run without --trace/--gantt",
                    rtshield_vocab::format_duration_ns(self.now)
                )));
            }
            if self.events > self.cfg.max_events {
                return Err(SimError::Config(format!(
                    "the simulation needs more than {} events (--max-events, at {} simulated): raise --max-events, shorten --duration or the scenario, or raise irq_period/sloop",
                    self.cfg.max_events,
                    rtshield_vocab::format_duration_ns(self.now)
                )));
            }
            let next_tick = (self.tick_no + 1).saturating_mul(tick);
            while let Some(Reverse((at, _, _))) = self.heap.peek() {
                if *at >= next_tick || *at > end {
                    break;
                }
                let Reverse((at, _, ev)) = self.heap.pop().unwrap();
                self.now = at;
                self.events += 1;
                self.handle(ev);
            }
            if self.alive == 0 {
                break;
            }
            if next_tick > end {
                self.now = end;
                if self.cfg.duration_ns.is_none() {
                    self.warnings.push(format!(
                        "stopped at the simulator's limit of {} simulated: {} task(s) unfinished",
                        rtshield_vocab::format_duration_ns(end),
                        self.alive
                    ));
                }
                break;
            }
            self.now = next_tick;
            self.tick_no += 1;
            self.events += 1;
            self.tick();
        }
        // Close the books of whatever still runs.
        for c in 0..self.cpus.len() {
            if self.cpus[c].current.is_some() {
                self.settle(c);
                self.seg_close(c);
            }
        }
        Ok(())
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::Start { task } => self.on_start(task as usize),
            Ev::Milestone { cpu, gen } => {
                let cpu = cpu as usize;
                if self.cpus[cpu].gen == gen && self.cpus[cpu].current.is_some() {
                    self.on_milestone(cpu);
                }
            }
            Ev::Wake { task } => self.on_wake(task as usize),
            Ev::Drain { src, dst } => self.on_drain(src as usize, dst as usize),
        }
    }

    fn tick(&mut self) {
        let n = self.cpus.len();
        let mut idle = 0usize;
        let mut waiting = 0usize;
        for c in 0..n {
            let cur = self.cpus[c].current;
            let rt_running = cur.is_some_and(|t| self.tasks[t].class != Class::Normal);
            self.cpus[c].rt_stat = stats::calc_rt(self.cpus[c].rt_stat, rt_running);
            waiting += self.cpus[c].queue.len();
            match cur {
                None => idle += 1,
                Some(t) => {
                    if self.tasks[t].has_slice() {
                        let task = &mut self.tasks[t];
                        task.slice_left = task.slice_left.saturating_sub(1);
                        if task.slice_left == 0 {
                            task.slice_expired = true;
                            self.request_resched(c);
                        }
                    }
                }
            }
        }
        self.idle_while_waiting_ns += idle.min(waiting) as u64 * self.cfg.tick_ns;
        let b = self.bal;
        b.on_tick(self);
        // Release the deferred milestones that fall before the next tick.
        let next_tick = (self.tick_no + 1).saturating_mul(self.cfg.tick_ns);
        for c in 0..n {
            if let Some((at, gen)) = self.cpus[c].deferred {
                if gen != self.cpus[c].gen || self.cpus[c].current.is_none() {
                    self.cpus[c].deferred = None;
                } else if at < next_tick {
                    self.cpus[c].deferred = None;
                    self.push_ev(at, Ev::Milestone { cpu: c as u32, gen });
                }
            }
        }
    }

    // ---------------------------------------------------------------- task life

    fn on_start(&mut self, t: usize) {
        let c = self.tasks[t].cpu;
        self.tasks[t].state = State::Runnable;
        if self.tasks[t].is_normal() {
            self.normal_delta(c, 1);
        }
        self.log(Some(c), Some(t), "start", String::new);
        if self.tasks[t].work_ns == 0 {
            self.tasks[t].state = State::Finished;
            self.tasks[t].finish_ns = Some(self.now);
            self.task_gone(t);
            return;
        }
        self.enqueue(c, t, Enq::Tail);
        self.check_preempt(c, t);
    }

    fn on_milestone(&mut self, c: usize) {
        let t = self.cpus[c].current.unwrap();
        self.settle(c);
        if let Some(end) = self.tasks[t].in_mask_until {
            debug_assert_eq!(end, self.now);
            self.seg_close(c);
            self.tasks[t].in_mask_until = None;
            self.tasks[t].sections += 1;
            self.log(Some(c), Some(t), "mask_end", String::new);
            if self.cpus[c].need_resched || self.tasks[t].slice_expired {
                self.preempt_current(c);
                self.schedule(c);
            } else {
                self.milestone(c);
            }
            return;
        }
        let task = &self.tasks[t];
        if task.done_ns >= task.work_ns {
            self.finish_task(c, t);
        } else if task.next_mask_at.is_some_and(|m| task.done_ns >= m) {
            let task = &mut self.tasks[t];
            task.next_mask_at = task.next_mask_at.map(|m| m + task.irq_ns.unwrap());
            self.mask_attempt(c, t);
        } else if task.next_sleep_at.is_some_and(|s| task.done_ns >= s) {
            let task = &mut self.tasks[t];
            task.next_sleep_at = task.next_sleep_at.map(|s| s + task.sloop_ns.unwrap());
            self.go_sleep(c, t);
        } else {
            self.milestone(c);
        }
    }

    fn finish_task(&mut self, c: usize, t: usize) {
        self.seg_close(c);
        self.cpus[c].current = None;
        self.tasks[t].state = State::Finished;
        self.tasks[t].finish_ns = Some(self.now);
        self.tasks[t].last_ran = self.now;
        self.log(Some(c), Some(t), "finish", String::new);
        self.task_gone(t);
        self.schedule(c);
    }

    fn task_gone(&mut self, t: usize) {
        self.alive -= 1;
        if self.tasks[t].is_normal() {
            let c = self.tasks[t].cpu;
            self.normal_delta(c, -1);
            if self.placement_end.is_none() {
                self.placement_end = Some(self.now);
                for c in 0..self.cpus.len() {
                    self.normal_flush(c);
                }
            }
        }
    }

    /// The running task reached an interrupt-masking call: the balancer
    /// decides (ARTiS moves it off an RT CPU).
    fn mask_attempt(&mut self, c: usize, t: usize) {
        let b = self.bal;
        b.on_mask_attempt(self, c, t);
    }

    pub(crate) fn enter_section(&mut self, c: usize, t: usize) {
        if self.cpus[c].is_rt && self.tasks[t].class != Class::Rt0 {
            self.sections_on_rt_by_non_rt0 += 1;
        }
        self.seg_close(c);
        let end = self.now + self.cfg.mask_len_ns;
        self.tasks[t].in_mask_until = Some(end);
        self.log(Some(c), Some(t), "mask_begin", String::new);
    }

    fn go_sleep(&mut self, c: usize, t: usize) {
        self.seg_close(c);
        self.cpus[c].current = None;
        self.tasks[t].last_ran = self.now;
        let sleep = self.tasks[t].sleep_ns;
        if sleep == 0 {
            // A zero sleep is a sched_yield().
            self.tasks[t].state = State::Runnable;
            self.log(Some(c), Some(t), "yield", String::new);
            self.enqueue(c, t, Enq::Tail);
        } else {
            self.tasks[t].state = State::Sleeping;
            self.log(Some(c), Some(t), "sleep", || format!("ns={sleep}"));
            self.push_ev(self.now + sleep, Ev::Wake { task: t as u32 });
        }
        self.schedule(c);
    }

    fn on_wake(&mut self, t: usize) {
        if self.tasks[t].state != State::Sleeping {
            return;
        }
        if self.tasks[t].wake_time.is_none() {
            self.tasks[t].wake_time = Some(self.now);
        }
        let c = self.tasks[t].cpu;
        // try_to_wake_up() needs the run-queue lock: a balancer or FIFO
        // operation in progress on that CPU delays the wake-up.
        if self.cpus[c].lock_until > self.now {
            let at = self.cpus[c].lock_until;
            self.push_ev(at, Ev::Wake { task: t as u32 });
            return;
        }
        self.tasks[t].state = State::Runnable;
        self.log(Some(c), Some(t), "wake", String::new);
        self.enqueue(c, t, Enq::Tail);
        self.check_preempt(c, t);
    }

    fn on_drain(&mut self, src: usize, dst: usize) {
        let idx = src * self.cpus.len() + dst;
        if self.fifos[idx].is_empty() {
            return;
        }
        let mut batch: Vec<usize> = self.fifos[idx].drain(..).collect();
        self.bal.drained(&mut batch);
        self.cpus[dst].lock_until = self.cpus[dst]
            .lock_until
            .max(self.now + self.cfg.fifo_cost_ns);
        for t in batch {
            self.tasks[t].state = State::Runnable;
            self.log(Some(dst), Some(t), "fetch", || format!("from={src}"));
            self.enqueue(dst, t, Enq::Tail);
            self.check_preempt(dst, t);
        }
    }

    // ---------------------------------------------------------------- run-queues

    pub(crate) fn enqueue(&mut self, c: usize, t: usize, how: Enq) {
        debug_assert!(
            self.tasks[t].mask[c],
            "task {t} queued outside its mask on {c}"
        );
        let seq = match how {
            Enq::Head => {
                self.seq_head -= 1;
                self.seq_head
            }
            _ => {
                self.seq_tail += 1;
                self.seq_tail
            }
        };
        let epoch = self.cpus[c].epoch + u64::from(how == Enq::Expired);
        let task = &mut self.tasks[t];
        task.seq = seq;
        task.epoch = epoch;
        task.cpu = c;
        let meta = QMeta {
            rank: task.rank(),
            seq,
            epoch,
            normal: task.class == Class::Normal,
        };
        self.cpus[c].queue.push(t);
        self.cpus[c].qmeta.push(meta);
    }

    /// O(1) pick order (see `pick`): RT by priority, then the active array
    /// by static priority, then (after an array switch) the expired one.
    pub(crate) fn is_expired(&self, c: usize, t: usize) -> bool {
        self.tasks[t].class == Class::Normal && self.tasks[t].epoch != self.cpus[c].epoch
    }

    pub(crate) fn dequeue(&mut self, c: usize, t: usize) {
        let cpu = &mut self.cpus[c];
        let i = cpu
            .queue
            .iter()
            .position(|&x| x == t)
            .expect("task in queue");
        cpu.queue.swap_remove(i);
        cpu.qmeta.swap_remove(i);
    }

    fn pick(&mut self, c: usize) -> Option<usize> {
        let cpu = &mut self.cpus[c];
        let mut best: Option<(usize, (u8, i32, i64))> = None;
        for (i, m) in cpu.qmeta.iter().enumerate() {
            let level = match (m.normal, m.epoch == cpu.epoch) {
                (false, _) => 0,
                (true, true) => 1,
                (true, false) => 2,
            };
            let key = (level, m.rank, m.seq);
            if best.is_none_or(|(_, k)| key < k) {
                best = Some((i, key));
            }
        }
        let (i, key) = best?;
        let t = cpu.queue.swap_remove(i);
        cpu.qmeta.swap_remove(i);
        if key.0 == 2 {
            // The active array is empty: swap arrays.
            cpu.epoch += 1;
        }
        Some(t)
    }

    /// Account the running task's time up to now.
    pub(crate) fn settle(&mut self, c: usize) {
        let Some(t) = self.cpus[c].current else {
            return;
        };
        let now = self.now;
        let cpu = &mut self.cpus[c];
        let dt = now - cpu.phase_start;
        cpu.phase_start = now;
        if dt == 0 {
            return;
        }
        cpu.busy_ns += dt;
        let task = &mut self.tasks[t];
        if task.class != Class::Normal {
            cpu.rt_ns += dt;
        }
        task.cpu_ns += dt;
        task.cpu_ns_on[c] += dt;
        if task.in_mask_until.is_none() {
            task.done_ns += dt;
        }
    }

    /// Schedule the running task's next milestone: end of its masking
    /// section, or its next sleep, masking call or the end of its work.
    pub(crate) fn milestone(&mut self, c: usize) {
        let t = self.cpus[c].current.unwrap();
        let task = &self.tasks[t];
        let at = match task.in_mask_until {
            Some(end) => end,
            None => {
                let mut next = task.work_ns;
                if let Some(s) = task.next_sleep_at {
                    next = next.min(s);
                }
                if let Some(m) = task.next_mask_at {
                    next = next.min(m);
                }
                self.now + next.saturating_sub(task.done_ns)
            }
        };
        self.cpus[c].gen += 1;
        let gen = self.cpus[c].gen;
        let next_tick = (self.tick_no + 1).saturating_mul(self.cfg.tick_ns);
        if at < next_tick {
            self.cpus[c].deferred = None;
            self.push_ev(at, Ev::Milestone { cpu: c as u32, gen });
        } else {
            self.cpus[c].deferred = Some((at, gen));
        }
    }

    /// Take the running task off CPU `c` without requeueing it.
    pub(crate) fn stop_current(&mut self, c: usize) {
        let Some(t) = self.cpus[c].current else {
            return;
        };
        self.seg_close(c);
        self.cpus[c].current = None;
        self.cpus[c].gen += 1;
        self.tasks[t].last_ran = self.now;
    }

    /// Put the running task back in the queue (preempted or out of slice).
    fn preempt_current(&mut self, c: usize) {
        let Some(t) = self.cpus[c].current else {
            return;
        };
        self.settle(c);
        self.seg_close(c);
        self.cpus[c].current = None;
        self.cpus[c].gen += 1;
        self.tasks[t].state = State::Runnable;
        self.tasks[t].last_ran = self.now;
        if self.tasks[t].slice_expired {
            self.tasks[t].slice_expired = false;
            self.tasks[t].slice_left = self.slice_ticks(&self.tasks[t]);
            let how = if self.tasks[t].is_normal() {
                Enq::Expired
            } else {
                Enq::Tail
            };
            self.log(Some(c), Some(t), "expire", String::new);
            self.enqueue(c, t, how);
        } else {
            self.log(Some(c), Some(t), "preempt", String::new);
            self.enqueue(c, t, Enq::Head);
        }
    }

    /// A reschedule of CPU `c` is due: now, or at the end of the masking
    /// section its task is in (interrupts are off, nothing preempts it).
    pub(crate) fn request_resched(&mut self, c: usize) {
        let Some(t) = self.cpus[c].current else {
            self.schedule(c);
            return;
        };
        if self.tasks[t].in_mask_until.is_some() {
            self.cpus[c].need_resched = true;
        } else {
            self.preempt_current(c);
            self.schedule(c);
        }
    }

    /// Task `t` just became runnable on `c`: preempt if it outranks the current one.
    pub(crate) fn check_preempt(&mut self, c: usize, t: usize) {
        match self.cpus[c].current {
            None => self.schedule(c),
            Some(cur) => {
                if self.tasks[t].rank() < self.tasks[cur].rank() {
                    self.request_resched(c);
                }
            }
        }
    }

    /// Choose what CPU `c` runs next (its current slot is empty).
    pub(crate) fn schedule(&mut self, c: usize) {
        if self.cpus[c].current.is_some() {
            return;
        }
        self.cpus[c].need_resched = false;
        if self.cpus[c].queue.is_empty() {
            let b = self.bal;
            b.on_idle(self, c);
        }
        let Some(t) = self.pick(c) else {
            self.log(Some(c), None, "idle", String::new);
            return;
        };
        self.dispatch(c, t);
    }

    fn dispatch(&mut self, c: usize, t: usize) {
        debug_assert!(self.tasks[t].mask[c]);
        let now = self.now;
        self.cpus[c].current = Some(t);
        self.cpus[c].phase_start = now;
        self.cpus[c].seg_start = now;
        self.tasks[t].state = State::Running;
        self.tasks[t].cpu = c;
        if let Some(w) = self.tasks[t].wake_time.take() {
            if self.tasks[t].class == Class::Rt0 {
                self.latency[c].record(now - w);
            }
        }
        self.log(Some(c), Some(t), "run", String::new);
        if self.tasks[t].mask_pending {
            self.tasks[t].mask_pending = false;
            self.enter_section(c, t);
        }
        self.milestone(c);
    }

    // ---------------------------------------------------------------- migrations

    /// Move a queued (not running) task with the standard, locking mechanism.
    pub(crate) fn move_queued(&mut self, t: usize, from: usize, to: usize, kind: MigKind) {
        self.dequeue(from, t);
        self.count_migration(t, from, to, kind);
        self.enqueue(to, t, Enq::Tail);
    }

    /// Push a queued task into the ARTiS FIFO (from, to).
    pub(crate) fn push_fifo(&mut self, t: usize, from: usize, to: usize, kind: MigKind) {
        self.dequeue(from, t);
        self.send_fifo(t, from, to, kind);
    }

    pub(crate) fn send_fifo(&mut self, t: usize, from: usize, to: usize, kind: MigKind) {
        self.tasks[t].state = State::Migrating;
        self.count_migration(t, from, to, kind);
        self.tasks[t].cpu = to;
        let n = self.cpus.len();
        self.fifos[from * n + to].push_back(t);
        self.cpus[from].lock_until = self.cpus[from]
            .lock_until
            .max(self.now + self.cfg.fifo_cost_ns);
        self.push_ev(
            self.now + self.cfg.migration_cost_ns,
            Ev::Drain {
                src: from as u32,
                dst: to as u32,
            },
        );
    }

    /// Move a sleeping task's home CPU: it will wake up on `to`.
    pub(crate) fn rehome_sleeping(&mut self, t: usize, from: usize, to: usize, kind: MigKind) {
        debug_assert_eq!(self.tasks[t].state, State::Sleeping);
        self.count_migration(t, from, to, kind);
        self.tasks[t].cpu = to;
    }

    fn count_migration(&mut self, t: usize, from: usize, to: usize, kind: MigKind) {
        self.mig_kinds[kind as usize] += 1;
        self.tasks[t].migrations += 1;
        if self.tasks[t].is_normal() {
            self.normal_delta(from, -1);
            self.normal_delta(to, 1);
        }
        self.log(Some(from), Some(t), "migrate", || {
            format!(
                "to={to} kind={}",
                MIG_KIND_NAMES[kind as usize].replace(' ', "_")
            )
        });
    }

    /// Hold the run-queue locks of two CPUs for one balancing operation.
    pub(crate) fn lock_pair(&mut self, a: usize, b: usize) {
        let until = self.now + self.cfg.lock_cost_ns;
        for c in [a, b] {
            self.cpus[c].lock_until = self.cpus[c].lock_until.max(until);
        }
    }

    pub(crate) fn kind_between(&self, from: usize, to: usize) -> MigKind {
        match (self.cpus[from].is_rt, self.cpus[to].is_rt) {
            (false, false) => MigKind::NrtNrt,
            (true, false) => MigKind::RtNrtBalance,
            (false, true) => MigKind::NrtRtBalance,
            (true, true) => MigKind::RtRt,
        }
    }

    // ---------------------------------------------------------------- bookkeeping

    fn normal_flush(&mut self, c: usize) {
        let end = self.placement_end.unwrap_or(self.now).min(self.now);
        let cpu = &mut self.cpus[c];
        if end > cpu.normal_since {
            cpu.normal_area += cpu.normal_here as u128 * u128::from(end - cpu.normal_since);
            cpu.normal_since = end;
        }
    }

    fn normal_delta(&mut self, c: usize, d: isize) {
        if self.placement_end.is_none() {
            self.normal_flush(c);
        }
        let cpu = &mut self.cpus[c];
        cpu.normal_here = (cpu.normal_here as isize + d) as usize;
    }

    fn seg_close(&mut self, c: usize) {
        let Some(t) = self.cpus[c].current else {
            return;
        };
        let start = self.cpus[c].seg_start;
        self.cpus[c].seg_start = self.now;
        let Some(segs) = self.segments.as_mut() else {
            return;
        };
        if self.now <= start {
            return;
        }
        let task = &self.tasks[t];
        let kind = if task.in_mask_until.is_some() {
            SegmentKind::Masked
        } else {
            match task.class {
                Class::Rt0 => SegmentKind::Rt0,
                Class::Rt => SegmentKind::Rt,
                Class::Normal => SegmentKind::Normal,
            }
        };
        segs.push(Segment {
            cpu: c,
            task: t,
            start,
            end: self.now,
            kind,
        });
    }

    fn finish(mut self) -> SimOutcome {
        if self.placement_end.is_none() {
            for c in 0..self.cpus.len() {
                self.normal_flush(c);
            }
        }
        let (report, extra) = stats::build(&self);
        SimOutcome {
            report,
            extra,
            trace: self.trace.take(),
            segments: self.segments.take(),
        }
    }
}

/// The work a task asks for is bounded by the simulated-time limit, and
/// its sleeps and masking calls at least 1 µs of work apart, so the event
/// count stays bounded.
fn check_work(spec: &TaskSpec, lpus: f64) -> Result<(), String> {
    let limit = crate::config::MAX_SIM_NS;
    if spec.loops > 0 && loops_to_ns(spec.loops, lpus) > limit {
        return Err(format!(
            "task '{}': loop = {} is more than {} of work at {lpus} loops per µs",
            spec.name,
            spec.loops,
            rtshield_vocab::format_duration_ns(limit)
        ));
    }
    for (key, v) in [("sloop", spec.sloop), ("irq_period", spec.irq_period)] {
        if let Some(v) = v.filter(|&v| v > 0) {
            if loops_to_ns(v, lpus) < 1_000 {
                return Err(format!(
                    "task '{}': {key} = {v} is less than 1 µs of work at {lpus} loops per µs",
                    spec.name
                ));
            }
        }
    }
    Ok(())
}
