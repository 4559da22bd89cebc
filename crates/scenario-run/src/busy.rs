//! The calibrated busy loop and the clocks the runner reads.

/// One spin step: a 64-bit LCG step the optimiser cannot fold or vectorise
/// (`black_box` on every value), about a nanosecond on a current core.
#[inline(never)]
pub(crate) fn spin(steps: u64, state: &mut u64) {
    let mut s = *state;
    for _ in 0..steps {
        s = s
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        s = std::hint::black_box(s);
    }
    *state = s;
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec; both clocks always exist on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CPU time of the calling thread (a system call, ~100 ns: not per step).
pub(crate) fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// CLOCK_MONOTONIC.
pub(crate) fn mono_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// Spin steps per microsecond of the calling thread's CPU time: the best of
/// five runs of at least 5 ms each. CPU time rather than wall time, so a
/// preemption during calibration does not make the machine look slow.
pub(crate) fn calibrate() -> f64 {
    let mut state = 1u64;
    let mut steps = 50_000u64;
    let mut best = 0.0f64;
    let mut runs = 0;
    while runs < 5 {
        let t0 = thread_cpu_ns();
        spin(steps, &mut state);
        let dt = thread_cpu_ns().saturating_sub(t0).max(1);
        if dt < 5_000_000 {
            // Too short to trust: grow towards ~5 ms and try again.
            let factor = (5_000_000 / dt).clamp(2, 64);
            steps = steps.saturating_mul(factor);
            continue;
        }
        best = best.max(steps as f64 * 1_000.0 / dt as f64);
        runs += 1;
    }
    best
}

/// Sleep `ns` on CLOCK_MONOTONIC in slices of at most 10 ms, returning early
/// when `stop` is set (so a timeout or SIGINT never waits for a long sleep).
pub(crate) fn sleep_unless(ns: u64, stop: &std::sync::atomic::AtomicBool) {
    use std::sync::atomic::Ordering;
    let end = mono_ns() + ns;
    loop {
        let now = mono_ns();
        if now >= end || stop.load(Ordering::Relaxed) {
            return;
        }
        let until = end.min(now + 10_000_000);
        let ts = libc::timespec {
            tv_sec: (until / 1_000_000_000) as libc::time_t,
            tv_nsec: (until % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: valid timespec; an EINTR just loops.
        unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_is_positive_and_spin_changes_state() {
        assert!(calibrate() > 0.0);
        let mut s = 1;
        spin(3, &mut s);
        let mut t = 1u64;
        for _ in 0..3 {
            t = t
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
        }
        assert_eq!(s, t);
    }
}
