//! The spinning loop: read CLOCK_MONOTONIC (vDSO) as fast as possible and
//! record every gap between two reads longer than the threshold.
//!
//! The loop makes no allocation, takes no lock and makes no system call
//! besides the clock read; between windows it sleeps with an absolute
//! `clock_nanosleep` (`tests/no_alloc.rs`, `bench/noise-vs-oslat.sh`).
//! Its figures stay in registers and a [`Counters`] on the thread's stack,
//! published to its [`Live`] (own cache lines) every [`PUBLISH_EVERY`]
//! iterations; noise events go to the main thread through a preallocated
//! wait-free SPSC ring ([`rtrb`]).

use rtshield_measure::now_ns;
use rtshield_trace::NoiseEvent;
use std::sync::atomic::{
    AtomicBool, AtomicI32, AtomicU64,
    Ordering::{Relaxed, Release},
};

/// Iterations between two publications of the counters (and two looks at
/// the stop flag): about 50 µs at this VM's 50 ns per clock read.
pub(crate) const PUBLISH_EVERY: u32 = 1024;

/// Longest single sleep between windows: the stop flag is looked at
/// between two (a period may be an hour).
const SLEEP_SLICE_NS: i64 = 50_000_000;

/// One spinning thread's exact figures (kept by the thread itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counters {
    /// Clock reads compared (loop iterations).
    pub iterations: u64,
    /// Time spent spinning: first to last read of each window, summed.
    pub runtime_ns: u64,
    /// Gaps longer than the threshold, summed.
    pub noise_ns: u64,
    /// The longest gap (0 before the first).
    pub max_ns: u64,
    /// The shortest gap longer than the threshold (`u64::MAX` before the
    /// first: never written as a number, see `engine::cpu_noise`).
    pub min_ns: u64,
    /// Gaps longer than the threshold.
    pub events: u64,
    /// Events the ring could not take (counted in the figures above, not
    /// in the histogram).
    pub lost: u64,
    /// The shortest gap between two reads (the loop's own cost, its
    /// resolution); `u64::MAX` before the second read.
    pub min_gap_ns: u64,
    /// Windows spun.
    pub windows: u64,
    /// Windows skipped whole because the thread woke after their end.
    pub windows_missed: u64,
}

impl Default for Counters {
    fn default() -> Self {
        Counters {
            iterations: 0,
            runtime_ns: 0,
            noise_ns: 0,
            max_ns: 0,
            min_ns: u64::MAX,
            events: 0,
            lost: 0,
            min_gap_ns: u64::MAX,
            windows: 0,
            windows_missed: 0,
        }
    }
}

impl Counters {
    /// One gap longer than the threshold (the cold path).
    #[cold]
    #[inline(never)]
    fn noise(&mut self, start: i64, gap: u64, tx: &mut rtrb::Producer<NoiseEvent>) {
        self.noise_ns += gap;
        self.events += 1;
        if gap > self.max_ns {
            self.max_ns = gap;
        }
        // Here and not in the drain: a lost event may be the shortest.
        if gap < self.min_ns {
            self.min_ns = gap;
        }
        let ev = NoiseEvent {
            start_ns: start as u64,
            len_ns: gap,
        };
        if tx.push(ev).is_err() {
            self.lost += 1;
        }
    }
}

/// What the main thread can read while a thread spins: plain atomic
/// stores by the spinning thread, no lock, no fence. Aligned to 128
/// bytes so that two threads' figures never share a cache line (x86 pairs
/// 64-byte lines; some ARM cores have 128-byte lines).
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct Live {
    /// As [`Counters`].
    pub iterations: AtomicU64,
    /// As [`Counters`], including the window in progress.
    pub runtime_ns: AtomicU64,
    /// As [`Counters`].
    pub noise_ns: AtomicU64,
    /// As [`Counters`].
    pub max_ns: AtomicU64,
    /// As [`Counters`].
    pub events: AtomicU64,
    /// As [`Counters`].
    pub lost: AtomicU64,
    /// The latest clock read published (CLOCK_MONOTONIC ns): every gap
    /// not yet pushed into the ring starts at or after it.
    pub last_read_ns: AtomicU64,
    /// The thread's TID (0 until it started).
    pub tid: AtomicI32,
    /// The thread has finished.
    pub done: AtomicBool,
}

impl Live {
    #[inline(always)]
    fn publish(&self, c: &Counters, runtime_ns: u64, last_read: i64) {
        self.runtime_ns.store(runtime_ns, Relaxed);
        self.last_read_ns.store(last_read as u64, Relaxed);
        self.noise_ns.store(c.noise_ns, Relaxed);
        self.max_ns.store(c.max_ns, Relaxed);
        self.events.store(c.events, Relaxed);
        self.lost.store(c.lost, Relaxed);
        // Last, with Release: a reader loading it with Acquire sees the
        // others at least that fresh.
        self.iterations.store(c.iterations, Release);
    }

    /// [`Live::last_read_ns`], read after the counters (Acquire).
    pub(crate) fn last_read(&self) -> u64 {
        let _ = self.iterations.load(std::sync::atomic::Ordering::Acquire);
        self.last_read_ns.load(Relaxed)
    }

