//! The spinning threads and the main thread's drain.
//!
//! One thread per measured CPU, pinned there before it spins, all signals
//! blocked (no handler ever runs on a measured CPU), SCHED_OTHER or
//! SCHED_FIFO; each runs [`spin::run_windows`]. The main thread stays on
//! the other CPUs, drains the rings every 20 ms into the histograms (and,
//! traced, into the session that explains each event), and builds the
//! run's [`RunResult`] of kind `noise`.

use crate::result::{thread_priority, TopK};
use crate::spin::{self, Counters, Live, Schedule};
use crate::traced::{Outcome, Session, LONGEST};
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
    longest: TopK<NoiseEvent>,
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
    let (mut run, end) = build(spec, measured, outcome.as_ref(), root, &mut warnings);
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

/// The run's results from what was measured (and explained); sysinfo,
/// start time, steal time, trace summary and warnings are filled in by
/// [`run`].
fn build(
    spec: &NoiseSpec,
    m: Measured,
    outcome: Option<&Outcome>,
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
        if let Some(o) = outcome {
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
        // The thread's own exact extremes (lost events included); 0 with
        // no event, as a measure run with no sample (`samples` says 0):
        // `Counters::min_ns`'s "none yet" never reaches the file.
        min_ns: if some { c.min_ns as i64 } else { 0 },
        max_ns: c.max_ns as i64,
        cur_ns: None,
        avg_ns: if some {
            c.noise_ns as f64 / c.events as f64
        } else {
            0.0
        },
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
        max_single_ns: c.max_ns,
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
        class_ns: None,
        offenders: None,
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
    let mut class_ns = BTreeMap::new();
    for (s, total) in &t.by_source {
        *class_ns.entry(s.kind.class()).or_insert(0) += total.ns;
    }
    *class_ns.entry(NoiseClass::Unexplained).or_insert(0) += t.unexplained_ns;
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
    NoiseTrace {
        unavailable: None,
        events_enabled: o.enabled.clone(),
        events_missing: o.missing.clone(),
        stale_removed: o.stale_removed.clone(),
        lost_events: o.lost_events,
        bad_lines: o.bad_lines,
    }
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
        let acc = CpuAcc {
            hist: ThreadHistograms::new(spec.histo_size_ns, HIST_RESOLUTION_NS),
            longest: TopK::new(LONGEST),
        };
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
        assert_eq!((t.samples, t.min_ns, t.max_ns), (Some(0), 0, 0));
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
        assert_eq!((t.min_ns, t.max_ns), (2_000, 5_000));
        assert_eq!(t.le_counts, None);
    }
}
