//! The measuring threads' set-up and the main thread's aggregation loop.
//!
//! The hot loop ([`crate::hotloop::hot_loop`], its own file) does nothing
//! but sleep, read the clock (vDSO), update its [`Accum`], store a few
//! relaxed atomics for the live display and push the sample into its SPSC
//! ring. Everything else (thread set-up, histograms, display, files)
//! happens here, outside it.

use crate::hotloop::{hot_loop_traced, now_ns, Live, LoopConfig, Sample, Waiter};
use crate::main_side::{rings, IvalAcc, MainSide, Setup, SnapshotInfo};
use crate::spike::{SpikeMark, SpikeTrigger, Spiker, MARK_RING};
use crate::stats::{Accum, ThreadHistograms};
use crate::timer::PosixTimer;
use crate::{
    rt, signals, EndReason, MeasureSpec, Measurement, Observer, ThreadMeasurement, ThreadSpec,
};
use anyhow::{bail, Context};
use rtshield_sys::Root;
use rtshield_sys::{get_affinity, gettid, set_affinity, set_scheduler};
use rtshield_vocab::Policy;
use rtshield_vocab::{CpuSet, InputError};
use std::sync::atomic::{
    AtomicBool,
    Ordering::{Acquire, Relaxed},
};
use std::sync::mpsc;
use std::time::Duration;

/// What a thread reports once set up, before its first sample.
pub(crate) struct Ready {
    pub(crate) index: usize,
    pub(crate) tid: i32,
    pub(crate) cpu: Option<u32>,
    pub(crate) policy: Policy,
    /// The OS error of a refused RT policy.
    pub(crate) refused: Option<std::io::Error>,
    /// A set-up failure that stops the run.
    pub(crate) fatal: Option<String>,
}

/// Stack for the measuring threads; the loop uses a tiny part of it, the
/// pre-faulted part covers it with room to spare.
const STACK_BYTES: usize = 512 * 1024;
const PREFAULT_BYTES: usize = 256 * 1024;
/// How often the main thread drains the rings.
pub(crate) const DRAIN_EVERY: Duration = Duration::from_millis(20);

fn validate(spec: &MeasureSpec, online: &CpuSet) -> anyhow::Result<()> {
    if spec.threads.is_empty() {
        bail!(InputError::new("no measuring thread (give --cpus)"));
    }
    for t in &spec.threads {
        if t.period_ns == 0 {
            bail!(InputError::new(format!(
                "thread {}: the period must be > 0",
                t.index
            )));
        }
        if t.policy.is_rt() && !(1..=99).contains(&t.priority) {
            bail!(InputError::new(format!(
                "thread {}: priority {} out of range for {} (1..99)",
                t.index, t.priority, t.policy
            )));
        }
        if matches!(t.policy, Policy::Deadline) {
            bail!(InputError::new(format!(
                "thread {}: SCHED_DEADLINE is not supported by the measuring threads",
                t.index
            )));
        }
        if let Some(c) = t.cpu.filter(|_| t.cgroup_tasks.is_none()) {
            if !online.is_empty() && !online.contains(c) {
                bail!(InputError::new(format!(
                    "thread {}: CPU {c} is not online or not allowed to this process (allowed: {})",
                    t.index,
                    online.to_list()
                )));
            }
        }
    }
    if spec.resolution_ns == 0 {
        bail!(InputError::new("the histogram resolution must be > 0"));
    }
    Ok(())
}

/// Restores the calling thread's affinity when dropped.
pub(crate) struct AffinityGuard(pub(crate) Option<CpuSet>);

impl Drop for AffinityGuard {
    fn drop(&mut self) {
        if let Some(a) = &self.0 {
            let _ = set_affinity(0, a);
        }
    }
}

/// [`run_at`] on the host's root.
pub fn run(
    spec: &MeasureSpec,
    stop: &AtomicBool,
    obs: &mut dyn Observer,
) -> anyhow::Result<Measurement> {
    run_at(&Root::host(), spec, stop, obs)
}

/// Run a measurement: set up, start one thread per [`ThreadSpec`], drain
/// the rings, call `obs` every stats period, stop on duration, samples,
/// `stop` (e.g. [`install_signals`](crate::install_signals)) or when `obs` returns false. `root`
/// (the caller's `--sysroot`) is where the explanation of a refused
/// SCHED_FIFO is read.
pub fn run_at(
    root: &Root,
    spec: &MeasureSpec,
    stop: &AtomicBool,
    obs: &mut dyn Observer,
) -> anyhow::Result<Measurement> {
    run_traced(root, spec, stop, obs, None)
}

