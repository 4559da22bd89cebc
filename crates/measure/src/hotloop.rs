//! The hot loop of a measuring thread, on its own so that a reviewer can
//! audit it: per sample it sleeps (absolute `clock_nanosleep`, or
//! `sigwaitinfo` for a POSIX timer: `crate::timer::PosixTimer::wait`),
//! reads the clock (vDSO: no system call), updates its [`Accum`], stores a
//! few relaxed atomics for the live display (`Live::publish`) and pushes
//! the sample into its SPSC ring (`rtrb`: wait-free, preallocated). No
//! allocation, no lock, no other system call. A wake-up later than the
//! trace threshold costs one `write(2)` more (`crate::spike::Spiker::fire`,
//! cold). Everything else (thread set-up, histograms, display, files) is in
//! `engine`, outside it.
//!
//! Checked by `tests/no_alloc.rs` (a counting allocator around the loop)
//! and `bench/hotpath-syscalls.sh` (strace of a measuring thread).

use crate::spike::Spiker;
use crate::stats::Accum;
use crate::timer::PosixTimer;
use crate::{MeasureSpec, Mode, ThreadSpec};
use std::sync::atomic::{
    AtomicBool, AtomicI32, AtomicI64, AtomicU64,
    Ordering::{Relaxed, Release},
};

/// One sample on its way to the main thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Sample {
    /// Latency (or interval, in interval mode), ns.
    pub value: i64,
    /// Periods skipped just before this wake-up (overrun).
    pub missed: u64,
    /// The absolute expected wake-up it slept until (CLOCK_MONOTONIC ns):
    /// `--split` pairs the sample with its own trace events by it.
    pub expected: i64,
}

/// CLOCK_MONOTONIC in ns (a vDSO call: no system call).
#[inline(always)]
#[allow(clippy::unnecessary_cast)] // time_t/c_long are 32-bit on armv7
pub fn now_ns() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as i64 * 1_000_000_000 + ts.tv_nsec as i64
}

#[inline(always)]
pub(crate) fn timespec(ns: i64) -> libc::timespec {
    libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as _,
    }
}

/// Absolute sleep until `ns` on CLOCK_MONOTONIC (restarted after a signal,
/// unless `stop` is set: then the run is ending and false is returned).
/// `stop` is only read after an interruption, never on the normal path.
#[inline(always)]
fn sleep_until(ns: i64, stop: &AtomicBool) -> bool {
    let ts = timespec(ns);
    loop {
        // SAFETY: ts is valid; no remaining-time pointer with TIMER_ABSTIME.
        let r = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if r != libc::EINTR {
            return true;
        }
        if stop.load(Relaxed) {
            return false;
        }
    }
}

/// What the main thread can read while a thread runs: atomics stored by the
/// measuring thread (a plain store each, no lock, no fence).
///
/// Aligned to 128 bytes: the `Live`s of a run sit side by side in one
/// `Vec`, and without it two measuring threads on two CPUs would store into
/// the same cache line every sample (72 bytes each), each store pulling the
/// line away from the other CPU. 128, not 64: x86's adjacent-line
/// prefetcher pairs 64-byte lines, and many ARM cores have 128-byte lines.
#[derive(Debug)]
#[repr(align(128))]
pub(crate) struct Live {
    /// Samples so far (stored last, with Release).
    pub count: AtomicU64,
    /// Smallest sample, ns.
    pub min: AtomicI64,
    /// Largest sample, ns.
    pub max: AtomicI64,
    /// The last sample, ns.
    pub cur: AtomicI64,
    /// Sum of the samples, ns (for the average).
    pub sum: AtomicI64,
    /// Wake-ups that came after one or more later periods.
    pub overruns: AtomicU64,
    /// Periods skipped by those overruns.
    pub missed: AtomicU64,
    /// Samples that did not fit in the ring.
    pub lost: AtomicU64,
    /// The thread's id (0 until it starts).
    pub tid: AtomicI32,
    /// The thread has left its loop.
    pub done: AtomicBool,
}

impl Default for Live {
    fn default() -> Self {
        Live {
            count: AtomicU64::new(0),
            min: AtomicI64::new(0),
            max: AtomicI64::new(0),
            cur: AtomicI64::new(0),
            sum: AtomicI64::new(0),
            overruns: AtomicU64::new(0),
            missed: AtomicU64::new(0),
            lost: AtomicU64::new(0),
            tid: AtomicI32::new(0),
            done: AtomicBool::new(false),
        }
    }
}

impl Live {
    /// Store the thread's figures (plain stores; `count` last, Release).
    #[inline(always)]
    pub(crate) fn publish(&self, a: &Accum) {
        self.min.store(a.lat.min, Relaxed);
        self.max.store(a.lat.max, Relaxed);
        self.cur.store(a.cur, Relaxed);
        self.sum.store(a.lat.sum as i64, Relaxed);
        self.overruns.store(a.overruns, Relaxed);
        self.missed.store(a.missed, Relaxed);
        self.lost.store(a.lost, Relaxed);
        // Last, with Release (a plain store on x86, `stlr` on ARM, no
        // fence): a reader loading `count` with Acquire first sees the
        // other figures at least that fresh (avg = sum/count stays sane).
        self.count.store(a.lat.count, Release);
    }
}

/// How the loop waits for the next period.
pub(crate) enum Waiter {
    /// Absolute `clock_nanosleep` on CLOCK_MONOTONIC.
    Nanosleep,
    /// A POSIX timer signalling this thread; dropped = deleted.
    Timer(PosixTimer),
}

