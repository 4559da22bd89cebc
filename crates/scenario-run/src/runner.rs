//! The real-kernel runner (lollobrigida): one thread per task, all released
//! together, each measuring where its CPU time went.
//!
//! Threads rather than processes: the scheduler balances threads exactly as
//! it balances processes (each is a task with its own policy, priority and
//! affinity), threads start faster, share the result memory, and none can
//! outlive the run: they are joined before the report is built.

use crate::busy::{self, mono_ns, thread_cpu_ns};
use crate::plan::{Plan, PlannedTask};
use rtshield_scenario::Scenario;
use rtshield_scenario::{
    fmt_ns, group_reports, BalanceReport, CpuReport, RunSummary, TaskReport, BALANCE_SCHEMA,
};
use rtshield_sys::Root;
use rtshield_sys::StatSnapshot as CpuTimes;
use rtshield_sys::ThreadSched;
use rtshield_sys::{current_cpu, gettid, set_affinity, set_scheduler};
use rtshield_vocab::CpuSet;
use rtshield_vocab::Policy;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How much work a task does between two looks at its CPU and CPU time:
/// about 50 µs, so the ~0.2 µs the look costs stays under 1 %.
const CHECK_US: f64 = 50.0;
/// How often the main thread samples /proc/stat during the run.
const SAMPLE_NS: u64 = 20_000_000;

/// How to run a plan.
pub struct RunOptions<'a> {
    /// The tree `/proc` is read below (the host for a real run).
    pub root: Root,
    /// Overrides the scenario's `timeout`.
    pub timeout_ns: Option<u64>,
    /// Overrides the scenario's `loops_per_us`.
    pub loops_per_us: Option<f64>,
    /// Set asynchronously (SIGINT/SIGTERM) to end the run early.
    pub interrupt: Option<&'a AtomicBool>,
}

/// What happened, besides the report.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// The balance report, in the shape the simulator also writes.
    pub report: BalanceReport,
    /// Scenario iterations per µs used for the run.
    pub loops_per_us: f64,
    /// Spin steps per µs measured on this machine.
    pub steps_per_us: f64,
    /// The run hit its timeout before every task finished.
    pub timed_out: bool,
    /// The interrupt flag (SIGINT/SIGTERM) ended the run early.
    pub interrupted: bool,
    /// When the start signal was given (CLOCK_MONOTONIC ns); with
    /// [`RunOutcome::task_start_ns`], the synchronised start is checkable.
    pub release_ns: u64,
    /// When each task saw the start signal, in plan order (CLOCK_MONOTONIC ns).
    pub task_start_ns: Vec<u64>,
}

/// State shared by the main thread and the tasks.
struct Shared {
    stop: AtomicBool,
    /// The start gate: 0 closed, 1 open (a futex word).
    go: AtomicU32,
    ready: AtomicUsize,
    finished: AtomicUsize,
    /// Tasks that want a CPU now (started, not sleeping, not finished).
    demand: AtomicI64,
}

/// One task's measurements.
#[derive(Debug, Default)]
struct TaskOut {
    notes: Vec<String>,
    policy: Option<Policy>,
    start_ns: u64,
    end_ns: u64,
    cpu_ns: u64,
    per_cpu_ns: Vec<u64>,
    migrations: u64,
    done: u64,
    sched: ThreadSched,
}

/// The system call behind `irq_period`: sched_getaffinity(2) takes the
/// task's `pi_lock` with raw_spin_lock_irqsave, i.e. it disables local
/// interrupts for a moment: exactly what ARTiS migrates a non-RT0 task off
/// an RT CPU for. It is cheap, has no side effect, and needs no file.
fn irq_masking_syscall() {
    // SAFETY: cpu_set_t is plain data, the size is right.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
    }
}

fn setup(t: &PlannedTask) -> (Vec<String>, Policy) {
    let mut notes = Vec::new();
    let name = &t.spec.name;
    if let Err(e) = set_affinity(0, &t.mask) {
        notes.push(format!(
            "task {name}: could not set cpu_mask {}: {e}",
            t.mask.to_list()
        ));
    }
    let mut policy = Policy::Other;
    if t.spec.policy != Policy::Other {
        match set_scheduler(0, t.spec.policy, t.spec.priority) {
            Ok(()) => policy = t.spec.policy,
            Err(e) => notes.push(format!(
                "task {name}: could not set {} {}: {e}; it runs as SCHED_OTHER",
                t.spec.policy.name().to_uppercase(),
                t.spec.priority
            )),
        }
    }
    if t.spec.nice != 0 {
        // On Linux, setpriority on a thread id changes that thread only.
        // SAFETY: plain system call.
        let r =
            unsafe { libc::setpriority(libc::PRIO_PROCESS, gettid() as libc::id_t, t.spec.nice) };
        if r != 0 {
            notes.push(format!(
                "task {name}: could not set nice {}: {}",
                t.spec.nice,
                std::io::Error::last_os_error()
            ));
        }
    }
    (notes, policy)
}