/// [`run_at`] with a spike trigger: each measuring thread acts on a
/// wake-up later than `trigger.threshold_ns` ([`SpikeTrigger`]) and the
/// observer's [`Observer::drained`] receives the marks. A `stop` trigger
/// ends the run at the first spike ([`EndReason::TraceStop`]).
pub fn run_traced(
    root: &Root,
    spec: &MeasureSpec,
    stop: &AtomicBool,
    obs: &mut dyn Observer,
    trigger: Option<SpikeTrigger>,
) -> anyhow::Result<Measurement> {
    let online = get_affinity(0).unwrap_or_default();
    validate(spec, &online)?;
    let mut warnings = Vec::new();
    let setup = Setup::hold(spec, &online, &mut warnings);
    // The one figure a refused SCHED_FIFO is explained with; read before
    // the threads start, never from the loop.
    let caller_rt_runtime_us = rtshield_sys::caller_rt_runtime_us(root);

    signals::install_wake();
    let n = spec.threads.len();
    let lives: Vec<Live> = (0..n).map(|_| Live::default()).collect();
    let inner_stop = AtomicBool::new(false);
    let (producers, rings) = rings(spec, setup.memlock.is_some());
    let (mark_tx, mark_rx) = mark_rings(n, trigger.is_some());
    let trace_stopped = AtomicBool::new(false);
    // Allocated before the threads start measuring (up to 10 million
    // buckets each), as the marks' buffer.
    let hists: Vec<ThreadHistograms> = (0..n)
        .map(|_| ThreadHistograms::new(spec.histo_size_ns, spec.resolution_ns))
        .collect();
    let marks: Vec<SpikeMark> = Vec::with_capacity(MARK_RING);
    let started_at = crate::rfc3339_utc(std::time::SystemTime::now());
    let t0 = now_ns();
    let (ready_tx, ready_rx) = mpsc::channel::<Ready>();

    let ended = std::thread::scope(|scope| -> anyhow::Result<Ended> {
        let mut handles = Vec::with_capacity(n);
        for (i, ((t, mut tx), marks_tx)) in
            spec.threads.iter().zip(producers).zip(mark_tx).enumerate()
        {
            let links = Links {
                index: i,
                live: &lives[i],
                stop: &inner_stop,
                ready_tx: ready_tx.clone(),
                root,
                marks: marks_tx,
                trigger,
                stopped: &trace_stopped,
            };
            let h = std::thread::Builder::new()
                .name(format!("rtshield-m{}", t.index))
                .stack_size(STACK_BYTES)
                .spawn_scoped(scope, move || measuring_thread(spec, t, &mut tx, links))
                .context("cannot start a measuring thread")?;
            handles.push(h);
        }
        drop(ready_tx);

        // Wait until every thread is set up (or failed).
        let mut ready: Vec<Option<Ready>> = (0..n).map(|_| None).collect();
        for r in ready_rx.iter().take(n) {
            let i = r.index;
            ready[i] = Some(r);
        }
        if let Some(f) = ready.iter().flatten().find_map(|r| r.fatal.clone()) {
            inner_stop.store(true, Relaxed);
            wake_until_done(&lives, &inner_stop);
            for h in handles {
                let _ = h.join();
            }
            bail!(f);
        }
        let mut main = MainSide {
            spec,
            tids: ready
                .iter()
                .map(|r| r.as_ref().map_or(0, |r| r.tid))
                .collect(),
            ready,
            lives: &lives,
            rings,
            hists,
            ival: vec![IvalAcc::default(); n],
            mark_rx: mark_rx.into_iter().flatten().collect(),
            marks,
            times: keeps_times(spec).then(|| vec![Vec::new(); n]),
            inner_stop: &inner_stop,
            trace_stopped: &trace_stopped,
            t0,
        };
        let snap = SnapshotInfo {
            started_at: &started_at,
            warnings: &warnings,
            dma: setup.dma.as_ref().map(|d| d.value_us),
            memlocked: setup.memlock.is_some(),
            caller_rt_runtime_us,
        };
        let mut end = main.watch(obs, stop, &snap);
        wake_until_done(&lives, &inner_stop);
        let mut exact = Vec::with_capacity(n);
        for h in handles {
            exact.push(
                h.join()
                    .map_err(|_| anyhow::anyhow!("a measuring thread panicked"))?,
            );
        }
        main.drain();
        main.take_marks(obs);
        if trace_stopped.load(Relaxed) {
            end = EndReason::TraceStop;
        } else if end == EndReason::Stop && !inner_stop.load(Relaxed) {
            end = ended_by_itself(spec, &exact);
        }
        // A final call so the display shows the end state.
        let elapsed = (now_ns() - t0) as u64;
        obs.interval(&main.interval_stats(elapsed));
        Ok(Ended {
            ready: main.ready,
            exact,
            end,
            elapsed,
            hists: main.hists,
        })
    })?;
    let memlocked = setup.memlock.is_some();
    let dma = setup.dma.as_ref().map(|d| d.value_us);
    drop(setup);
    Ok(ended.measurement(
        spec,
        started_at,
        warnings,
        caller_rt_runtime_us,
        dma,
        memlocked,
    ))
}

