//! The spinning loop never allocates: a global allocator counts the
//! allocations of the thread running it, between entry and exit, on every
//! path (noise events into the ring, a full ring, the sleep between
//! windows, a skipped window, the stop flag).

use crate::spin::{run_windows, spin, Counters, Live, Schedule};
use rtshield_measure::now_ns;
use rtshield_testkit::{count_allocations, AllocProbe};
use rtshield_trace::NoiseEvent;
use std::sync::atomic::AtomicBool;

#[global_allocator]
static GLOBAL: AllocProbe = AllocProbe;

/// On a fresh thread: a ring of `slots`, a `Live` and a stop flag set up,
/// then `body` run while its allocations are counted.
fn watched<T: Send + 'static>(
    slots: usize,
    body: impl FnOnce(&mut rtrb::Producer<NoiseEvent>, &Live, &AtomicBool) -> T + Send + 'static,
) -> (u64, T) {
    std::thread::spawn(move || {
        // The consumer stays alive so that a push fails only when full.
        let (mut tx, _rx) = rtrb::RingBuffer::new(slots);
        let (live, stop) = (Live::default(), AtomicBool::new(false));
        count_allocations(|| body(&mut tx, &live, &stop))
    })
    .join()
    .unwrap()
}

#[test]
fn the_probe_sees_an_allocation() {
    let (n, _) = watched(4, |_, _, _| drop(std::hint::black_box(Box::new(7u64))));
    assert!(n >= 1);
}

#[test]
fn spinning_with_events_does_not_allocate() {
    // threshold 100 ns: on this VM some gaps are events, most are not.
    let (n, c) = watched(1 << 16, |tx, live, stop| {
        let mut c = Counters::default();
        spin(now_ns() + 20_000_000, 100, tx, &mut c, live, stop);
        c
    });
    assert!(c.iterations > 0);
    assert_eq!(n, 0, "{c:?}");
}

#[test]
fn a_full_ring_does_not_allocate() {
    // threshold 0: every gap is an event; 16 slots fill at once.
    let (n, c) = watched(16, |tx, live, stop| {
        let mut c = Counters::default();
        spin(now_ns() + 5_000_000, 0, tx, &mut c, live, stop);
        c
    });
    assert!(c.lost > 0, "{c:?}");
    assert_eq!(n, 0);
}

#[test]
fn windows_sleeps_and_skips_do_not_allocate() {
    // Five 1 ms windows every 3 ms, the first two already over when the
    // thread starts (skipped and counted), then the stop flag.
    let (n, c) = watched(1 << 16, |tx, live, stop| {
        let now = now_ns();
        let s = Schedule {
            start_ns: now - 6_000_000,
            runtime_ns: 1_000_000,
            period_ns: 3_000_000,
            end_ns: now + 9_000_000,
            threshold_ns: 1_000,
        };
        let c = run_windows(&s, tx, live, stop);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let after = run_windows(&s, tx, live, stop);
        assert_eq!(after.windows, 0);
        c
    });
    assert!(c.windows_missed >= 2, "{c:?}");
    assert_eq!(c.windows + c.windows_missed, 5, "{c:?}");
    assert_eq!(n, 0);
}

#[test]
fn a_stall_past_the_end_counts_only_the_runs_windows() {
    // 33 windows (1 ms every 3 ms over 99 ms), all over before the thread
    // starts: all skipped, none beyond the end (a stall past the end once
    // counted the window after it too).
    let (n, c) = watched(1 << 16, |tx, live, stop| {
        let now = now_ns();
        let s = Schedule {
            start_ns: now - 100_000_000,
            runtime_ns: 1_000_000,
            period_ns: 3_000_000,
            end_ns: now - 1_000_000,
            threshold_ns: 1_000,
        };
        run_windows(&s, tx, live, stop)
    });
    assert_eq!((c.windows, c.windows_missed), (0, 33), "{c:?}");
    assert_eq!(n, 0);
}
