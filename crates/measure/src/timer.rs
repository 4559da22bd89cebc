//! The POSIX timer a measuring thread may wait on (`--mode posix-timer`,
//! `interval-posix`): created on the thread, signalling only it, waited for
//! with `sigwaitinfo` in the hot loop.

use crate::hotloop::timespec;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// `timer_create(CLOCK_MONOTONIC)` delivering `SIGRTMIN` to one thread
/// (SIGEV_THREAD_ID), blocked there and taken with `sigwaitinfo`.
pub(crate) struct PosixTimer {
    id: libc::timer_t,
    set: libc::sigset_t,
}

impl PosixTimer {
    /// Create on the calling thread, first expiry at `first_ns`
    /// (absolute), then every `period_ns`.
    pub(crate) fn new(first_ns: i64, period_ns: u64) -> std::io::Result<PosixTimer> {
        let sig = libc::SIGRTMIN();
        // SAFETY: sigset/sigevent are plain data filled by libc calls; the
        // timer id is only used while self lives.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            let r = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            if r != 0 {
                return Err(std::io::Error::from_raw_os_error(r));
            }
            let mut sev: libc::sigevent = std::mem::zeroed();
            sev.sigev_notify = libc::SIGEV_THREAD_ID;
            sev.sigev_signo = sig;
            sev.sigev_notify_thread_id = libc::gettid();
            let mut id: libc::timer_t = std::mem::zeroed();
            if libc::timer_create(libc::CLOCK_MONOTONIC, &mut sev, &mut id) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let spec = libc::itimerspec {
                it_interval: timespec(period_ns as i64),
                it_value: timespec(first_ns),
            };
            if libc::timer_settime(id, libc::TIMER_ABSTIME, &spec, std::ptr::null_mut()) != 0 {
                let e = std::io::Error::last_os_error();
                libc::timer_delete(id);
                return Err(e);
            }
            Ok(PosixTimer { id, set })
        }
    }

    /// Wait for the next expiry; returns the timer overrun count (expiries
    /// merged into this signal, i.e. missed periods), or None when the wait
    /// was interrupted and `stop` is set (the run is ending).
    #[inline(always)]
    pub(crate) fn wait(&self, stop: &AtomicBool) -> Option<u64> {
        loop {
            // SAFETY: info is written by the kernel.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            let r = unsafe { libc::sigwaitinfo(&self.set, &mut info) };
            if r >= 0 {
                return Some(si_overrun(&info));
            }
            if stop.load(Relaxed) {
                return None;
            }
        }
    }
}

/// `si_overrun` of a timer siginfo: the kernel's `_timer` union member
/// `{ int si_tid; int si_overrun; ... }` follows the three leading ints,
/// padded to pointer alignment (libc exposes no accessor).
pub(crate) fn si_overrun(info: &libc::siginfo_t) -> u64 {
    let ints = info as *const libc::siginfo_t as *const libc::c_int;
    let union_at = if std::mem::size_of::<usize>() == 8 {
        4
    } else {
        3
    };
    // SAFETY: siginfo_t is 128 bytes; index 5 (or 4) is within it.
    let v = unsafe { *ints.add(union_at + 1) };
    v.max(0) as u64
}

impl Drop for PosixTimer {
    fn drop(&mut self) {
        // SAFETY: id came from timer_create; set is the signal we blocked.
        unsafe {
            libc::timer_delete(self.id);
            // An expiry may have been queued after the last wait (the loop
            // ended between two periods): take it before unblocking, or its
            // default action (terminate) would kill the process on kernels
            // that keep a deleted timer's pending signal.
            let zero = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            while libc::sigtimedwait(&self.set, std::ptr::null_mut(), &zero) > 0 {}
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &self.set, std::ptr::null_mut());
        }
    }
}