/// `--split`: the main side hands each sample's time to the observer.
fn keeps_times(spec: &MeasureSpec) -> bool {
    spec.trace.as_ref().is_some_and(|t| t.split)
}

/// What the threads left when the run ended.
pub(crate) struct Ended {
    pub(crate) ready: Vec<Option<Ready>>,
    pub(crate) exact: Vec<Accum>,
    pub(crate) end: EndReason,
    pub(crate) elapsed: u64,
    pub(crate) hists: Vec<ThreadHistograms>,
}

impl Ended {
    /// The outcome of the run, with the warnings its end calls for.
    pub(crate) fn measurement(
        self,
        spec: &MeasureSpec,
        started_at: String,
        mut warnings: Vec<String>,
        caller_rt_runtime_us: Option<i64>,
        dma: Option<i32>,
        memlocked: bool,
    ) -> Measurement {
        let threads = thread_results(
            spec,
            &self.ready,
            self.exact,
            self.hists,
            caller_rt_runtime_us,
            &mut warnings,
        );
        if let EndReason::Signal(sig) = self.end {
            warnings.push(interrupted(sig, self.elapsed));
        }
        Measurement {
            spec: spec.clone(),
            started_at,
            elapsed_ns: self.elapsed,
            end: self.end,
            threads,
            warnings,
            cpu_dma_latency: dma,
            memlocked,
            partial: false,
            trace: None,
        }
    }
}

/// Spike marks: a small ring per thread, only with a trigger.
#[allow(clippy::type_complexity)]
fn mark_rings(
    n: usize,
    traced: bool,
) -> (
    Vec<Option<rtrb::Producer<SpikeMark>>>,
    Vec<Option<rtrb::Consumer<SpikeMark>>>,
) {
    (0..n)
        .map(|_| {
            if traced {
                let (p, c) = rtrb::RingBuffer::<SpikeMark>::new(MARK_RING);
                (Some(p), Some(c))
            } else {
                (None, None)
            }
        })
        .unzip()
}

/// Why threads that all ended by themselves ended: their samples, else
/// the duration.
fn ended_by_itself(spec: &MeasureSpec, exact: &[Accum]) -> EndReason {
    if spec.samples.is_some() && exact.iter().all(|a| Some(a.lat.count) == spec.samples) {
        EndReason::Samples
    } else {
        EndReason::Duration
    }
}

/// The warning of a run a signal ended after `elapsed` ns.
fn interrupted(sig: i32, elapsed: u64) -> String {
    format!(
        "run interrupted by {} after {:.1} s: figures cover the time measured",
        rtshield_signals::name(sig).unwrap_or("a signal"),
        elapsed as f64 / 1e9
    )
}

