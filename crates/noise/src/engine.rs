//! The spinning threads and the main thread's drain.
//!
//! One thread per measured CPU, pinned there before it spins, all signals
//! blocked (no handler ever runs on a measured CPU), SCHED_OTHER or
//! SCHED_FIFO; each runs [`spin::run_windows`]. The main thread stays on
//! the other CPUs, drains the rings every 20 ms into the histograms (and,
//! traced, into the session that explains each event), and builds the
//! [`NoiseRun`].

use crate::report::{thread_priority, CpuNoise, NoiseRun, Offender, TopK, TraceSummary};
use crate::spin::{self, Counters, Live, Schedule};
use crate::traced::{Outcome, Session, LONGEST};
use crate::NoiseSpec;
use anyhow::{bail, Context};
use rtshield_measure::now_ns;
use rtshield_measure::ThreadHistograms;
use rtshield_measure::{prefault_stack, MemLock};
use rtshield_sys::{get_affinity, gettid, set_affinity, set_scheduler};
use rtshield_sys::{steal_ns_between, StatSnapshot};
use rtshield_sys::{task_comm, task_stat, Root};
use rtshield_trace::{NoiseEvent, NoiseTally};
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
    longest: TopK<NoiseEvent>,
}

/// Measure noise on `spec.cpus` until `spec.duration_ns` or `stop`.
/// `root` is where tracefs, `/proc/stat` and the live threads' policies
/// are read.
pub fn run(
    root: &Root,
    spec: &NoiseSpec,
    stop: &AtomicBool,
) -> anyhow::Result<(NoiseRun, EndReason)> {
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
                trace = Some(TraceSummary {
                    unavailable: Some(why),
                    ..TraceSummary::default()
                });
            }
        }
    }
    let stat_before = StatSnapshot::read(root).ok();
    let started_at = rtshield_measure::rfc3339_utc(std::time::SystemTime::now());
    let measured = measure(spec, stop, session.as_mut(), &mut warnings)?;
    let stat_after = StatSnapshot::read(root).ok();
    let outcome = session.map(Session::finish);
    drop(memlock);
    let (mut run, end) = build(spec, measured, outcome.as_ref(), root, &mut warnings);
    if let Some(o) = &outcome {
        trace = Some(trace_summary(o, &mut warnings));
    }
    for c in run.cpus.iter_mut() {
        c.steal_ns = match (&stat_before, &stat_after) {
            (Some(a), Some(b)) => steal_ns_between(a, b, [c.cpu]),
            _ => None,
        };
    }
    run.started_at = started_at;
    run.trace = trace;
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
    let mut accs: Vec<CpuAcc> = (0..n)
        .map(|_| CpuAcc {
            hist: ThreadHistograms::new(spec.histo_size_ns, 1_000),
            longest: TopK::new(LONGEST),
        })
        .collect();
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
            let acc = &mut accs[i];
            acc.hist.record(ev.len_ns.min(i64::MAX as u64) as i64, 0, 0);
            acc.longest.offer(ev.len_ns, *ev);
            if let Some(s) = session.as_deref_mut() {
                s.push(i, *ev);
            }
        }
        chunk.commit_all();
    }
}