fn cpu_index() -> usize {
    usize::try_from(current_cpu()).unwrap_or(0)
}

/// The body of one task thread.
fn task_main(
    t: PlannedTask,
    steps_per_iter: u64,
    check_iters: u64,
    root: Root,
    sh: Arc<Shared>,
    ncpus: usize,
) -> TaskOut {
    let tid = gettid();
    let (notes, policy) = setup(&t);
    let before = ThreadSched::read_own(&root, tid);
    let mut out = TaskOut {
        notes,
        policy: Some(policy),
        per_cpu_ns: vec![0; ncpus],
        ..TaskOut::default()
    };

    // Wait for the start signal.
    sh.ready.fetch_add(1, Ordering::SeqCst);
    while sh.go.load(Ordering::Acquire) == 0 {
        futex(&sh.go, libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG, 0);
    }
    out.start_ns = mono_ns();
    sh.demand.fetch_add(1, Ordering::Relaxed);
    let cpu0 = thread_cpu_ns();

    let mut state = t.spec.id as u64 + 1;
    let mut cpu = cpu_index();
    let mut last_cpu_ns = cpu0;
    let mut account = |out: &mut TaskOut, cpu: &mut usize| {
        let now_cpu = cpu_index();
        let now = thread_cpu_ns();
        if now_cpu >= out.per_cpu_ns.len() {
            out.per_cpu_ns.resize(now_cpu + 1, 0);
        }
        // The slice is charged to the CPU seen at its end: slices are
        // ~50 µs, so a migration inside one misplaces at most that.
        out.per_cpu_ns[now_cpu] += now.saturating_sub(last_cpu_ns);
        last_cpu_ns = now;
        if now_cpu != *cpu {
            out.migrations += 1;
            *cpu = now_cpu;
        }
    };
    let mut next_sleep = t.spec.sloop.unwrap_or(u64::MAX);
    let mut next_irq = t.spec.irq_period.unwrap_or(u64::MAX);
    while out.done < t.loops && !sh.stop.load(Ordering::Relaxed) {
        let n = check_iters
            .min(t.loops - out.done)
            .min(next_sleep - out.done)
            .min(next_irq - out.done);
        busy::spin(n.saturating_mul(steps_per_iter), &mut state);
        out.done += n;
        account(&mut out, &mut cpu);
        if out.done == next_irq {
            irq_masking_syscall();
            next_irq = next_irq.saturating_add(t.spec.irq_period.unwrap_or(u64::MAX));
        }
        if out.done == next_sleep {
            next_sleep = next_sleep.saturating_add(t.spec.sloop.unwrap_or(u64::MAX));
            if out.done < t.loops {
                sh.demand.fetch_sub(1, Ordering::Relaxed);
                busy::sleep_unless(t.spec.sleep_ns, &sh.stop);
                sh.demand.fetch_add(1, Ordering::Relaxed);
                account(&mut out, &mut cpu);
            }
        }
    }
    // CPU time read inside the wall-time window (cpu0 after start_ns, this
    // before end_ns), so a task's CPU time never exceeds its wall time.
    out.cpu_ns = thread_cpu_ns().saturating_sub(cpu0);
    out.end_ns = mono_ns();
    sh.demand.fetch_sub(1, Ordering::Relaxed);
    std::hint::black_box(state);
    // Read the kernel's counters while the thread still exists.
    out.sched = before.delta(&ThreadSched::read_own(&root, tid));
    sh.finished.fetch_add(1, Ordering::SeqCst);
    out
}