    /// The published figures (a reader's copy; `min_gap_ns` and the window
    /// counts are only in the final [`Counters`]). Only the tests read it
    /// whole; the drain reads the atomics it needs.
    #[cfg(test)]
    pub(crate) fn read(&self) -> Counters {
        let iterations = self.iterations.load(std::sync::atomic::Ordering::Acquire);
        Counters {
            iterations,
            runtime_ns: self.runtime_ns.load(Relaxed),
            noise_ns: self.noise_ns.load(Relaxed),
            max_ns: self.max_ns.load(Relaxed),
            events: self.events.load(Relaxed),
            lost: self.lost.load(Relaxed),
            ..Counters::default()
        }
    }
}

/// Spin until the first clock read at or after `until_ns` (CLOCK_MONOTONIC),
/// or until `stop` is seen (looked at every [`PUBLISH_EVERY`] iterations).
/// Every gap between two reads longer than `threshold_ns` is noise: counted
/// in `c` and pushed into `tx`. The time before the first read (the wake-up
/// that starts a window) is not noise: the window starts at that read.
///
/// The hot path: one vDSO clock read, a subtraction, two comparisons and
/// a counter per iteration; no allocation, no lock, no system call.
#[inline(never)]
pub(crate) fn spin(
    until_ns: i64,
    threshold_ns: u64,
    tx: &mut rtrb::Producer<NoiseEvent>,
    c: &mut Counters,
    live: &Live,
    stop: &AtomicBool,
) {
    let first = now_ns();
    let mut prev = first;
    let mut n: u32 = 0;
    loop {
        let now = now_ns();
        let gap = (now - prev) as u64;
        if gap > threshold_ns {
            c.noise(prev, gap, tx);
        } else if gap < c.min_gap_ns {
            c.min_gap_ns = gap;
        }
        prev = now;
        n += 1;
        if now >= until_ns {
            break;
        }
        if n == PUBLISH_EVERY {
            c.iterations += u64::from(n);
            n = 0;
            live.publish(c, c.runtime_ns + (prev - first) as u64, prev);
            if stop.load(Relaxed) {
                break;
            }
        }
    }
    c.iterations += u64::from(n);
    c.runtime_ns += (prev - first) as u64;
    live.publish(c, c.runtime_ns, prev);
}

/// When to spin: windows of `runtime_ns` starting every `period_ns` from
/// `start_ns`, up to `end_ns` (all CLOCK_MONOTONIC ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Schedule {
    /// The start of window 0.
    pub start_ns: i64,
    /// Spinning time per window (`== period_ns`: no pause).
    pub runtime_ns: i64,
    /// Window spacing.
    pub period_ns: i64,
    /// No spinning at or after this.
    pub end_ns: i64,
    /// A gap longer than this is noise.
    pub threshold_ns: u64,
}

impl Schedule {
    /// Window `k`: its start and end (the run's end cuts the last one).
    fn window(&self, k: i64) -> (i64, i64) {
        let ws = self
            .start_ns
            .saturating_add(k.saturating_mul(self.period_ns));
        (ws, ws.saturating_add(self.runtime_ns).min(self.end_ns))
    }

    /// How many windows start before the run's end.
    fn count(&self) -> i64 {
        let span = self.end_ns.saturating_sub(self.start_ns);
        if span <= 0 {
            return 0;
        }
        let p = self.period_ns.max(1);
        span / p + i64::from(span % p != 0)
    }

    /// The first window that ends after `now`.
    fn first_ending_after(&self, now: i64) -> i64 {
        if now < self.start_ns {
            return 0;
        }
        let k = (now - self.start_ns) / self.period_ns.max(1);
        if self.window(k).1 > now {
            k
        } else {
            k + 1
        }
    }
}

/// Run the windows of `s`: sleep (absolute `clock_nanosleep`) until each
/// window's start, spin to its end. A window whose end is already past
/// when the thread gets there (a long stall, or a late start) is skipped
/// and counted. Ends at `s.end_ns` or when `stop` is seen.
pub(crate) fn run_windows(
    s: &Schedule,
    tx: &mut rtrb::Producer<NoiseEvent>,
    live: &Live,
    stop: &AtomicBool,
) -> Counters {
    let mut c = Counters::default();
    let mut k = 0i64;
    loop {
        let (ws, we) = s.window(k);
        if ws >= s.end_ns || stop.load(Relaxed) {
            break;
        }
        let now = now_ns();
        if now >= we {
            // A stall past the run's end skips only the windows the run
            // has, not the ones after it.
            let next = s.first_ending_after(now).min(s.count());
            c.windows_missed += (next - k).max(0) as u64;
            k = next;
            continue;
        }
        if now < ws && !sleep_until(ws, stop) {
            break;
        }
        spin(we, s.threshold_ns, tx, &mut c, live, stop);
        c.windows += 1;
        k += 1;
    }
    c
}

#[inline(always)]
#[allow(clippy::unnecessary_cast)] // time_t/c_long are 32-bit on armv7
fn timespec(ns: i64) -> libc::timespec {
    libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as _,
    }
}

