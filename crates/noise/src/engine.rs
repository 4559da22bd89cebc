//! The spinning threads and the main thread's drain.
//!
//! One thread per measured CPU, pinned there before it spins, all signals
//! blocked (no handler ever runs on a measured CPU), SCHED_OTHER or
//! SCHED_FIFO; each runs [`spin::run_windows`]. The main thread stays on
//! the other CPUs, drains the rings every 20 ms into the histograms (and,
//! traced, into the session that explains each event), and builds the
//! run's [`RunResult`] of kind `noise`.

use crate::result::{thread_priority, Tail, TopK};
use crate::spin::{self, Counters, Live, Schedule};
use crate::traced::{Found, Outcome, Session, LONGEST};
use crate::NoiseSpec;
use anyhow::{bail, Context};
use rtshield_audit::{noise_fix, NoiseCause};
use rtshield_measure::now_ns;
use rtshield_measure::ThreadHistograms;
use rtshield_measure::{prefault_stack, MemLock};
use rtshield_results::{
    CpuNoise, NoiseResult, NoiseTrace, Offender, RunKind, RunResult, Settings, ThreadResult,
};
use rtshield_sys::{get_affinity, gettid, set_affinity, set_scheduler};
use rtshield_sys::{steal_ns_between, StatSnapshot};
use rtshield_sys::{task_comm, task_stat, Root, SysInfo};
use rtshield_trace::{CauseKind, NoiseClass, NoiseEvent, NoiseSource, NoiseTally};
use rtshield_vocab::Policy;
use rtshield_vocab::{CpuSet, InputError};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::mpsc;
use std::time::Duration;

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// The requested duration passed.
    Duration,
    /// The stop flag was set (a signal, the caller).
    Stopped,
}

/// How often the main thread drains the rings.
const DRAIN_EVERY: Duration = Duration::from_millis(20);
/// Noise events are explained once the trace is this far past their end.
const TRACE_LAG_NS: u64 = 100_000_000;
/// Ring slots per thread (16 bytes each): seconds of events even at an
/// IRQ storm's rate, drained every 20 ms.
const RING: usize = 1 << 18;
/// The spinning threads' stack, and the part pre-faulted.
const STACK_BYTES: usize = 256 * 1024;
const PREFAULT_BYTES: usize = 128 * 1024;
/// Offenders kept per CPU.
const OFFENDERS: usize = 10;

/// What a spinning thread reports once set up.
struct Ready {
    index: usize,
    tid: i32,
    policy: Policy,
    /// A refused SCHED_FIFO (the thread spins at SCHED_OTHER).
    refused: Option<std::io::Error>,
    fatal: Option<String>,
}

/// Restores the calling thread's affinity when dropped.
struct Affinity(Option<CpuSet>);

impl Drop for Affinity {
    fn drop(&mut self) {
        if let Some(a) = &self.0 {
            let _ = set_affinity(0, a);
        }
    }
}

/// The main thread's view of one CPU.
struct CpuAcc {
    hist: ThreadHistograms,
    /// The gaps beyond `hist` (its overflow), coarser.
    tail: Tail,
    longest: TopK<NoiseEvent>,
}

impl CpuAcc {
    fn new(histo_size_ns: u64) -> CpuAcc {
        CpuAcc {
            hist: ThreadHistograms::new(histo_size_ns, HIST_RESOLUTION_NS),
            tail: Tail::new(),
            longest: TopK::new(LONGEST),
        }
    }

    fn record(&mut self, ev: &NoiseEvent) {
        let beyond = self.hist.overflow;
        self.hist
            .record(ev.len_ns.min(i64::MAX as u64) as i64, 0, 0);
        if self.hist.overflow > beyond {
            self.tail.record(ev.len_ns);
        }
        self.longest.offer(ev.len_ns, *ev);
    }
}