/// Run `plan` on this machine. `online` must be the CPUs the plan used.
pub fn run(
    s: &Scenario,
    plan: &Plan,
    online: &CpuSet,
    o: &RunOptions,
) -> anyhow::Result<RunOutcome> {
    let ncpus = online.last().map_or(1, |c| c as usize + 1);
    let mut warnings = plan.notes.clone();
    let speed = calibrate(s, o, &mut warnings);
    if plan.tasks.iter().any(|t| t.spec.irq_period.is_some()) {
        warnings.push("irq_period: each period ends with a sched_getaffinity(2) call, which takes the task's pi_lock with interrupts disabled".into());
    }

    let sh = Arc::new(Shared {
        stop: AtomicBool::new(false),
        go: AtomicU32::new(0),
        ready: AtomicUsize::new(0),
        finished: AtomicUsize::new(0),
        demand: AtomicI64::new(0),
    });
    let handles = spawn_tasks(plan, &speed, o, &sh, ncpus)?;
    // Every task set up and blocked: release them together.
    // (A thread that ended before getting ready panicked: don't wait for it.)
    while sh.ready.load(Ordering::SeqCst) < handles.len()
        && !handles.iter().any(|h| h.is_finished())
    {
        std::thread::sleep(Duration::from_micros(200));
    }
    let stat0 = CpuTimes::read(&o.root).unwrap_or_default();
    let t_release = mono_ns();
    release(&sh);

    let timeout = o.timeout_ns.or(s.globals.timeout_ns);
    let mut idle = IdleWhileWaiting::new(stat0.clone(), t_release, online.len());
    let end = watch(
        &sh,
        handles.len(),
        timeout.map(|t| t_release.saturating_add(t)),
        o,
        &mut idle,
    );
    let stop_ns = mono_ns();
    sh.stop.store(true, Ordering::SeqCst);
    let outs: Vec<TaskOut> = handles
        .into_iter()
        .map(|h| {
            h.join().unwrap_or_else(|_| TaskOut {
                notes: vec!["a task thread panicked; its measurements are lost".into()],
                ..TaskOut::default()
            })
        })
        .collect();
    let stat1 = CpuTimes::read(&o.root).unwrap_or_default();
    // The tail since the last sample: the tasks were finishing or being
    // stopped, so none is counted as waiting.
    idle.sample(&stat1, mono_ns(), 0);
    if stat0.cpus.is_empty() || stat1.cpus.is_empty() {
        warnings.push(format!(
            "{} could not be read: per-CPU idle and busy shares are unknown (shown as 0 % idle)",
            rtshield_sys::kpath::STAT
        ));
    }

    // Build the report.
    let first_start = outs
        .iter()
        .map(|t| t.start_ns)
        .filter(|&s| s > 0)
        .min()
        .unwrap_or(t_release);
    let last_start = outs.iter().map(|t| t.start_ns).max().unwrap_or(t_release);
    let last_end = outs.iter().map(|t| t.end_ns).max().unwrap_or(stop_ns);
    let makespan = last_end.saturating_sub(first_start);
    let why_unfinished = if end.interrupted {
        "the run was interrupted".to_string()
    } else {
        format!(
            "the timeout of {} ended the run",
            fmt_ns(timeout.unwrap_or(0) as f64)
        )
    };
    let (tasks, rt_ns) = task_reports(plan, &outs, ncpus, &why_unfinished, &mut warnings);
    let ncols = tasks
        .iter()
        .map(|t| t.cpu_share.len())
        .max()
        .unwrap_or(ncpus)
        .max(ncpus);
    let cpus = cpu_reports(online, &stat0, &stat1, &rt_ns, makespan);
    let unfinished = tasks.iter().filter(|t| !t.finished).count();
    let report = BalanceReport {
        schema: BALANCE_SCHEMA.to_string(),
        source: "kernel".into(),
        balancer: format!(
            "linux {}",
            o.root
                .read_trim(rtshield_sys::kpath::OSRELEASE)
                .unwrap_or_else(|_| "?".into())
        ),
        scenario: s.source.clone(),
        ncpus: ncols,
        rt_cpus: String::new(),
        seed: None,
        groups: group_reports(&tasks, ncols),
        tasks,
        cpus,
        run: RunSummary {
            makespan_ns: makespan,
            idle_while_waiting_ns: idle.waiting_ns.round() as u64,
            start_skew_ns: Some(last_start.saturating_sub(first_start)),
            unfinished,
        },
        migrations_by_kind: Default::default(),
        rt0_latency: Vec::new(),
        warnings,
    };
    Ok(RunOutcome {
        release_ns: t_release,
        task_start_ns: outs.iter().map(|t| t.start_ns).collect(),
        report,
        loops_per_us: speed.loops_per_us,
        steps_per_us: speed.steps_per_us,
        timed_out: end.timed_out,
        interrupted: end.interrupted,
    })
}

/// How fast a scenario iteration runs here.
struct Speed {
    /// Spin steps per µs this CPU does.
    steps_per_us: f64,
    /// Scenario iterations per µs (given, or one step each).
    loops_per_us: f64,
    /// Spin steps per iteration.
    steps_per_iter: u64,
    /// Iterations between two looks at the CPU and CPU time (~[`CHECK_US`]).
    check_iters: u64,
}