/// Sleep until `ns` (CLOCK_MONOTONIC, absolute) in slices of at most
/// 50 ms, looking at `stop` between them; false when stopped.
pub(crate) fn sleep_until(ns: i64, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Relaxed) {
            return false;
        }
        let now = now_ns();
        if now >= ns {
            return true;
        }
        let ts = timespec(ns.min(now.saturating_add(SLEEP_SLICE_NS)));
        // SAFETY: ts is a valid timespec; no remaining-time pointer with
        // TIMER_ABSTIME. EINTR simply loops.
        unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sched(start: i64, runtime: i64, period: i64, end: i64) -> Schedule {
        Schedule {
            start_ns: start,
            runtime_ns: runtime,
            period_ns: period,
            end_ns: end,
            threshold_ns: 1_000,
        }
    }

    #[test]
    fn windows_and_the_end_cut() {
        let s = sched(1_000, 90, 100, 1_250);
        assert_eq!(s.window(0), (1_000, 1_090));
        assert_eq!(s.window(2), (1_200, 1_250));
        assert_eq!(s.first_ending_after(500), 0);
        assert_eq!(s.first_ending_after(1_089), 0);
        assert_eq!(s.first_ending_after(1_090), 1);
        assert_eq!(s.first_ending_after(1_095), 1);
        assert_eq!(s.first_ending_after(1_189), 1);
    }

    #[test]
    fn live_figures_of_two_threads_never_share_a_cache_line() {
        let lives: Vec<Live> = (0..4).map(|_| Live::default()).collect();
        for pair in lives.windows(2) {
            let a = &pair[0] as *const Live as usize;
            let b = &pair[1] as *const Live as usize;
            assert_eq!(a % 128, 0);
            assert!((a + std::mem::size_of::<Live>() - 1) / 128 < b / 128);
        }
    }

    #[test]
    fn spin_counts_every_iteration_and_its_runtime() {
        let (mut tx, mut rx) = rtrb::RingBuffer::new(1 << 16);
        let live = Live::default();
        let stop = AtomicBool::new(false);
        let mut c = Counters::default();
        let t0 = now_ns();
        spin(t0 + 20_000_000, 1_000, &mut tx, &mut c, &live, &stop);
        // It spun to its end; its runtime is within the time it took.
        let after = now_ns();
        assert!(after >= t0 + 20_000_000);
        assert!(
            c.runtime_ns > 0 && c.runtime_ns <= (after - t0) as u64,
            "{c:?}"
        );
        // Each iteration is one gap: a noise event or a candidate for the
        // shortest gap.
        assert!(c.iterations >= 1);
        assert!(c.min_gap_ns <= 1_000 || c.events == c.iterations, "{c:?}");
        let mut n = 0;
        let mut sum = 0;
        while let Ok(e) = rx.pop() {
            assert!(e.len_ns > 1_000);
            assert!(e.start_ns as i64 >= t0);
            n += 1;
            sum += e.len_ns;
        }
        assert_eq!((n, sum), (c.events - c.lost, c.noise_ns));
        assert!(c.noise_ns <= c.runtime_ns);
        assert_eq!(live.read().iterations, c.iterations);
    }

    #[test]
    fn a_threshold_of_zero_fills_the_ring_and_counts_the_lost() {
        let (mut tx, _rx) = rtrb::RingBuffer::new(8);
        let live = Live::default();
        let stop = AtomicBool::new(false);
        let mut c = Counters::default();
        spin(now_ns() + 2_000_000, 0, &mut tx, &mut c, &live, &stop);
        assert!(c.events > 8);
        assert_eq!(c.lost, c.events - 8);
    }

    #[test]
    fn the_shortest_noise_is_the_thread_s_own_even_when_lost() {
        let (mut tx, _rx) = rtrb::RingBuffer::new(1);
        let mut c = Counters::default();
        // The ring takes the first event only: the shortest is lost.
        c.noise(0, 5_000, &mut tx);
        c.noise(10_000, 2_000, &mut tx);
        assert_eq!((c.events, c.lost), (2, 1));
        assert_eq!((c.min_ns, c.max_ns), (2_000, 5_000));
    }

    #[test]
    fn windows_sleep_between_and_stop_ends_them() {
        let (mut tx, _rx) = rtrb::RingBuffer::new(1 << 16);
        let live = Live::default();
        let stop = AtomicBool::new(false);
        let t0 = now_ns() + 1_000_000;
        let s = sched(t0, 2_000_000, 10_000_000, t0 + 50_000_000);
        let c = run_windows(&s, &mut tx, &live, &stop);
        assert_eq!(c.windows + c.windows_missed, 5, "{c:?}");
        // Each window spins at most its 2 ms plus the gap that ends it.
        assert!(
            c.runtime_ns <= c.windows * (2_000_000 + c.max_ns.max(1_000)),
            "{c:?}"
        );
        assert!(now_ns() >= t0 + 40_000_000);
        stop.store(true, Relaxed);
        let c = run_windows(&s, &mut tx, &live, &stop);
        assert_eq!(c.windows, 0);
    }
}