/// The loop's parameters, all plain data.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LoopConfig {
    /// What the sample is (latency, or interval between wake-ups).
    pub mode: Mode,
    /// The period, ns.
    pub period_ns: u64,
    /// Theoretical wake-up of period 0 (CLOCK_MONOTONIC ns); the first
    /// sample is period 1.
    pub start_ns: i64,
    /// Measure only periods whose theoretical wake-up is ≤ this.
    pub end_ns: Option<i64>,
    /// Stop after this many samples.
    pub samples: Option<u64>,
}

impl LoopConfig {
    /// The loop of thread `t` of `spec`, period 0 at `start_ns`.
    pub(crate) fn for_thread(spec: &MeasureSpec, t: &ThreadSpec, start_ns: i64) -> LoopConfig {
        LoopConfig {
            mode: spec.mode,
            period_ns: t.period_ns,
            start_ns,
            end_ns: spec.duration_ns.map(|d| start_ns.saturating_add(d as i64)),
            samples: spec.samples,
        }
    }
}

/// [`hot_loop_traced`] without a spike trigger, as the allocation tests
/// drive it (the engine always calls the traced loop).
#[cfg(test)]
pub(crate) fn hot_loop(
    cfg: &LoopConfig,
    waiter: &Waiter,
    tx: &mut rtrb::Producer<Sample>,
    live: &Live,
    stop: &AtomicBool,
) -> Accum {
    hot_loop_traced(cfg, waiter, tx, live, stop, None)
}

/// The hot loop. No allocation, no lock, no system call besides the wait
/// (`clock_nanosleep` or `sigwaitinfo`) and the vDSO clock read.
///
/// Invariant when it ends by `end_ns`: `samples + missed` equals the number
/// of periods in `(start_ns, end_ns]`: every period is either measured or
/// counted as missed.
///
/// With a spike trigger, a wake-up later than its threshold costs one
/// `write(2)` ([`Spiker`]); without one, or below it, one comparison.
pub(crate) fn hot_loop_traced(
    cfg: &LoopConfig,
    waiter: &Waiter,
    tx: &mut rtrb::Producer<Sample>,
    live: &Live,
    stop: &AtomicBool,
    mut spiker: Option<&mut Spiker<'_>>,
) -> Accum {
    let threshold = spiker.as_ref().map_or(i64::MAX, |s| s.trigger.threshold_ns);
    let period = cfg.period_ns as i64;
    let mut acc = Accum::default();
    let mut next = cfg.start_ns + period;
    let mut prev_wake = cfg.start_ns;
    let end = cfg.end_ns.unwrap_or(i64::MAX);
    let max_samples = cfg.samples.unwrap_or(u64::MAX);
    while acc.lat.count < max_samples && next <= end && !stop.load(Relaxed) {
        // An interrupted wait (the run is stopping) is not a sample.
        let timer_missed = match waiter {
            Waiter::Nanosleep => {
                if !sleep_until(next, stop) {
                    break;
                }
                0
            }
            Waiter::Timer(t) => match t.wait(stop) {
                Some(m) => m,
                None => break,
            },
        };
        let now = now_ns();
        let expected = next;
        let latency = now - next;
        let value = if cfg.mode.is_interval() {
            now - prev_wake
        } else {
            latency
        };
        prev_wake = now;
        next += period;
        // Overrun: the wake-up came after the following period(s). Skip to
        // the first period in the future and count the ones jumped over
        // (only those within the run).
        let missed = match waiter {
            Waiter::Nanosleep => periods_passed(now, next, period),
            // The kernel's own count of expiries merged into this signal:
            // the timer keeps its grid, so follow it exactly (an expiry
            // between the dequeue and the clock read will still come).
            Waiter::Timer(_) => timer_missed,
        };
        let mut counted = 0;
        if missed > 0 {
            counted = missed.min(periods_within(next, end, period));
            next += missed as i64 * period;
            acc.overruns += 1;
            acc.missed += counted;
        }
        hand_over(&mut acc, tx, live, value, counted, expected);
        if latency > threshold {
            acc.spikes += 1;
            if let Some(s) = spiker.as_deref_mut() {
                if s.fire(expected, latency) {
                    break;
                }
            }
        }
    }
    acc
}

/// A sample's way out of the loop: into the exact figures, into the
/// ring (a full ring loses it, counted in `lost`), then published live.
/// One function so that the collecting-side bench's emulated threads
/// (`crate::emulate`) hand their samples over exactly as the loop does.
#[inline(always)]
pub(crate) fn hand_over(
    acc: &mut Accum,
    tx: &mut rtrb::Producer<Sample>,
    live: &Live,
    value: i64,
    missed: u64,
    expected: i64,
) {
    acc.add(value);
    if tx
        .push(Sample {
            value,
            missed,
            expected,
        })
        .is_err()
    {
        acc.lost += 1;
    }
    live.publish(acc);
}

/// Overrun: how many periods starting at `next` (every `period`) lie
/// strictly before `now`: the thread skips them to wake up in the future.
#[inline(always)]
pub(crate) fn periods_passed(now: i64, next: i64, period: i64) -> u64 {
    if now > next {
        ((now - next - 1) / period + 1) as u64
    } else {
        0
    }
}

/// How many periods starting at `next` fall within the run (`<= end`):
/// missed periods after the end are not periods of the run.
#[inline(always)]
pub(crate) fn periods_within(next: i64, end: i64, period: i64) -> u64 {
    if end >= next {
        ((end - next) / period + 1) as u64
    } else {
        0
    }
}