/// Measure this CPU's spin speed and map the scenario's `loops_per_us`
/// (or the option's) onto it, saying how in `warnings`.
fn calibrate(s: &Scenario, o: &RunOptions, warnings: &mut Vec<String>) -> Speed {
    let steps_per_us = busy::calibrate();
    let (loops_per_us, steps_per_iter) = match o.loops_per_us.or(s.globals.loops_per_us) {
        Some(l) => {
            let k = (steps_per_us / l).round().max(1.0) as u64;
            if steps_per_us / l < 0.5 {
                warnings.push(format!(
                    "loops_per_us = {l} is faster than this CPU's {steps_per_us:.1} spin steps/µs: one iteration is one step, the run takes longer than the scenario says"
                ));
            }
            warnings.push(format!(
                "loops_per_us = {l} (given): one iteration = {k} spin steps; this CPU does {steps_per_us:.1} steps/µs"
            ));
            (l, k)
        }
        None => {
            warnings.push(format!(
                "loops_per_us = {steps_per_us:.1} (measured at start: one iteration = one spin step)"
            ));
            (steps_per_us, 1)
        }
    };
    Speed {
        steps_per_us,
        loops_per_us,
        steps_per_iter,
        check_iters: ((CHECK_US * loops_per_us).round() as u64).max(1),
    }
}

/// Open the start gate. One store and one FUTEX_WAKE for every waiter:
/// the "single signal sent to all tasks" of the ARTiS thesis, without a
/// mutex to take in turn.
fn release(sh: &Shared) {
    sh.go.store(1, Ordering::Release);
    futex(
        &sh.go,
        libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
        i32::MAX as u32,
    );
}

/// One thread per task, each blocked at the start gate once set up. When
/// one cannot be started, those already started are stopped and joined.
fn spawn_tasks(
    plan: &Plan,
    speed: &Speed,
    o: &RunOptions,
    sh: &Arc<Shared>,
    ncpus: usize,
) -> anyhow::Result<Vec<std::thread::JoinHandle<TaskOut>>> {
    let (steps_per_iter, check_iters) = (speed.steps_per_iter, speed.check_iters);
    let mut handles = Vec::with_capacity(plan.tasks.len());
    for t in &plan.tasks {
        let (t2, root, sh2) = (t.clone(), o.root.clone(), sh.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("scn-{}", t.spec.id))
            .stack_size(256 * 1024)
            .spawn(move || task_main(t2, steps_per_iter, check_iters, root, sh2, ncpus));
        match spawned {
            Ok(h) => handles.push(h),
            Err(e) => {
                sh.stop.store(true, Ordering::SeqCst);
                release(sh);
                for h in handles {
                    let _ = h.join();
                }
                anyhow::bail!("cannot start the thread of task {}: {e}", t.spec.name);
            }
        }
    }
    Ok(handles)
}

/// Time CPUs sat idle while tasks waited for one, integrated from
/// `/proc/stat` samples and the tasks' demand.
struct IdleWhileWaiting {
    tick_ns: f64,
    n_online: f64,
    last_stat: CpuTimes,
    last_t: u64,
    /// The integral so far (ns).
    waiting_ns: f64,
}

impl IdleWhileWaiting {
    fn new(stat0: CpuTimes, t0: u64, n_online: usize) -> IdleWhileWaiting {
        IdleWhileWaiting {
            tick_ns: 1e9 / clock_ticks_per_sec(),
            n_online: n_online as f64,
            last_stat: stat0,
            last_t: t0,
            waiting_ns: 0.0,
        }
    }

    /// Add the span since the last sample: `demand` tasks wanted a CPU.
    fn sample(&mut self, stat: &CpuTimes, t: u64, demand: i64) {
        let dt = t.saturating_sub(self.last_t) as f64;
        if dt > 0.0 {
            let idle = self.last_stat.idle_ticks(stat) as f64 * self.tick_ns;
            let busy_cpus = ((self.n_online * dt - idle) / dt).max(0.0);
            let waiting = (demand as f64 - busy_cpus).max(0.0);
            self.waiting_ns += idle.min(waiting * dt);
        }
        self.last_stat = stat.clone();
        self.last_t = t;
    }
}

/// How the wait for the tasks ended.
struct WatchEnd {
    timed_out: bool,
    interrupted: bool,
}

