//! SIGINT/SIGTERM during a run: set a flag, let the runner stop the tasks
//! and write the results, then put the previous handlers back.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Restores the previous SIGINT and SIGTERM handlers when dropped.
pub struct SignalGuard {
    old: Vec<(libc::c_int, libc::sigaction)>,
}

/// Catch SIGINT and SIGTERM until the guard is dropped; [`interrupted`]
/// tells whether one arrived.
pub fn catch_interrupts() -> SignalGuard {
    INTERRUPTED.store(false, Ordering::SeqCst);
    let mut old = Vec::new();
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction with a valid handler and empty mask;
        // the previous action is saved to restore it.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut act.sa_mask);
            let mut prev: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, &act, &mut prev) == 0 {
                old.push((sig, prev));
            }
        }
    }
    SignalGuard { old }
}

/// The flag the handler sets.
pub fn interrupted() -> &'static AtomicBool {
    &INTERRUPTED
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        for (sig, prev) in &self.old {
            // SAFETY: restoring an action the kernel gave us.
            unsafe { libc::sigaction(*sig, prev, std::ptr::null_mut()) };
        }
    }
}