/// Measure noise on `spec.cpus` until `spec.duration_ns` or `stop`.
/// `root` is where tracefs, `/proc/stat`, the system description and the
/// live threads' policies are read. The result has kind `noise`, no
/// command, label or tags (the caller's), and `end_reason` `duration` or
/// `stopped` (the caller may name the signal).
pub fn run(
    root: &Root,
    spec: &NoiseSpec,
    stop: &AtomicBool,
) -> anyhow::Result<(RunResult, EndReason)> {
    spec.check()?;
    let allowed = get_affinity(0).context("cannot read this process's CPU affinity")?;
    if let Some(bad) = spec.cpus.iter().find(|c| !allowed.contains(*c)) {
        bail!(InputError::new(format!(
            "--cpus: CPU {bad} is not available (allowed to this process: {})",
            allowed.to_list()
        )));
    }
    let mut warnings = Vec::new();
    // What killed rtshield processes left in tracefs, traced or not.
    let left = rtshield_sys::remove_tracing_leftovers(root);
    if !left.is_empty() {
        warnings.push(format!(
            "removed what dead rtshield processes left in tracefs: {}",
            left.iter()
                .map(|l| l.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let housekeeping = allowed.difference(&spec.cpus);
    let _aff = if housekeeping.is_empty() {
        warnings.push(format!(
            "no CPU left for the main thread: it shares CPU {} with a spinning thread, and its drains (every 20 ms) are noise there",
            spec.cpus.to_list()
        ));
        Affinity(None)
    } else {
        set_affinity(0, &housekeeping)
            .context("cannot move the main thread off the measured CPUs")?;
        Affinity(Some(allowed))
    };
    let memlock = if spec.memlock {
        MemLock::lock()
            .map_err(|e| {
                warnings.push(format!("mlockall refused ({e}): page faults may add noise"))
            })
            .ok()
    } else {
        None
    };
    let mut session = None;
    let mut trace = None;
    if spec.trace {
        match Session::start(root, &spec.cpus, spec.trace_buffer_kb) {
            Ok(s) => session = Some(s),
            Err(why) => {
                warnings.push(format!("tracing off: {why}; noise measured without causes"));
                trace = Some(NoiseTrace {
                    unavailable: Some(why),
                    ..NoiseTrace::default()
                });
            }
        }
    }
    let stat_before = StatSnapshot::read(root).ok();
    let started_at = rtshield_measure::rfc3339_utc(std::time::SystemTime::now());
    let measured = measure(spec, stop, session.as_mut(), &mut warnings)?;
    let stat_after = StatSnapshot::read(root).ok();
    let outcome = session.map(Session::finish);
    let memlocked = memlock.is_some();
    drop(memlock);
    let found = outcome.as_ref().map(|o| &o.found);
    let (mut run, end) = build(spec, measured, found, root, &mut warnings);
    if let Some(o) = &outcome {
        trace = Some(trace_summary(o, &mut warnings));
    }
    let noise = run.noise.as_mut().expect("built with its noise part");
    for c in noise.cpus.iter_mut() {
        c.steal_ns = match (&stat_before, &stat_after) {
            (Some(a), Some(b)) => steal_ns_between(a, b, [c.cpu]),
            _ => None,
        };
    }
    noise.trace = trace;
    run.started_at = Some(started_at);
    run.sysinfo = SysInfo::collect(root, false);
    run.settings.memlock = Some(memlocked);
    run.warnings = warnings;
    Ok((run, end))
}

/// What the threads and the drain produced.
struct Measured {
    ready: Vec<Ready>,
    counters: Vec<Counters>,
    accs: Vec<CpuAcc>,
    elapsed_ns: u64,
    end: EndReason,
}

/// Start the threads, drain until they end (or `stop`), join them.
fn measure(
    spec: &NoiseSpec,
    stop: &AtomicBool,
    mut session: Option<&mut Session>,
    warnings: &mut Vec<String>,
) -> anyhow::Result<Measured> {
    let cpus: Vec<u32> = spec.cpus.iter().collect();
    let n = cpus.len();
    let lives: Vec<Live> = (0..n).map(|_| Live::default()).collect();
    let inner_stop = AtomicBool::new(false);
    let mut accs: Vec<CpuAcc> = (0..n).map(|_| CpuAcc::new(spec.histo_size_ns)).collect();
    let (mut producers, mut rings): (Vec<_>, Vec<_>) = (0..n)
        .map(|_| rtrb::RingBuffer::<NoiseEvent>::new(RING))
        .unzip();
    // Touch every slot now: the loop must not fault on a fresh page.
    for (p, c) in producers.iter_mut().zip(rings.iter_mut()) {
        for _ in 0..RING {
            let _ = p.push(NoiseEvent::default());
        }
        while c.pop().is_ok() {}
    }
    // Every window starts on one grid, shortly after the threads are set up.
    let t0 = now_ns() + 50_000_000;
    let schedule = Schedule {
        start_ns: t0,
        runtime_ns: spec.runtime_ns as i64,
        period_ns: spec.period_ns as i64,
        end_ns: spec
            .duration_ns
            .map_or(i64::MAX, |d| t0.saturating_add(d as i64)),
        threshold_ns: spec.threshold_ns,
    };
    let (ready_tx, ready_rx) = mpsc::channel::<Ready>();
    std::thread::scope(|scope| -> anyhow::Result<Measured> {
        let mut handles = Vec::with_capacity(n);
        for (i, mut tx) in producers.into_iter().enumerate() {
            let (live, stop, ready_tx, cpu) = (&lives[i], &inner_stop, ready_tx.clone(), cpus[i]);
            let prio = spec.priority;
            let h = std::thread::Builder::new()
                .name(format!("rtshield-n{cpu}"))
                .stack_size(STACK_BYTES)
                .spawn_scoped(scope, move || {
                    spinner(i, cpu, prio, &schedule, &mut tx, live, stop, ready_tx)
                });
            match h {
                Ok(h) => handles.push(h),
                Err(e) => {
                    // The threads already started end at their next look
                    // at the flag (the scope waits for them).
                    inner_stop.store(true, Relaxed);
                    return Err(anyhow::Error::new(e).context("cannot start a spinning thread"));
                }
            }
        }
        drop(ready_tx);
        let mut ready: Vec<Ready> = ready_rx.iter().take(n).collect();
        ready.sort_by_key(|r| r.index);
        let fatal = if ready.len() < n {
            Some("a spinning thread ended before it was set up".to_string())
        } else {
            ready.iter().find_map(|r| r.fatal.clone())
        };
        if let Some(f) = fatal {
            inner_stop.store(true, Relaxed);
            for h in handles {
                let _ = h.join();
            }
            bail!(f);
        }
        for r in ready.iter().filter(|r| r.refused.is_some()) {
            warnings.push(format!(
                "CPU {}: SCHED_FIFO refused ({}): spinning at SCHED_OTHER",
                cpus[r.index],
                r.refused.as_ref().map_or(String::new(), |e| e.to_string())
            ));
        }
        if let Some(s) = session.as_deref_mut() {
            s.spinners(&ready.iter().map(|r| r.tid).collect::<Vec<_>>());
        }
        let end = drain_until_done(&mut rings, &mut accs, session.as_deref_mut(), &lives, stop);
        if end == EndReason::Stopped {
            inner_stop.store(true, Relaxed);
        }
        let mut counters = Vec::with_capacity(n);
        for h in handles {
            counters.push(
                h.join()
                    .map_err(|_| anyhow::anyhow!("a spinning thread panicked"))?,
            );
        }
        drain(&mut rings, &mut accs, session);
        let elapsed_ns = (now_ns() - t0).max(0) as u64;
        Ok(Measured {
            ready,
            counters,
            accs,
            elapsed_ns,
            end,
        })
    })
}

/// Drain every [`DRAIN_EVERY`] (and feed the trace) until every thread
/// is done or `stop` is set.
fn drain_until_done(
    rings: &mut [rtrb::Consumer<NoiseEvent>],
    accs: &mut [CpuAcc],
    mut session: Option<&mut Session>,
    lives: &[Live],
    stop: &AtomicBool,
) -> EndReason {
    loop {
        std::thread::sleep(DRAIN_EVERY);
        drain(rings, accs, session.as_deref_mut());
        if let Some(s) = session.as_deref_mut() {
            let last: Vec<u64> = lives.iter().map(|l| l.last_read()).collect();
            s.pump((now_ns() as u64).saturating_sub(TRACE_LAG_NS), &last);
        }
        if stop.load(Relaxed) {
            return EndReason::Stopped;
        }
        if lives.iter().all(|l| l.done.load(Relaxed)) {
            return EndReason::Duration;
        }
    }
}

/// One spinning thread: pin, block signals, set the policy, report, run
/// the windows.
#[allow(clippy::too_many_arguments)]
fn spinner(
    index: usize,
    cpu: u32,
    prio: Option<i32>,
    schedule: &Schedule,
    tx: &mut rtrb::Producer<NoiseEvent>,
    live: &Live,
    stop: &AtomicBool,
    ready_tx: mpsc::Sender<Ready>,
) -> Counters {
    let tid = gettid();
    live.tid.store(tid, Relaxed);
    block_all_signals();
    let mut r = Ready {
        index,
        tid,
        policy: Policy::Other,
        refused: None,
        fatal: None,
    };
    if let Err(e) = set_affinity(0, &CpuSet::single(cpu)) {
        r.fatal = Some(format!("cannot pin the spinning thread to CPU {cpu}: {e}"));
        let _ = ready_tx.send(r);
        live.done.store(true, Relaxed);
        return Counters::default();
    }
    if let Some(p) = prio {
        match set_scheduler(0, Policy::Fifo, p) {
            Ok(()) => r.policy = Policy::Fifo,
            Err(e) => r.refused = Some(e),
        }
    }
    prefault_stack(PREFAULT_BYTES);
    let _ = ready_tx.send(r);
    let c = spin::run_windows(schedule, tx, live, stop);
    live.done.store(true, Relaxed);
    c
}

/// No signal handler may run on a measured CPU (it would be noise, and a
/// Ctrl-C handler belongs to the main thread).
fn block_all_signals() {
    // SAFETY: a sigset filled by libc; only the calling thread's mask changes.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut set);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Move every waiting event into its CPU's histogram, longest list and
/// (traced) the session.
fn drain(
    rings: &mut [rtrb::Consumer<NoiseEvent>],
    accs: &mut [CpuAcc],
    mut session: Option<&mut Session>,
) {
    for (i, c) in rings.iter_mut().enumerate() {
        let Ok(chunk) = c.read_chunk(c.slots()) else {
            continue;
        };
        let (a, b) = chunk.as_slices();
        for ev in a.iter().chain(b) {
            accs[i].record(ev);
            if let Some(s) = session.as_deref_mut() {
                s.push(i, *ev);
            }
        }
        chunk.commit_all();
    }
}

/// The run's results from what was measured (and explained); sysinfo,
/// start time, steal time, trace summary and warnings are filled in by
/// [`run`].
fn build(
    spec: &NoiseSpec,
    m: Measured,
    found: Option<&Found>,
    root: &Root,
    warnings: &mut Vec<String>,
) -> (RunResult, EndReason) {
    let cpus: Vec<u32> = spec.cpus.iter().collect();
    let housekeeping = get_affinity(0)
        .map(|a| a.difference(&spec.cpus))
        .unwrap_or_default();
    let mut noise_cpus = Vec::with_capacity(cpus.len());
    let mut threads = Vec::with_capacity(cpus.len());
    for (i, ((r, c), acc)) in m.ready.iter().zip(&m.counters).zip(m.accs).enumerate() {
        if c.lost > 0 {
            warnings.push(format!(
                "CPU {}: {} noise events did not fit in the ring: in the totals, not in the histogram or causes",
                cpus[i], c.lost
            ));
        }
        let (mut cpu, thread) = cpu_noise(i, cpus[i], r, c, acc, spec);
        if let Some(o) = found {
            add_causes(&mut cpu, &o.tallies[i], &o.longest[i], root, &housekeeping);
        }
        noise_cpus.push(cpu);
        threads.push(thread);
    }
    let run = RunResult {
        schema: rtshield_results::SCHEMA.to_string(),
        kind: RunKind::Noise,
        tool: format!("rtshield {}", env!("CARGO_PKG_VERSION")),
        label: None,
        started_at: None,
        duration_s: Some(m.elapsed_ns as f64 / 1e9),
        command: Vec::new(),
        config: None,
        settings: Settings {
            mode: Some("noise".into()),
            resolution_ns: HIST_RESOLUTION_NS,
            histo_buckets: Some(spec.histo_size_ns / HIST_RESOLUTION_NS + 1),
            stats_period_ns: Some(spec.period_ns),
            requested_duration_ns: spec.duration_ns,
            requested_samples: None,
            memlock: None,
            cpu_dma_latency: None,
        },
        sysinfo: SysInfo::default(),
        warnings: Vec::new(),
        end_reason: Some(
            match m.end {
                EndReason::Duration => "duration",
                EndReason::Stopped => "stopped",
            }
            .into(),
        ),
        threads,
        programs: Vec::new(),
        tags: BTreeMap::new(),
        trace: None,
        verdict: None,
        noise: Some(NoiseResult {
            threshold_ns: spec.threshold_ns,
            runtime_ns: spec.runtime_ns,
            period_ns: spec.period_ns,
            cpus: noise_cpus,
            trace: None,
        }),
        drift: Default::default(),
    };
    (run, m.end)
}

/// The noise lengths' histogram resolution: 1 µs, as oslat's buckets.
const HIST_RESOLUTION_NS: u64 = 1_000;

/// One CPU's noise figures and its thread (the noise lengths: histogram,
/// percentiles, exact min/avg/max). What has no meaning for a spinning
/// thread (no period to overrun, no last sample worth keeping, so no
/// coordinated-omission view) is unknown: `null`, shown as `?`, never 0.
fn cpu_noise(
    index: usize,
    cpu: u32,
    r: &Ready,
    c: &Counters,
    acc: CpuAcc,
    spec: &NoiseSpec,
) -> (CpuNoise, ThreadResult) {
    let runtime = c.runtime_ns;
    let h = &acc.hist;
    let some = c.events > 0;
    let thread = ThreadResult {
        index: index as u32,
        tid: Some(r.tid),
        cpu: Some(cpu),
        policy: Some(r.policy),
        priority: Some(
            spec.priority
                .filter(|_| r.policy == Policy::Fifo)
                .unwrap_or(0),
        ),
        requested_policy: (spec.priority.is_some() && r.policy != Policy::Fifo)
            .then_some(Policy::Fifo),
        period_ns: Some(spec.period_ns),
        samples: Some(c.events),
        // The thread's own exact extremes (lost events included); null
        // with no event, as a measure thread with no sample (`samples`
        // says 0): `Counters::min_ns`'s "none yet" never reaches the file.
        min_ns: some.then_some(c.min_ns as i64),
        max_ns: some.then_some(c.max_ns as i64),
        cur_ns: None,
        avg_ns: some.then(|| c.noise_ns as f64 / c.events as f64),
        overruns: None,
        missed_periods: None,
        lost: Some(c.lost),
        histogram: Some(h.to_histogram()),
        hist_stats: Some(h.hist_stats()),
        percentiles: h.percentiles(),
        percentile_bounds: Default::default(),
        corrected: None,
        worst_cases: Vec::new(),
        split: None,
        le_counts: (c.lost == 0).then(|| h.le.cumulative()),
        overflow_cycles: None,
    };
    let noise = CpuNoise {
        cpu,
        tid: r.tid,
        policy: r.policy.name().to_string(),
        priority: spec.priority.filter(|_| r.policy == Policy::Fifo),
        runtime_ns: runtime,
        noise_ns: c.noise_ns,
        available_pct: (runtime > 0)
            .then(|| 100.0 * runtime.saturating_sub(c.noise_ns) as f64 / runtime as f64),
        max_single_ns: some.then_some(c.max_ns),
        events: c.events,
        lost: c.lost,
        iterations: c.iterations,
        iterations_per_us: (runtime > 0).then(|| c.iterations as f64 * 1_000.0 / runtime as f64),
        min_gap_ns: (c.min_gap_ns != u64::MAX).then_some(c.min_gap_ns),
        windows: c.windows,
        windows_missed: c.windows_missed,
        steal_ns: None,
        classes: None,
        by_class: None,
        unexplained_ns: None,
        lost_ns: None,
        class_ns: None,
        offenders: None,
        tail: Some(acc.tail.to_histogram()),
        longest: acc
            .longest
            .into_sorted()
            .into_iter()
            .map(Into::into)
            .collect(),
    };
    (noise, thread)
}

/// The traced figures of one CPU: class counts, offenders (threads with
/// their live policy when still the same thread), longest gaps explained.
fn add_causes(
    c: &mut CpuNoise,
    t: &NoiseTally,
    longest: &[rtshield_trace::Explained],
    root: &Root,
    housekeeping: &CpuSet,
) {
    c.classes = Some(
        rtshield_results::NOISE_COLUMNS
            .iter()
            .map(|k| (k.to_string(), t.column(k)))
            .collect(),
    );
    c.by_class = Some(t.by_class.clone());
    c.unexplained_ns = Some(t.unexplained_ns);
    c.lost_ns = Some(t.lost_ns);
    let mut class_ns = BTreeMap::new();
    for (s, total) in &t.by_source {
        *class_ns.entry(s.kind.class()).or_insert(0) += total.ns;
    }
    *class_ns.entry(NoiseClass::Unexplained).or_insert(0) += t.unexplained_ns;
    // The untraced time of the gaps where events were dropped: unknown,
    // apart from the hardware's.
    if t.lost_ns > 0 {
        *class_ns.entry(NoiseClass::Lost).or_insert(0) += t.lost_ns;
    }
    c.class_ns = Some(class_ns);
    let top = t.top(OFFENDERS);
    let rt_pids: Vec<u32> = top
        .iter()
        .filter(|(s, _)| s.kernel_prio.is_some_and(|p| (0..100).contains(&p)))
        .filter_map(|(s, _)| s.pid)
        .collect();
    let live = live_rt(root, &rt_pids);
    c.offenders = Some(
        top.into_iter()
            .map(|(s, total)| {
                let priority = s.pid.map(|_| thread_priority(s, &live));
                let label = match &priority {
                    Some(p) => format!("thread {} (pid {}, {p})", s.name, s.pid.unwrap_or(0)),
                    None => s.label(),
                };
                Offender {
                    label,
                    source: s.clone(),
                    priority,
                    fix: fix(s, c.cpu, housekeeping),
                    total: *total,
                }
            })
            .collect(),
    );
    c.longest = longest.iter().cloned().map(Into::into).collect();
}

/// The audit's fix for one source of noise on `cpu`.
fn fix(s: &NoiseSource, cpu: u32, housekeeping: &CpuSet) -> Option<String> {
    let kind = match s.kind {
        CauseKind::Nmi => NoiseCause::Nmi,
        CauseKind::Irq => NoiseCause::Irq,
        CauseKind::Tick => NoiseCause::Tick,
        CauseKind::Softirq => NoiseCause::Softirq,
        CauseKind::Thread => NoiseCause::Thread,
    };
    noise_fix(kind, &s.name, s.number, s.pid, cpu, housekeeping)
}

/// FIFO or RR, name and priority of the real-time threads `pids`, read
/// now (the trace's prio does not tell FIFO from RR); gone or no longer
/// real-time: left out.
fn live_rt(root: &Root, pids: &[u32]) -> BTreeMap<u32, rtshield_trace::LiveRt> {
    use rtshield_trace::{LiveRt, RtPolicy};
    let mut out = BTreeMap::new();
    for &pid in pids {
        let Some(st) = task_stat(root, pid) else {
            continue;
        };
        let policy = match st.policy {
            Some(Policy::Fifo) => RtPolicy::Fifo,
            Some(Policy::Rr) => RtPolicy::Rr,
            _ => continue,
        };
        if let (Some(comm), Some(priority)) = (task_comm(root, pid), st.rt_priority) {
            out.insert(
                pid,
                LiveRt {
                    comm,
                    policy,
                    priority,
                },
            );
        }
    }
    out
}

fn trace_summary(o: &Outcome, warnings: &mut Vec<String>) -> NoiseTrace {
    if !o.stale_removed.is_empty() {
        warnings.push(format!(
            "removed trace instances left by dead rtshield processes: {}",
            o.stale_removed.join(", ")
        ));
    }
    if let Some(w) = lost_warning(&o.found) {
        warnings.push(w);
    }
    if o.found.unexplained_pending > 0 {
        warnings.push(format!(
            "{} noise events were not explained (no trace for their CPU)",
            o.found.unexplained_pending
        ));
    }
    if let Some(e) = &o.close_error {
        warnings.push(e.clone());
    }
    NoiseTrace {
        unavailable: None,
        events_enabled: o.enabled.clone(),
        events_missing: o.missing.clone(),
        stale_removed: o.stale_removed.clone(),
        lost_events: o.found.lost_events,
        lost_notes_uncounted: o.found.lost_notes_uncounted,
        bad_lines: o.found.bad_lines,
    }
}

/// The warning of a trace that lost events (also when the kernel could
/// not say how many): their gaps are classed lost, not unexplained.
fn lost_warning(f: &Found) -> Option<String> {
    let lost_gaps: u64 = f
        .tallies
        .iter()
        .map(|t| t.by_class.get(&NoiseClass::Lost).copied().unwrap_or(0))
        .sum();
    let how_many = match (f.lost_events, f.lost_notes_uncounted) {
        (0, 0) => return None,
        (n, 0) => format!("{n} trace events"),
        (0, k) => format!("trace events ({k} loss notes without a count)"),
        (n, k) => format!("at least {n} trace events ({k} more loss notes without a count)"),
    };
    Some(format!(
        "the kernel dropped {how_many}: the {lost_gaps} gaps overlapping them are classed unknown (trace events lost), not hardware; a larger --trace-buffer-kb keeps them"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON of a run built from `c`, one CPU, no event drained.
    fn built(c: Counters) -> (CpuNoise, ThreadResult, String) {
        let spec = NoiseSpec::new(CpuSet::parse("0").unwrap());
        let ready = Ready {
            index: 0,
            tid: 7,
            policy: Policy::Other,
            refused: None,
            fatal: None,
        };
        let acc = CpuAcc::new(spec.histo_size_ns);
        let (n, t) = cpu_noise(0, 0, &ready, &c, acc, &spec);
        let json = serde_json::to_string(&(&n, &t)).unwrap();
        (n, t, json)
    }

    #[test]
    fn a_cpu_without_gaps_writes_unknowns_not_the_sentinels() {
        // Nothing spun, no gap seen: `min_gap_ns` and `min_ns` are still
        // their internal u64::MAX.
        let c = Counters::default();
        assert_eq!((c.min_gap_ns, c.min_ns), (u64::MAX, u64::MAX));
        let (n, t, json) = built(c);
        assert_eq!(n.min_gap_ns, None);
        assert_eq!(n.iterations_per_us, None);
        assert_eq!(n.available_pct, None);
        assert_eq!((t.samples, t.min_ns, t.max_ns), (Some(0), None, None));
        assert_eq!((t.avg_ns, n.max_single_ns), (None, None));
        for sentinel in [u64::MAX.to_string(), i64::MAX.to_string(), "-1".into()] {
            assert!(!json.contains(&sentinel), "{sentinel} in {json}");
        }
        // What has no meaning for a spinning thread is unknown, not 0.
        assert_eq!((t.cur_ns, t.overruns, t.missed_periods), (None, None, None));
        assert!(t.corrected.is_none());
    }

    #[test]
    fn a_cpu_with_gaps_writes_its_exact_extremes() {
        let c = Counters {
            iterations: 1_000,
            runtime_ns: 1_000_000,
            noise_ns: 7_000,
            max_ns: 5_000,
            min_ns: 2_000,
            events: 2,
            lost: 2,
            min_gap_ns: 20,
            ..Counters::default()
        };
        let (n, t, _) = built(c);
        assert_eq!(n.min_gap_ns, Some(20));
        // The lost events are in the thread's own extremes.
        assert_eq!((t.min_ns, t.max_ns), (Some(2_000), Some(5_000)));
        assert_eq!(n.max_single_ns, Some(5_000));
        assert_eq!(t.le_counts, None);
    }
}

/// The tracing session's code path fed with recorded trace text instead
/// of a live instance: [`crate::traced::Attribution`] (what
/// `Session::pump` and `Session::finish` run), then [`build`] and
/// [`trace_summary`] up to the run's `results.json`.
#[cfg(test)]
mod traced_tests {
    use super::*;
    use crate::traced::Attribution;
    use serde_json::Value;

    const STORM: &str = include_str!("../../trace/tests/fixtures/noise-irq-storm.txt");
    const LOST: &str = include_str!("../../trace/tests/fixtures/noise-lost-events.txt");

    fn gap(start_ns: u64, len_ns: u64) -> NoiseEvent {
        NoiseEvent { start_ns, len_ns }
    }

    /// Feed `text` as the pipe would give it (chunks of whole lines, each
    /// followed by an explanation up to the last record read, as
    /// `Session::pump` does when the pipe was not emptied), then finish.
    fn attribute(text: &str, cpu: u32, spinner: i32, gaps: &[NoiseEvent]) -> Found {
        let mut a = Attribution::new(&[cpu]);
        a.spinners(&[spinner]);
        for g in gaps {
            a.push(0, *g);
        }
        let lines: Vec<&str> = text.lines().collect();
        for chunk in lines.chunks(37) {
            let last = a.feed_text(&chunk.join("\n"));
            a.explain_until(last, &[0]);
        }
        a.finish()
    }

    /// The results.json of a one-CPU run whose gaps are `gaps`, explained
    /// by `found`; and its warnings.
    fn run_json(cpu: u32, gaps: &[NoiseEvent], found: Found) -> (Value, Vec<String>) {
        let spec = NoiseSpec::new(CpuSet::single(cpu));
        let mut acc = CpuAcc::new(spec.histo_size_ns);
        gaps.iter().for_each(|g| acc.record(g));
        let counters = Counters {
            iterations: 1_000_000,
            runtime_ns: 1_000_000_000,
            noise_ns: gaps.iter().map(|g| g.len_ns).sum(),
            max_ns: gaps.iter().map(|g| g.len_ns).max().unwrap_or(0),
            min_ns: gaps.iter().map(|g| g.len_ns).min().unwrap_or(u64::MAX),
            events: gaps.len() as u64,
            min_gap_ns: 20,
            windows: 1,
            ..Counters::default()
        };
        let m = Measured {
            ready: vec![Ready {
                index: 0,
                tid: 4000,
                policy: Policy::Other,
                refused: None,
                fatal: None,
            }],
            counters: vec![counters],
            accs: vec![acc],
            elapsed_ns: 1_000_000_000,
            end: EndReason::Duration,
        };
        let nowhere = tempfile::tempdir().unwrap();
        let root = Root::new(nowhere.path());
        let mut warnings = Vec::new();
        let (mut run, _) = build(&spec, m, Some(&found), &root, &mut warnings);
        let outcome = Outcome {
            enabled: vec![],
            missing: vec![],
            stale_removed: vec![],
            found,
            close_error: None,
        };
        run.noise.as_mut().unwrap().trace = Some(trace_summary(&outcome, &mut warnings));
        let json = serde_json::from_str(&rtshield_results::to_json(&run)).unwrap();
        (json, warnings)
    }

    #[test]
    fn the_irq_storm_fixture_gives_irq_causes_up_to_results_json() {
        // The gaps of crates/trace/tests/trace/noise.rs, whose answers are
        // computed by hand there: the storm, the tick, the hypervisor.
        let gaps = [
            gap(3_000_000_100_500, 201_000),
            gap(3_000_010_000_200, 3_000),
            gap(3_000_400_000_000, 1_700_000),
        ];
        let found = attribute(STORM, 1, 4000, &gaps);
        assert_eq!((found.bad_lines, found.unexplained_pending), (0, 0));
        let (j, warnings) = run_json(1, &gaps, found);
        assert!(warnings.is_empty(), "{warnings:?}");
        let c = &j["noise"]["cpus"][0];
        assert_eq!(c["classes"]["IRQ"], 2, "{c}");
        assert_eq!(c["classes"]["HW"], 1, "{c}");
        assert_eq!(c["classes"]["LOST"], 0, "{c}");
        assert_eq!(c["by_class"]["irq"], 1);
        assert_eq!(c["by_class"]["tick"], 1);
        assert_eq!(c["class_ns"]["irq"], 200_000);
        assert_eq!(c["class_ns"]["tick"], 2_800);
        assert_eq!(c["unexplained_ns"], 1_000 + 200 + 1_700_000);
        assert_eq!(c["lost_ns"], 0);
        let top = &c["offenders"][0];
        assert_eq!(top["label"], "IRQ eth0-rx:24", "{c}");
        assert_eq!(
            (top["ns"].as_u64(), top["runs"].as_u64()),
            (Some(200_000), Some(40))
        );
        assert!(
            top["fix"]
                .as_str()
                .unwrap()
                .contains("/proc/irq/24/smp_affinity_list"),
            "{top}"
        );
        // The longest gap is the hypervisor's, then the storm with its cause.
        let longest = c["longest"].as_array().unwrap();
        assert_eq!(longest[0]["class"], "unexplained");
        assert_eq!(longest[1]["class"], "irq");
        assert_eq!(longest[1]["causes"][0]["source"]["name"], "eth0-rx");
        assert_eq!(longest[1]["causes"][0]["runs"], 40);
    }

    /// Gaps placed by hand on the recorded losses of CPU 1: before its
    /// first record (the first note comes first), inside the 1.2 s the
    /// second note covers (1893.265568 to 1894.444050), a tick after it
    /// (1894.528043-.528067), and 2 ms between two ticks after the third
    /// (the CPU ran a task switched in before it: no event starts in it).
    fn lost_gaps() -> [NoiseEvent; 4] {
        [
            gap(1_893_100_000_000, 1_700_000),
            gap(1_893_500_000_000, 1_700_000),
            gap(1_894_528_040_500, 30_000),
            gap(1_895_241_000_000, 2_000_000),
        ]
    }

    #[test]
    fn recorded_losses_are_their_own_class_never_hardware() {
        let gaps = lost_gaps();
        let found = attribute(LOST, 1, 4000, &gaps);
        assert_eq!(found.bad_lines, 0);
        assert_eq!(found.lost_events, 1415 + 3086 + 1443);
        assert_eq!(found.lost_notes_uncounted, 0);
        let (j, warnings) = run_json(1, &gaps, found);
        let c = &j["noise"]["cpus"][0];
        assert_eq!(c["classes"]["LOST"], 2, "{c}");
        assert_eq!(c["classes"]["HW"], 1, "{c}");
        assert_eq!(c["classes"]["IRQ"], 1, "{c}");
        assert_eq!(c["by_class"]["lost"], 2);
        assert_eq!(c["by_class"]["tick"], 1);
        // The lost gaps' untraced time is apart: only the last gap is
        // hardware (plus the tick gap's own untraced part).
        assert_eq!(c["lost_ns"], 3_400_000, "{c}");
        let un = c["unexplained_ns"].as_u64().unwrap();
        assert!((2_000_000..2_030_000).contains(&un), "{c}");
        assert_eq!(c["class_ns"]["lost"], 3_400_000);
        assert_eq!(c["class_ns"]["unexplained"].as_u64(), Some(un));
        assert_eq!(j["noise"]["trace"]["lost_events"], 5944);
        assert_eq!(j["noise"]["trace"]["lost_notes_uncounted"], 0);
        let w = warnings.join("\n");
        assert!(w.contains("dropped 5944 trace events"), "{w}");
        assert!(
            w.contains("the 2 gaps overlapping them are classed unknown"),
            "{w}"
        );
    }

    #[test]
    fn a_loss_note_without_a_count_still_makes_lost_gaps_and_warns() {
        // The kernel's note when it cannot count (`[LOST EVENTS]`).
        let text = LOST.replace("[LOST 3086 EVENTS]", "[LOST EVENTS]");
        let gaps = lost_gaps();
        let found = attribute(&text, 1, 4000, &gaps);
        assert_eq!(found.lost_events, 1415 + 1443);
        assert_eq!(found.lost_notes_uncounted, 1);
        let (j, warnings) = run_json(1, &gaps, found);
        assert_eq!(j["noise"]["cpus"][0]["classes"]["LOST"], 2);
        assert_eq!(j["noise"]["trace"]["lost_notes_uncounted"], 1);
        let w = warnings.join("\n");
        assert!(
            w.contains("at least 2858 trace events (1 more loss notes without a count)"),
            "{w}"
        );
        // Only notes without a count: still a warning.
        let only: String = text
            .lines()
            .map(|l| {
                if l.starts_with("CPU:1 [LOST") {
                    "CPU:1 [LOST EVENTS]"
                } else {
                    l
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        let found = attribute(&only, 1, 4000, &gaps);
        assert_eq!((found.lost_events, found.lost_notes_uncounted), (0, 3));
        let w = lost_warning(&found).expect("a warning without any count");
        assert!(
            w.contains("trace events (3 loss notes without a count)"),
            "{w}"
        );
    }
}