/// Wait until the `n` tasks finish, the deadline passes or the interrupt
/// flag is set, sampling `/proc/stat` every [`SAMPLE_NS`].
fn watch(
    sh: &Shared,
    n: usize,
    deadline: Option<u64>,
    o: &RunOptions,
    idle: &mut IdleWhileWaiting,
) -> WatchEnd {
    let interrupted = || o.interrupt.is_some_and(|f| f.load(Ordering::Relaxed));
    loop {
        let now = mono_ns();
        let mut wait = SAMPLE_NS;
        if let Some(d) = deadline {
            wait = wait.min(d.saturating_sub(now));
        }
        // Poll finish often so short runs end promptly.
        let until = now + wait;
        while mono_ns() < until && sh.finished.load(Ordering::SeqCst) < n {
            std::thread::sleep(Duration::from_millis(1));
            if interrupted() {
                break;
            }
        }
        let demand = sh.demand.load(Ordering::Relaxed);
        if sh.finished.load(Ordering::SeqCst) >= n {
            return WatchEnd {
                timed_out: false,
                interrupted: false,
            };
        }
        if interrupted() {
            return WatchEnd {
                timed_out: false,
                interrupted: true,
            };
        }
        if deadline.is_some_and(|d| mono_ns() >= d) {
            return WatchEnd {
                timed_out: true,
                interrupted: false,
            };
        }
        idle.sample(
            &CpuTimes::read(&o.root).unwrap_or_default(),
            mono_ns(),
            demand,
        );
    }
}

/// Each task's report (an unfinished one also gets a warning saying
/// `why_unfinished`), and the CPU time RT tasks spent on each CPU.
fn task_reports(
    plan: &Plan,
    outs: &[TaskOut],
    ncpus: usize,
    why_unfinished: &str,
    warnings: &mut Vec<String>,
) -> (Vec<TaskReport>, Vec<u64>) {
    let mut tasks = Vec::with_capacity(outs.len());
    let mut rt_ns = vec![0u64; ncpus];
    for (t, out) in plan.tasks.iter().zip(outs) {
        warnings.extend(out.notes.iter().cloned());
        let finished = out.done >= t.loops;
        if !finished {
            warnings.push(format!(
                "task {} unfinished: {} of {} iterations done ({:.1}%) when {why_unfinished}",
                t.spec.name,
                out.done,
                t.loops,
                out.done as f64 * 100.0 / t.loops as f64
            ));
        }
        let policy = out.policy.unwrap_or(Policy::Other);
        let total: u64 = out.per_cpu_ns.iter().sum();
        let mut share: Vec<f64> = out
            .per_cpu_ns
            .iter()
            .map(|&x| {
                if total > 0 {
                    x as f64 / total as f64
                } else {
                    0.0
                }
            })
            .collect();
        share.resize(ncpus.max(share.len()), 0.0);
        if policy.is_rt() {
            for (acc, &x) in rt_ns.iter_mut().zip(&out.per_cpu_ns) {
                *acc += x;
            }
        }
        tasks.push(TaskReport {
            id: t.spec.id,
            name: t.spec.name.clone(),
            group: t.spec.group.clone(),
            policy: policy.name().to_string(),
            priority: if policy.is_rt() { t.spec.priority } else { 0 },
            cpu_mask: t.mask.to_list(),
            finished,
            wall_ns: out.end_ns.saturating_sub(out.start_ns),
            cpu_ns: out.cpu_ns,
            cpu_share: share,
            migrations: out.migrations,
            kernel_migrations: out.sched.migrations,
            voluntary_switches: out.sched.voluntary,
            involuntary_switches: out.sched.involuntary,
        });
    }
    (tasks, rt_ns)
}

/// Each online CPU's idle, busy and RT shares over the run.
fn cpu_reports(
    online: &CpuSet,
    stat0: &CpuTimes,
    stat1: &CpuTimes,
    rt_ns: &[u64],
    makespan: u64,
) -> Vec<CpuReport> {
    online
        .iter()
        .map(|c| {
            let idle = stat0.idle_share(stat1, c).unwrap_or(0.0);
            let rt = rt_ns.get(c as usize).copied().unwrap_or(0) as f64 / makespan.max(1) as f64;
            CpuReport {
                cpu: c,
                idle_share: idle,
                busy_share: 1.0 - idle,
                rt_share: rt.min(1.0),
            }
        })
        .collect()
}

/// FUTEX_WAIT (sleep while `*word == val`) or FUTEX_WAKE (wake `val` waiters).
fn futex(word: &AtomicU32, op: libc::c_int, val: u32) {
    // SAFETY: `word` is a live, aligned u32 for the duration of the call;
    // no timeout, no second word.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op,
            val,
            std::ptr::null::<libc::timespec>(),
        );
    }
}

fn clock_ticks_per_sec() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}