/// Per-thread results, and the warnings they call for (fallback, lost).
pub(crate) fn thread_results(
    spec: &MeasureSpec,
    ready: &[Option<Ready>],
    exact: Vec<Accum>,
    hists: Vec<ThreadHistograms>,
    caller_rt_runtime_us: Option<i64>,
    warnings: &mut Vec<String>,
) -> Vec<ThreadMeasurement> {
    let mut threads = Vec::with_capacity(spec.threads.len());
    for ((t, r), (acc, hist)) in spec
        .threads
        .iter()
        .zip(ready)
        .zip(exact.into_iter().zip(hists))
    {
        let r = r.as_ref().expect("every thread reported");
        let fallback = r.refused.as_ref().map(|e| {
            format!(
                "thread {}: SCHED_{} refused, measured under SCHED_OTHER: {}",
                t.index,
                t.policy.name().to_uppercase(),
                rtshield_sys::fifo_refusal_reason(e, caller_rt_runtime_us)
            )
        });
        if let Some(f) = &fallback {
            warnings.push(f.clone());
        }
        if acc.lost > 0 {
            warnings.push(format!(
                "thread {}: {} samples did not fit in the ring (lost): they are in samples/min/max/avg but not in the histogram or percentiles",
                t.index, acc.lost
            ));
        }
        threads.push(ThreadMeasurement {
            spec: t.clone(),
            tid: r.tid,
            cpu: r.cpu,
            policy: r.policy,
            priority: if r.policy.is_rt() { t.priority } else { 0 },
            fallback,
            exact: acc,
            hist,
            split: None,
        });
    }
    threads
}

