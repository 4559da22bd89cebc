//! The hot loop never allocates: a counting global allocator counts the
//! allocations made by the thread running the loop, between entry and exit.
//! (A unit test module: the loop's parts stay private to the crate. The
//! allocator counts only on a watched thread, so the crate's other unit
//! tests, in the same binary, are not affected.)

use crate::hotloop::{hot_loop, now_ns, LoopConfig, Sample, Waiter};
use crate::timer::PosixTimer;
use crate::Mode;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::AtomicBool;

struct Counting;

thread_local! {
    // const-initialised: using them never allocates.
    static WATCHED: Cell<bool> = const { Cell::new(false) };
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    ALLOCS.with(|a| a.set(a.get() + 1));
}

fn allocs() -> u64 {
    ALLOCS.with(|a| a.get())
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if WATCHED.with(|w| w.get()) {
            count();
        }
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        if WATCHED.with(|w| w.get()) {
            count();
        }
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        if WATCHED.with(|w| w.get()) {
            count();
        }
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Run the loop on a watched thread: (allocations, samples, overruns).
/// `late` starts the schedule that many periods in the past, so the first
/// wake-up is an overrun (the skip-and-count path runs too).
fn loop_allocations(mode: Mode, ring: usize, samples: u64, late: i64) -> (u64, u64, u64) {
    std::thread::spawn(move || {
        let (mut tx, _rx) = rtrb::RingBuffer::<Sample>::new(ring);
        let live = crate::hotloop::Live::default();
        let stop = AtomicBool::new(false);
        let period = 100_000u64;
        let start = now_ns() - late * period as i64;
        let cfg = LoopConfig {
            mode,
            period_ns: period,
            start_ns: start,
            end_ns: Some(start + 1_000_000_000),
            samples: Some(samples),
        };
        let waiter = if mode.uses_timer() {
            // An absolute first expiry in the past fires at once, with
            // the expiries since then as the timer overrun.
            Waiter::Timer(PosixTimer::new(start + period as i64, period).unwrap())
        } else {
            Waiter::Nanosleep
        };
        let before = allocs();
        WATCHED.with(|w| w.set(true));
        let acc = hot_loop(&cfg, &waiter, &mut tx, &live, &stop);
        WATCHED.with(|w| w.set(false));
        let after = allocs();
        (after - before, acc.lat.count, acc.overruns)
    })
    .join()
    .unwrap()
}

#[test]
fn allocator_counts_when_watched() {
    // The probe works: an allocation on a watched thread is seen.
    let n = std::thread::spawn(|| {
        WATCHED.with(|w| w.set(true));
        let v = std::hint::black_box(vec![1u8; 64]);
        drop(v);
        WATCHED.with(|w| w.set(false));
        allocs()
    })
    .join()
    .unwrap();
    assert!(n >= 2);
}

#[test]
fn nanosleep_loop_does_not_allocate() {
    let (allocs, count, _) = loop_allocations(Mode::Nanosleep, 4096, 500, 0);
    assert_eq!(count, 500);
    assert_eq!(allocs, 0);
}

#[test]
fn posix_timer_loop_does_not_allocate() {
    let (allocs, count, _) = loop_allocations(Mode::PosixTimer, 4096, 300, 0);
    assert_eq!(count, 300);
    assert_eq!(allocs, 0);
}

#[test]
fn interval_loop_with_full_ring_does_not_allocate() {
    // A full ring is the lost-sample path: still no allocation.
    let (allocs, count, _) = loop_allocations(Mode::Interval, 16, 200, 0);
    assert_eq!(count, 200);
    assert_eq!(allocs, 0);
}

#[test]
fn interval_posix_loop_does_not_allocate() {
    // The torture article's method: interval between timer signals.
    let (allocs, count, _) = loop_allocations(Mode::IntervalPosix, 4096, 300, 0);
    assert_eq!(count, 300);
    assert_eq!(allocs, 0);
}

#[test]
fn overrun_path_does_not_allocate() {
    // Ten periods late from the start: at least one overrun, skipped and
    // counted, in both wait modes.
    for mode in [Mode::Nanosleep, Mode::PosixTimer, Mode::IntervalPosix] {
        let (allocs, count, overruns) = loop_allocations(mode, 4096, 100, 10);
        assert_eq!(count, 100);
        assert!(overruns >= 1, "{mode}: the first wake-up is an overrun");
        assert_eq!(allocs, 0, "{mode}");
    }
}

/// The spike path (`--trace-on`, `--trace-stop`) on a watched thread,
/// every wake-up a spike (threshold below any latency): the marker writes
/// go to a pipe read back afterwards. Returns (allocations, samples,
/// spikes, bytes written, marks queued).
fn spike_allocations(
    stop_mode: bool,
    samples: u64,
    marks_cap: usize,
) -> (u64, u64, u64, Vec<u8>, usize) {
    use crate::hotloop::hot_loop_traced;
    use crate::spike::{SpikeMark, SpikeTrigger, Spiker};
    let mut fds = [0; 2];
    // SAFETY: fds is a valid array of two ints.
    assert_eq!(
        unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK) },
        0
    );
    let (rfd, wfd) = (fds[0], fds[1]);
    let (allocs, count, spikes, queued) = std::thread::spawn(move || {
        let (mut tx, _rx) = rtrb::RingBuffer::<Sample>::new(4096);
        let (mut mtx, mrx) = rtrb::RingBuffer::<SpikeMark>::new(marks_cap);
        let live = crate::hotloop::Live::default();
        let stop = AtomicBool::new(false);
        let stopped = AtomicBool::new(false);
        let cfg = LoopConfig {
            mode: Mode::Nanosleep,
            period_ns: 100_000,
            start_ns: now_ns(),
            end_ns: None,
            samples: Some(samples),
        };
        let mut spiker = Spiker {
            trigger: SpikeTrigger {
                threshold_ns: -1,
                fd: wfd,
                stop: stop_mode,
            },
            thread: 0,
            tid: 4242,
            cpu: 1,
            marks: &mut mtx,
            stopped: &stopped,
            end_run: &stop,
            buf: [0; 128],
        };
        let before = allocs();
        WATCHED.with(|w| w.set(true));
        let acc = hot_loop_traced(
            &cfg,
            &Waiter::Nanosleep,
            &mut tx,
            &live,
            &stop,
            Some(&mut spiker),
        );
        WATCHED.with(|w| w.set(false));
        let after = allocs();
        (after - before, acc.lat.count, acc.spikes, mrx.slots())
    })
    .join()
    .unwrap();
    let mut out = vec![0u8; 1 << 16];
    // SAFETY: out is a valid buffer of that length.
    let n = unsafe { libc::read(rfd, out.as_mut_ptr().cast(), out.len()) };
    out.truncate(n.max(0) as usize);
    // SAFETY: both fds are ours.
    unsafe {
        libc::close(rfd);
        libc::close(wfd);
    }
    (allocs, count, spikes, out, queued)
}

#[test]
fn spike_marker_path_does_not_allocate() {
    // 40 spikes, room for 16 marks: 16 marker writes, then the full-queue
    // path (counted, no write).
    let (allocs, count, spikes, written, queued) = spike_allocations(false, 40, 16);
    assert_eq!((count, spikes), (40, 40));
    assert_eq!(allocs, 0);
    assert_eq!(queued, 16);
    let text = String::from_utf8(written).unwrap();
    assert_eq!(text.lines().count(), 16, "{text}");
    assert!(text.starts_with("rtshield spike thread=0 tid=4242 cpu=1 expected="));
}

#[test]
fn spike_stop_path_writes_once_and_ends_the_loop() {
    let (allocs, count, spikes, written, queued) = spike_allocations(true, 40, 16);
    assert_eq!(allocs, 0);
    // The first wake-up is a spike: tracing_on = 0 written once, loop ends.
    assert_eq!((count, spikes, queued), (1, 1, 1));
    assert_eq!(written, b"0");
}