/// The run's results from what was measured (and explained).
fn build(
    spec: &NoiseSpec,
    m: Measured,
    outcome: Option<&Outcome>,
    root: &Root,
    warnings: &mut Vec<String>,
) -> (NoiseRun, EndReason) {
    let cpus: Vec<u32> = spec.cpus.iter().collect();
    let mut out = Vec::with_capacity(cpus.len());
    for (i, ((r, c), acc)) in m.ready.iter().zip(&m.counters).zip(m.accs).enumerate() {
        if c.lost > 0 {
            warnings.push(format!(
                "CPU {}: {} noise events did not fit in the ring: in the totals, not in the histogram or causes",
                cpus[i], c.lost
            ));
        }
        let mut cpu = cpu_noise(cpus[i], r, c, acc, spec);
        if let Some(o) = outcome {
            add_causes(&mut cpu, &o.tallies[i], &o.longest[i], root);
        }
        out.push(cpu);
    }
    let run = NoiseRun {
        schema: "rtshield.noise/0".into(),
        started_at: String::new(),
        elapsed_ns: m.elapsed_ns,
        end_reason: match m.end {
            EndReason::Duration => "duration".into(),
            EndReason::Stopped => "stopped".into(),
        },
        threshold_ns: spec.threshold_ns,
        runtime_ns: spec.runtime_ns,
        period_ns: spec.period_ns,
        cpus: out,
        trace: None,
        warnings: Vec::new(),
    };
    (run, m.end)
}

fn cpu_noise(cpu: u32, r: &Ready, c: &Counters, acc: CpuAcc, spec: &NoiseSpec) -> CpuNoise {
    let runtime = c.runtime_ns;
    CpuNoise {
        cpu,
        tid: r.tid,
        policy: r.policy,
        priority: spec.priority.filter(|_| r.policy == Policy::Fifo),
        runtime_ns: runtime,
        noise_ns: c.noise_ns,
        available_pct: (runtime > 0)
            .then(|| 100.0 * runtime.saturating_sub(c.noise_ns) as f64 / runtime as f64),
        max_single_ns: c.max_ns,
        events: c.events,
        lost: c.lost,
        iterations: c.iterations,
        iterations_per_us: (runtime > 0).then(|| c.iterations as f64 * 1_000.0 / runtime as f64),
        min_gap_ns: (c.min_gap_ns != u64::MAX).then_some(c.min_gap_ns),
        windows: c.windows,
        windows_missed: c.windows_missed,
        steal_ns: None,
        histogram: acc.hist.to_histogram(),
        hist_stats: acc.hist.hist_stats(),
        percentiles: acc.hist.percentiles(),
        classes: None,
        by_class: None,
        unexplained_ns: None,
        offenders: None,
        longest: acc
            .longest
            .into_sorted()
            .into_iter()
            .map(Into::into)
            .collect(),
    }
}

/// The traced figures of one CPU: class counts, offenders (threads with
/// their live policy when still the same thread), longest gaps explained.
fn add_causes(
    c: &mut CpuNoise,
    t: &NoiseTally,
    longest: &[rtshield_trace::Explained],
    root: &Root,
) {
    let columns = ["HW", "NMI", "IRQ", "SIRQ", "THREAD"];
    c.classes = Some(
        columns
            .iter()
            .map(|k| (k.to_string(), t.column(k)))
            .collect(),
    );
    c.by_class = Some(t.by_class.clone());
    c.unexplained_ns = Some(t.unexplained_ns);
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
                    total: *total,
                }
            })
            .collect(),
    );
    c.longest = longest.iter().cloned().map(Into::into).collect();
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

fn trace_summary(o: &Outcome, warnings: &mut Vec<String>) -> TraceSummary {
    if !o.stale_removed.is_empty() {
        warnings.push(format!(
            "removed trace instances left by dead rtshield processes: {}",
            o.stale_removed.join(", ")
        ));
    }
    if o.lost_events > 0 {
        warnings.push(format!(
            "the kernel dropped {} trace events: causes may be missing around them (their gaps then read as unexplained)",
            o.lost_events
        ));
    }
    if o.unexplained_pending > 0 {
        warnings.push(format!(
            "{} noise events were not explained (no trace for their CPU)",
            o.unexplained_pending
        ));
    }
    if let Some(e) = &o.close_error {
        warnings.push(e.clone());
    }
    TraceSummary {
        unavailable: None,
        events_enabled: o.enabled.clone(),
        events_missing: o.missing.clone(),
        stale_removed: o.stale_removed.clone(),
        lost_events: o.lost_events,
        bad_lines: o.bad_lines,
    }
}