/// When the run stops early, cut the measuring threads' waits short (a
/// period may be 10 s): send each unfinished thread the wake signal, again
/// every millisecond, since a signal that lands just before a thread enters
/// its wait is lost (the handler ran, the wait then sleeps).
fn wake_until_done(lives: &[Live], stop: &AtomicBool) {
    if !stop.load(Relaxed) {
        return;
    }
    loop {
        let mut pending = false;
        for l in lives {
            if !l.done.load(Acquire) {
                pending = true;
                signals::wake_thread(l.tid.load(Relaxed));
            }
        }
        if !pending {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The stop signals are for the main thread: their handler must never run
/// on a measured CPU (and interrupt a sleep there).
fn block_stop_signals() {
    rtshield_signals::block_in_this_thread();
}

/// A measuring thread's links to the main thread.
struct Links<'a> {
    /// Its place in `spec.threads`, the `Live`s and the rings.
    index: usize,
    live: &'a Live,
    stop: &'a AtomicBool,
    ready_tx: mpsc::Sender<Ready>,
    /// Where the thread's cgroup file is (the run's `--sysroot`).
    root: &'a Root,
    /// The thread's spike-mark queue (with a trigger only).
    marks: Option<rtrb::Producer<SpikeMark>>,
    trigger: Option<SpikeTrigger>,
    /// Shared: tracing stopped (`--trace-stop`).
    stopped: &'a AtomicBool,
}

/// Set up the calling thread (affinity, policy, stack, timer), report,
/// then run the hot loop of thread `t` of `spec`.
fn measuring_thread(
    spec: &MeasureSpec,
    t: &ThreadSpec,
    tx: &mut rtrb::Producer<Sample>,
    links: Links<'_>,
) -> Accum {
    let Links {
        index,
        live,
        stop,
        ready_tx,
        root,
        mut marks,
        trigger,
        stopped,
    } = links;
    let tid = gettid();
    live.tid.store(tid, Relaxed);
    block_stop_signals();
    let mut r = Ready {
        index,
        tid,
        cpu: None,
        policy: t.policy,
        refused: None,
        fatal: None,
    };
    let fail = |mut r: Ready, msg: String| {
        r.fatal = Some(msg);
        let _ = ready_tx.send(r);
        live.done.store(true, Relaxed);
        Accum::default()
    };
    // Join the stanza's partition first: its cpuset decides which CPUs the
    // thread may be pinned to.
    if let Some(f) = &t.cgroup_tasks {
        if let Err(e) = root.write(f, &tid.to_string()) {
            return fail(r, format!("thread {}: cannot join {f}: {e}", t.index));
        }
    }
    if let Some(c) = t.cpu {
        if let Err(e) = set_affinity(0, &CpuSet::single(c)) {
            return fail(r, format!("thread {}: cannot pin to CPU {c}: {e}", t.index));
        }
        r.cpu = Some(c);
    }
    if let Err(e) = set_scheduler(0, t.policy, t.priority) {
        if t.policy.is_rt() && set_scheduler(0, Policy::Other, 0).is_ok() {
            r.policy = Policy::Other;
            r.refused = Some(e);
        } else {
            return fail(
                r,
                format!("thread {}: cannot set {}: {e}", t.index, t.policy),
            );
        }
    }
    rt::prefault_stack(PREFAULT_BYTES);
    let start = now_ns();
    let cfg = LoopConfig::for_thread(spec, t, start);
    let waiter = if cfg.mode.uses_timer() {
        match PosixTimer::new(start + t.period_ns as i64, t.period_ns) {
            Ok(pt) => Waiter::Timer(pt),
            Err(e) => return fail(r, format!("thread {}: timer_create: {e}", t.index)),
        }
    } else {
        Waiter::Nanosleep
    };
    let cpu = r.cpu.map_or(-1, |c| c as i32);
    let _ = ready_tx.send(r);
    let mut spiker = match (marks.as_mut(), trigger) {
        (Some(m), Some(trigger)) => Some(Spiker {
            trigger,
            thread: index as u32,
            tid,
            cpu,
            marks: m,
            stopped,
            end_run: stop,
            buf: [0; 128],
        }),
        _ => None,
    };
    let acc = hot_loop_traced(&cfg, &waiter, tx, live, stop, spiker.as_mut());
    drop(waiter);
    live.done.store(true, Relaxed);
    acc
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hotloop::timespec;
    use crate::hotloop::{hot_loop, periods_passed, periods_within};
    use crate::Mode;

    fn quick(mode: Mode, samples: u64) -> (Accum, Vec<Sample>) {
        let (mut p, mut c) = rtrb::RingBuffer::new(1024);
        let live = Live::default();
        let stop = AtomicBool::new(false);
        let start = now_ns();
        let cfg = LoopConfig {
            mode,
            period_ns: 200_000,
            start_ns: start,
            end_ns: None,
            samples: Some(samples),
        };
        let w = if mode.uses_timer() {
            Waiter::Timer(PosixTimer::new(start + 200_000, 200_000).unwrap())
        } else {
            Waiter::Nanosleep
        };
        let a = hot_loop(&cfg, &w, &mut p, &live, &stop);
        let mut v = Vec::new();
        while let Ok(s) = c.pop() {
            v.push(s);
        }
        assert_eq!(live.count.load(Relaxed), a.lat.count);
        (a, v)
    }

    #[test]
    fn live_figures_of_two_threads_never_share_a_cache_line() {
        const LINE: usize = 128;
        assert!(std::mem::align_of::<Live>() >= LINE);
        // As `run` lays them out: side by side in one Vec.
        let lives: Vec<Live> = (0..4).map(|_| Live::default()).collect();
        for pair in lives.windows(2) {
            let a = &pair[0] as *const Live as usize;
            let b = &pair[1] as *const Live as usize;
            assert_eq!(a % LINE, 0, "starts on a line");
            let last_line_of_a = (a + std::mem::size_of::<Live>() - 1) / LINE;
            assert!(last_line_of_a < b / LINE, "{a:#x} and {b:#x} share a line");
        }
    }

    #[test]
    fn nanosleep_loop_counts_exactly() {
        let (a, v) = quick(Mode::Nanosleep, 50);
        assert_eq!(a.lat.count, 50);
        assert_eq!(v.len(), 50);
        assert!(a.lat.min >= 0, "absolute sleep never wakes early");
        assert_eq!(a.lat.max, v.iter().map(|s| s.value).max().unwrap());
        assert_eq!(a.lat.sum, v.iter().map(|s| s.value as i128).sum::<i128>());
    }

    /// Issue 22 item 10: each sample carries the deadline it slept until,
    /// on the period grid (skipped periods skipped), so `--split` can pair
    /// it with its own trace events.
    #[test]
    fn each_sample_carries_its_expected_wake_up() {
        let (_, v) = quick(Mode::Nanosleep, 40);
        let first = v[0].expected;
        let mut k = 0;
        for s in &v {
            assert_eq!(s.expected, first + k * 200_000, "{s:?}");
            k += 1 + s.missed as i64;
        }
        assert!(v.iter().all(|s| s.value >= 0));
    }

    #[test]
    fn posix_timer_loop_counts_exactly() {
        let (a, v) = quick(Mode::PosixTimer, 30);
        assert_eq!(a.lat.count, 30);
        assert_eq!(v.len(), 30);
        assert!(a.lat.min >= 0);
    }

    #[test]
    fn interval_mode_reports_time_between_wakeups() {
        let (a, v) = quick(Mode::Interval, 20);
        assert_eq!(a.lat.count, 20);
        // The intervals add up to the time from start to the last wake-up,
        // which is at least 20 periods.
        let total: i64 = v.iter().map(|s| s.value).sum();
        assert!(total >= 20 * 200_000);
    }

    #[test]
    fn interval_posix_mode_reports_time_between_signals() {
        // The torture article's fluctuations-timer: the time between two
        // signals of one periodic timer; the timer keeps its grid, so the
        // intervals add up to the time since the start (>= 20 periods) and
        // average one period when nothing was late.
        let (a, v) = quick(Mode::IntervalPosix, 20);
        assert_eq!(a.lat.count, 20);
        let total: i64 = v.iter().map(|s| s.value).sum();
        assert!(total >= 20 * 200_000, "{total}");
        assert!(v.iter().all(|s| s.value > 0));
    }

    #[test]
    fn timer_overrun_comes_from_the_right_siginfo_field() {
        // The siginfo union starts after 3 ints on 32-bit targets and after
        // 4 on 64-bit ones (pointer alignment). Reading the wrong slot gives
        // the thread id or 0, both outside the bounds below. (Run under
        // qemu-arm by scripts/ci-arm.sh for armv7.)
        std::thread::spawn(|| {
            let period = 100_000;
            let first = now_ns() + period as i64;
            let t = PosixTimer::new(first, period).unwrap();
            // Every expiry during these 20 ms past the first is merged into
            // the one queued signal.
            std::thread::sleep(Duration::from_millis(20));
            let overrun = t.wait(&AtomicBool::new(false)).expect("not stopped");
            let taken = now_ns();
            let max = (taken - first) as u64 / period;
            assert!(
                (150..=max).contains(&overrun),
                "overrun {overrun}, expected 150..={max} (tid {})",
                // SAFETY: gettid has no preconditions.
                unsafe { libc::gettid() }
            );
        })
        .join()
        .unwrap();
    }

    #[test]
    fn time_arithmetic_is_64_bit_on_every_target() {
        // timespec fields are 32-bit on armv7: the conversions must not
        // wrap for a monotonic clock of years.
        let ns = 40 * 365 * 86_400 * 1_000_000_000i64 + 123_456_789;
        let ts = timespec(ns);
        #[allow(clippy::unnecessary_cast)] // time_t/c_long are 32-bit on armv7
        let back = ts.tv_sec as i64 * 1_000_000_000 + ts.tv_nsec as i64;
        assert_eq!(back, ns);
        assert!(now_ns() > 0);
    }

    #[test]
    fn dropping_a_timer_with_an_expiry_pending_is_harmless() {
        // The timer fires every 50 µs while its signal is blocked and never
        // taken: at drop an expiry is pending. Unblocking it then would
        // terminate this test process (SIGRTMIN's default action).
        std::thread::spawn(|| {
            let t = PosixTimer::new(now_ns() + 50_000, 50_000).unwrap();
            // Wait (bounded) for the first expiry to be pending.
            let end = std::time::Instant::now() + Duration::from_secs(10);
            loop {
                // SAFETY: reading this thread's pending set.
                let pending = unsafe {
                    let mut pending: libc::sigset_t = std::mem::zeroed();
                    libc::sigpending(&mut pending);
                    libc::sigismember(&pending, libc::SIGRTMIN())
                };
                if pending == 1 {
                    break;
                }
                assert!(std::time::Instant::now() < end, "the timer never expired");
                std::thread::sleep(Duration::from_millis(1));
            }
            drop(t);
            // SAFETY: as above.
            unsafe {
                let mut pending: libc::sigset_t = std::mem::zeroed();
                libc::sigpending(&mut pending);
                assert_eq!(libc::sigismember(&pending, libc::SIGRTMIN()), 0);
                let mut mask: libc::sigset_t = std::mem::zeroed();
                libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut mask);
                assert_eq!(libc::sigismember(&mask, libc::SIGRTMIN()), 0);
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn full_ring_counts_lost_but_keeps_exact_figures() {
        let (mut p, _c) = rtrb::RingBuffer::new(4);
        let live = Live::default();
        let stop = AtomicBool::new(false);
        let cfg = LoopConfig {
            mode: Mode::Nanosleep,
            period_ns: 100_000,
            start_ns: now_ns(),
            end_ns: None,
            samples: Some(10),
        };
        let a = hot_loop(&cfg, &Waiter::Nanosleep, &mut p, &live, &stop);
        assert_eq!(a.lat.count, 10);
        assert_eq!(a.lost, 6);
    }

    #[test]
    fn overrun_skips_and_counts_missed_periods() {
        // Start 10.5 periods in the past: the first wake-up is 9.5 periods
        // late, so periods 2..=10 are skipped (9 missed), then it runs on
        // time to the end.
        let (mut p, _c) = rtrb::RingBuffer::new(64);
        let live = Live::default();
        let stop = AtomicBool::new(false);
        let period = 1_000_000i64;
        let start = now_ns() - 10 * period - period / 2;
        let cfg = LoopConfig {
            mode: Mode::Nanosleep,
            period_ns: period as u64,
            start_ns: start,
            end_ns: Some(start + 14 * period),
            samples: None,
        };
        let a = hot_loop(&cfg, &Waiter::Nanosleep, &mut p, &live, &stop);
        assert!(a.overruns >= 1);
        assert!(a.missed >= 9);
        // Every period in (start, end] is measured or missed.
        assert_eq!(a.lat.count + a.missed, 14);
    }

    #[test]
    fn fallback_names_rt_group_scheduling() {
        let spec = MeasureSpec::new(&[1], 1_000_000);
        let ready = vec![Some(Ready {
            index: 0,
            tid: 7,
            cpu: Some(1),
            policy: Policy::Other,
            refused: Some(std::io::Error::from_raw_os_error(libc::EPERM)),
            fatal: None,
        })];
        let hists = vec![ThreadHistograms::new(1_000_000, 1000)];
        let mut w = Vec::new();
        let t = thread_results(
            &spec,
            &ready,
            vec![Accum::default()],
            hists,
            Some(0),
            &mut w,
        );
        assert_eq!(t[0].policy, Policy::Other);
        assert_eq!(t[0].priority, 0);
        assert_eq!(w.len(), 1);
        assert!(w[0].starts_with("thread 0: SCHED_FIFO refused, measured under SCHED_OTHER"));
        assert!(w[0].contains("cpu.rt_runtime_us = 0"), "{}", w[0]);
        // Without RT group scheduling in the way: the privilege message.
        let mut w = Vec::new();
        let hists = vec![ThreadHistograms::new(1_000_000, 1000)];
        thread_results(&spec, &ready, vec![Accum::default()], hists, None, &mut w);
        assert!(w[0].contains("CAP_SYS_NICE"), "{}", w[0]);
    }

    #[test]
    fn overrun_arithmetic_by_hand() {
        // `next` = 100 is the following theoretical wake-up, period 10:
        // woken at 100 or before, nothing passed; at 101..=110 the one at
        // 100 has passed; at 111 the one at 110 too.
        assert_eq!(periods_passed(100, 100, 10), 0);
        assert_eq!(periods_passed(99, 100, 10), 0);
        assert_eq!(periods_passed(101, 100, 10), 1);
        assert_eq!(periods_passed(110, 100, 10), 1);
        assert_eq!(periods_passed(111, 100, 10), 2);
        assert_eq!(periods_within(100, 100, 10), 1);
        assert_eq!(periods_within(100, 129, 10), 3);
        assert_eq!(periods_within(100, 99, 10), 0);
    }

    proptest::proptest! {
        #[test]
        fn skipping_lands_on_the_first_future_period(
            next in 0i64..1_000_000_000_000,
            late in 0i64..10_000_000_000,
            period in 1i64..100_000_000,
        ) {
            let now = next + late;
            let m = periods_passed(now, next, period) as i64;
            let after = next + m * period;
            // The new theoretical wake-up is not in the past, and the one
            // before it is (or it is the original one).
            proptest::prop_assert!(after >= now);
            proptest::prop_assert!(m == 0 || after - period < now);
        }

        #[test]
        fn within_counts_periods_up_to_end(
            next in 0i64..1_000_000_000,
            span in -1_000_000i64..1_000_000_000,
            period in 1i64..10_000_000,
        ) {
            let end = next + span;
            let k = periods_within(next, end, period) as i64;
            if k > 0 {
                proptest::prop_assert!(next + (k - 1) * period <= end);
            }
            proptest::prop_assert!(next + k * period > end);
        }
    }

    #[test]
    fn stop_flag_ends_the_loop() {
        let (mut p, _c) = rtrb::RingBuffer::new(64);
        let live = Live::default();
        let stop = AtomicBool::new(true);
        let cfg = LoopConfig {
            mode: Mode::Nanosleep,
            period_ns: 100_000,
            start_ns: now_ns(),
            end_ns: None,
            samples: None,
        };
        let a = hot_loop(&cfg, &Waiter::Nanosleep, &mut p, &live, &stop);
        assert_eq!(a.lat.count, 0);
    }
}
